#include "sim/hlo/lexer.h"

#include <charconv>
#include <cstring>
#include <limits>
#include <optional>
#include <string_view>

namespace tpusim::hlo {
namespace {

/// Character classes for identifiers, as a table: identifier scanning is the
/// parser's innermost loop.
struct CharClasses {
  bool start[256] = {};
  bool part[256] = {};
  constexpr CharClasses() {
    for (int c = 0; c < 256; ++c) {
      start[c] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
      part[c] = start[c] || (c >= '0' && c <= '9') || c == '.' || c == '-';
    }
  }
};
constexpr CharClasses kCharClasses;

bool IsIdentStart(char c) { return kCharClasses.start[static_cast<unsigned char>(c)]; }
bool IsIdentChar(char c) { return kCharClasses.part[static_cast<unsigned char>(c)]; }

}  // namespace

void Lexer::SkipTriviaSlow() {
  const char* const base = text_.data();
  const char* const end = base + text_.size();
  const char* p = base + pos_;
  while (p < end) {
    const char c = *p;
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      ++p;
      continue;
    }
    if (c != '/' || p + 1 >= end) break;
    if (p[1] == '/') {
      // A line ends at '\n' or, in old Mac files, at a lone '\r' (XLA accepts both).
      while (p < end && *p != '\n' && *p != '\r') ++p;
      continue;
    }
    if (p[1] == '*') {
      const size_t found = text_.find("*/", static_cast<size_t>(p - base) + 2);
      if (found == std::string_view::npos) break;  // reported by the caller as unexpected '/'
      p = base + found + 2;
      continue;
    }
    break;
  }
  pos_ = static_cast<size_t>(p - base);
}

bool Lexer::TryConsume(std::string_view symbol) {
  SkipTrivia();
  if (text_.substr(pos_, symbol.size()) != symbol) return false;
  pos_ += symbol.size();
  return true;
}

Status Lexer::ExpectFailed(char c, std::string_view where) {
  std::string what = "'";
  what += c;
  what += "'";
  if (!where.empty()) {
    what += ' ';
    what += where;
  }
  return Expected(what);
}

bool Lexer::AtIdentifier() {
  SkipTrivia();
  size_t p = pos_;
  if (p < text_.size() && text_[p] == '%') ++p;
  return p < text_.size() && IsIdentStart(text_[p]);
}

std::string_view Lexer::PeekIdentifier() {
  SkipTrivia();
  // The parser often peeks the same word several times (is it ROOT? a type?
  // an opcode?); scan it once.
  if (pos_ == peeked_pos_) return peeked_;
  peeked_pos_ = pos_;
  peeked_ = ScanIdentifier();
  return peeked_;
}

std::string_view Lexer::ScanIdentifier() const {
  const char* p = text_.data() + pos_;
  const char* const end = text_.data() + text_.size();
  if (p < end && *p == '%') ++p;
  if (p >= end || !IsIdentStart(*p)) return {};
  const char* const start = p++;
  while (p < end && IsIdentChar(*p)) ++p;
  return std::string_view(start, static_cast<size_t>(p - start));
}

std::string_view Lexer::ReadIdentifier() {
  std::string_view id = PeekIdentifier();
  if (id.empty()) return id;
  pos_ = static_cast<size_t>(id.data() - text_.data()) + id.size();
  return id;
}

StatusOr<std::string_view> Lexer::ExpectIdentifier(std::string_view what) {
  std::string_view id = ReadIdentifier();
  if (id.empty()) return Expected(what);
  return id;
}

bool Lexer::TryConsumeWord(std::string_view word) {
  std::string_view id = PeekIdentifier();
  if (id != word) return false;
  pos_ = static_cast<size_t>(id.data() - text_.data()) + id.size();
  return true;
}

StatusOr<int64_t> Lexer::ReadInt(std::string_view what) {
  SkipTrivia();
  return ReadIntNoSkip(what);
}

