// Instruction attributes: `, name=value` after the operand list. Each known
// attribute (attribute.def) is parsed into its typed value; unknown ones are
// kept verbatim.
#include <algorithm>
#include <cctype>
#include <string>

#include "sim/hlo/parser_impl.h"

namespace tpusim::hlo::internal {
namespace {

/// Names the attribute on the first line of an error inside its value ("...
/// got 'x' in attribute 'y'"), keeping the source excerpt lines after it. An
/// error in a computation written inline names the innermost attribute only,
/// the one its location points into, however deep the computations nest.
Status InAttribute(const Status& status, std::string_view attribute) {
  std::string message = status.message();
  const size_t eol = std::min(message.find('\n'), message.size());
  if (message.substr(0, eol).find(" in attribute '") != std::string::npos) return status;
  message.insert(eol, " in attribute " + Quote(attribute));
  return Status(status.code(), std::move(message));
}

}  // namespace

bool Parser::AtAttribute() {
  const size_t start = lexer_.position();
  const bool attribute =
      lexer_.TryConsume(',') && !lexer_.ReadIdentifier().empty() && lexer_.Peek() == '=';
  lexer_.Rewind(start);
  return attribute;
}

Status Parser::ParseAttributes(HloInstruction& instruction, bool in_operand_list) {
  if (lexer_.Peek() != ',') return Status::Ok();
  // Collected in a reused buffer and moved into a vector of the exact size.
  std::vector<Attribute>& attributes = attribute_scratch_;
  attributes.clear();
  // In an operand list, a comma may also start the next operand.
  while ((!in_operand_list || AtAttribute()) && lexer_.TryConsume(',')) {
    const size_t loc = lexer_.Mark();
    const SourceLocation where = lexer_.Location();
    const std::string_view name = lexer_.ReadIdentifier();
    if (name.empty()) return lexer_.Expected("an attribute name");
    if (!lexer_.TryConsume('=')) {
      return lexer_.Expected("'=' after attribute name " + Quote(name));
    }
    if (name == "control-predecessors") {
      if (!instruction.control_predecessors().empty()) {
        return lexer_.ErrorAt(loc, "duplicate attribute 'control-predecessors'");
      }
      TPUSIM_RETURN_IF_ERROR(lexer_.Expect('{', "to open control-predecessors"));
      std::vector<PendingName> names;
      if (!lexer_.TryConsume('}')) {
        do {
          const size_t nloc = lexer_.Mark();
          TPUSIM_ASSIGN_OR_RETURN(std::string_view pred,
                                  lexer_.ExpectIdentifier("an instruction name"));
          names.push_back({pred, nloc});
        } while (lexer_.TryConsume(','));
        TPUSIM_RETURN_IF_ERROR(lexer_.Expect('}', "to close control-predecessors"));
      }
      pending_control_.emplace_back(&instruction, std::move(names));
      continue;
    }
    const AttrId id = AttrIdFromName(name);
    for (const Attribute& a : attributes) {
      if (a.spelling() == name) {
        return lexer_.ErrorAt(loc, "duplicate attribute " + Quote(name));
      }
    }
    AttrKind kind = id == AttrId::kUnknown ? AttrKind::kRaw : AttrKindOf(id);
    // A known name can carry a form tpusim does not model, e.g. the nested
    // `slice_sizes={{4256,8,128}}` of a dynamic collective-permute: keep it
    // verbatim as an unknown attribute rather than misreading it.
    if (kind == AttrKind::kIntList && lexer_.Peek() == '{') {
      const std::string_view text = lexer_.text();
      size_t p = lexer_.position() + 1;
      while (p < text.size() && (text[p] == ' ' || text[p] == '\t')) ++p;
      if (p < text.size() && text[p] == '{') kind = AttrKind::kRaw;
    }
    const AttrId stored_id = kind == AttrKind::kRaw ? AttrId::kUnknown : id;
    const size_t index = attributes.size();
    StatusOr<AttrValue> value_or = ParseAttributeValue(kind, name, &instruction, index);
    if (!value_or.ok()) return InAttribute(value_or.status(), name);
    AttrValue value = std::move(value_or).value();
    Attribute attribute;
    attribute.id = stored_id;
    if (stored_id == AttrId::kUnknown) attribute.unknown_name = std::string(name);
    attribute.value = std::move(value);
    attribute.location = where;
    attributes.push_back(std::move(attribute));
  }
  if (!attributes.empty()) {
    instruction.mutable_attributes().assign(std::make_move_iterator(attributes.begin()),
                                            std::make_move_iterator(attributes.end()));
    attributes.clear();
  }
  return Status::Ok();
}

StatusOr<AttrValue> Parser::ParseAttributeValue(AttrKind kind, std::string_view name,
                                                HloInstruction* instruction,
                                                size_t attribute_index) {
  switch (kind) {
    case AttrKind::kInt: {
      TPUSIM_ASSIGN_OR_RETURN(int64_t v, lexer_.ReadInt("an integer value"));
      return AttrValue(v);
    }
    case AttrKind::kBool: {
      if (lexer_.TryConsumeWord("true")) return AttrValue(true);
      if (lexer_.TryConsumeWord("false")) return AttrValue(false);
      return lexer_.Expected("'true' or 'false'");
    }
    case AttrKind::kFloat: {
      TPUSIM_ASSIGN_OR_RETURN(double v, lexer_.ReadReal("a number"));
      return AttrValue(v);
    }
    case AttrKind::kString: {
      TPUSIM_ASSIGN_OR_RETURN(std::string s, lexer_.ReadString("a quoted string"));
      return AttrValue(std::move(s));
    }
    case AttrKind::kIdent: {
      const size_t loc = lexer_.Mark();
      std::string_view word = lexer_.ReadIdentifier();
      if (word.empty()) return lexer_.Expected("a name");
      // An enumerated attribute takes only its enum's words, as in XLA: a
      // misspelt direction must not pass `check` and timing unnoticed.
      const std::span<const std::string_view> words = AttrWords(AttrIdFromName(name));
      if (!words.empty() && std::find(words.begin(), words.end(), word) == words.end()) {
        std::string expected;
        for (std::string_view w : words)
          expected += (expected.empty() ? "" : ", ") + std::string(w);
        return lexer_.ErrorAt(loc, "expected one of " + expected + ", got " + Quote(word));
      }
      return AttrValue(std::string(word));
    }
    case AttrKind::kIdentList: {
      TPUSIM_RETURN_IF_ERROR(lexer_.Expect('{', "to open the list"));
      std::vector<std::string> words;
      if (!lexer_.TryConsume('}')) {
        do {
          std::string_view word = lexer_.ReadIdentifier();
          if (word.empty()) return lexer_.Expected("a name in the list");
          words.emplace_back(word);
        } while (lexer_.TryConsume(','));
        TPUSIM_RETURN_IF_ERROR(lexer_.Expect('}', "to close the list"));
      }
      return AttrValue(std::move(words));
    }
    case AttrKind::kIntList: {
      TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> v, ParseIntList('{', '}', "the list"));
      return AttrValue(std::move(v));
    }
    case AttrKind::kIntPairs: {
      TPUSIM_ASSIGN_OR_RETURN(auto pairs, ParseIntPairs());
      return AttrValue(std::move(pairs));
    }
    case AttrKind::kComputation:
    case AttrKind::kComputationList: {
      PendingComputationRef ref{instruction, attribute_index, {}};
      // A computation is a name, or written inline as `{ instructions }`.
      const auto parse_item = [&]() -> Status {
        PendingComputationRef::Item item;
        if (AtInlineComputation()) {
          TPUSIM_ASSIGN_OR_RETURN(item.inline_computation,
                                  ParseInlineComputation(*instruction, name));
        } else {
          item.name.location = lexer_.Mark();
          TPUSIM_ASSIGN_OR_RETURN(item.name.name, lexer_.ExpectIdentifier("a computation name"));
        }
        ref.items.push_back(item);
        return Status::Ok();
      };
      const bool braced = !AtInlineComputation() && lexer_.TryConsume('{');
      if (braced && kind == AttrKind::kComputation) {
        return lexer_.ErrorAt(lexer_.Location(),
                              "expected one computation (a name or { instructions }), got a list");
      }
      if (!(braced && lexer_.TryConsume('}'))) {
        do {
          TPUSIM_RETURN_IF_ERROR(parse_item());
        } while (braced && lexer_.TryConsume(','));
        if (braced) TPUSIM_RETURN_IF_ERROR(lexer_.Expect('}', "to close the list"));
      }
      const bool empty = ref.items.empty();
      if (!empty) pending_computations_.push_back(std::move(ref));
      if (kind == AttrKind::kComputation) return AttrValue(static_cast<HloComputation*>(nullptr));
      ComputationList list;
      list.braced = braced;
      return AttrValue(std::move(list));
    }
    case AttrKind::kWindow: {
      TPUSIM_ASSIGN_OR_RETURN(Window w, ParseWindow());
      return AttrValue(Box<Window>(std::move(w)));
    }
    case AttrKind::kDimLabels: {
      TPUSIM_ASSIGN_OR_RETURN(ConvolutionDimensionNumbers d, ParseDimLabels());
      return AttrValue(Box<ConvolutionDimensionNumbers>(std::move(d)));
    }
    case AttrKind::kSliceRanges: {
      TPUSIM_ASSIGN_OR_RETURN(auto ranges, ParseSliceRanges());
      return AttrValue(std::move(ranges));
    }
    case AttrKind::kPadding: {
      TPUSIM_ASSIGN_OR_RETURN(auto padding, ParsePadding());
      return AttrValue(std::move(padding));
    }
    case AttrKind::kReplicaGroups: {
      TPUSIM_ASSIGN_OR_RETURN(ReplicaGroups groups, ParseReplicaGroups());
      return AttrValue(Box<ReplicaGroups>(std::move(groups)));
    }
    case AttrKind::kSharding: {
      TPUSIM_ASSIGN_OR_RETURN(Sharding sharding, ParseSharding(0));
      return AttrValue(Box<Sharding>(std::move(sharding)));
    }
    case AttrKind::kKeyValues: {
      TPUSIM_ASSIGN_OR_RETURN(auto kvs, ParseKeyValues("the dictionary"));
      return AttrValue(std::move(kvs));
    }
    case AttrKind::kShape: {
      TPUSIM_ASSIGN_OR_RETURN(Shape s, ParseShape());
      return AttrValue(Box<Shape>(std::move(s)));
    }
    case AttrKind::kShapeList: {
      TPUSIM_RETURN_IF_ERROR(lexer_.Expect('{', "to open the list"));
      std::vector<Shape> shapes;
      if (!lexer_.TryConsume('}')) {
        do {
          TPUSIM_ASSIGN_OR_RETURN(Shape s, ParseShape());
          shapes.push_back(std::move(s));
        } while (lexer_.TryConsume(','));
        TPUSIM_RETURN_IF_ERROR(lexer_.Expect('}', "to close the list"));
      }
      return AttrValue(std::move(shapes));
    }
    case AttrKind::kBackendConfig: {
      BackendConfig config;
      if (lexer_.Peek() == '"') {
        TPUSIM_ASSIGN_OR_RETURN(config.text, lexer_.ReadString("a backend config"));
      } else {
        TPUSIM_ASSIGN_OR_RETURN(std::string_view json, lexer_.ReadBracedRaw("backend config"));
        config.text = std::string(json);
        config.is_string = false;
      }
      return AttrValue(std::move(config));
    }
    case AttrKind::kRaw: {
      TPUSIM_ASSIGN_OR_RETURN(std::string_view raw, lexer_.ReadRawValue());
      return AttrValue(std::string(raw));
    }
  }
  return Internal("unhandled attribute kind");
}

