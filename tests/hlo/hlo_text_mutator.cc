#include "tests/hlo/hlo_text_mutator.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/hlo/primitive_type.h"

namespace tpusim::test {
namespace {

constexpr size_t kNone = std::string::npos;

/// SplitMix64: small, and the same sequence with every compiler and library
/// (the <random> distributions are not), so a fuzzing run's -seed replays it.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
    z = (z ^ (z >> 27)) * 0x94d049bb133111eb;
    return z ^ (z >> 31);
  }
  size_t Below(size_t n) { return static_cast<size_t>(Next() % n); }
  template <typename T>
  const T& Pick(const std::vector<T>& values) {
    return values[Below(values.size())];
  }

 private:
  uint64_t state_;
};

/// Numbers at the edges of int32, uint32, int64 and uint64 arithmetic.
const std::vector<std::string_view> kBigNumbers = {
    "2147483647",          "2147483648",           "4294967295",           "4294967296",
    "4294967297",          "1099511627776",        "4611686018427387904",  "9223372036854775807",
    "9223372036854775808", "18446744073709551615", "18446744073709551616", "0",
};

/// Nesting depths: around the parser's limits (64 for shapes, 256 for
/// brackets) and far past them, where recursion would overflow the stack.
const std::vector<size_t> kDepths = {2, 16, 63, 64, 65, 255, 256, 257, 1000, 5000, 20000};

/// Tuple shape depths around kMaxShapeDepth (64); each level is a line as
/// long as its depth, so these stay small.
const std::vector<size_t> kTupleDepths = {8, 62, 63, 64, 65, 100};

/// Operand counts.
const std::vector<size_t> kWidths = {64, 1000, 10000, 100000};

bool IsWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }
bool IsNameChar(char c) { return IsWordChar(c) || c == '_' || c == '.' || c == '-'; }

/// Position just past the bracket that closes text[open] ('[' or '{'), or kNone.
size_t PastClosing(const std::string& text, size_t open) {
  const char opening = text[open];
  const char closing = opening == '[' ? ']' : '}';
  int depth = 0;
  for (size_t i = open; i < text.size(); ++i) {
    if (text[i] == opening) ++depth;
    if (text[i] == closing && --depth == 0) return i + 1;
  }
  return kNone;
}

/// An array shape in the text: "f32[2,3]{1,0:T(2,128)}".
struct ShapeSpan {
  size_t begin = 0;     ///< the element type's first character
  size_t dims = 0;      ///< the '['
  size_t dims_end = 0;  ///< just past the ']'
  size_t end = 0;       ///< just past the layout's '}', or dims_end without one
};

std::vector<ShapeSpan> FindShapes(const std::string& text) {
  std::vector<ShapeSpan> shapes;
  for (size_t i = 1; i < text.size(); ++i) {
    if (text[i] != '[' || !IsWordChar(text[i - 1])) continue;
    size_t begin = i;
    while (begin > 0 && IsWordChar(text[begin - 1])) --begin;
    if (begin > 0 && IsNameChar(text[begin - 1])) continue;
    if (!hlo::PrimitiveTypeFromName(std::string_view(text).substr(begin, i - begin))) continue;
    const size_t dims_end = PastClosing(text, i);
    if (dims_end == kNone) continue;
    size_t end = dims_end;
    if (dims_end < text.size() && text[dims_end] == '{') {
      end = PastClosing(text, dims_end);
      if (end == kNone) end = dims_end;
    }
    shapes.push_back(ShapeSpan{begin, i, dims_end, end});
  }
  return shapes;
}

struct NumberSpan {
  size_t begin = 0;
  size_t end = 0;
};

/// Runs of digits in [from, to) that stand alone (not inside a name such as
/// "add.12" or a type such as "f32").
std::vector<NumberSpan> FindNumbers(const std::string& text, size_t from, size_t to) {
  std::vector<NumberSpan> numbers;
  for (size_t i = from; i < to; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) continue;
    size_t end = i;
    while (end < to && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
    if ((i == 0 || !IsNameChar(text[i - 1])) && (end == text.size() || !IsNameChar(text[end]))) {
      numbers.push_back(NumberSpan{i, end});
    }
    i = end;
  }
  return numbers;
}

/// Where instructions can be added to the entry computation: just past the
/// line that opens it, or kNone.
size_t EntryBody(const std::string& text) {
  size_t entry = text.rfind("\nENTRY", kNone);
  if (entry == kNone && text.starts_with("ENTRY")) entry = 0;
  if (entry == kNone) return kNone;
  const size_t brace = text.find('{', entry);
  if (brace == kNone) return kNone;
  const size_t line_end = text.find('\n', brace);
  return line_end == kNone ? kNone : line_end + 1;
}

/// The start of the line that holds `pos`.
size_t LineStart(const std::string& text, size_t pos) {
  const size_t newline = text.rfind('\n', pos);
  return newline == kNone ? 0 : newline + 1;
}

/// Inserts `insertion` at `pos` if the result fits in `max_size`.
bool InsertIfFits(std::string& text, size_t pos, const std::string& insertion, size_t max_size) {
  if (text.size() + insertion.size() > max_size) return false;
  text.insert(pos, insertion);
  return true;
}