StatusOr<int64_t> Lexer::ReadIntNoSkip(std::string_view what) {
  const size_t start = pos_;
  size_t p = pos_;
  const bool negative = p < text_.size() && text_[p] == '-';
  if (negative || (p < text_.size() && text_[p] == '+')) ++p;
  if (p >= text_.size() || !IsDigit(text_[p])) return Expected(what);
  uint64_t value = 0;
  const uint64_t limit = negative ? uint64_t{1} << 63 : uint64_t{INT64_MAX};
  while (p < text_.size() && IsDigit(text_[p])) {
    const uint64_t digit = static_cast<uint64_t>(text_[p] - '0');
    if (value > (limit - digit) / 10) {
      pos_ = start;
      return ErrorAt(Location(), std::string(what) + " is out of range of a 64-bit integer");
    }
    value = value * 10 + digit;
    ++p;
  }
  pos_ = p;
  if (negative) return value == (uint64_t{1} << 63) ? INT64_MIN : -static_cast<int64_t>(value);
  return static_cast<int64_t>(value);
}

bool Lexer::AtNumber() {
  SkipTrivia();
  const char c = PeekRaw();
  if (IsDigit(c)) return true;
  if (c == '-' || c == '+' || c == '.') return IsDigit(PeekRaw(1)) || PeekRaw(1) == '.';
  return false;
}

StatusOr<double> Lexer::ReadReal(std::string_view what) {
  SkipTrivia();
  const size_t start = pos_;
  bool negative = false;
  size_t p = pos_;
  if (p < text_.size() && (text_[p] == '-' || text_[p] == '+')) {
    negative = text_[p] == '-';
    ++p;
  }
  auto word_at = [&](std::string_view w) {
    return text_.substr(p, w.size()) == w &&
           (p + w.size() >= text_.size() || !IsIdentChar(text_[p + w.size()]));
  };
  if (word_at("inf")) {
    pos_ = p + 3;
    return negative ? -std::numeric_limits<double>::infinity()
                    : std::numeric_limits<double>::infinity();
  }
  if (text_.substr(p, 3) == "nan") {
    p += 3;
    uint64_t bits = 0x7ff8000000000000ULL;
    if (p < text_.size() && text_[p] == '(') {
      // nan(0xPAYLOAD): the payload becomes the mantissa bits.
      if (text_.substr(p + 1, 2) != "0x") {
        pos_ = p + 1;
        return Expected("'0x' in NaN payload");
      }
      size_t q = p + 3;
      uint64_t payload = 0;
      auto [end, ec] = std::from_chars(text_.data() + q, text_.data() + text_.size(), payload, 16);
      if (ec != std::errc() || end == text_.data() + q || payload == 0 ||
          payload >= (uint64_t{1} << 52)) {
        pos_ = q;
        return ErrorAt(Location(), "NaN payload must be a non-zero hexadecimal number below 2^52");
      }
      q = static_cast<size_t>(end - text_.data());
      if (q >= text_.size() || text_[q] != ')') {
        pos_ = q;
        return Expected("')' after NaN payload");
      }
      bits = 0x7ff0000000000000ULL | payload;
      p = q + 1;
    }
    if (negative) bits |= 0x8000000000000000ULL;
    pos_ = p;
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
  }
  // Decimal: [digits][.digits][(e|E)[+-]digits]
  size_t q = p;
  while (q < text_.size() && IsDigit(text_[q])) ++q;
  const bool int_digits = q > p;
  bool frac_digits = false;
  if (q < text_.size() && text_[q] == '.') {
    ++q;
    const size_t f = q;
    while (q < text_.size() && IsDigit(text_[q])) ++q;
    frac_digits = q > f;
  }
  if (!int_digits && !frac_digits) {
    pos_ = start;
    return Expected(what);
  }
  if (q < text_.size() && (text_[q] == 'e' || text_[q] == 'E')) {
    size_t e = q + 1;
    if (e < text_.size() && (text_[e] == '+' || text_[e] == '-')) ++e;
    if (e < text_.size() && IsDigit(text_[e])) {
      while (e < text_.size() && IsDigit(text_[e])) ++e;
      q = e;
    }
  }
  double value = 0;
  // from_chars is locale-independent and correctly rounded; it rejects a
  // leading '+', which is why the sign was consumed above.
  auto [end, ec] = std::from_chars(text_.data() + p, text_.data() + q, value);
  if (ec == std::errc::result_out_of_range) {
    // Overflow to infinity or underflow to zero, as IEEE conversion would.
    value = (text_.substr(p, q - p).find_first_of("eE") != std::string_view::npos &&
             text_.substr(p, q - p).find("e-") == std::string_view::npos &&
             text_.substr(p, q - p).find("E-") == std::string_view::npos)
                ? std::numeric_limits<double>::infinity()
                : 0.0;
  } else if (ec != std::errc() || end != text_.data() + q) {
    pos_ = start;
    return Expected(what);
  }
  pos_ = q;
  return negative ? -value : value;
}

