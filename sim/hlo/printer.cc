// HLO text printing in XLA's HloPrinter style. Everything is appended to one
// std::string: printing is on the path of every round-trip test and tool, and
// must keep up with the parser.
#include "sim/hlo/printer.h"

#include <bit>
#include <charconv>
#include <cmath>
#include <type_traits>
#include <variant>

namespace tpusim::hlo {
namespace {

/// Significant digits XLA prints a real with: `%.{digits10}g` when that
/// round-trips, else `%.{max_digits10}g` (RoundTripFpToString).
struct RealStyle {
  int digits10;
  int max_digits10;
};
constexpr RealStyle kFloatStyle{6, 9};     // f32 and narrower, via float
constexpr RealStyle kDoubleStyle{15, 17};  // f64 and c128

RealStyle RealStyleOf(PrimitiveType t) {
  return t == PrimitiveType::kF64 || t == PrimitiveType::kC128 ? kDoubleStyle : kFloatStyle;
}

class Printer {
 public:
  explicit Printer(std::string& out) : out_(out) {}

  void Module(const HloModule& module);
  void Instruction(const HloInstruction& instruction, bool is_root);
  void Literal(const ConstantLiteral& literal, const Shape& shape);
  void AttributeValue(const Attribute& attribute);

 private:
  void Int(int64_t v) {
    char buf[24];
    out_.append(buf, std::to_chars(buf, buf + sizeof(buf), v).ptr);
  }
  void Uint(uint64_t v) {
    char buf[24];
    out_.append(buf, std::to_chars(buf, buf + sizeof(buf), v).ptr);
  }
  void Bool(bool v) { out_ += v ? "true" : "false"; }
  void Real(double v, RealStyle style);
  void Quoted(std::string_view s);
  void Name(std::string_view name) {
    out_ += '%';
    out_ += name;
  }
  /// Calls `each` on every element, appending `sep` between elements.
  template <typename Range, typename Fn>
  void Joined(const Range& range, std::string_view sep, Fn&& each) {
    bool first = true;
    for (const auto& v : range) {
      if (!first) out_ += sep;
      first = false;
      each(v);
    }
  }
  /// `0,1,2`: XLA joins integer lists with bare commas.
  void Ints(const std::vector<int64_t>& v) {
    Joined(v, ",", [&](int64_t x) { Int(x); });
  }
  void BracedInts(const std::vector<int64_t>& v) {
    out_ += '{';
    Ints(v);
    out_ += '}';
  }

  void Header(const HloModule& module);
  void HeaderAttribute(const ModuleHeader& h, std::string_view name);
  void StackFrames(const StackFrameTables& tables);
  void Computation(const HloComputation& computation, bool is_entry);

  void ArrayLiteral(const ConstantLiteral& literal, const Shape& shape);
  void LiteralElement(const ConstantLiteral& literal, PrimitiveType type, int64_t i);
  void NestedLiteral(const ConstantLiteral& literal, const Shape& shape, int64_t dim,
                     int64_t& next);

  void KeyValues(const std::vector<KeyValue>& kvs, std::string_view sep);
  void Window(const hlo::Window& window);
  void DimLabels(const ConvolutionDimensionNumbers& dnums);
  void ReplicaGroups(const hlo::ReplicaGroups& groups);
  void Iota(const IotaTileAssignment& iota);
  void Sharding(const hlo::Sharding& sharding);
  void Named(const hlo::Sharding& sharding);
  void MeshAxis(const hlo::NamedSharding::Axis& axis);
  void MeshAxisRefs(const hlo::NamedSharding& named, const std::vector<MeshAxisRef>& refs);

