// Invariant checks for the value library: a failed check is a simulator bug
// (a caller broke a documented precondition), never a user error, so it prints
// where and why and aborts. User errors go through Status instead.
#ifndef TPUSIM_SIM_VALUE_CHECK_H_
#define TPUSIM_SIM_VALUE_CHECK_H_

namespace tpusim::value::internal {

/// Prints "FILE:LINE: check failed: CONDITION: MESSAGE" to stderr and aborts.
[[noreturn]] void CheckFailed(const char* file, int line, const char* condition,
                              const char* message);

}  // namespace tpusim::value::internal

/// Aborts with MESSAGE when COND is false.
#define TPUSIM_VALUE_CHECK(cond, message)                                                    \
  do {                                                                                       \
    if (!(cond)) ::tpusim::value::internal::CheckFailed(__FILE__, __LINE__, #cond, message); \
  } while (false)

#endif  // TPUSIM_SIM_VALUE_CHECK_H_
