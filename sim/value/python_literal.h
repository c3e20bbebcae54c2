// A parser for the small subset of Python literal syntax that .npy headers
// use: dicts, tuples, lists, strings, integers, True, False and None. The
// header is untrusted input, so every failure is a Status, nesting is bounded
// and integers that do not fit int64 are rejected.
#ifndef TPUSIM_SIM_VALUE_PYTHON_LITERAL_H_
#define TPUSIM_SIM_VALUE_PYTHON_LITERAL_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/base/status.h"

namespace tpusim::value::internal {

struct PyValue {
  enum class Kind { kString, kInt, kBool, kNone, kTuple, kList, kDict };
  Kind kind = Kind::kNone;
  std::string string;          ///< kString
  int64_t integer = 0;         ///< kInt
  bool boolean = false;        ///< kBool
  std::vector<PyValue> items;  ///< kTuple and kList elements; kDict keys and values, alternating
};

/// Lower-case name of a kind for messages, e.g. "a tuple".
const char* PyKindName(PyValue::Kind kind);

/// Parses one literal spanning all of `text` (surrounding whitespace allowed).
/// Errors name the offending character offset.
StatusOr<PyValue> ParsePythonLiteral(std::string_view text);

}  // namespace tpusim::value::internal

#endif  // TPUSIM_SIM_VALUE_PYTHON_LITERAL_H_