  std::string& out_;
};

// --- scalars ----------------------------------------------------------------

void Printer::Real(double v, RealStyle style) {
  const uint64_t bits = std::bit_cast<uint64_t>(v);
  if (std::isnan(v)) {
    // The lexer reads `nan(0xP)` as mantissa bits P; plain `nan` is the
    // default quiet NaN, whose mantissa is just the quiet bit.
    constexpr uint64_t kMantissa = (uint64_t{1} << 52) - 1;
    constexpr uint64_t kQuietBit = uint64_t{1} << 51;
    if (bits >> 63) out_ += '-';
    out_ += "nan";
    if ((bits & kMantissa) != kQuietBit) {
      char buf[16];
      out_ += "(0x";
      out_.append(buf, std::to_chars(buf, buf + sizeof(buf), bits & kMantissa, 16).ptr);
      out_ += ')';
    }
    return;
  }
  if (std::isinf(v)) {
    out_ += v < 0 ? "-inf" : "inf";
    return;
  }
  // The shortest digits that read back as the same double (so the text a value
  // was parsed from comes back), placed as XLA's `%.Ng` would place them:
  // fixed notation when -4 <= exponent < N, else scientific.
  char sci[32];
  const char* end = std::to_chars(sci, sci + sizeof(sci), v, std::chars_format::scientific).ptr;
  const std::string_view s(sci, end - sci);
  const size_t e_pos = s.find('e');
  int exponent = 0;
  std::from_chars(s.data() + e_pos + (s[e_pos + 1] == '+' ? 2 : 1), s.data() + s.size(), exponent);
  const bool negative = s[0] == '-';
  char digits[24];
  int n = 0;
  for (size_t i = negative ? 1 : 0; i < e_pos; ++i) {
    if (s[i] != '.') digits[n++] = s[i];
  }
  const int precision = n <= style.digits10 ? style.digits10 : style.max_digits10;
  if (exponent < -4 || exponent >= precision) {
    out_ += s;
    return;
  }
  if (negative) out_ += '-';
  if (exponent < 0) {
    out_ += "0.";
    out_.append(-exponent - 1, '0');
    out_.append(digits, n);
    return;
  }
  const int int_digits = exponent + 1;
  if (n <= int_digits) {
    out_.append(digits, n);
    out_.append(int_digits - n, '0');
    return;
  }
  out_.append(digits, int_digits);
  out_ += '.';
  out_.append(digits + int_digits, n - int_digits);
}

void Printer::Quoted(std::string_view s) {
  // Only escapes the lexer reads back: \" \\ \n \t \r, \' (as XLA's CEscape
  // writes it) and \xHH (exactly two hex digits) for other control bytes.
  // Other bytes, UTF-8 included, are raw.
  static constexpr char kHex[] = "0123456789abcdef";
  out_ += '"';
  size_t run = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = s[i];
    if (c >= 0x20 && c != '"' && c != '\\' && c != '\'' && c != 0x7f) continue;
    out_.append(s.data() + run, i - run);
    run = i + 1;
    switch (c) {
      case '"':
        out_ += "\\\"";
        break;
      case '\\':
        out_ += "\\\\";
        break;
      case '\'':
        out_ += "\\'";
        break;
      case '\n':
        out_ += "\\n";
        break;
      case '\t':
        out_ += "\\t";
        break;
      case '\r':
        out_ += "\\r";
        break;
      default:
        out_ += "\\x";
        out_ += kHex[c >> 4];
        out_ += kHex[c & 15];
    }
  }
  out_.append(s.data() + run, s.size() - run);
  out_ += '"';
}

// --- module -----------------------------------------------------------------

void Printer::Module(const HloModule& module) {
  Header(module);
  out_ += "\n\n";
  if (!module.stack_frames().empty()) StackFrames(module.stack_frames());
  bool first = true;
  for (const auto& computation : module.computations()) {
    if (!first) out_ += '\n';
    first = false;
    Computation(*computation, computation.get() == module.entry());
  }
}

void Printer::Header(const HloModule& module) {
  const ModuleHeader& h = module.header();
  out_ += "HloModule ";
  out_ += module.name();
  for (const std::string& name : h.order) HeaderAttribute(h, name);
  // Attributes set without being recorded in `order` (modules built in code)
  // follow, so that printing never drops one.
  const auto in_order = [&](std::string_view name) {
    for (const std::string& n : h.order) {
      if (n == name) return true;
    }
    return false;
  };
  static constexpr std::string_view kKnown[] = {"is_scheduled",
                                                "entry_computation_layout",
                                                "input_output_alias",
                                                "buffer_donor",
                                                "alias_passthrough_params",
                                                "replica_count",
                                                "num_partitions",
                                                "allow_spmd_sharding_propagation_to_parameters",
                                                "allow_spmd_sharding_propagation_to_output",
                                                "frontend_attributes"};
  for (std::string_view name : kKnown) {
    if (!in_order(name)) HeaderAttribute(h, name);
  }
  for (const auto& [name, value] : h.unknown) {
    if (!in_order(name)) HeaderAttribute(h, name);
  }
}

/// Prints `, name=value` if the header has the attribute.
void Printer::HeaderAttribute(const ModuleHeader& h, std::string_view name) {
  const auto key = [&] {
    out_ += ", ";
    out_ += name;
    out_ += '=';
  };
  const auto bools = [&](const std::optional<std::vector<bool>>& v) {
    if (!v) return;
    key();
    out_ += '{';
    Joined(*v, ",", [&](bool b) { Bool(b); });
    out_ += '}';
  };
  if (name == "is_scheduled" || name == "alias_passthrough_params") {
    const std::optional<bool>& v =
        name == "is_scheduled" ? h.is_scheduled : h.alias_passthrough_params;
    if (!v) return;
    key();
    Bool(*v);
    return;
  }
  if (name == "replica_count" || name == "num_partitions") {
    const std::optional<int64_t>& v = name == "replica_count" ? h.replica_count : h.num_partitions;
    if (!v) return;
    key();
    Int(*v);
    return;
  }
  if (name == "entry_computation_layout") {
    if (!h.entry_computation_layout) return;
    key();
    out_ += "{(";
    Joined(h.entry_computation_layout->parameters, ", ",
           [&](const Shape& s) { AppendShape(s, /*print_layout=*/true, out_); });
    out_ += ")->";
    AppendShape(h.entry_computation_layout->result, /*print_layout=*/true, out_);
    out_ += '}';
    return;
  }
  if (name == "input_output_alias") {
    if (!h.input_output_alias) return;
    key();
    if (h.input_output_alias->empty()) {
      out_ += "{}";
      return;
    }
    out_ += "{ ";
    Joined(*h.input_output_alias, ", ", [&](const InputOutputAlias& a) {
      BracedInts(a.output_index);
      out_ += ": (";
      Int(a.parameter_number);
      out_ += ", ";
      BracedInts(a.parameter_index);
      if (!a.kind.empty()) {
        out_ += ", ";
        out_ += a.kind;
      }
      out_ += ')';
    });
    out_ += " }";
    return;
  }
  if (name == "buffer_donor") {
    if (!h.buffer_donor) return;
    key();
    if (h.buffer_donor->empty()) {
      out_ += "{}";
      return;
    }
    out_ += "{ ";
    Joined(*h.buffer_donor, ", ", [&](const BufferDonor& d) {
      out_ += '(';
      Int(d.parameter_number);
      out_ += ", ";
      BracedInts(d.parameter_index);
      out_ += ')';
    });
    out_ += " }";
    return;
  }
  if (name == "allow_spmd_sharding_propagation_to_parameters") {
    bools(h.allow_spmd_sharding_propagation_to_parameters);
    return;
  }
  if (name == "allow_spmd_sharding_propagation_to_output") {
    bools(h.allow_spmd_sharding_propagation_to_output);
    return;
  }
  if (name == "frontend_attributes") {
    if (!h.frontend_attributes) return;
    key();
    KeyValues(*h.frontend_attributes, ",");
    return;
  }
  const auto it = h.unknown.find(std::string(name));
  if (it == h.unknown.end()) return;
  key();
  out_ += it->second;
}

void Printer::StackFrames(const StackFrameTables& tables) {
  const auto section = [&](std::string_view keyword,
                           const std::vector<StackFrameTables::Entry>& entries, bool strings) {
    if (entries.empty()) return;
    out_ += keyword;
    out_ += '\n';
    for (const StackFrameTables::Entry& e : entries) {
      Int(e.id);
      out_ += ' ';
      if (strings) {
        Quoted(e.text);
      } else {
        KeyValues(e.fields, " ");
      }
      out_ += '\n';
    }
    out_ += '\n';
  };
  section("FileNames", tables.file_names, true);
  section("FunctionNames", tables.function_names, true);
  section("FileLocations", tables.file_locations, false);
  section("StackFrames", tables.stack_frames, false);
}

void Printer::Computation(const HloComputation& computation, bool is_entry) {
  if (is_entry) out_ += "ENTRY ";
  Name(computation.name());
  // The signature needs the result shape; a computation without a ROOT (which
  // the verifier rejects) is printed without one, which the grammar allows.
  if (computation.root() != nullptr) {
    out_ += " (";
    bool first = true;
    for (const HloInstruction* p : computation.parameters()) {
      if (p == nullptr) continue;
      if (!first) out_ += ", ";
      first = false;
      out_ += p->name();
      out_ += ": ";
      AppendShape(p->shape(), /*print_layout=*/false, out_);
    }
    out_ += ") -> ";
    AppendShape(computation.root()->shape(), /*print_layout=*/false, out_);
  }
  out_ += " {\n";
  for (const auto& instruction : computation.instructions()) {
    out_ += "  ";
    Instruction(*instruction, instruction.get() == computation.root());
    out_ += '\n';
  }
  out_ += '}';
  if (!computation.execution_thread().empty()) {
    out_ += ", execution_thread=";
    Quoted(computation.execution_thread());
  }
  out_ += '\n';
}

// --- instructions -----------------------------------------------------------

void Printer::Instruction(const HloInstruction& instruction, bool is_root) {
  if (is_root) out_ += "ROOT ";
  Name(instruction.name());
  out_ += " = ";
  AppendShape(instruction.shape(), /*print_layout=*/true, out_);
  out_ += ' ';
  // OpcodeSpelling() without its string allocation.
  const HloOpcode opcode = instruction.opcode();
  if (const auto wrapped = instruction.async_wrapped_opcode();
      wrapped && (opcode == HloOpcode::kAsyncStart || opcode == HloOpcode::kAsyncUpdate ||
                  opcode == HloOpcode::kAsyncDone)) {
    out_ += HloOpcodeName(*wrapped);
    out_ += opcode == HloOpcode::kAsyncStart    ? "-start"
            : opcode == HloOpcode::kAsyncUpdate ? "-update"
                                                : "-done";
  } else {
    out_ += HloOpcodeName(opcode);
  }
  out_ += '(';
  if (opcode == HloOpcode::kParameter) {
    Int(instruction.parameter_number());
  } else if (opcode == HloOpcode::kConstant && instruction.has_literal()) {
    Literal(instruction.literal(), instruction.shape());
  } else {
    Joined(instruction.operands(), ", ", [&](const HloInstruction* op) { Name(op->name()); });
  }
  out_ += ')';
  for (const Attribute& attribute : instruction.attributes()) {
    out_ += ", ";
    out_ += attribute.spelling();
    out_ += '=';
    AttributeValue(attribute);
  }
  if (!instruction.control_predecessors().empty()) {
    out_ += ", control-predecessors={";
    Joined(instruction.control_predecessors(), ", ",
           [&](const HloInstruction* p) { Name(p->name()); });
    out_ += '}';
  }
}

// --- literals ---------------------------------------------------------------

void Printer::Literal(const ConstantLiteral& literal, const Shape& shape) {
  if (literal.elided) {
    out_ += "{...}";
    return;
  }
  if (!shape.IsTuple()) {
    ArrayLiteral(literal, shape);
    return;
  }
  out_ += '(';
  for (size_t i = 0; i < literal.elements.size(); ++i) {
    if (i > 0) out_ += ", ";
    // A literal with more elements than its shape (never produced by the
    // parser) prints its extra elements as f32 scalars rather than crashing.
    Literal(literal.elements[i],
            static_cast<int64_t>(i) < shape.tuple_size() ? shape.tuple_shapes(i) : Shape());
  }
  out_ += ')';
}

void Printer::LiteralElement(const ConstantLiteral& literal, PrimitiveType type, int64_t i) {
  switch (KindOf(type)) {
    case PrimitiveKind::kPred:
      Bool(literal.ints[i] != 0);
      return;
    case PrimitiveKind::kSigned:
      Int(literal.ints[i]);
      return;
    case PrimitiveKind::kUnsigned:
      Uint(static_cast<uint64_t>(literal.ints[i]));
      return;
    case PrimitiveKind::kFloat:
    case PrimitiveKind::kNonArray:
      Real(literal.reals[i], RealStyleOf(type));
      return;
    case PrimitiveKind::kComplex:
      out_ += '(';
      Real(literal.reals[i], RealStyleOf(type));
      out_ += ", ";
      Real(literal.imags[i], RealStyleOf(type));
      out_ += ')';
      return;
  }
}

void Printer::ArrayLiteral(const ConstantLiteral& literal, const Shape& shape) {
  const PrimitiveType type = shape.element_type();
  const PrimitiveKind kind = KindOf(type);
  const bool integral = kind == PrimitiveKind::kPred || kind == PrimitiveKind::kSigned ||
                        kind == PrimitiveKind::kUnsigned;
  const size_t available = integral ? literal.ints.size()
                           : kind == PrimitiveKind::kComplex
                               ? std::min(literal.reals.size(), literal.imags.size())
                               : literal.reals.size();
  const int64_t count = shape.element_count();
  if (static_cast<size_t>(count) != available) {
    // Values that do not fill the shape (never produced by the parser): print
    // them flat, so that reading the text back reports the mismatch.
    out_ += '{';
    for (size_t i = 0; i < available; ++i) {
      if (i > 0) out_ += ", ";
      LiteralElement(literal, type, static_cast<int64_t>(i));
    }
    out_ += '}';
    return;
  }
  if (shape.rank() == 0) {
    LiteralElement(literal, type, 0);
    return;
  }
  int64_t next = 0;
  NestedLiteral(literal, shape, 0, next);
}

/// `{1, 2}` for the innermost dimension, `{ {1, 2}, {3, 4} }` around it, and
/// `{}` for a dimension of size 0 (so f32[2,0] is `{ {}, {} }`, as in XLA).
void Printer::NestedLiteral(const ConstantLiteral& literal, const Shape& shape, int64_t dim,
                            int64_t& next) {
  const int64_t size = shape.dimensions(dim);
  if (size == 0) {
    out_ += "{}";
    return;
  }
  if (dim == shape.rank() - 1) {
    out_ += '{';
    for (int64_t i = 0; i < size; ++i) {
      if (i > 0) out_ += ", ";
      LiteralElement(literal, shape.element_type(), next++);
    }
    out_ += '}';
    return;
  }
  out_ += "{ ";
  for (int64_t i = 0; i < size; ++i) {
    if (i > 0) out_ += ", ";
    NestedLiteral(literal, shape, dim + 1, next);
  }
  out_ += " }";
}

// --- attributes -------------------------------------------------------------

void Printer::AttributeValue(const Attribute& attribute) {
  const AttrKind kind = attribute.kind();
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, int64_t>) {
          Int(v);
        } else if constexpr (std::is_same_v<T, bool>) {
          Bool(v);
        } else if constexpr (std::is_same_v<T, double>) {
          Real(v, kFloatStyle);  // every real attribute (epsilon) is an f32 in XLA
        } else if constexpr (std::is_same_v<T, std::string>) {
          if (kind == AttrKind::kString) {
            Quoted(v);
          } else {
            out_ += v;  // identifiers and attributes kept verbatim
          }
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          BracedInts(v);
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          out_ += '{';
          Joined(v, ",", [&](const std::string& s) { out_ += s; });
          out_ += '}';
        } else if constexpr (std::is_same_v<T, std::vector<std::pair<int64_t, int64_t>>>) {
          out_ += '{';
          Joined(v, ",", [&](const std::pair<int64_t, int64_t>& p) {
            out_ += '{';
            Int(p.first);
            out_ += ',';
            Int(p.second);
            out_ += '}';
          });
          out_ += '}';
        } else if constexpr (std::is_same_v<T, HloComputation*>) {
          Name(v->name());
        } else if constexpr (std::is_same_v<T, ComputationList>) {
          const bool braced = v.braced || v.computations.size() != 1;
          if (braced) out_ += '{';
          Joined(v.computations, ", ", [&](const HloComputation* c) { Name(c->name()); });
          if (braced) out_ += '}';
        } else if constexpr (std::is_same_v<T, Box<hlo::Window>>) {
          Window(*v);
        } else if constexpr (std::is_same_v<T, Box<ConvolutionDimensionNumbers>>) {
          DimLabels(*v);
        } else if constexpr (std::is_same_v<T, std::vector<SliceRange>>) {
          out_ += '{';
          Joined(v, ", ", [&](const SliceRange& r) {
            out_ += '[';
            Int(r.start);
            out_ += ':';
            Int(r.limit);
            if (r.stride != 1) {
              out_ += ':';
              Int(r.stride);
            }
            out_ += ']';
          });
          out_ += '}';
        } else if constexpr (std::is_same_v<T, std::vector<PaddingDimension>>) {
          bool interior = false;
          for (const PaddingDimension& p : v) interior |= p.interior != 0;
          Joined(v, "x", [&](const PaddingDimension& p) {
            Int(p.low);
            out_ += '_';
            Int(p.high);
            if (interior) {
              out_ += '_';
              Int(p.interior);
            }
          });
        } else if constexpr (std::is_same_v<T, Box<hlo::ReplicaGroups>>) {
          ReplicaGroups(*v);
        } else if constexpr (std::is_same_v<T, Box<hlo::Sharding>>) {
          Sharding(*v);
        } else if constexpr (std::is_same_v<T, std::vector<KeyValue>>) {
          // XLA separates metadata fields with spaces and dictionaries with commas.
          KeyValues(v, attribute.id == AttrId::kMetadata ? " " : ",");
        } else if constexpr (std::is_same_v<T, Box<Shape>>) {
          AppendShape(*v, /*print_layout=*/true, out_);
        } else if constexpr (std::is_same_v<T, std::vector<Shape>>) {
          out_ += '{';
          Joined(v, ", ", [&](const Shape& s) { AppendShape(s, /*print_layout=*/true, out_); });
          out_ += '}';
        } else {
          static_assert(std::is_same_v<T, BackendConfig>, "unhandled attribute value type");
          if (v.is_string) {
            Quoted(v.text);
          } else {
            out_ += v.text;
          }
        }
      },
      attribute.value);
}