StatusOr<std::vector<int64_t>> Parser::ParseDxD(std::string_view what) {
  std::vector<int64_t> values;
  lexer_.SkipTrivia();
  while (true) {
    TPUSIM_ASSIGN_OR_RETURN(int64_t v, lexer_.ReadIntNoSkip(what));
    values.push_back(v);
    if (lexer_.PeekRaw() != 'x') break;
    lexer_.Advance(1);
  }
  return values;
}

StatusOr<Window> Parser::ParseWindow() {
  const size_t open = lexer_.Mark();
  TPUSIM_RETURN_IF_ERROR(lexer_.Expect('{', "to open the window"));
  Window window;
  bool has_size = false;
  auto resize = [&](size_t rank, std::string_view field) -> Status {
    if (window.dimensions.empty() && !has_size) window.dimensions.resize(rank);
    if (window.dimensions.size() != rank) {
      return lexer_.ErrorAt(lexer_.Location(), "window field " + Quote(field) + " has " +
                                                   std::to_string(rank) + " dimensions, expected " +
                                                   std::to_string(window.dimensions.size()));
    }
    return Status::Ok();
  };
  while (!lexer_.TryConsume('}')) {
    TPUSIM_ASSIGN_OR_RETURN(std::string_view field,
                            lexer_.ExpectIdentifier("a window field or '}'"));
    TPUSIM_RETURN_IF_ERROR(lexer_.Expect('=', "after window field"));
    if (field == "pad") {
      std::vector<std::pair<int64_t, int64_t>> pads;
      lexer_.SkipTrivia();
      while (true) {
        TPUSIM_ASSIGN_OR_RETURN(int64_t lo, lexer_.ReadIntNoSkip("a low padding"));
        if (lexer_.PeekRaw() != '_') return lexer_.Expected("'_' between low and high padding");
        lexer_.Advance(1);
        TPUSIM_ASSIGN_OR_RETURN(int64_t hi, lexer_.ReadIntNoSkip("a high padding"));
        pads.emplace_back(lo, hi);
        if (lexer_.PeekRaw() != 'x') break;
        lexer_.Advance(1);
      }
      TPUSIM_RETURN_IF_ERROR(resize(pads.size(), field));
      for (size_t i = 0; i < pads.size(); ++i) {
        window.dimensions[i].padding_low = pads[i].first;
        window.dimensions[i].padding_high = pads[i].second;
      }
      continue;
    }
    TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> values, ParseDxD("window values like 3x3"));
    TPUSIM_RETURN_IF_ERROR(resize(values.size(), field));
    for (size_t i = 0; i < values.size(); ++i) {
      WindowDimension& d = window.dimensions[i];
      if (field == "size") {
        d.size = values[i];
      } else if (field == "stride") {
        d.stride = values[i];
      } else if (field == "lhs_dilate") {
        d.base_dilation = values[i];
      } else if (field == "rhs_dilate") {
        d.window_dilation = values[i];
      } else if (field == "rhs_reversal") {
        d.window_reversal = values[i] != 0;
      } else {
        return lexer_.ErrorAt(open, "unknown window field " + Quote(field) +
                                        ", expected size, stride, pad, lhs_dilate, "
                                        "rhs_dilate or rhs_reversal");
      }
    }
    if (field == "size") has_size = true;
  }
  if (!window.dimensions.empty() && !has_size) {
    return lexer_.ErrorAt(open, "window has no 'size' field");
  }
  return window;
}