bool NestTupleShape(Rng& rng, size_t max_size, std::string& text) {
  const std::vector<ShapeSpan> shapes = FindShapes(text);
  if (shapes.empty() || text.size() + 2 > max_size) return false;
  const ShapeSpan shape = rng.Pick(shapes);
  const size_t depth = std::min(rng.Pick(kDepths), (max_size - text.size()) / 2);
  text.insert(shape.end, std::string(depth, ')'));
  text.insert(shape.begin, std::string(depth, '('));
  return true;
}

bool ReplaceNumber(Rng& rng, size_t max_size, const std::vector<NumberSpan>& numbers,
                   std::string& text) {
  if (numbers.empty()) return false;
  const NumberSpan number = rng.Pick(numbers);
  const std::string_view big = rng.Pick(kBigNumbers);
  if (text.size() - (number.end - number.begin) + big.size() > max_size) return false;
  text.replace(number.begin, number.end - number.begin, big);
  return true;
}

bool BigDimension(Rng& rng, size_t max_size, std::string& text) {
  const std::vector<ShapeSpan> shapes = FindShapes(text);
  if (shapes.empty()) return false;
  const ShapeSpan shape = rng.Pick(shapes);
  const std::vector<NumberSpan> dims = FindNumbers(text, shape.dims + 1, shape.dims_end - 1);
  if (dims.empty()) {  // a scalar becomes a vector
    return InsertIfFits(text, shape.dims + 1, std::string(rng.Pick(kBigNumbers)), max_size);
  }
  return ReplaceNumber(rng, max_size, dims, text);
}

bool HugeTile(Rng& rng, size_t max_size, std::string& text) {
  const std::vector<ShapeSpan> shapes = FindShapes(text);
  if (shapes.empty()) return false;
  const ShapeSpan shape = rng.Pick(shapes);
  std::string tile;
  switch (rng.Below(3)) {
    case 0:
      tile = "T(4294967296,4294967296)";
      break;
    case 1:
      tile = "T(" + std::string(rng.Pick(kBigNumbers)) + ")";
      break;
    default:
      tile = "T(" + std::string(rng.Pick(kBigNumbers)) + "," + std::string(rng.Pick(kBigNumbers)) +
             ")(2,1)";
      break;
  }
  if (shape.end != shape.dims_end) {  // a layout: the tile goes first after ':', or gains one
    const size_t colon = text.find(':', shape.dims_end);
    if (colon != kNone && colon < shape.end) return InsertIfFits(text, colon + 1, tile, max_size);
    return InsertIfFits(text, shape.end - 1, ":" + tile, max_size);
  }
  // No layout: add the default one (major to minor) with the tile.
  const size_t rank = text[shape.dims + 1] == ']'
                          ? 0
                          : static_cast<size_t>(std::count(text.begin() + shape.dims,
                                                           text.begin() + shape.dims_end, ',')) +
                                1;
  std::string layout = "{";
  for (size_t d = rank; d-- > 0;) layout += std::to_string(d) + (d > 0 ? "," : "");
  return InsertIfFits(text, shape.dims_end, layout + ":" + tile + "}", max_size);
}

/// "fz1a2b3c4d": names the mutation adds start with it.
std::string Tag(Rng& rng) {
  char tag[16];
  std::snprintf(tag, sizeof tag, "fz%08x", static_cast<unsigned>(rng.Next()));
  return tag;
}

bool NestComputations(Rng& rng, size_t max_size, std::string& text) {
  const size_t body = EntryBody(text);
  if (body == kNone) return false;
  const std::string tag = Tag(rng);
  // One kind of nesting for the whole chain, or a mix of the three.
  const size_t chain_kind = rng.Below(4);
  auto level = [&](size_t callee) {
    const std::string c = tag + ".c" + std::to_string(callee);
    switch (chain_kind == 3 ? rng.Below(3) : chain_kind) {
      case 0:
        return "call(p), to_apply=" + c;
      case 1:
        return "fusion(p), kind=kLoop, calls=" + c;
      default:
        return "while(p), condition=" + tag + ".cond, body=" + c;
    }
  };
  std::string computations = tag + ".c0 {\n  p = s32[] parameter(0)\n  one = s32[] constant(1)\n" +
                             "  ROOT r = s32[] add(p, one)\n}\n" + tag +
                             ".cond {\n  p = s32[] parameter(0)\n  ten = s32[] constant(10)\n" +
                             "  ROOT lt = pred[] compare(p, ten), direction=LT\n}\n";
  // As deep as asked, or as fits: a level takes under 150 bytes, the uses in
  // the entry under 300.
  size_t depth = 1;
  for (const size_t wanted = rng.Pick(kDepths); depth < wanted; ++depth) {
    if (text.size() + computations.size() + 450 > max_size) break;
    computations += tag + ".c" + std::to_string(depth) + " {\n  p = s32[] parameter(0)\n" +
                    "  ROOT r = s32[] " + level(depth - 1) + "\n}\n";
  }
  const std::string p = tag + ".p";
  std::string uses =
      "  " + p + " = s32[] constant(0)\n  " + tag + ".out = s32[] " + level(depth - 1) + "\n";
  uses.replace(uses.find("(p)"), 3, "(" + p + ")");
  if (text.size() + computations.size() + uses.size() > max_size) return false;
  text.insert(body, uses);
  text.insert(LineStart(text, text.rfind("ENTRY", body)), computations);
  return true;
}

