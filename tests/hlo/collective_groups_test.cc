// Collective participants as XLA defines them (sim/hlo/collective_groups.h):
// the device counts a module needs, and whole group lists and device pairs
// resolved for every device at once, in each group mode.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sim/hlo/collective_groups.h"
#include "sim/hlo/computation.h"
#include "sim/hlo/parser.h"
#include "tests/hlo/find_instruction.h"

namespace tpusim::hlo {
namespace {

using Groups = std::vector<std::vector<int64_t>>;
using Pairs = std::vector<std::pair<int64_t, int64_t>>;

constexpr char kAdd[] = R"(
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
)";

std::unique_ptr<HloModule> Parse(const std::string& text) {
  auto module = ParseHloModule(text, "groups.hlo");
  EXPECT_TRUE(module.ok()) << module.status().message();
  return module.ok() ? std::move(*module) : nullptr;
}

CollectiveParticipants Resolve(const HloModule& module, const std::string& name,
                               SpmdConfig config) {
  const HloInstruction& inst = *test::FindInstruction(module, name);
  auto resolved = ResolveCollective(module, inst, inst.opcode(), config);
  EXPECT_TRUE(resolved.ok()) << resolved.status().message();
  return resolved.ok() ? *resolved : CollectiveParticipants{};
}

TEST(CommunicatingDevices, FollowGroupsAndPairsTransitively) {
  // Replica groups {0,2} and {1,3}, then a permute 2 -> 4 (replica ids):
  // device 0 reaches 2 and, through it, 4; devices 1, 3 and 5 are apart.
  const auto module = Parse(std::string("HloModule m, replica_count=6\n") + kAdd + R"(
ENTRY e {
  p = f32[] parameter(0)
  r = f32[] all-reduce(p), replica_groups={{0,2},{1,3},{4},{5}}, to_apply=add
  ROOT q = f32[] collective-permute(r), source_target_pairs={{2,4}}
})");
  ASSERT_NE(module, nullptr);
  const SpmdConfig config{6, 1};
  EXPECT_EQ(*CommunicatingDevices(*module, config, {0}), (std::vector<int64_t>{0, 2, 4}));
  EXPECT_EQ(*CommunicatingDevices(*module, config, {1}), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(*CommunicatingDevices(*module, config, {5, 1}), (std::vector<int64_t>{1, 3, 5}));

  // An all-reduce over every replica joins them all.
  const auto whole = Parse(std::string("HloModule m, replica_count=4\n") + kAdd + R"(
ENTRY e {
  p = f32[] parameter(0)
  ROOT r = f32[] all-reduce(p), replica_groups={}, to_apply=add
})");
  ASSERT_NE(whole, nullptr);
  EXPECT_EQ(*CommunicatingDevices(*whole, {4, 1}, {0}), (std::vector<int64_t>{0, 1, 2, 3}));

  // A send without its pairs could reach any device.
  const auto send = Parse(R"(HloModule m, replica_count=4
ENTRY e {
  p = f32[] parameter(0)
  t = token[] after-all()
  s = (f32[], u32[], token[]) send(p, t), channel_id=1
  ROOT d = token[] send-done(s), channel_id=1
})");
  ASSERT_NE(send, nullptr);
  EXPECT_EQ(CommunicatingDevices(*send, {4, 1}, {0})->size(), 4u);
}

TEST(SpmdConfigTest, CoveringModuleRaisesCountsToTheIdsCollectivesName) {
  auto module = Parse(std::string("HloModule m\n") + kAdd + R"(
ENTRY e {
  p = f32[] parameter(0)
  r = f32[] all-reduce(p), replica_groups={{0,1,2}}, to_apply=add
  ROOT c = f32[] collective-permute(r), channel_id=1, source_target_pairs={{0,4}}
})");
  ASSERT_NE(module, nullptr);
  const SpmdConfig config = SpmdConfig::CoveringModule(*module);
  EXPECT_EQ(config.replica_count, 3);
  EXPECT_EQ(config.partition_count, 5);
  const SpmdConfig header = SpmdConfig::FromModule(*module);
  EXPECT_EQ(header.device_count(), 1);
  EXPECT_EQ(config.DeviceIndex({2, 3}), 13);
  EXPECT_EQ(config.Device(13).replica_id, 2);
  EXPECT_EQ(config.Device(13).partition_id, 3);
}

TEST(SpmdConfigTest, CoveringModuleTakesTheGroupSizeOfEmptyGroupsFromShapes) {
  // all-gather f32[2] -> f32[6] over every replica: 3 replicas.
  auto module = Parse(R"(HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  ROOT g = f32[6] all-gather(p), replica_groups={}, dimensions={0}
})");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(SpmdConfig::CoveringModule(*module).replica_count, 3);
  EXPECT_EQ(SpmdConfig::CoveringModule(*module).partition_count, 1);
}

TEST(SpmdConfigTest, AVariadicStartTakesItsGroupSizeFromItsFirstOperandsShapes) {
  // reduce-scatter-start of two f32[16,64] to f32[4,64] each: 4 replicas.
  auto module = Parse(std::string("HloModule m\n") + kAdd + R"(
ENTRY e {
  p0 = f32[16,64] parameter(0)
  p1 = f32[16,64] parameter(1)
  s = ((f32[16,64], f32[16,64]), (f32[4,64], f32[4,64])) reduce-scatter-start(p0, p1), replica_groups={}, dimensions={0}, to_apply=add
  ROOT d = (f32[4,64], f32[4,64]) reduce-scatter-done(s)
})");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(SpmdConfig::CoveringModule(*module).replica_count, 4);
}

TEST(ResolveCollective, ListAndIotaGroupsAcrossReplicasOfEachPartition) {
  auto module = Parse(std::string("HloModule m\n") + kAdd + R"(
ENTRY e {
  p = f32[4] parameter(0)
  list = f32[4] all-reduce(p), replica_groups={{0,1},{3,2}}, to_apply=add
  iota = f32[4] all-reduce(p), replica_groups=[2,2]<=[2,2]T(1,0), to_apply=add
  ROOT all = f32[4] all-reduce(p), replica_groups={}, to_apply=add
})");
  ASSERT_NE(module, nullptr);
  const SpmdConfig four{4, 1};
  EXPECT_EQ(Resolve(*module, "list", four).groups, (Groups{{0, 1}, {3, 2}}));
  EXPECT_EQ(Resolve(*module, "iota", four).groups, (Groups{{0, 2}, {1, 3}}));
  EXPECT_EQ(Resolve(*module, "all", four).groups, (Groups{{0, 1, 2, 3}}));
  // Without a channel the ids are replicas: each partition has its own groups.
  const SpmdConfig two_by_two{2, 2};
  EXPECT_EQ(Resolve(*module, "all", two_by_two).groups, (Groups{{0, 2}, {1, 3}}));
}

TEST(ResolveCollective, ChannelIdAndGlobalDeviceIds) {
  auto module = Parse(std::string("HloModule m\n") + kAdd + R"(
ENTRY e {
  p = f32[4] parameter(0)
  flat = f32[4] all-reduce(p), channel_id=1, replica_groups={{0,3},{1,2}}, use_global_device_ids=true, to_apply=add
  both = f32[4] all-reduce(p), channel_id=2, replica_groups={{0},{1}}, to_apply=add
  ROOT parts = f32[4] all-to-all(p), channel_id=3, replica_groups={{0,1}}, dimensions={0}
})");
  ASSERT_NE(module, nullptr);
  const SpmdConfig config{2, 2};
  EXPECT_EQ(Resolve(*module, "flat", config).groups, (Groups{{0, 3}, {1, 2}}));
  // Replica ids, each with all of its partitions.
  EXPECT_EQ(Resolve(*module, "both", config).groups, (Groups{{0, 1}, {2, 3}}));
  // all-to-all with a channel: partitions of each replica.
  EXPECT_EQ(Resolve(*module, "parts", config).groups, (Groups{{0, 1}, {2, 3}}));
}

TEST(ResolveCollective, PermuteAndSendRecvPairsPerPeerDomain) {
  auto module = Parse(R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  cp = f32[4] collective-permute(p), source_target_pairs={{0,1},{1,0}}
  cpc = f32[4] collective-permute(p), channel_id=1, source_target_pairs={{1,0}}
  tok = token[] after-all()
  snd = (f32[4], u32[], token[]) send(p, tok), channel_id=2, frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1}}"}
  ROOT bare = (f32[4], u32[], token[]) send(p, tok), channel_id=3
})");
  ASSERT_NE(module, nullptr);
  const SpmdConfig config{2, 2};  // device = replica * 2 + partition
  // No channel: replica ids, within each partition.
  const CollectiveParticipants cp = Resolve(*module, "cp", config);
  EXPECT_EQ(cp.pairs, (Pairs{{0, 2}, {2, 0}, {1, 3}, {3, 1}}));
  EXPECT_EQ(cp.groups, (Groups{{0, 2}, {1, 3}}));
  // A channel: partition ids, within each replica.
  const CollectiveParticipants cpc = Resolve(*module, "cpc", config);
  EXPECT_EQ(cpc.pairs, (Pairs{{1, 0}, {3, 2}}));
  EXPECT_EQ(cpc.groups, (Groups{{0, 1}, {2, 3}}));
  EXPECT_EQ(Resolve(*module, "snd", config).pairs, (Pairs{{0, 1}, {2, 3}}));
  // A send without pairs takes no part.
  EXPECT_TRUE(Resolve(*module, "bare", config).groups.empty());
}