StatusOr<ConvolutionDimensionNumbers> Parser::ParseDimLabels() {
  lexer_.SkipTrivia();
  const size_t loc = lexer_.position();
  const std::string_view text = lexer_.text();
  size_t p = lexer_.position();
  const size_t start = p;
  while (p < text.size() && (std::isalnum(static_cast<unsigned char>(text[p])) || text[p] == '_' ||
                             text[p] == '-' || text[p] == '>' || text[p] == '?')) {
    ++p;
  }
  const std::string_view labels = text.substr(start, p - start);
  const size_t underscore = labels.find('_');
  const size_t arrow = labels.find("->");
  if (underscore == std::string_view::npos || arrow == std::string_view::npos ||
      arrow < underscore) {
    return lexer_.Expected("dim_labels like b01f_01io->b01f");
  }
  const std::string_view lhs = labels.substr(0, underscore);
  const std::string_view rhs = labels.substr(underscore + 1, arrow - underscore - 1);
  const std::string_view out = labels.substr(arrow + 2);
  auto bad = [&](std::string_view why) {
    return lexer_.ErrorAt(loc, "invalid dim_labels " + Quote(labels) + ": " + std::string(why));
  };
  // A '?' labels a dimension with no role; the digits are the spatial ones.
  const auto spatial_of = [](std::string_view s) {
    size_t n = 0;
    for (char c : s) n += IsDigit(c) ? 1 : 0;
    return n;
  };
  const size_t spatial = spatial_of(lhs);
  if (spatial_of(rhs) != spatial || spatial_of(out) != spatial) {
    return bad("the input, kernel and output labels must name the same spatial dimensions");
  }
  if (spatial > 10) return bad("more than 10 spatial dimensions");
  ConvolutionDimensionNumbers d;
  d.input_spatial_dimensions.assign(spatial, -1);
  d.kernel_spatial_dimensions.assign(spatial, -1);
  d.output_spatial_dimensions.assign(spatial, -1);
  // Each label string must name every role exactly once; '?' may repeat.
  auto decode = [&](std::string_view s, char a, char b, int64_t& da, int64_t& db,
                    std::vector<int64_t>& sp, int64_t& rank) -> Status {
    int64_t seen_a = -1, seen_b = -1;
    bool unknown = false;
    for (size_t i = 0; i < s.size(); ++i) {
      const char c = s[i];
      const int64_t pos = static_cast<int64_t>(i);
      if (c == '?') {
        unknown = true;
      } else if (c == a && seen_a < 0) {
        seen_a = pos;
      } else if (c == b && seen_b < 0) {
        seen_b = pos;
      } else if (IsDigit(c) && static_cast<size_t>(c - '0') < spatial && sp[c - '0'] < 0) {
        sp[c - '0'] = pos;
      } else {
        return bad(std::string("unexpected or repeated label '") + c + "' in " + Quote(s));
      }
    }
    if (seen_a < 0 || seen_b < 0) {
      return bad(Quote(s) + " must label one dimension '" + a + "' and one '" + b + "'");
    }
    da = seen_a;
    db = seen_b;
    if (unknown) rank = static_cast<int64_t>(s.size());
    return Status::Ok();
  };
  TPUSIM_RETURN_IF_ERROR(decode(lhs, 'b', 'f', d.input_batch_dimension, d.input_feature_dimension,
                                d.input_spatial_dimensions, d.input_rank));
  TPUSIM_RETURN_IF_ERROR(decode(rhs, 'i', 'o', d.kernel_input_feature_dimension,
                                d.kernel_output_feature_dimension, d.kernel_spatial_dimensions,
                                d.kernel_rank));
  TPUSIM_RETURN_IF_ERROR(decode(out, 'b', 'f', d.output_batch_dimension, d.output_feature_dimension,
                                d.output_spatial_dimensions, d.output_rank));
  lexer_.Advance(p - start);
  return d;
}