bool DeepTupleValue(Rng& rng, size_t max_size, std::string& text) {
  const size_t body = EntryBody(text);
  if (body == kNone) return false;
  const std::string tag = Tag(rng);
  const size_t depth = rng.Pick(kTupleDepths);
  std::string lines = "  " + tag + ".v0 = s32[] constant(1)\n";
  for (size_t k = 1; k <= depth; ++k) {
    lines += "  " + tag + ".v" + std::to_string(k) + " = " + std::string(k, '(') + "s32[]" +
             std::string(k, ')') + " tuple(" + tag + ".v" + std::to_string(k - 1) + ")\n";
    if (text.size() + lines.size() > max_size) return false;
  }
  text.insert(body, lines);
  return true;
}

bool WideTuple(Rng& rng, size_t max_size, std::string& text) {
  const size_t body = EntryBody(text);
  if (body == kNone) return false;
  const std::string tag = Tag(rng);
  const std::string element = tag + ".w";
  const size_t per_operand = std::string_view("s32[], ").size() + element.size() + 2;
  const size_t fixed = 64 + 3 * element.size();
  if (text.size() + fixed + per_operand > max_size) return false;
  const size_t width = std::min(rng.Pick(kWidths), (max_size - text.size() - fixed) / per_operand);
  std::string type = "(";
  std::string operands;
  for (size_t i = 0; i < width; ++i) {
    type += std::string(i > 0 ? ", " : "") + "s32[]";
    operands += (i > 0 ? ", " : "") + element;
  }
  return InsertIfFits(text, body,
                      "  " + element + " = s32[] constant(7)\n  " + tag + ".t = " + type +
                          ") tuple(" + operands + ")\n",
                      max_size);
}

bool LongOperandList(Rng& rng, size_t max_size, std::string& text) {
  // The '(' that opens an instruction's operands: after " = " on its line,
  // right after the opcode (a tuple shape's '(' follows a space).
  std::vector<size_t> opens;
  for (size_t eq = text.find(" = "); eq != kNone; eq = text.find(" = ", eq + 3)) {
    const size_t line_end = std::min(text.find('\n', eq), text.size());
    for (size_t i = eq + 3; i < line_end; ++i) {
      if (text[i] == '(' &&
          (std::islower(static_cast<unsigned char>(text[i - 1])) ||
           std::isdigit(static_cast<unsigned char>(text[i - 1])) || text[i - 1] == '-')) {
        if (i + 1 < line_end && text[i + 1] != ')') opens.push_back(i);
        break;
      }
    }
  }
  if (opens.empty()) return false;
  const size_t open = rng.Pick(opens);
  size_t operand_end = open + 1;
  int depth = 0;
  for (; operand_end < text.size(); ++operand_end) {
    const char c = text[operand_end];
    if (depth == 0 && (c == ',' || c == ')' || c == '\n')) break;
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') --depth;
  }
  const std::string repeated = ", " + text.substr(open + 1, operand_end - open - 1);
  if (text.size() + repeated.size() > max_size) return false;
  const size_t copies = std::min(rng.Pick(kWidths), (max_size - text.size()) / repeated.size());
  std::string insertion;
  insertion.reserve(copies * repeated.size());
  for (size_t i = 0; i < copies; ++i) insertion += repeated;
  text.insert(operand_end, insertion);
  return true;
}

}  // namespace

bool MutateHloText(HloMutation mutation, uint64_t seed, size_t max_size, std::string& text) {
  Rng rng(seed);
  std::string mutated = text;
  bool applied = false;
  switch (mutation) {
    case HloMutation::kNestTupleShape:
      applied = NestTupleShape(rng, max_size, mutated);
      break;
    case HloMutation::kBigDimension:
      applied = BigDimension(rng, max_size, mutated);
      break;
    case HloMutation::kBigNumber:
      applied = ReplaceNumber(rng, max_size, FindNumbers(mutated, 0, mutated.size()), mutated);
      break;
    case HloMutation::kHugeTile:
      applied = HugeTile(rng, max_size, mutated);
      break;
    case HloMutation::kNestComputations:
      applied = NestComputations(rng, max_size, mutated);
      break;
    case HloMutation::kDeepTupleValue:
      applied = DeepTupleValue(rng, max_size, mutated);
      break;
    case HloMutation::kWideTuple:
      applied = WideTuple(rng, max_size, mutated);
      break;
    case HloMutation::kLongOperandList:
      applied = LongOperandList(rng, max_size, mutated);
      break;
  }
  if (!applied || mutated.size() > max_size) return false;
  text = std::move(mutated);
  return true;
}

}  // namespace tpusim::test