void Printer::KeyValues(const std::vector<KeyValue>& kvs, std::string_view sep) {
  out_ += '{';
  Joined(kvs, sep, [&](const KeyValue& kv) {
    out_ += kv.key;
    out_ += '=';
    if (kv.quoted) {
      Quoted(kv.value);
    } else {
      out_ += kv.value;
    }
  });
  out_ += '}';
}

/// XLA's WindowToString: `size` always, every other field only when some
/// dimension differs from the default.
void Printer::Window(const hlo::Window& window) {
  const auto& dims = window.dimensions;
  const auto any = [&](auto pred) {
    for (const WindowDimension& d : dims) {
      if (pred(d)) return true;
    }
    return false;
  };
  const auto field = [&](std::string_view name, auto each) {
    out_ += ' ';
    out_ += name;
    out_ += '=';
    Joined(dims, "x", each);
  };
  out_ += '{';
  if (!dims.empty()) {
    out_ += "size=";
    Joined(dims, "x", [&](const WindowDimension& d) { Int(d.size); });
  }
  if (any([](const WindowDimension& d) { return d.stride != 1; })) {
    field("stride", [&](const WindowDimension& d) { Int(d.stride); });
  }
  if (any([](const WindowDimension& d) { return d.padding_low != 0 || d.padding_high != 0; })) {
    field("pad", [&](const WindowDimension& d) {
      Int(d.padding_low);
      out_ += '_';
      Int(d.padding_high);
    });
  }
  if (any([](const WindowDimension& d) { return d.base_dilation != 1; })) {
    field("lhs_dilate", [&](const WindowDimension& d) { Int(d.base_dilation); });
  }
  if (any([](const WindowDimension& d) { return d.window_dilation != 1; })) {
    field("rhs_dilate", [&](const WindowDimension& d) { Int(d.window_dilation); });
  }
  if (any([](const WindowDimension& d) { return d.window_reversal; })) {
    field("rhs_reversal", [&](const WindowDimension& d) { out_ += d.window_reversal ? '1' : '0'; });
  }
  out_ += '}';
}