StatusOr<std::vector<SliceRange>> Parser::ParseSliceRanges() {
  TPUSIM_RETURN_IF_ERROR(lexer_.Expect('{', "to open the slice"));
  std::vector<SliceRange> ranges;
  if (lexer_.TryConsume('}')) return ranges;
  do {
    SliceRange r;
    TPUSIM_RETURN_IF_ERROR(lexer_.Expect('[', "to open a slice range"));
    TPUSIM_ASSIGN_OR_RETURN(r.start, lexer_.ReadInt("a slice start"));
    TPUSIM_RETURN_IF_ERROR(lexer_.Expect(':', "after the slice start"));
    TPUSIM_ASSIGN_OR_RETURN(r.limit, lexer_.ReadInt("a slice limit"));
    if (lexer_.TryConsume(':')) {
      TPUSIM_ASSIGN_OR_RETURN(r.stride, lexer_.ReadInt("a slice stride"));
    }
    TPUSIM_RETURN_IF_ERROR(lexer_.Expect(']', "to close the slice range"));
    ranges.push_back(r);
  } while (lexer_.TryConsume(','));
  TPUSIM_RETURN_IF_ERROR(lexer_.Expect('}', "to close the slice"));
  return ranges;
}

StatusOr<std::vector<PaddingDimension>> Parser::ParsePadding() {
  std::vector<PaddingDimension> dims;
  const char c = lexer_.Peek();
  // A rank-0 pad prints an empty value.
  if (c == ',' || c == '\n' || c == '}' || c == '\0') return dims;
  lexer_.SkipTrivia();
  while (true) {
    PaddingDimension d;
    TPUSIM_ASSIGN_OR_RETURN(d.low, lexer_.ReadIntNoSkip("a low padding"));
    if (lexer_.PeekRaw() != '_') return lexer_.Expected("'_' between low and high padding");
    lexer_.Advance(1);
    TPUSIM_ASSIGN_OR_RETURN(d.high, lexer_.ReadIntNoSkip("a high padding"));
    if (lexer_.PeekRaw() == '_') {
      lexer_.Advance(1);
      TPUSIM_ASSIGN_OR_RETURN(d.interior, lexer_.ReadIntNoSkip("an interior padding"));
    }
    dims.push_back(d);
    if (lexer_.PeekRaw() != 'x') break;
    lexer_.Advance(1);
  }
  return dims;
}

