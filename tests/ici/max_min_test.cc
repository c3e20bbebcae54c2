// Checks FlowNetwork's rates against an independent, naive water-filling.
// Each flow is given bytes = (its max-min rate) x T, so under correct max-min
// sharing every flow finishes at T together; a wrong rate shows as a flow
// finishing early or late.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "sim/arch/chip_config.h"
#include "sim/arch/topology_config.h"
#include "sim/ici/flow_network.h"
#include "sim/ici/routing.h"
#include "sim/ici/topology.h"

namespace tpusim::ici {
namespace {

/// Max-min rates (bytes/s) by the textbook loop: find the link with the
/// smallest share of what is left, fix its flows at that share, repeat.
std::vector<double> NaiveMaxMin(const Topology& t, const std::vector<std::vector<LinkId>>& routes) {
  std::vector<double> left;
  for (const Link& l : t.links()) left.push_back(static_cast<double>(l.bandwidth.value()));
  std::vector<double> rate(routes.size(), -1.0);
  while (true) {
    double best = std::numeric_limits<double>::infinity();
    LinkId bottleneck = -1;
    for (size_t l = 0; l < left.size(); ++l) {
      int unfixed = 0;
      for (size_t f = 0; f < routes.size(); ++f) {
        if (rate[f] < 0 && std::count(routes[f].begin(), routes[f].end(), LinkId(l)) > 0) ++unfixed;
      }
      if (unfixed > 0 && left[l] / unfixed < best) {
        best = left[l] / unfixed;
        bottleneck = static_cast<LinkId>(l);
      }
    }
    if (bottleneck < 0) return rate;
    for (size_t f = 0; f < routes.size(); ++f) {
      if (rate[f] >= 0 || std::count(routes[f].begin(), routes[f].end(), bottleneck) == 0) continue;
      rate[f] = best;
      for (LinkId l : routes[f]) left[static_cast<size_t>(l)] -= best;
    }
  }
}

class MaxMin : public ::testing::TestWithParam<std::string> {};

TEST_P(MaxMin, EveryFlowSizedToItsMaxMinRateFinishesTogether) {
  const arch::IciConfig ici{4, BytesPerSecond(1'000'000'000), Picoseconds(0), 100, {}};
  StatusOr<arch::TopologyConfig> config = arch::ParseTopologyShortForm(GetParam());
  ASSERT_TRUE(config.ok());
  StatusOr<Topology> topology = Topology::Build(*config, ici);
  ASSERT_TRUE(topology.ok());
  const Router router(*topology);
  uint64_t state = 3;
  for (int trial = 0; trial < 5; ++trial) {
    std::vector<Flow> flows;
    std::vector<std::vector<LinkId>> routes;
    while (flows.size() < 40) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      const auto chips = static_cast<uint64_t>(topology->chip_count());
      Flow f;
      f.src = static_cast<NodeId>((state >> 20) % chips);
      f.dst = static_cast<NodeId>((state >> 40) % chips);
      f.flow_key = state;
      if (f.src == f.dst) continue;
      StatusOr<std::vector<LinkId>> route = router.Route(f.src, f.dst, f.flow_key);
      ASSERT_TRUE(route.ok());
      f.route = *route;
      routes.push_back(*route);
      flows.push_back(f);
    }
    const std::vector<double> rate = NaiveMaxMin(*topology, routes);
    constexpr double kSeconds = 1.0;  // T = 1e12 ps
    for (size_t i = 0; i < flows.size(); ++i) {
      flows[i].bytes = static_cast<int64_t>(rate[i] * kSeconds + 0.5);
    }
    const FlowNetwork network(*topology, router);
    StatusOr<FlowNetworkResult> result = network.Run(flows);
    ASSERT_TRUE(result.ok()) << result.status().message();
    for (size_t i = 0; i < flows.size(); ++i) {
      // Byte rounding moves a finish by at most 0.5 byte / rate: < 1e-7 T here.
      EXPECT_NEAR(static_cast<double>(result->flows[i].finish.value()), 1e12, 1e5)
          << GetParam() << " trial " << trial << " flow " << i << " rate " << rate[i];
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Topologies, MaxMin,
    ::testing::Values("torus:4x4", "mesh:3x3x2", "twisted:2x2x4",
                      "fattree:radix=8,levels=2,oversubscription=3",
                      "multislice:slices=2,dcn_bandwidth=0.3GB/s,dcn_latency=0,slice=torus:3x2"));

}  // namespace
}  // namespace tpusim::ici