TEST(ResolveCollective, IdsOutOfRangeAreErrorsWithTheLocation) {
  auto module = Parse(std::string("HloModule m\n") + kAdd + R"(
ENTRY e {
  p = f32[4] parameter(0)
  ar = f32[4] all-reduce(p), replica_groups={{0,5}}, to_apply=add
  ROOT cp = f32[4] collective-permute(ar), source_target_pairs={{0,7}}
})");
  ASSERT_NE(module, nullptr);
  const SpmdConfig config{2, 1};
  auto ar = ResolveCollective(*module, *test::FindInstruction(*module, "ar"), HloOpcode::kAllReduce, config);
  ASSERT_FALSE(ar.ok());
  // At the attribute, not at the instruction.
  EXPECT_THAT(ar.status().message(),
              ::testing::HasSubstr("groups.hlo:11:30: error: all-reduce ar: replica_groups name "
                                   "replica 5, but the program has 2 replicas"));
  auto cp =
      ResolveCollective(*module, *test::FindInstruction(*module, "cp"), HloOpcode::kCollectivePermute, config);
  ASSERT_FALSE(cp.ok());
  EXPECT_THAT(cp.status().message(),
              ::testing::HasSubstr("groups.hlo:12:44: error: collective-permute cp: "
                                   "source_target_pairs name replica 7, but the program has 2 "
                                   "replicas"));
}

