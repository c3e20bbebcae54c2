// Property test over many generated topology texts: parsing never crashes;
// every topology that builds routes every pair of healthy chips along a
// connected path of healthy links, and a batch of flows over them finishes.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "sim/arch/chip_config.h"
#include "sim/arch/topology_config.h"
#include "sim/ici/flow_network.h"
#include "sim/ici/routing.h"
#include "sim/ici/topology.h"

namespace tpusim::ici {
namespace {

/// A 64-bit LCG: the same texts on every machine.
class Lcg {
 public:
  uint64_t Next(uint64_t bound) {
    state_ = state_ * 6364136223846793005ULL + 1442695040888963407ULL;
    return (state_ >> 33) % bound;
  }

 private:
  uint64_t state_ = 7;
};

/// Mostly plausible short forms, some broken.
std::string RandomText(Lcg& rng) {
  static const std::vector<std::string> kinds = {
      "torus:", "mesh:", "twisted:", "fattree:", "switch:", "multislice:", "graph:", "x"};
  static const std::vector<std::string> dims = {"1",   "2",     "3",     "4",     "5",   "8", "0",
                                                "4x4", "2x3x4", "4x4x8", "4x8x8", "3x3", "x", ""};
  static const std::vector<std::string> keys = {",wraparound=1x0",
                                                ",wraparound=true",
                                                ",wraparound=0x1x1",
                                                ",radix=4",
                                                ",radix=6",
                                                ",levels=2",
                                                ",levels=3",
                                                ",oversubscription=2",
                                                ",slices=2",
                                                ",slice=torus:3x2",
                                                ",slice=twisted:2x2x4",
                                                ",link_bandwidth=1GB/s",
                                                ",hop_latency=5ns",
                                                ",switch_latency=0",
                                                ",dcn_bandwidth=2GB/s",
                                                ",=",
                                                ",radix=",
                                                "radix=4,levels=2"};
  std::string text = kinds[rng.Next(kinds.size())] + dims[rng.Next(dims.size())];
  for (uint64_t k = rng.Next(4); k > 0; --k) text += keys[rng.Next(keys.size())];
  return text;
}

TEST(RandomTopology, ParsesBuildsRoutesAndRunsWithoutCrashing) {
  const arch::IciConfig ici{4, BytesPerSecond(1'000'000'000), Picoseconds(1000), 100, {}};
  Lcg rng;
  int built = 0;
  for (int i = 0; i < 3000; ++i) {
    const std::string text = RandomText(rng);
    StatusOr<arch::TopologyConfig> config = arch::ParseTopologyShortForm(text);
    if (!config.ok()) {
      EXPECT_EQ(config.status().code(), StatusCode::kInvalidArgument) << text;
      continue;
    }
    // Chip 0 down, half the time.
    const bool failure = rng.Next(2) == 0;
    if (failure) config->chip_faults.push_back({0, Picoseconds(0)});
    StatusOr<Topology> topology = Topology::Build(*config, ici);
    if (!topology.ok()) {
      EXPECT_EQ(topology.status().code(), StatusCode::kInvalidArgument) << text;
      continue;
    }
    ++built;
    const Router router(*topology);
    std::vector<Flow> flows;
    for (int p = 0; p < 8; ++p) {
      const auto src = static_cast<NodeId>(rng.Next(static_cast<uint64_t>(topology->chip_count())));
      const auto dst = static_cast<NodeId>(rng.Next(static_cast<uint64_t>(topology->chip_count())));
      StatusOr<std::vector<LinkId>> route = router.Route(src, dst, static_cast<uint64_t>(p));
      if (!topology->chip_up(src) || !topology->chip_up(dst)) {
        EXPECT_EQ(route.ok(), src == dst) << text;  // a chip reaches itself, down or not
        continue;
      }
      if (failure && !route.ok()) {  // chip 0 may cut a line or a small mesh in two
        EXPECT_EQ(route.status().code(), StatusCode::kFailedPrecondition) << text;
        continue;
      }
      ASSERT_TRUE(route.ok()) << text << ": " << route.status().message();
      NodeId at = src;
      for (LinkId l : *route) {
        const Link& link = topology->links()[static_cast<size_t>(l)];
        EXPECT_EQ(link.from, at) << text;
        EXPECT_TRUE(link.up) << text;
        at = link.to;
      }
      EXPECT_EQ(at, dst) << text;
      Flow f;
      f.src = src;
      f.dst = dst;
      f.bytes = static_cast<int64_t>(rng.Next(1'000'000));
      f.flow_key = static_cast<uint64_t>(p);
      if (!flows.empty() && p % 3 == 0) f.after = {static_cast<int32_t>(flows.size() - 1)};
      flows.push_back(f);
    }
    const FlowNetwork network(*topology, router);
    StatusOr<FlowNetworkResult> result = network.Run(flows);
    ASSERT_TRUE(result.ok()) << text << ": " << result.status().message();
    for (size_t k = 0; k < flows.size(); ++k) {
      EXPECT_GE(result->flows[k].finish, result->flows[k].start) << text;
    }
  }
  EXPECT_GT(built, 200);  // the generator reaches the builders, not only the errors
}

}  // namespace
}  // namespace tpusim::ici
