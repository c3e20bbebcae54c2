#include "sim/value/check.h"

#include <cstdio>
#include <cstdlib>

namespace tpusim::value::internal {

void CheckFailed(const char* file, int line, const char* condition, const char* message) {
  std::fprintf(stderr, "%s:%d: check failed: %s: %s\n", file, line, condition, message);
  std::abort();
}

}  // namespace tpusim::value::internal