namespace {

/// The byte a one-letter C escape (`\n`, `\'`, ...) stands for, or nullopt.
std::optional<char> OneLetterEscape(char letter) {
  constexpr std::string_view kLetters = "ntr\"'\\abfv?";
  constexpr std::string_view kBytes = "\n\t\r\"'\\\a\b\f\v?";
  const size_t i = kLetters.find(letter);
  if (i == std::string_view::npos) return std::nullopt;
  return kBytes[i];
}

}  // namespace

StatusOr<std::string> Lexer::ReadString(std::string_view what) {
  SkipTrivia();
  if (PeekRaw() != '"') return Expected(what);
  const SourceLocation open = Location();
  size_t p = pos_ + 1;
  std::string out;
  // Fast path: copy runs without escapes in one go.
  while (true) {
    size_t run_end = p;
    while (run_end < text_.size() && text_[run_end] != '"' && text_[run_end] != '\\') ++run_end;
    if (run_end == text_.size()) {
      return ErrorAt(open, "unterminated string, expected a closing '\"'");
    }
    out.append(text_.data() + p, run_end - p);
    p = run_end;
    if (text_[p] == '"') break;
    if (p + 1 >= text_.size()) return ErrorAt(open, "unterminated string, expected a closing '\"'");
    const char e = text_[p + 1];
    p += 2;
    if (const std::optional<char> byte = OneLetterEscape(e)) {
      out += *byte;
      continue;
    }
    switch (e) {
      case '0':
      case '1':
      case '2':
      case '3':
      case '4':
      case '5':
      case '6':
      case '7': {
        // One to three octal digits: XLA prints metadata with absl::CEscape,
        // which writes every byte outside printable ASCII so (UTF-8 too).
        unsigned value = static_cast<unsigned>(e - '0');
        for (int digits = 1; digits < 3 && p < text_.size() && text_[p] >= '0' && text_[p] <= '7';
             ++digits, ++p) {
          value = value * 8 + static_cast<unsigned>(text_[p] - '0');
        }
        if (value > 0xff) {
          pos_ = p - 4;
          return ErrorAt(Location(), "octal escape in string is over \\377");
        }
        out += static_cast<char>(value);
        break;
      }
      case 'x': {
        unsigned value = 0;
        auto [end, ec] = std::from_chars(text_.data() + p,
                                         text_.data() + std::min(text_.size(), p + 2), value, 16);
        if (ec != std::errc() || end == text_.data() + p) {
          pos_ = p;
          return ErrorAt(Location(), "expected two hexadecimal digits after '\\x' in string");
        }
        out += static_cast<char>(value);
        p = static_cast<size_t>(end - text_.data());
        break;
      }
      default:
        pos_ = p - 2;
        return ErrorAt(Location(), std::string("unknown escape sequence '\\") + e + "' in string");
    }
  }
  pos_ = p + 1;
  return out;
}

namespace {

/// Index just past the string that starts at `p` (a '"'), or npos.
size_t SkipQuoted(std::string_view text, size_t p) {
  ++p;
  while (p < text.size()) {
    if (text[p] == '\\') {
      p += 2;
      continue;
    }
    if (text[p] == '"') return p + 1;
    ++p;
  }
  return std::string_view::npos;
}

}  // namespace

