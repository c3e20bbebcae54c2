// libFuzzer target: arbitrary bytes through ParseScenario must give a
// scenario or an error status, never a crash, hang or sanitizer report.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "harness/suite/scenario.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)tpusim::harness::ParseScenario(text, "/fuzz/scenario.yaml");
  return 0;
}
