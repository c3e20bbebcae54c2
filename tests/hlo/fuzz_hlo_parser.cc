// libFuzzer target for the HLO text frontend (TPUSIM_FUZZ=ON, clang).
//
// Any input must either fail to parse with an error or parse; a parsed module
// must either fail verification with an error or verify. A verified module must
// print to text that parses again to an equal module, and printing that gives
// the same bytes: any difference is a round-trip bug and traps, like a crash.
//
//   <build-fuzz>/bin/fuzz_hlo_parser -dict=tests/hlo/fuzz_hlo.dict SEED_DIR
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "sim/hlo/parser.h"
#include "sim/hlo/printer.h"
#include "sim/hlo/verifier.h"

namespace {

/// Prints what went wrong to stderr (libFuzzer keeps the input that caused it).
[[noreturn]] void Fail(const char* what, const std::string& detail, const std::string& printed) {
  std::fprintf(stderr, "fuzz_hlo_parser: %s\n%s\n--- printed module ---\n%s\n", what,
               detail.c_str(), printed.c_str());
  __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tpusim::hlo;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = ParseHloModule(text, "fuzz.hlo");
  if (!parsed.ok()) return 0;
  const HloModule& module = **parsed;
  if (!VerifyModule(module).ok()) return 0;

  const std::string printed = PrintModule(module);
  auto reparsed = ParseHloModule(printed, "printed.hlo");
  if (!reparsed.ok()) Fail("printed module does not parse", reparsed.status().message(), printed);
  std::string why;
  if (!ModulesEqual(module, **reparsed, &why)) {
    Fail("printed module parses to a different module", why, printed);
  }
  const tpusim::Status verified_again = VerifyModule(**reparsed);
  if (!verified_again.ok()) {
    Fail("printed module parses but no longer verifies", verified_again.message(), printed);
  }
  const std::string printed_again = PrintModule(**reparsed);
  if (printed_again != printed) {
    Fail("printing the re-parsed module gives different text", printed_again, printed);
  }
  return 0;
}