// A count the header states is the program's: ids past it are errors, not a
// reason to run more devices ({{0,1,2},{3,4,5}} with replica_count=4 used to
// run 6), and the error names the id past the count rather than a replica
// left out of every group ({{0,5},{2,3}} blamed replica 1).
TEST(CheckCollectiveIds, IdsPastAStatedCountAreErrorsAtTheAttribute) {
  for (const std::string groups : {"{{0,1,2},{3,4,5}}", "{{0,5},{2,3}}"}) {
    auto module = Parse(std::string("HloModule m, replica_count=4\n") + kAdd + R"(
ENTRY e {
  p = f32[4] parameter(0)
  ROOT ar = f32[4] all-reduce(p), replica_groups=)" + groups + R"(, to_apply=add
})");
    ASSERT_NE(module, nullptr);
    const SpmdConfig config = SpmdConfig::CoveringModule(*module);
    EXPECT_EQ(config.replica_count, 4) << groups;
    EXPECT_EQ(CheckCollectiveIds(*module, config).message(),
              "groups.hlo:11:35: error: all-reduce ar: replica_groups name replica 5, but the "
              "program has 4 replicas")
        << groups;
  }
}

TEST(CheckCollectiveIds, ChecksEachModeAgainstItsCountAndNegativeIds) {
  auto module = Parse(std::string("HloModule m, replica_count=2, num_partitions=2\n") + kAdd + R"(
ENTRY e {
  p = f32[4] parameter(0)
  ar = f32[4] all-reduce(p), replica_groups={{0,1,2,3}}, channel_id=1, use_global_device_ids=true, to_apply=add
  ROOT cp = f32[4] collective-permute(ar), channel_id=2, source_target_pairs={{0,1},{1,0}}
})");
  ASSERT_NE(module, nullptr);
  EXPECT_TRUE(CheckCollectiveIds(*module, SpmdConfig::CoveringModule(*module)).ok());
  EXPECT_EQ(CheckCollectiveIds(*module, SpmdConfig{1, 2}).message(),
            "groups.hlo:11:30: error: all-reduce ar: replica_groups name device 3, but the "
            "program has 2 devices (1 replica x 2 partitions)");
  EXPECT_EQ(CheckCollectiveIds(*module, SpmdConfig{2, 1}).message(),
            "groups.hlo:11:30: error: all-reduce ar: replica_groups name device 3, but the "
            "program has 2 devices (2 replicas x 1 partition)");

  auto negative = Parse(std::string("HloModule m, replica_count=2\n") + kAdd + R"(
ENTRY e {
  p = f32[4] parameter(0)
  ROOT ar = f32[4] all-reduce(p), replica_groups={{-1,1}}, to_apply=add
})");
  ASSERT_NE(negative, nullptr);
  EXPECT_THAT(CheckCollectiveIds(*negative, SpmdConfig{2, 1}).message(),
              ::testing::HasSubstr("replica_groups name replica -1, but the program has 2"));
}

TEST(SpmdConfigTest, CoveringModuleRaisesOnlyTheCountsTheHeaderLeavesUnstated) {
  // Global device ids 0..5 with 2 replicas stated: 3 partitions.
  auto module = Parse(std::string("HloModule m, replica_count=2\n") + kAdd + R"(
ENTRY e {
  p = f32[4] parameter(0)
  ROOT ar = f32[4] all-reduce(p), replica_groups={{0,1,2,3,4,5}}, channel_id=1, use_global_device_ids=true, to_apply=add
})");
  ASSERT_NE(module, nullptr);
  const SpmdConfig config = SpmdConfig::CoveringModule(*module);
  EXPECT_EQ(config.replica_count, 2);
  EXPECT_EQ(config.partition_count, 3);
  EXPECT_TRUE(CheckCollectiveIds(*module, config).ok());
}

}  // namespace
}  // namespace tpusim::hlo
