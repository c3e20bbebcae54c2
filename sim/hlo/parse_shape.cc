// Shapes and layouts: `bf16[8,<=128]{1,0:T(8,128)(2,1)S(1)}`, tuples, tokens,
// buffers.
#include <algorithm>
#include <cctype>
#include <string>

#include "sim/hlo/parser_impl.h"

namespace tpusim::hlo::internal {
namespace {

/// Rank limit from Shape's 64-bit dynamic-dimension mask.
constexpr int64_t kMaxRank = 64;

}  // namespace

bool Parser::AtShape() {
  const char c = lexer_.Peek();
  if (c == '(') return true;
  if (c == '%') return false;
  std::string_view id = lexer_.PeekIdentifier();
  if (id.empty()) return false;
  const size_t after = static_cast<size_t>(id.data() - lexer_.text().data()) + id.size();
  const char next = after < lexer_.text().size() ? lexer_.text()[after] : '\0';
  if (id == "b") return next == '(';
  return next == '[';  // a word before '[' is a shape; ParseShape reports unknown types
}

StatusOr<Shape> Parser::ParseShape() {
  Shape shape;
  TPUSIM_RETURN_IF_ERROR(ParseShapeInto(shape));
  return shape;
}

Status Parser::ParseDiscardedShape() {
  // Reset the scratch shape to what a default-constructed one parses like,
  // keeping the capacity of its dimension and minor_to_major vectors.
  Shape& s = discarded_shape_;
  if (!s.IsArray() || (s.has_layout() && s.layout().HasExtras())) {
    s = Shape();
  } else {
    for (int64_t i = 0; i < s.rank(); ++i) s.set_dynamic_dimension(i, false);
    s.mutable_dimensions().clear();
    if (s.has_layout()) s.mutable_layout().mutable_minor_to_major().clear();
  }
  return ParseShapeInto(s);
}

Status Parser::ParseShapeInto(Shape& out) {
  if (shape_depth_ == kMaxShapeDepth &&
      (lexer_.Peek() == '(' || (lexer_.PeekIdentifier() == "b" && lexer_.PeekRaw(1) == '('))) {
    return lexer_.ErrorAt(lexer_.Mark(), "shapes nested more than " +
                                             std::to_string(kMaxShapeDepth) +
                                             " deep (tuples and buffers)");
  }
  ++shape_depth_;
  Status status = ParseNestedShapeInto(out);
  --shape_depth_;
  return status;
}

Status Parser::ParseNestedShapeInto(Shape& out) {
  if (lexer_.TryConsume('(')) {
    std::vector<Shape> elements;
    if (!lexer_.TryConsume(')')) {
      do {
        TPUSIM_ASSIGN_OR_RETURN(Shape element, ParseShape());
        elements.push_back(std::move(element));
      } while (lexer_.TryConsume(','));
      TPUSIM_RETURN_IF_ERROR(lexer_.Expect(')', "to close the tuple shape"));
    }
    out = Shape::Tuple(std::move(elements));
    return Status::Ok();
  }
  const size_t loc = lexer_.Mark();
  if (lexer_.Peek() == '%') return lexer_.Expected("a shape");
  std::string_view word = lexer_.PeekIdentifier();
  if (word == "b" && lexer_.PeekRaw(1) == '(') {
    lexer_.Advance(2);
    TPUSIM_ASSIGN_OR_RETURN(Shape inner, ParseShape());
    if (!inner.IsArray()) return lexer_.ErrorAt(loc, "a buffer shape b(...) must hold an array");
    TPUSIM_RETURN_IF_ERROR(lexer_.Expect(')', "to close the buffer shape"));
    out = Shape::Buffer(std::move(inner));
    return Status::Ok();
  }
  std::optional<PrimitiveType> type = PrimitiveTypeFromName(word);
  if (!type) {
    if (word.empty()) return lexer_.Expected("a shape");
    return lexer_.ErrorAt(
        loc, "unknown element type " + Quote(word) + ", expected a shape such as f32[2,3]");
  }
  lexer_.ReadIdentifier();
  if (*type == PrimitiveType::kToken || *type == PrimitiveType::kOpaque) {
    TPUSIM_RETURN_IF_ERROR(lexer_.Expect('[', "after the type name"));
    TPUSIM_RETURN_IF_ERROR(lexer_.Expect(']', std::string("(") + std::string(word) +
                                                  " shapes have no dimensions)"));
    out = *type == PrimitiveType::kToken ? Shape::Token() : Shape::Opaque();
    return Status::Ok();
  }
  Shape& shape = out;  // default-constructed: an array without dimensions
  shape.set_element_type(*type);
  TPUSIM_RETURN_IF_ERROR(ParseArrayDimensions(shape));
  // A '{' starts a layout only when followed by a dimension number, ':' or
  // '}' (scalar); otherwise it opens a computation body after a signature.
  if (lexer_.Peek() == '{') {
    size_t p = lexer_.position() + 1;
    const std::string_view text = lexer_.text();
    while (p < text.size() && (text[p] == ' ' || text[p] == '\t')) ++p;
    const char c = p < text.size() ? text[p] : '\0';
    if ((c >= '0' && c <= '9') || c == ':' || c == '}') {
      TPUSIM_RETURN_IF_ERROR(ParseLayout(shape));
    }
  }
  return Status::Ok();
}

Status Parser::ParseArrayDimensions(Shape& shape) {
  const size_t open = lexer_.Mark();
  if (!lexer_.TryConsume('[')) return lexer_.ExpectFailed('[', "to start the dimensions");
  if (lexer_.TryConsume(']')) return Status::Ok();
  // Collected on the stack and assigned once: shapes are the most frequent
  // thing the parser builds.
  int64_t dims[kMaxRank];
  int64_t rank = 0;
  int64_t elements = 1;
  // Fast path for the usual `[8,128]`: static sizes, no spaces, no overflow.
  // Anything else is parsed again by the general loop below.
  const size_t start = lexer_.position();
  if (const size_t n = lexer_.ScanDenseInts(dims, kMaxRank); n > 0) {
    bool fits = lexer_.PeekRaw() == ']';
    for (size_t i = 0; fits && i < n; ++i) {
      fits = !__builtin_mul_overflow(elements, dims[i], &elements);
    }
    const int64_t bits = std::max(PrimitiveTypeBitWidth(shape.element_type()), 8);
    int64_t total_bits;
    if (fits && !__builtin_mul_overflow(elements, bits, &total_bits)) {
      lexer_.Advance(1);
      shape.mutable_dimensions().assign(dims, dims + n);
      return Status::Ok();
    }
    lexer_.Rewind(start);
    elements = 1;
  }
  do {
    if (rank == kMaxRank) return lexer_.ErrorAt(open, "shape has more than 64 dimensions");
    if (lexer_.TryConsume('?')) {
      dims[rank] = Shape::kUnboundedSize;
      shape.set_dynamic_dimension(rank++, true);
      continue;
    }
    const bool bounded = lexer_.Peek() == '<' && lexer_.TryConsume("<=");
    const size_t loc = lexer_.Mark();
    int64_t size;
    if (!lexer_.TryReadInt(size)) {
      TPUSIM_ASSIGN_OR_RETURN(size, lexer_.ReadInt("a dimension size"));
    }
    if (size < 0) return lexer_.ErrorAt(loc, "dimension size must be non-negative");
    if (__builtin_mul_overflow(elements, size, &elements)) {
      return lexer_.ErrorAt(loc, "shape has more elements than fit in a 64-bit count");
    }
    dims[rank] = size;
    if (bounded) shape.set_dynamic_dimension(rank, true);
    ++rank;
  } while (lexer_.TryConsume(','));
  shape.mutable_dimensions().assign(dims, dims + rank);
  if (!lexer_.TryConsume(']')) return lexer_.ExpectFailed(']', "to close the dimensions");
  // Byte sizes must fit too: every later byte computation relies on it.
  const int64_t bits = std::max(PrimitiveTypeBitWidth(shape.element_type()), 8);
  int64_t total_bits;
  if (__builtin_mul_overflow(elements, bits, &total_bits)) {
    return lexer_.ErrorAt(open, "shape's size in bytes does not fit in 64 bits");
  }
  return Status::Ok();
}

Status Parser::ParseLayout(Shape& shape) {
  const size_t open = lexer_.Mark();
  if (!lexer_.TryConsume('{')) return lexer_.ExpectFailed('{', "to open the layout");
  Layout& layout = shape.mutable_layout();
  DimensionVector& m2m = layout.mutable_minor_to_major();
  int64_t scanned[kMaxRank];
  size_t fast = 0;
  if (lexer_.Peek() != ':' && lexer_.Peek() != '}') {
    // Fast path for `{1,0}` and `{1,0:...}`; anything else goes the general way.
    const size_t start = lexer_.position();
    fast = lexer_.ScanDenseInts(scanned, kMaxRank);
    if (fast > 0 && lexer_.PeekRaw() != '}' && lexer_.PeekRaw() != ':') {
      lexer_.Rewind(start);
      fast = 0;
    }
  }
  if (fast > 0) {
    m2m.assign(scanned, scanned + fast);
  } else if (lexer_.Peek() != ':' && lexer_.Peek() != '}') {
    m2m.reserve(static_cast<size_t>(shape.rank()));
    do {
      int64_t d;
      if (!lexer_.TryReadInt(d)) {
        TPUSIM_ASSIGN_OR_RETURN(d, lexer_.ReadInt("a dimension number in the layout"));
      }
      m2m.push_back(d);
    } while (lexer_.TryConsume(','));
  }
  if (lexer_.TryConsume(':')) {
    while (true) {
      const char c = lexer_.Peek();
      if (c == '}' || c == '\0') break;
      const size_t loc = lexer_.Mark();
      if (c == 'T') {
        lexer_.Advance(1);
        if (lexer_.Peek() != '(') return lexer_.Expected("'(' after 'T' in the layout tiling");
        while (lexer_.TryConsume('(')) {
          Tile tile;
          if (!lexer_.TryConsume(')')) {
            do {
              if (lexer_.TryConsume('*')) {
                tile.dimensions.push_back(Tile::kCombinedDimension);
              } else {
                const size_t dloc = lexer_.Mark();
                TPUSIM_ASSIGN_OR_RETURN(int64_t d, lexer_.ReadInt("a tile dimension or '*'"));
                if (d <= 0) return lexer_.ErrorAt(dloc, "tile dimensions must be positive");
                tile.dimensions.push_back(d);
              }
            } while (lexer_.TryConsume(','));
            TPUSIM_RETURN_IF_ERROR(lexer_.Expect(')', "to close the tile"));
          }
          layout.tiles.push_back(std::move(tile));
        }
      } else if (c == 'S' && lexer_.PeekRaw(1) == 'C') {
        lexer_.Advance(2);
        if (lexer_.Peek() != '(') return lexer_.Expected("'(' after 'SC' in the layout");
        while (lexer_.TryConsume('(')) {
          SplitConfig split;
          TPUSIM_ASSIGN_OR_RETURN(split.dimension, lexer_.ReadInt("a split dimension"));
          TPUSIM_RETURN_IF_ERROR(lexer_.Expect(':', "after the split dimension"));
          do {
            TPUSIM_ASSIGN_OR_RETURN(int64_t i, lexer_.ReadInt("a split index"));
            split.split_indices.push_back(i);
          } while (lexer_.TryConsume(','));
          TPUSIM_RETURN_IF_ERROR(lexer_.Expect(')', "to close the split config"));
          layout.split_configs.push_back(std::move(split));
        }
      } else if (c == 'D') {
        lexer_.Advance(1);
        TPUSIM_RETURN_IF_ERROR(lexer_.Expect('(', "after 'D' in the layout"));
        do {
          lexer_.SkipTrivia();
          const size_t start = lexer_.position();
          size_t p = start;
          const std::string_view text = lexer_.text();
          while (p < text.size() && (std::isalpha(static_cast<unsigned char>(text[p])) ||
                                     text[p] == '+' || text[p] == '~')) {
            ++p;
          }
          if (p == start) return lexer_.Expected("a dimension level type such as D or C");
          layout.dim_level_types.emplace_back(text.substr(start, p - start));
          lexer_.Advance(p - start);
        } while (lexer_.TryConsume(','));
        TPUSIM_RETURN_IF_ERROR(lexer_.Expect(')', "to close the dimension level types"));
      } else if (c == '#' || c == '*') {
        lexer_.Advance(1);
        TPUSIM_RETURN_IF_ERROR(lexer_.Expect('(', "before the primitive type"));
        std::string_view word = lexer_.ReadIdentifier();
        std::optional<PrimitiveType> t = PrimitiveTypeFromName(word);
        if (!t) return lexer_.ErrorAt(loc, "expected a primitive type in the layout");
        (c == '#' ? layout.index_primitive_type : layout.pointer_primitive_type) = *t;
        TPUSIM_RETURN_IF_ERROR(lexer_.Expect(')', "after the primitive type"));
      } else if (c == 'P') {
        lexer_.Advance(1);
        TPUSIM_RETURN_IF_ERROR(lexer_.Expect('(', "after 'P' in the layout"));
        TPUSIM_ASSIGN_OR_RETURN(Shape physical, ParseShape());
        layout.physical_shape = std::make_unique<Shape>(std::move(physical));
        TPUSIM_RETURN_IF_ERROR(lexer_.Expect(')', "to close the physical shape"));
      } else if (c == 'L' || c == 'E' || c == 'S' || c == 'M') {
        lexer_.Advance(1);
        TPUSIM_RETURN_IF_ERROR(lexer_.Expect('(', "after the layout field name"));
        const size_t vloc = lexer_.Mark();
        TPUSIM_ASSIGN_OR_RETURN(int64_t v, lexer_.ReadInt("a number"));
        if (v < 0) return lexer_.ErrorAt(vloc, "layout values must be non-negative");
        switch (c) {
          case 'L': layout.tail_padding_alignment_in_elements = v; break;
          case 'E': layout.element_size_in_bits = v; break;
          case 'S': layout.memory_space = v; break;
          default: layout.dynamic_shape_metadata_prefix_bytes = v; break;
        }
        TPUSIM_RETURN_IF_ERROR(lexer_.Expect(')', "to close the layout value"));
      } else {
        return lexer_.Expected("a layout attribute (T, S, E, L, D, SC, P, M, # or *) or '}'");
      }
    }
  }
  if (!lexer_.TryConsume('}')) return lexer_.ExpectFailed('}', "to close the layout");
  // minor_to_major must be a permutation of the dimensions.
  if (static_cast<int64_t>(m2m.size()) != shape.rank()) {
    return lexer_.ErrorAt(open, "layout lists " + std::to_string(m2m.size()) +
                                    " dimensions but the shape has rank " +
                                    std::to_string(shape.rank()));
  }
  uint64_t seen = 0;
  for (int64_t d : m2m) {
    if (d < 0 || d >= shape.rank() || ((seen >> d) & 1)) {
      return lexer_.ErrorAt(open, "layout is not a permutation of the shape's dimensions");
    }
    seen |= uint64_t{1} << d;
  }
  // The tiles pad the array; the padded size, what the timing model moves,
  // must fit in 64 bits as the logical one does (T(4294967296,4294967296) once
  // wrapped HBM bytes to 2^61, and a later tile was not counted at all).
  if (!PhysicalBits(shape).has_value()) {
    return lexer_.ErrorAt(open, "the layout's tiling pads the shape to more bytes than fit in "
                                "64 bits");
  }
  return Status::Ok();
}

StatusOr<std::vector<int64_t>> Parser::ParseIntList(char open, char close, std::string_view what) {
  if (!lexer_.TryConsume(open)) {
    return lexer_.Expected(std::string("'") + open + "' to open " + std::string(what));
  }
  if (lexer_.TryConsume(close)) return std::vector<int64_t>();
  // Collected in a reused buffer and copied out at the exact size.
  std::vector<int64_t>& values = int_scratch_;
  values.clear();
  do {
    int64_t v;
    if (!lexer_.TryReadInt(v)) {
      TPUSIM_ASSIGN_OR_RETURN(v, lexer_.ReadInt("an integer"));
    }
    values.push_back(v);
  } while (lexer_.TryConsume(','));
  if (!lexer_.TryConsume(close)) {
    return lexer_.Expected(std::string("',' or '") + close + "' in " + std::string(what));
  }
  return std::vector<int64_t>(values.begin(), values.end());
}

}  // namespace tpusim::hlo::internal
