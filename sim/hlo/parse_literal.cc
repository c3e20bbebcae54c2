// Constant literals: scalars, nested arrays, tuples, complex pairs, elided `{...}`.
#include <charconv>
#include <string>

#include "sim/hlo/parser_impl.h"

namespace tpusim::hlo::internal {

StatusOr<ConstantLiteral> Parser::ParseLiteral(const Shape& shape) {
  ConstantLiteral literal;
  if (shape.IsTuple()) {
    TPUSIM_RETURN_IF_ERROR(lexer_.Expect('(', "to open the tuple literal"));
    for (int64_t i = 0; i < shape.tuple_size(); ++i) {
      if (i > 0) TPUSIM_RETURN_IF_ERROR(lexer_.Expect(',', "between tuple literal elements"));
      TPUSIM_ASSIGN_OR_RETURN(ConstantLiteral element, ParseLiteral(shape.tuple_shapes(i)));
      literal.elements.push_back(std::move(element));
    }
    if (!lexer_.TryConsume(')')) {
      return lexer_.Expected("')' to close the tuple literal (" +
                             std::to_string(shape.tuple_size()) + " elements)");
    }
    return literal;
  }
  if (!shape.IsArray()) {
    return lexer_.ErrorAt(lexer_.NextLocation(),
                          "constants must have an array or tuple shape, got " + shape.ToString());
  }
  if (shape.rank() == 0) {
    TPUSIM_RETURN_IF_ERROR(ParseLiteralElement(shape.element_type(), literal));
    return literal;
  }
  // `{...}`: the dump elided the values.
  if (lexer_.Peek() == '{') {
    const std::string_view text = lexer_.text();
    size_t p = lexer_.position() + 1;
    while (p < text.size() && (text[p] == ' ' || text[p] == '\t')) ++p;
    if (text.substr(p, 3) == "...") {
      lexer_.Advance(p + 3 - lexer_.position());
      TPUSIM_RETURN_IF_ERROR(lexer_.Expect('}', "after '...' in an elided literal"));
      literal.elided = true;
      return literal;
    }
  }
  TPUSIM_RETURN_IF_ERROR(ParseArrayLiteral(shape, literal));
  return literal;
}

Status Parser::ParseArrayLiteral(const Shape& shape, ConstantLiteral& literal) {
  const int64_t rank = shape.rank();
  const int64_t count = shape.element_count();
  if (IsComplex(shape.element_type())) {
    literal.reals.reserve(static_cast<size_t>(std::min<int64_t>(count, 1 << 20)));
    literal.imags.reserve(static_cast<size_t>(std::min<int64_t>(count, 1 << 20)));
  } else if (IsFloatingPoint(shape.element_type())) {
    literal.reals.reserve(static_cast<size_t>(std::min<int64_t>(count, 1 << 20)));
  } else {
    literal.ints.reserve(static_cast<size_t>(std::min<int64_t>(count, 1 << 20)));
  }
  // Iterative walk over the nesting: index[d] counts elements seen at depth d.
  std::vector<int64_t> index(static_cast<size_t>(rank), 0);
  int64_t depth = 0;
  TPUSIM_RETURN_IF_ERROR(lexer_.Expect('{', "to open the array literal"));
  while (true) {
    const int64_t size = shape.dimensions(depth);
    if (lexer_.Peek() == '}') {
      if (index[depth] != size) {
        return lexer_.ErrorAt(lexer_.NextLocation(),
                              "expected " + std::to_string(size) + " elements in dimension " +
                                  std::to_string(depth) + " of the literal, got " +
                                  std::to_string(index[depth]));
      }
      lexer_.Advance(1);
      if (depth == 0) return Status::Ok();
      --depth;
      ++index[depth];
      continue;
    }
    if (index[depth] > 0) TPUSIM_RETURN_IF_ERROR(lexer_.Expect(',', "or '}' between literal elements"));
    if (index[depth] >= size) {
      return lexer_.ErrorAt(lexer_.NextLocation(),
                            "too many elements in dimension " + std::to_string(depth) +
                                " of the literal, expected " + std::to_string(size));
    }
    if (depth + 1 < rank) {
      TPUSIM_RETURN_IF_ERROR(lexer_.Expect('{', "to open a nested array literal"));
      ++depth;
      index[depth] = 0;
      continue;
    }
    TPUSIM_RETURN_IF_ERROR(ParseLiteralElement(shape.element_type(), literal));
    ++index[depth];
  }
}

Status Parser::ParseLiteralElement(PrimitiveType type, ConstantLiteral& literal) {
  const size_t loc = lexer_.Mark();
  switch (KindOf(type)) {
    case PrimitiveKind::kPred: {
      if (lexer_.TryConsumeWord("true")) {
        literal.ints.push_back(1);
      } else if (lexer_.TryConsumeWord("false")) {
        literal.ints.push_back(0);
      } else {
        TPUSIM_ASSIGN_OR_RETURN(int64_t v, lexer_.ReadInt("'true' or 'false'"));
        if (v != 0 && v != 1) return lexer_.ErrorAt(loc, "a pred literal must be true or false");
        literal.ints.push_back(v);
      }
      return Status::Ok();
    }
    case PrimitiveKind::kSigned: {
      TPUSIM_ASSIGN_OR_RETURN(int64_t v, lexer_.ReadInt("an integer literal"));
      const int bits = PrimitiveTypeBitWidth(type);
      if (bits < 64) {
        const int64_t hi = (int64_t{1} << (bits - 1)) - 1;
        if (v > hi || v < -hi - 1) {
          return lexer_.ErrorAt(loc, std::to_string(v) + " is out of range for " +
                                         std::string(PrimitiveTypeName(type)));
        }
      }
      literal.ints.push_back(v);
      return Status::Ok();
    }
    case PrimitiveKind::kUnsigned: {
      lexer_.SkipTrivia();
      const std::string_view text = lexer_.text();
      const size_t start = lexer_.position();
      uint64_t v = 0;
      auto [end, ec] = std::from_chars(text.data() + start, text.data() + text.size(), v);
      if (ec == std::errc::result_out_of_range) {
        return lexer_.ErrorAt(loc, "integer literal is out of range for " +
                                       std::string(PrimitiveTypeName(type)));
      }
      if (ec != std::errc()) return lexer_.Expected("a non-negative integer literal");
      const int bits = PrimitiveTypeBitWidth(type);
      if (bits < 64 && v > (uint64_t{1} << bits) - 1) {
        return lexer_.ErrorAt(loc, std::to_string(v) + " is out of range for " +
                                       std::string(PrimitiveTypeName(type)));
      }
      lexer_.Advance(static_cast<size_t>(end - (text.data() + start)));
      literal.ints.push_back(static_cast<int64_t>(v));
      return Status::Ok();
    }
    case PrimitiveKind::kFloat: {
      TPUSIM_ASSIGN_OR_RETURN(double v, lexer_.ReadReal("a number literal"));
      literal.reals.push_back(v);
      return Status::Ok();
    }
    case PrimitiveKind::kComplex: {
      TPUSIM_RETURN_IF_ERROR(lexer_.Expect('(', "to open a complex literal (re, im)"));
      TPUSIM_ASSIGN_OR_RETURN(double re, lexer_.ReadReal("the real part"));
      TPUSIM_RETURN_IF_ERROR(lexer_.Expect(',', "between real and imaginary parts"));
      TPUSIM_ASSIGN_OR_RETURN(double im, lexer_.ReadReal("the imaginary part"));
      TPUSIM_RETURN_IF_ERROR(lexer_.Expect(')', "to close the complex literal"));
      literal.reals.push_back(re);
      literal.imags.push_back(im);
      return Status::Ok();
    }
    case PrimitiveKind::kNonArray:
      break;
  }
  return lexer_.ErrorAt(loc, "constants cannot have type " + std::string(PrimitiveTypeName(type)));
}

}  // namespace tpusim::hlo::internal