StatusOr<IotaTileAssignment> Parser::ParseIotaAfterDims(std::vector<int64_t> dims) {
  const size_t loc = lexer_.Mark();
  if (!lexer_.TryConsume("<=")) return lexer_.Expected("'<=' in an iota device list");
  IotaTileAssignment iota;
  iota.dims = std::move(dims);
  TPUSIM_ASSIGN_OR_RETURN(iota.reshape_dims, ParseIntList('[', ']', "the iota reshape dims"));
  if (lexer_.Peek() == 'T' && lexer_.PeekRaw(1) == '(') {
    lexer_.Advance(1);
    TPUSIM_ASSIGN_OR_RETURN(iota.transpose_perm, ParseIntList('(', ')', "the iota transpose"));
  }
  int64_t a = 1, b = 1;
  for (int64_t d : iota.dims) {
    if (d <= 0 || __builtin_mul_overflow(a, d, &a)) return lexer_.ErrorAt(loc, "invalid iota dims");
  }
  for (int64_t d : iota.reshape_dims) {
    if (d <= 0 || __builtin_mul_overflow(b, d, &b))
      return lexer_.ErrorAt(loc, "invalid iota reshape dims");
  }
  if (a != b) {
    return lexer_.ErrorAt(loc, "iota device list has " + std::to_string(a) +
                                   " entries but reshape dims hold " + std::to_string(b));
  }
  if (a > (int64_t{1} << 24)) return lexer_.ErrorAt(loc, "iota device list is implausibly large");
  if (!iota.transpose_perm.empty()) {
    std::vector<int64_t> sorted = iota.transpose_perm;
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 0; i < sorted.size(); ++i) {
      if (sorted[i] != static_cast<int64_t>(i) || sorted.size() != iota.reshape_dims.size()) {
        return lexer_.ErrorAt(loc, "iota transpose is not a permutation of the reshape dims");
      }
    }
  }
  return iota;
}