/// `b01f_01io->b01f`: each operand's dimensions labelled in order, spatial
/// dimension i by the digit i. Positions no field names (invalid numbers) get
/// `?`, as the lexer's dim-label pattern allows.
void Printer::DimLabels(const ConvolutionDimensionNumbers& d) { out_ += DimLabelsText(d); }

void Printer::Iota(const IotaTileAssignment& iota) {
  out_ += '[';
  Ints(iota.dims);
  out_ += "]<=[";
  Ints(iota.reshape_dims);
  out_ += ']';
  if (!iota.transpose_perm.empty()) {
    out_ += "T(";
    Ints(iota.transpose_perm);
    out_ += ')';
  }
}

void Printer::ReplicaGroups(const hlo::ReplicaGroups& groups) {
  if (!groups.mesh_text.empty()) {
    out_ += groups.mesh_text;
    return;
  }
  if (groups.iota) {
    Iota(*groups.iota);
    return;
  }
  out_ += '{';
  Joined(groups.groups, ",", [&](const std::vector<int64_t>& g) { BracedInts(g); });
  out_ += '}';
}

void Printer::MeshAxis(const hlo::NamedSharding::Axis& axis) {
  if (axis.quoted) out_ += '\'';
  out_ += axis.name;
  if (axis.quoted) out_ += '\'';
}

