#include "sim/value/python_literal.h"

#include <utility>

namespace tpusim::value::internal {
namespace {

/// Real headers nest three deep (dict > list > tuple); the bound keeps a
/// hostile header from exhausting the stack.
constexpr int kMaxDepth = 16;

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  StatusOr<PyValue> ParseAll() {
    TPUSIM_ASSIGN_OR_RETURN(PyValue value, ParseValue(0));
    SkipSpace();
    if (pos_ != text_.size()) return Error("unexpected text after the literal");
    return value;
  }

 private:
  Status Error(const std::string& what) const {
    return InvalidArgument(what + " at offset " + std::to_string(pos_));
  }

  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  bool Consume(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  StatusOr<PyValue> ParseValue(int depth) {
    if (depth > kMaxDepth) return Error("literal nested too deeply");
    SkipSpace();
    if (pos_ >= text_.size()) return Error("unexpected end of text");
    const char c = text_[pos_];
    if (c == '\'' || c == '"') return ParseString();
    if (c == '-' || c == '+' || (c >= '0' && c <= '9')) return ParseInt();
    if (c == '(') return ParseSequence(depth, PyValue::Kind::kTuple, ')');
    if (c == '[') return ParseSequence(depth, PyValue::Kind::kList, ']');
    if (c == '{') return ParseDict(depth);
    return ParseKeyword();
  }

  StatusOr<PyValue> ParseString() {
    const char quote = text_[pos_++];
    PyValue value;
    value.kind = PyValue::Kind::kString;
    while (true) {
      if (pos_ >= text_.size()) return Error("unterminated string");
      const char c = text_[pos_++];
      if (c == quote) return value;
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7F) {
        --pos_;
        return Error("unexpected control or non-ASCII character in a string");
      }
      if (c != '\\') {
        value.string += c;
        continue;
      }
      if (pos_ >= text_.size()) return Error("unterminated string");
      const char escaped = text_[pos_++];
      switch (escaped) {
        case '\\':
        case '\'':
        case '"':
          value.string += escaped;
          break;
        case 'n':
          value.string += '\n';
          break;
        case 't':
          value.string += '\t';
          break;
        default:
          --pos_;
          return Error("unsupported escape in a string");
      }
    }
  }

  StatusOr<PyValue> ParseInt() {
    const bool negative = text_[pos_] == '-';
    if (text_[pos_] == '-' || text_[pos_] == '+') ++pos_;
    if (pos_ >= text_.size() || text_[pos_] < '0' || text_[pos_] > '9') {
      return Error("expected a digit");
    }
    // Accumulate toward the negative side so that INT64_MIN parses.
    int64_t value = 0;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      const int digit = text_[pos_] - '0';
      if (__builtin_mul_overflow(value, 10, &value) ||
          __builtin_sub_overflow(value, digit, &value)) {
        return Error("integer does not fit in 64 bits");
      }
      ++pos_;
    }
    if (!negative && __builtin_sub_overflow(int64_t{0}, value, &value)) {
      return Error("integer does not fit in 64 bits");
    }
    // Python 2 era numpy wrote long integers with an L suffix: (3L, 4L).
    if (pos_ < text_.size() && (text_[pos_] == 'L' || text_[pos_] == 'l')) ++pos_;
    PyValue result;
    result.kind = PyValue::Kind::kInt;
    result.integer = value;
    return result;
  }

  StatusOr<PyValue> ParseKeyword() {
    const size_t start = pos_;
    while (pos_ < text_.size() && ((text_[pos_] >= 'a' && text_[pos_] <= 'z') ||
                                   (text_[pos_] >= 'A' && text_[pos_] <= 'Z'))) {
      ++pos_;
    }
    const std::string_view word = text_.substr(start, pos_ - start);
    PyValue value;
    if (word == "True" || word == "False") {
      value.kind = PyValue::Kind::kBool;
      value.boolean = word == "True";
      return value;
    }
    if (word == "None") return value;
    pos_ = start;
    return Error("unexpected character '" + std::string(1, text_[pos_]) + "'");
  }

  /// `(a, b)`, `(a,)`, `()`, `[a, b]`; `(a)` is just `a`, as in Python.
  StatusOr<PyValue> ParseSequence(int depth, PyValue::Kind kind, char close) {
    ++pos_;  // the opening bracket
    PyValue value;
    value.kind = kind;
    bool trailing_comma = false;
    while (!Consume(close)) {
      if (!value.items.empty() && !trailing_comma)
        return Error("expected ',' or a closing bracket");
      TPUSIM_ASSIGN_OR_RETURN(PyValue item, ParseValue(depth + 1));
      value.items.push_back(std::move(item));
      trailing_comma = Consume(',');
    }
    if (kind == PyValue::Kind::kTuple && value.items.size() == 1 && !trailing_comma) {
      return std::move(value.items[0]);
    }
    return value;
  }

  StatusOr<PyValue> ParseDict(int depth) {
    ++pos_;  // '{'
    PyValue value;
    value.kind = PyValue::Kind::kDict;
    bool trailing_comma = false;
    while (!Consume('}')) {
      if (!value.items.empty() && !trailing_comma) return Error("expected ',' or '}'");
      TPUSIM_ASSIGN_OR_RETURN(PyValue key, ParseValue(depth + 1));
      if (!Consume(':')) return Error("expected ':' after a dict key");
      TPUSIM_ASSIGN_OR_RETURN(PyValue item, ParseValue(depth + 1));
      value.items.push_back(std::move(key));
      value.items.push_back(std::move(item));
      trailing_comma = Consume(',');
    }
    return value;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

const char* PyKindName(PyValue::Kind kind) {
  switch (kind) {
    case PyValue::Kind::kString:
      return "a string";
    case PyValue::Kind::kInt:
      return "an integer";
    case PyValue::Kind::kBool:
      return "a boolean";
    case PyValue::Kind::kNone:
      return "None";
    case PyValue::Kind::kTuple:
      return "a tuple";
    case PyValue::Kind::kList:
      return "a list";
    case PyValue::Kind::kDict:
      return "a dict";
  }
  return "a value";  // unreachable: every Kind returns above
}

StatusOr<PyValue> ParsePythonLiteral(std::string_view text) { return Parser(text).ParseAll(); }

}  // namespace tpusim::value::internal