StatusOr<ReplicaGroups> Parser::ParseReplicaGroups() {
  ReplicaGroups groups;
  if (lexer_.PeekIdentifier() == "mesh") return ParseMeshReplicaGroups();
  if (lexer_.Peek() == '[') {
    const size_t loc = lexer_.Mark();
    TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> dims,
                            ParseIntList('[', ']', "the replica group dims"));
    if (dims.size() != 2) {
      return lexer_.ErrorAt(loc, "iota replica groups need [groups,group_size] dims");
    }
    TPUSIM_ASSIGN_OR_RETURN(IotaTileAssignment iota, ParseIotaAfterDims(std::move(dims)));
    const std::vector<int64_t> ids = iota.Expand();
    const size_t size = static_cast<size_t>(iota.dims[1]);
    groups.groups.reserve(static_cast<size_t>(iota.dims[0]));
    for (size_t g = 0; g < static_cast<size_t>(iota.dims[0]); ++g) {
      groups.groups.emplace_back(ids.begin() + g * size, ids.begin() + (g + 1) * size);
    }
    groups.iota = std::move(iota);
    return groups;
  }
  TPUSIM_RETURN_IF_ERROR(lexer_.Expect('{', "to open replica_groups"));
  if (lexer_.TryConsume('}')) return groups;
  do {
    TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> g, ParseIntList('{', '}', "a replica group"));
    groups.groups.push_back(std::move(g));
  } while (lexer_.TryConsume(','));
  TPUSIM_RETURN_IF_ERROR(lexer_.Expect('}', "to close replica_groups"));
  return groups;
}