void Printer::MeshAxisRefs(const hlo::NamedSharding& named, const std::vector<MeshAxisRef>& refs) {
  Joined(refs, ", ", [&](const MeshAxisRef& r) {
    MeshAxis(named.axes[static_cast<size_t>(r.axis)]);
    if (r.size != 0) {
      out_ += ":(";
      Int(r.pre_size);
      out_ += ')';
      Int(r.size);
    }
  });
}

/// XLA's NamedSharding::ToString.
void Printer::Named(const hlo::Sharding& s) {
  const hlo::NamedSharding& n = *s.named;
  out_ += '{';
  if (n.maximal_device) {
    out_ += "maximal_mesh[device_id=";
    Int(*n.maximal_device);
    out_ += ']';
  } else {
    out_ += "mesh[";
    Joined(n.axes, ",", [&](const hlo::NamedSharding::Axis& a) {
      MeshAxis(a);
      out_ += '=';
      Int(a.size);
    });
    out_ += ']';
    if (!n.device_ids.empty()) {
      out_ += ", device_ids=(";
      Ints(n.device_ids);
      out_ += ')';
    } else if (n.device_iota) {
      out_ += ", device_ids=([";
      Ints(n.device_iota->reshape_dims);
      out_ += ']';
      if (!n.device_iota->transpose_perm.empty()) {
        out_ += "T(";
        Ints(n.device_iota->transpose_perm);
        out_ += ')';
      }
      out_ += ')';
    }
    switch (n.whole) {
      case hlo::NamedSharding::Whole::kReplicated:
        out_ += ", replicated";
        break;
      case hlo::NamedSharding::Whole::kUnreduced:
        out_ += ", unreduced";
        break;
      case hlo::NamedSharding::Whole::kManual:
        out_ += ", manual";
        break;
      case hlo::NamedSharding::Whole::kNone:
        break;
    }
    if (n.dimensions_written) {
      out_ += ", [";
      Joined(n.dimensions, ", ", [&](const hlo::NamedSharding::Dimension& d) {
        out_ += '{';
        MeshAxisRefs(n, d.axes);
        if (d.open) out_ += d.axes.empty() ? "?" : ", ?";
        out_ += '}';
      });
      out_ += ']';
    }
    const auto list = [&](std::string_view name, std::string_view kind,
                          const std::vector<MeshAxisRef>& refs) {
      if (refs.empty() && kind.empty()) return;
      out_ += ", ";
      out_ += name;
      out_ += '=';
      out_ += kind;
      out_ += '{';
      MeshAxisRefs(n, refs);
      out_ += '}';
    };
    list("replicated", "", n.replicated_axes);
    list("unreduced", n.unreduced_kind, n.unreduced_axes);
    list("manual", "", n.manual_axes);
  }
  if (!s.metadata.empty()) {
    out_ += ", metadata=";
    out_ += s.metadata;  // verbatim, braces included
  }
  out_ += '}';
}