namespace {

/// Outcome of scanning bracketed raw text.
struct BalancedScan {
  enum class Stop { kEnd, kUnterminatedString, kMismatched, kUnclosed, kTooDeep };
  Stop stop = Stop::kEnd;
  /// Where the scan stopped: the end of the value, or the offending character.
  size_t position = 0;
};

/// Scans from `p` over properly nested (), [] and {} (quoted strings skipped
/// whole). With `whole_group`, text[p] is an opening bracket and the scan ends
/// just after its partner; otherwise it ends at a ',' or newline outside any
/// bracket, or at a closing bracket that closes nothing here.
BalancedScan ScanBalanced(std::string_view text, size_t p, bool whole_group) {
  constexpr size_t kMaxDepth = 256;
  char expected[kMaxDepth];
  size_t depth = 0;
  while (p < text.size()) {
    const char c = text[p];
    if (c == '"') {
      const size_t end = SkipQuoted(text, p);
      if (end == std::string_view::npos) return {BalancedScan::Stop::kUnterminatedString, p};
      p = end;
      continue;
    }
    if (c == '{' || c == '(' || c == '[') {
      if (depth == kMaxDepth) return {BalancedScan::Stop::kTooDeep, p};
      expected[depth++] = c == '{' ? '}' : c == '(' ? ')' : ']';
    } else if (c == '}' || c == ')' || c == ']') {
      if (depth == 0) return {BalancedScan::Stop::kEnd, p};
      if (expected[depth - 1] != c) return {BalancedScan::Stop::kMismatched, p};
      if (--depth == 0 && whole_group) return {BalancedScan::Stop::kEnd, p + 1};
    } else if (depth == 0 && (c == ',' || c == '\n')) {
      return {BalancedScan::Stop::kEnd, p};
    }
    ++p;
  }
  return {depth == 0 ? BalancedScan::Stop::kEnd : BalancedScan::Stop::kUnclosed, p};
}

}  // namespace

Status Lexer::BalancedScanError(size_t start, size_t position, int stop) {
  switch (static_cast<BalancedScan::Stop>(stop)) {
    case BalancedScan::Stop::kUnterminatedString:
      pos_ = position;
      return ErrorAt(Location(), "unterminated string, expected a closing '\"'");
    case BalancedScan::Stop::kMismatched:
      pos_ = position;
      return ErrorAt(Location(), std::string("mismatched '") + text_[position] +
                                     "', expected the closing bracket of an earlier opening one");
    case BalancedScan::Stop::kTooDeep:
      pos_ = position;
      return ErrorAt(Location(), "brackets nested more than 256 deep");
    case BalancedScan::Stop::kEnd:  // callers pass only the stops that are errors
    case BalancedScan::Stop::kUnclosed:
      break;
  }
  pos_ = start;
  return ErrorAt(Location(), "unclosed bracket, expected a matching closing bracket");
}

StatusOr<std::string_view> Lexer::ReadRawValue() {
  SkipTrivia();
  const size_t start = pos_;
  const BalancedScan scan = ScanBalanced(text_, start, /*whole_group=*/false);
  if (scan.stop != BalancedScan::Stop::kEnd) {
    return BalancedScanError(start, scan.position, static_cast<int>(scan.stop));
  }
  size_t end = scan.position;
  while (end > start && (text_[end - 1] == ' ' || text_[end - 1] == '\t' || text_[end - 1] == '\r')) {
    --end;
  }
  if (end == start) return Expected("a value");
  pos_ = scan.position;
  return text_.substr(start, end - start);
}

StatusOr<std::string_view> Lexer::ReadBracedRaw(std::string_view what) {
  SkipTrivia();
  if (PeekRaw() != '{') return Expected(what);
  const size_t start = pos_;
  const BalancedScan scan = ScanBalanced(text_, start, /*whole_group=*/true);
  if (scan.stop != BalancedScan::Stop::kEnd) {
    return BalancedScanError(start, scan.position, static_cast<int>(scan.stop));
  }
  pos_ = scan.position;
  return text_.substr(start, scan.position - start);
}

