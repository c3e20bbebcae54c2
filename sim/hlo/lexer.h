// Character-level scanner for HLO text.
//
// HLO has context-sensitive tokens (`3x3`, `0_1x1_0`, `b01f_01io->b01f`,
// `nan(0x1)`), so instead of a token stream the parser drives a Lexer that
// reads exactly what the grammar expects at each point. The lexer skips
// whitespace and comments, tracks line and column, and formats errors.
#ifndef TPUSIM_SIM_HLO_LEXER_H_
#define TPUSIM_SIM_HLO_LEXER_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "sim/base/status.h"
#include "sim/hlo/instruction.h"

namespace tpusim::hlo {

/// An ASCII decimal digit (std::isdigit depends on the locale).
inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }

class Lexer {
 public:
  Lexer(std::string_view text, std::string_view filename) : text_(text), filename_(filename) {}

  /// Skips whitespace, `// line` and `/* block */` comments. A lone `/` or an
  /// unterminated block comment is left for the caller to report (Peek sees '/').
  void SkipTrivia() {
    // Fast path: most calls stand on a significant character already.
    if (pos_ < text_.size() && !IsTriviaStart(text_[pos_])) return;
    SkipTriviaSlow();
  }
  /// Next significant character after trivia, or '\0' at end of input.
  char Peek() {
    SkipTrivia();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }
  /// Character at an offset from the current position without skipping trivia.
  char PeekRaw(size_t offset = 0) const {
    return pos_ + offset < text_.size() ? text_[pos_ + offset] : '\0';
  }
  bool AtEnd() {
    SkipTrivia();
    return pos_ >= text_.size();
  }
  /// Consumes `c` (after trivia) if it is next.
  bool TryConsume(char c) {
    if (Peek() != c) return false;
    Advance(1);
    return true;
  }
  /// Consumes "->" or "<=" and similar two-character symbols if next.
  bool TryConsume(std::string_view symbol);
  /// Consumes `c` or fails with "expected 'c' WHERE, got ...".
  Status Expect(char c, std::string_view where) {
    if (TryConsume(c)) return Status::Ok();
    return ExpectFailed(c, where);
  }
  /// The error of a failed Expect(c, where); hot paths write
  /// `if (!TryConsume(c)) return ExpectFailed(c, where);` to skip building an
  /// ok Status.
  Status ExpectFailed(char c, std::string_view where);

  /// True when an identifier starts here: [A-Za-z_] (after an optional `%`).
  bool AtIdentifier();
  /// The identifier at the current position without consuming it ("" if none).
  /// A leading `%` is skipped and not part of the result.
  std::string_view PeekIdentifier();
  /// Reads `[%][A-Za-z_][A-Za-z0-9_.-]*`; "" when there is none (nothing consumed).
  std::string_view ReadIdentifier();
  /// Reads a name or fails with "expected WHAT, got ...".
  StatusOr<std::string_view> ExpectIdentifier(std::string_view what);
  /// Consumes `word` if the next identifier is exactly it.
  bool TryConsumeWord(std::string_view word);

