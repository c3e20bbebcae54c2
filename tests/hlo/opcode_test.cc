// opcode.def's columns agree with the spellings they describe, for every opcode.
#include "sim/hlo/opcode.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <string_view>

namespace tpusim::hlo {
namespace {

std::string_view WithoutSuffix(std::string_view spelling, std::string_view suffix) {
  return spelling.substr(0, spelling.size() - suffix.size());
}

TEST(Opcode, EverySpellingReadsBackAsItsOpcode) {
  for (int i = 0; i < kHloOpcodeCount; ++i) {
    const auto opcode = static_cast<HloOpcode>(i);
    EXPECT_EQ(HloOpcodeFromName(HloOpcodeName(opcode)), opcode) << HloOpcodeName(opcode);
  }
}

// An X-start op starts what X does and X-done waits for it, so the role and
// collective columns follow from the spelling.
TEST(Opcode, AsyncPairsStartTheCollectiveOfTheirSyncForm) {
  for (int i = 0; i < kHloOpcodeCount; ++i) {
    const auto opcode = static_cast<HloOpcode>(i);
    const std::string_view name = HloOpcodeName(opcode);
    if (name.ends_with("-start")) {
      EXPECT_EQ(OpRoleOf(opcode), OpRole::kAsyncStart) << name;
      const std::optional<HloOpcode> sync = HloOpcodeFromName(WithoutSuffix(name, "-start"));
      if (sync) {
        EXPECT_EQ(CollectiveKindOf(opcode), CollectiveKindOf(*sync)) << name;
      }
    } else if (name.ends_with("-done")) {
      EXPECT_EQ(OpRoleOf(opcode), OpRole::kAsyncDone) << name;
      // X-done waits for what X-start (or X: send, recv) started.
      std::optional<HloOpcode> started =
          HloOpcodeFromName(std::string(WithoutSuffix(name, "-done")) + "-start");
      if (!started) started = HloOpcodeFromName(WithoutSuffix(name, "-done"));
      ASSERT_TRUE(started.has_value()) << name << " finishes no op";
      EXPECT_EQ(CollectiveKindOf(opcode), CollectiveKindOf(*started)) << name;
      EXPECT_EQ(IsCollectiveDone(opcode), IsCollective(*started)) << name;
      EXPECT_FALSE(IsCollective(opcode)) << name;
    }
  }
}

// Elementwise ops compute, and collectives are neither elementwise nor free.
TEST(Opcode, ColumnsDoNotContradictEachOther) {
  int collectives = 0;
  int collective_dones = 0;
  for (int i = 0; i < kHloOpcodeCount; ++i) {
    const auto opcode = static_cast<HloOpcode>(i);
    const std::string_view name = HloOpcodeName(opcode);
    if (IsElementwise(opcode)) {
      EXPECT_EQ(OpRoleOf(opcode), OpRole::kCompute) << name;
      EXPECT_NE(HloOpcodeArity(opcode), kVariadicOperands) << name;
    }
    if (CollectiveKindOf(opcode) != CollectiveKind::kNone) {
      EXPECT_FALSE(IsElementwise(opcode)) << name;
      EXPECT_TRUE(OpRoleOf(opcode) == OpRole::kCompute || OpRoleOf(opcode) == OpRole::kAsyncStart ||
                  OpRoleOf(opcode) == OpRole::kAsyncDone)
          << name;
    }
    if (IsCollective(opcode)) ++collectives;
    if (IsCollectiveDone(opcode)) ++collective_dones;
  }
  EXPECT_EQ(collectives, 10);  // 7 collectives and the -start forms of 3
  EXPECT_EQ(collective_dones, 3);  // the -done forms of those 3
}

}  // namespace
}  // namespace tpusim::hlo