SourceLocation Lexer::Location() const {
  // Lines are counted lazily and only forward; parse positions only grow.
  if (pos_ < line_scan_pos_) {
    line_ = 1;
    line_start_ = 0;
    line_scan_pos_ = 0;
  }
  const char* base = text_.data();
  size_t p = line_scan_pos_;
  while (p < pos_) {
    const void* nl = std::memchr(base + p, '\n', pos_ - p);
    if (!nl) break;
    p = static_cast<size_t>(static_cast<const char*>(nl) - base) + 1;
    ++line_;
    line_start_ = p;
  }
  line_scan_pos_ = pos_;
  return {line_, static_cast<uint32_t>(pos_ - line_start_ + 1)};
}

SourceLocation Lexer::LocationOf(size_t offset) const {
  uint32_t line = 1;
  size_t line_start = 0;
  for (size_t p = 0; p < offset && p < text_.size(); ++p) {
    if (text_[p] == '\n') {
      ++line;
      line_start = p + 1;
    }
  }
  return {line, static_cast<uint32_t>(offset - line_start + 1)};
}

Status Lexer::ErrorAt(SourceLocation loc, std::string_view message) const {
  std::string out = FormatError(filename_, loc, message);
  // Show the offending line (clipped around the column) with a caret.
  size_t line_begin = 0;
  for (uint32_t l = 1; l < loc.line && line_begin < text_.size(); ++l) {
    const size_t nl = text_.find('\n', line_begin);
    if (nl == std::string_view::npos) {
      line_begin = text_.size();
      break;
    }
    line_begin = nl + 1;
  }
  size_t line_end = text_.find('\n', line_begin);
  if (line_end == std::string_view::npos) line_end = text_.size();
  std::string_view line = text_.substr(line_begin, line_end - line_begin);
  size_t caret = loc.column > 0 ? loc.column - 1 : 0;
  constexpr size_t kWindow = 100;
  size_t from = caret > kWindow / 2 ? caret - kWindow / 2 : 0;
  if (from > line.size()) from = line.size();
  std::string_view shown = line.substr(from, kWindow);
  if (!shown.empty()) {
    // A byte the terminal would act on, or one of a character it would draw
    // in fewer columns, shows as '?': one column per byte keeps the caret
    // under the column, which counts bytes.
    out += '\n';
    for (char c : shown) {
      const unsigned char byte = static_cast<unsigned char>(c);
      out += (byte < 0x20 && c != '\t') || byte >= 0x7f ? '?' : c;
    }
    out += '\n';
    out.append(caret - from, ' ');
    out += '^';
  }
  return InvalidArgument(std::move(out));
}

std::string Lexer::DescribeNext() {
  SkipTrivia();
  if (pos_ >= text_.size()) return "end of file";
  const unsigned char c = static_cast<unsigned char>(text_[pos_]);
  if (c < 0x20 || c >= 0x7f) {
    static const char kHex[] = "0123456789abcdef";
    std::string s = "byte 0x";
    s += kHex[c >> 4];
    s += kHex[c & 15];
    return s;
  }
  if (c == '/' ) {
    if (PeekRaw(1) == '*') return "an unterminated '/*' comment";
    return "'/'";
  }
  size_t end = pos_;
  if (IsIdentChar(static_cast<char>(c)) || c == '%') {
    ++end;
    while (end < text_.size() && IsIdentChar(text_[end]) && end - pos_ < 40) ++end;
  } else {
    ++end;
  }
  return "'" + std::string(text_.substr(pos_, end - pos_)) + "'";
}

Status Lexer::Expected(std::string_view what) {
  const std::string got = DescribeNext();
  return ErrorAt(Location(), "expected " + std::string(what) + ", got " + got);
}

}  // namespace tpusim::hlo