StatusOr<ReplicaGroups> Parser::ParseMeshReplicaGroups() {
  const size_t loc = lexer_.Mark();
  const size_t start = lexer_.position();
  ReplicaGroups result;
  lexer_.ReadIdentifier();  // "mesh"
  auto read_axis_name = [&]() -> StatusOr<std::string_view> {
    lexer_.SkipTrivia();
    const std::string_view text = lexer_.text();
    const size_t p = lexer_.position();
    if (p >= text.size() || text[p] != '\'') return lexer_.Expected("a quoted mesh axis name");
    const size_t end = text.find('\'', p + 1);
    if (end == std::string_view::npos) return lexer_.Expected("a closing quote of the axis name");
    lexer_.Advance(end + 1 - p);
    return text.substr(p + 1, end - p - 1);
  };
  std::vector<std::string_view> axis_names;
  std::vector<int64_t> axis_sizes;
  TPUSIM_RETURN_IF_ERROR(lexer_.Expect('[', "after 'mesh'"));
  do {
    TPUSIM_ASSIGN_OR_RETURN(std::string_view axis, read_axis_name());
    TPUSIM_RETURN_IF_ERROR(lexer_.Expect('=', "after the mesh axis name"));
    const size_t sloc = lexer_.Mark();
    TPUSIM_ASSIGN_OR_RETURN(int64_t size, lexer_.ReadInt("a mesh axis size"));
    if (size <= 0 || size > (1 << 20)) return lexer_.ErrorAt(sloc, "invalid mesh axis size");
    axis_names.push_back(axis);
    axis_sizes.push_back(size);
  } while (lexer_.TryConsume(','));
  TPUSIM_RETURN_IF_ERROR(lexer_.Expect(']', "to close the mesh"));
  TPUSIM_RETURN_IF_ERROR(lexer_.Expect('{', "to open the mesh axes of the groups"));
  std::vector<size_t> group_axes;
  if (!lexer_.TryConsume('}')) {
    do {
      const size_t aloc = lexer_.Mark();
      TPUSIM_ASSIGN_OR_RETURN(std::string_view axis, read_axis_name());
      size_t a = 0;
      while (a < axis_names.size() && axis_names[a] != axis) ++a;
      if (a == axis_names.size()) {
        return lexer_.ErrorAt(aloc, "mesh axis " + Quote(axis) + " is not in the mesh");
      }
      group_axes.push_back(a);
    } while (lexer_.TryConsume(','));
    TPUSIM_RETURN_IF_ERROR(lexer_.Expect('}', "to close the mesh axes of the groups"));
  }
  int64_t devices = 1;
  for (int64_t s : axis_sizes) {
    if (__builtin_mul_overflow(devices, s, &devices) || devices > (int64_t{1} << 24)) {
      return lexer_.ErrorAt(loc, "mesh is implausibly large");
    }
  }
  // Devices are numbered row-major over the mesh. A group holds the devices
  // that agree on every axis outside group_axes, ordered by group_axes.
  const size_t rank = axis_sizes.size();
  std::vector<bool> in_group(rank, false);
  for (size_t a : group_axes) in_group[a] = true;
  std::vector<int64_t> strides(rank, 1);
  for (size_t a = rank; a-- > 1;) strides[a - 1] = strides[a] * axis_sizes[a];
  std::vector<size_t> outer_axes;
  for (size_t a = 0; a < rank; ++a) {
    if (!in_group[a]) outer_axes.push_back(a);
  }
  auto enumerate = [&](const std::vector<size_t>& axes, auto&& visit) {
    std::vector<int64_t> index(axes.size(), 0);
    while (true) {
      int64_t offset = 0;
      for (size_t i = 0; i < axes.size(); ++i) offset += index[i] * strides[axes[i]];
      visit(offset);
      size_t i = axes.size();
      while (i > 0 && ++index[i - 1] == axis_sizes[axes[i - 1]]) index[--i] = 0;
      if (i == 0) return;
    }
  };
  enumerate(outer_axes, [&](int64_t base) {
    std::vector<int64_t> group;
    enumerate(group_axes, [&](int64_t offset) { group.push_back(base + offset); });
    result.groups.push_back(std::move(group));
  });
  result.mesh_text = std::string(lexer_.text().substr(start, lexer_.position() - start));
  return result;
}