/// XLA's HloSharding::Print.
void Printer::Sharding(const hlo::Sharding& s) {
  using Type = hlo::Sharding::Type;
  if (s.named) {
    Named(s);
    return;
  }
  out_ += '{';
  switch (s.type) {
    case Type::kTuple:
      Joined(s.elements, ", ", [&](const hlo::Sharding& e) { Sharding(e); });
      out_ += '}';
      return;
    case Type::kReplicated:
      out_ += "replicated";
      break;
    case Type::kManual:
      out_ += "manual";
      break;
    case Type::kUnknown:
      out_ += "unknown";
      break;
    case Type::kUnreduced:
      out_ += "unreduced";
      break;
    case Type::kMaximal:
      out_ += "maximal device=";
      Int(s.device);
      break;
    case Type::kNamed:  // only made from a named sharding, printed above
      break;
    case Type::kTiled:
      out_ += "devices=";
      if (s.iota) {
        Iota(*s.iota);
      } else {
        out_ += '[';
        Ints(s.tile_dims);
        out_ += ']';
        Ints(s.devices);
      }
      if (s.last_tile_dim_replicate) out_ += " last_tile_dim_replicate";
      if (!s.last_tile_dims.empty()) {
        out_ += " last_tile_dims={";
        Joined(s.last_tile_dims, ", ", [&](const std::string& t) { out_ += t; });
        out_ += '}';
      }
      break;
  }
  if (s.shard_as) {
    out_ += " shard_as ";
    Int(*s.shard_as);
  }
  if (s.shard_like) {
    out_ += " shard_like ";
    Int(*s.shard_like);
  }
  if (!s.metadata.empty()) {
    out_ += " metadata=";
    out_ += s.metadata;  // verbatim, braces included
  }
  out_ += '}';
}

}  // namespace

std::string PrintModule(const HloModule& module) {
  std::string out;
  int64_t instructions = 0;
  for (const auto& c : module.computations()) instructions += c->instruction_count();
  // Dump lines average well under this; one reservation avoids most regrowth.
  out.reserve(static_cast<size_t>(instructions) * 160 + 256);
  Printer(out).Module(module);
  return out;
}

std::string PrintInstruction(const HloInstruction& instruction) {
  std::string out;
  Printer(out).Instruction(instruction, instruction.IsRoot());
  return out;
}

std::string PrintAttributeValue(const Attribute& attribute) {
  std::string out;
  Printer(out).AttributeValue(attribute);
  return out;
}

std::string PrintConstantLiteral(const ConstantLiteral& literal, const Shape& shape) {
  std::string out;
  Printer(out).Literal(literal, shape);
  return out;
}

}  // namespace tpusim::hlo
