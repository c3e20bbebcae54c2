// The structural HLO mutations of fuzz_hlo_parser: the same seed gives the
// same text, the result never exceeds its size bound, the mutations meant to
// keep a module valid do, and the others change what they say they change.
#include "tests/hlo/hlo_text_mutator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "sim/hlo/parser.h"
#include "sim/hlo/verifier.h"

namespace tpusim::test {
namespace {

using ::testing::HasSubstr;

constexpr char kModule[] = R"(HloModule m, entry_computation_layout={(f32[2,3]{1,0})->f32[2,3]{1,0}}

ENTRY main {
  x = f32[2,3]{1,0} parameter(0)
  ROOT y = f32[2,3]{1,0} add(x, x)
}
)";

constexpr size_t kRoomy = 1 << 20;

std::string Mutated(HloMutation mutation, uint64_t seed, size_t max_size = kRoomy) {
  std::string text = kModule;
  EXPECT_TRUE(MutateHloText(mutation, seed, max_size, text));
  return text;
}

/// Empty when `text` parses and verifies, else the error.
std::string VerifyError(const std::string& text) {
  StatusOr<std::unique_ptr<hlo::HloModule>> module = hlo::ParseHloModule(text, "mutated.hlo");
  if (!module.ok()) return module.status().message();
  const Status verified = hlo::VerifyModule(**module);
  return verified.ok() ? "" : verified.message();
}

TEST(HloTextMutator, TheSameSeedGivesTheSameTextForEveryMutation) {
  for (int m = 0; m < kHloMutationCount; ++m) {
    const auto mutation = static_cast<HloMutation>(m);
    for (uint64_t seed = 0; seed < 20; ++seed) {
      EXPECT_EQ(Mutated(mutation, seed), Mutated(mutation, seed)) << m << " " << seed;
    }
  }
}

TEST(HloTextMutator, NeverExceedsMaxSizeAndLeavesTheTextAloneWhenItCannot) {
  for (int m = 0; m < kHloMutationCount; ++m) {
    for (uint64_t seed = 0; seed < 20; ++seed) {
      std::string text = kModule;
      const size_t max_size = text.size() + 40;
      if (MutateHloText(static_cast<HloMutation>(m), seed, max_size, text)) {
        EXPECT_LE(text.size(), max_size) << m << " " << seed;
      } else {
        EXPECT_EQ(text, kModule) << m << " " << seed;
      }
    }
  }
}

TEST(HloTextMutator, NestedComputationsWideAndDeepTuplesKeepTheModuleValid) {
  for (uint64_t seed = 0; seed < 20; ++seed) {
    for (const HloMutation mutation : {HloMutation::kNestComputations, HloMutation::kWideTuple}) {
      const std::string text = Mutated(mutation, seed);
      EXPECT_EQ(VerifyError(text), "") << text;
    }
    // Tuples nest at most 64 deep (kMaxShapeDepth); deeper ones are refused.
    const std::string deep = Mutated(HloMutation::kDeepTupleValue, seed);
    const std::string error = VerifyError(deep);
    if (!error.empty()) {
      EXPECT_THAT(error, HasSubstr("nested more than 64 deep")) << deep;
    }
  }
}

TEST(HloTextMutator, ASecondMutationAddsNoDuplicateNames) {
  // Room enough for two of the widest tuples (100,000 operands).
  constexpr size_t kRoomier = 16 << 20;
  std::string text = kModule;
  ASSERT_TRUE(MutateHloText(HloMutation::kNestComputations, 1, kRoomier, text));
  ASSERT_TRUE(MutateHloText(HloMutation::kNestComputations, 2, kRoomier, text));
  ASSERT_TRUE(MutateHloText(HloMutation::kWideTuple, 3, kRoomier, text));
  ASSERT_TRUE(MutateHloText(HloMutation::kWideTuple, 4, kRoomier, text));
  EXPECT_EQ(VerifyError(text), "");
}

TEST(HloTextMutator, ShapeMutationsChangeShapes) {
  for (uint64_t seed = 0; seed < 20; ++seed) {
    EXPECT_THAT(Mutated(HloMutation::kNestTupleShape, seed), HasSubstr("((f32[2,3]{1,0}))"));
    EXPECT_THAT(Mutated(HloMutation::kHugeTile, seed), HasSubstr(":T("));
  }
  for (uint64_t seed = 0; seed < 20; ++seed) {
    EXPECT_NE(Mutated(HloMutation::kBigDimension, seed), kModule);
    EXPECT_NE(Mutated(HloMutation::kBigNumber, seed), kModule);
  }
}

TEST(HloTextMutator, LongOperandListRepeatsTheFirstOperand) {
  const std::string text = Mutated(HloMutation::kLongOperandList, 5);
  EXPECT_THAT(text, testing::AnyOf(HasSubstr("add(x, x, x, x"), HasSubstr("parameter(0, 0, 0")));
}

}  // namespace
}  // namespace tpusim::test