StatusOr<std::vector<KeyValue>> Parser::ParseKeyValues(std::string_view what) {
  if (!lexer_.TryConsume('{')) return lexer_.Expected("'{' to open " + std::string(what));
  // Collected in a reused buffer and copied out at the exact size.
  std::vector<KeyValue>& kvs = key_value_scratch_;
  kvs.clear();
  while (!lexer_.TryConsume('}')) {
    KeyValue kv;
    if (lexer_.Peek() == '"') {
      TPUSIM_ASSIGN_OR_RETURN(kv.key, lexer_.ReadString("a key"));
    } else {
      std::string_view key = lexer_.ReadIdentifier();
      if (key.empty()) return lexer_.Expected("a key or '}' in " + std::string(what));
      kv.key = std::string(key);
    }
    if (!lexer_.TryConsume('=')) return lexer_.Expected("'=' after key " + Quote(kv.key));
    const char c = lexer_.Peek();
    if (c == '"') {
      TPUSIM_ASSIGN_OR_RETURN(kv.value, lexer_.ReadString("a value"));
    } else if (c == '{') {
      TPUSIM_ASSIGN_OR_RETURN(std::string_view raw, lexer_.ReadBracedRaw("value"));
      kv.value = std::string(raw);
      kv.quoted = false;
    } else {
      const std::string_view text = lexer_.text();
      const size_t start = lexer_.position();
      size_t p = start;
      while (p < text.size() && text[p] != ',' && text[p] != '}' && text[p] != ' ' &&
             text[p] != '\n' && text[p] != '\t' && text[p] != '\r' && text[p] != '"' &&
             text[p] != '{') {
        ++p;
      }
      if (p == start) return lexer_.Expected("a value for key " + Quote(kv.key));
      kv.value = std::string(text.substr(start, p - start));
      kv.quoted = false;
      lexer_.Advance(p - start);
    }
    kvs.push_back(std::move(kv));
    lexer_.TryConsume(',');
  }
  std::vector<KeyValue> result(std::make_move_iterator(kvs.begin()),
                               std::make_move_iterator(kvs.end()));
  kvs.clear();
  return result;
}

StatusOr<std::vector<std::pair<int64_t, int64_t>>> Parser::ParseIntPairs() {
  TPUSIM_RETURN_IF_ERROR(lexer_.Expect('{', "to open the pair list"));
  std::vector<std::pair<int64_t, int64_t>> pairs;
  if (lexer_.TryConsume('}')) return pairs;
  do {
    const size_t loc = lexer_.Mark();
    TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> p, ParseIntList('{', '}', "a pair"));
    if (p.size() != 2) return lexer_.ErrorAt(loc, "expected a pair {a,b}");
    pairs.emplace_back(p[0], p[1]);
  } while (lexer_.TryConsume(','));
  TPUSIM_RETURN_IF_ERROR(lexer_.Expect('}', "to close the pair list"));
  return pairs;
}

StatusOr<ShapeIndex> Parser::ParseShapeIndex() { return ParseIntList('{', '}', "a shape index"); }

StatusOr<std::vector<bool>> Parser::ParseBoolList() {
  std::vector<bool> values;
  // A lone `true` or `false` is a list of one, as XLA writes it for one value.
  if (lexer_.TryConsumeWord("true")) return std::vector<bool>{true};
  if (lexer_.TryConsumeWord("false")) return std::vector<bool>{false};
  TPUSIM_RETURN_IF_ERROR(lexer_.Expect('{', "to open the list of booleans"));
  if (lexer_.TryConsume('}')) return values;
  do {
    if (lexer_.TryConsumeWord("true")) {
      values.push_back(true);
    } else if (lexer_.TryConsumeWord("false")) {
      values.push_back(false);
    } else {
      return lexer_.Expected("'true' or 'false'");
    }
  } while (lexer_.TryConsume(','));
  TPUSIM_RETURN_IF_ERROR(lexer_.Expect('}', "to close the list of booleans"));
  return values;
}

}  // namespace tpusim::hlo::internal