  /// Reads a decimal integer with optional sign; fails on overflow of int64.
  StatusOr<int64_t> ReadInt(std::string_view what);
  /// Hot-path variant of ReadInt: true and the value when a decimal integer
  /// that fits int64 is next; false (nothing consumed) otherwise, and the
  /// caller then calls ReadInt to get the precise error.
  bool TryReadInt(int64_t& out) {
    SkipTrivia();
    size_t p = pos_;
    const size_t n = text_.size();
    const bool negative = p < n && text_[p] == '-';
    if (negative) ++p;
    if (p >= n || text_[p] < '0' || text_[p] > '9') return false;
    uint64_t value = 0;
    while (p < n && text_[p] >= '0' && text_[p] <= '9') {
      if (__builtin_mul_overflow(value, uint64_t{10}, &value) ||
          __builtin_add_overflow(value, static_cast<uint64_t>(text_[p] - '0'), &value)) {
        return false;
      }
      ++p;
    }
    if (value > uint64_t{INT64_MAX}) return false;
    out = negative ? -static_cast<int64_t>(value) : static_cast<int64_t>(value);
    pos_ = p;
    return true;
  }
  /// Hot-path scan of `D,D,...,D` (non-negative decimals of at most 18 digits,
  /// no spaces) immediately at the cursor, as in `[8,128]` and `{1,0}`: stores
  /// up to `max` values and returns how many, consuming them; returns 0 and
  /// consumes nothing when the text is anything else (more values, a sign, a
  /// space, a comma not followed by a digit), for the caller's general path.
  size_t ScanDenseInts(int64_t* out, size_t max) {
    const char* p = text_.data() + pos_;
    const char* const end = text_.data() + text_.size();
    size_t count = 0;
    while (true) {
      if (p == end || *p < '0' || *p > '9' || count == max) return 0;
      const char* const start = p;
      int64_t v = 0;
      while (p != end && *p >= '0' && *p <= '9') {
        if (p - start == 18) return 0;  // may not fit: the general path decides
        v = v * 10 + (*p++ - '0');
      }
      out[count++] = v;
      if (p == end || *p != ',') break;
      ++p;
    }
    pos_ = static_cast<size_t>(p - text_.data());
    return count;
  }
  /// Moves the cursor back to an earlier position (from position()).
  void Rewind(size_t position) { pos_ = position; }
  /// Reads an integer immediately at the cursor, without skipping trivia.
  StatusOr<int64_t> ReadIntNoSkip(std::string_view what);
  /// True when a number (digit, or sign followed by digit or '.') starts here.
  bool AtNumber();
  /// Reads a real number: decimal with optional fraction and exponent, `inf`,
  /// `-inf`, `nan`, `-nan`, `nan(0xHEX)`; the payload bits of a NaN go into the
  /// double's mantissa.
  StatusOr<double> ReadReal(std::string_view what);
  /// Reads a double-quoted string with C escapes and returns it unescaped.
  StatusOr<std::string> ReadString(std::string_view what);
  /// Reads raw text up to the next ',' or newline at bracket depth 0, or an
  /// unmatched closing bracket; quoted strings are skipped whole. Used for
  /// attributes kept verbatim. Trailing whitespace is not included.
  StatusOr<std::string_view> ReadRawValue();
  /// Reads a balanced `{...}` group verbatim (JSON backend configs, metadata
  /// inside shardings); strings inside are skipped whole.
  StatusOr<std::string_view> ReadBracedRaw(std::string_view what);

  size_t position() const { return pos_; }
  std::string_view filename() const { return filename_; }
  std::string_view text() const { return text_; }
  /// Location of the current position (after no trivia skipping).
  SourceLocation Location() const;
  /// Location of the next significant character.
  SourceLocation NextLocation() {
    SkipTrivia();
    return Location();
  }
  /// Offset of the next significant character: a cheap stand-in for a
  /// location that is only needed if an error is reported there.
  size_t Mark() {
    SkipTrivia();
    return pos_;
  }
  /// Line and column of an offset (for errors; not for hot paths).
  SourceLocation LocationOf(size_t offset) const;
  void Advance(size_t n) { pos_ += n; }

  /// "FILE:LINE:COL: error: MESSAGE" plus the source line and a caret.
  Status ErrorAt(SourceLocation loc, std::string_view message) const;
  Status ErrorAt(size_t offset, std::string_view message) const {
    return ErrorAt(LocationOf(offset), message);
  }
  /// Error at the next significant character: "expected WHAT, got DESCRIPTION".
  Status Expected(std::string_view what);
  /// A short description of the next significant character(s) for messages,
  /// e.g. "'foo'", "end of file", "byte 0x89".
  std::string DescribeNext();

 private:
  static bool IsTriviaStart(char c) {
    return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '/' || c == '\f' || c == '\v';
  }
  void SkipTriviaSlow();
  std::string_view ScanIdentifier() const;
  /// The error for a raw-text scan that stopped early (see lexer.cc).
  Status BalancedScanError(size_t start, size_t position, int stop);

  std::string_view text_;
  std::string_view filename_;
  size_t pos_ = 0;
  /// Cache of the last PeekIdentifier: its position and result.
  size_t peeked_pos_ = std::string_view::npos;
  std::string_view peeked_;
  /// Line number and start offset of the line holding pos_, advanced lazily
  /// by Location() so that scanning never pays for line counting.
  mutable uint32_t line_ = 1;
  mutable size_t line_start_ = 0;
  mutable size_t line_scan_pos_ = 0;
};

}  // namespace tpusim::hlo

#endif  // TPUSIM_SIM_HLO_LEXER_H_
