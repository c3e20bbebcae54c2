// Error handling for library code: Status and StatusOr<T>.
//
// Library code never exits and never throws on user error; it returns a Status
// whose message is lower-case, without a final period, and already carries its
// context (for parse errors, "FILE:LINE:COL: error: ..."). Only the CLI decides
// what to print and which exit code to use.
#ifndef TPUSIM_SIM_BASE_STATUS_H_
#define TPUSIM_SIM_BASE_STATUS_H_

#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace tpusim {

/// Broad classes of failure; the CLI maps each to an exit code.
enum class StatusCode {
  kOk,
  kInvalidArgument,     ///< malformed input text, bad option, bad file contents
  kNotFound,            ///< a named file, preset or computation does not exist
  kUnimplemented,       ///< valid input using something tpusim does not support yet
  kResourceExhausted,   ///< a run that would exceed a memory or size limit
  kFailedPrecondition,  ///< a check on the simulated program failed
  kInternal,            ///< a simulator bug
};

/// Lower-case name of a code, e.g. "invalid argument".
const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  /// Returns a copy whose message is "PREFIX: MESSAGE", for adding context.
  Status WithContext(const std::string& prefix) const {
    if (ok()) return *this;
    return Status(code_, prefix + ": " + message_);
  }

  friend bool operator==(const Status&, const Status&) = default;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }

/// A name or value from the input, in single quotes, for an error message.
/// One of more than 60 characters or of several lines is cut to its first 40
/// characters and its length ("'abc...' (1048576 characters)"): no input is
/// echoed whole into messages and reports.
std::string Quote(std::string_view text);
inline Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status Unimplemented(std::string m) { return {StatusCode::kUnimplemented, std::move(m)}; }
inline Status ResourceExhausted(std::string m) { return {StatusCode::kResourceExhausted, std::move(m)}; }
inline Status FailedPrecondition(std::string m) { return {StatusCode::kFailedPrecondition, std::move(m)}; }
inline Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

/// Either a value or a non-ok Status. Accessing the value of an error aborts:
/// that is a simulator bug, never a user error.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(const Status& status) : status_(status) { CheckNotOk(); }  // NOLINT(implicit)
  StatusOr(Status&& status) : status_(std::move(status)) { CheckNotOk(); }  // NOLINT(implicit)
  StatusOr(const T& value) : value_(value) {}  // NOLINT(implicit)
  StatusOr(T&& value) : value_(std::move(value)) {}  // NOLINT(implicit)
  template <typename U>
    requires std::is_convertible_v<U&&, T> && (!std::is_same_v<std::decay_t<U>, T>) &&
             (!std::is_same_v<std::decay_t<U>, Status>)
  StatusOr(U&& value) : value_(T(std::forward<U>(value))) {}  // NOLINT(implicit)

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }

  T& value() & { CheckOk(); return *value_; }
  const T& value() const& { CheckOk(); return *value_; }
  T&& value() && { CheckOk(); return std::move(*value_); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  void CheckNotOk() const {
    if (status_.ok()) std::abort();  // an error StatusOr must carry an error
  }
  void CheckOk() const {
    if (!value_.has_value()) std::abort();  // value() of an error: simulator bug
  }

  Status status_;
  std::optional<T> value_;
};

}  // namespace tpusim

#define TPUSIM_STATUS_CONCAT_INNER_(a, b) a##b
#define TPUSIM_STATUS_CONCAT_(a, b) TPUSIM_STATUS_CONCAT_INNER_(a, b)

/// Evaluates EXPR (a Status); returns it from the enclosing function if not ok.
#define TPUSIM_RETURN_IF_ERROR(expr)                  \
  do {                                                \
    ::tpusim::Status tpusim_status_ = (expr);         \
    if (!tpusim_status_.ok()) return tpusim_status_;  \
  } while (false)

/// `TPUSIM_ASSIGN_OR_RETURN(auto x, F())`: declares x from F()'s value or
/// returns F()'s error.
#define TPUSIM_ASSIGN_OR_RETURN(lhs, expr) \
  TPUSIM_ASSIGN_OR_RETURN_IMPL_(TPUSIM_STATUS_CONCAT_(tpusim_statusor_, __LINE__), lhs, expr)
#define TPUSIM_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  if (!tmp.ok()) return tmp.status();                 \
  lhs = std::move(tmp).value()

#endif  // TPUSIM_SIM_BASE_STATUS_H_
