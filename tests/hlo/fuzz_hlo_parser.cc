// libFuzzer target for the HLO text frontend (TPUSIM_FUZZ=ON, clang).
//
// Any input must either fail to parse with an error or parse; a parsed module
// must either fail verification with an error or verify. A verified module must
// print to text that parses again to an equal module, and printing that gives
// the same bytes: any difference is a round-trip bug and traps, like a crash.
//
// Its custom mutator mixes libFuzzer's byte-level mutations with structural
// ones (tests/hlo/hlo_text_mutator.h): deep nesting, huge numbers and tiles,
// long operand lists. Both draw only on libFuzzer's seed, so -seed=N replays.
//
//   <build-fuzz>/bin/fuzz_hlo_parser -dict=tests/hlo/fuzz_hlo.dict SEED_DIR
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "sim/hlo/parser.h"
#include "sim/hlo/printer.h"
#include "sim/hlo/verifier.h"
#include "tests/hlo/hlo_text_mutator.h"

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

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

/// One mutation in eight is structural (libFuzzer applies up to five to each
/// input, so about half the inputs get one); the rest, and any structural one
/// the input has no place for, are libFuzzer's own (bytes, the dictionary,
/// cross-over), which keep exploring the grammar in the small.
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  using tpusim::test::HloMutation;
  using tpusim::test::kHloMutationCount;
  const unsigned choice = seed % (8 * kHloMutationCount);
  if (choice >= kHloMutationCount) return LLVMFuzzerMutate(data, size, max_size);
  std::string text(reinterpret_cast<const char*>(data), size);
  if (!tpusim::test::MutateHloText(static_cast<HloMutation>(choice), seed, max_size, text)) {
    return LLVMFuzzerMutate(data, size, max_size);
  }
  std::memcpy(data, text.data(), text.size());
  return text.size();
}
