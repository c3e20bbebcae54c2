// Max-min fair sharing, event-driven rate changes, latency and dependencies,
// each against times computed by hand in the comments. Links run at 1 GB/s
// (1e-3 bytes per picosecond) with 1 ns (1000 ps) per hop unless noted.
#include "sim/ici/flow_network.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/arch/chip_config.h"
#include "sim/arch/topology_config.h"
#include "sim/ici/routing.h"
#include "sim/ici/topology.h"

namespace tpusim::ici {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kHop = 1000;  // ps

arch::IciConfig Ici() {
  return arch::IciConfig{4, BytesPerSecond(1'000'000'000), Picoseconds(kHop), 100, {}};
}

Topology Build(arch::TopologyKind kind, std::vector<int64_t> dims,
               std::vector<arch::LinkFault> faults = {}) {
  arch::TopologyConfig config;
  config.kind = kind;
  config.dims = std::move(dims);
  config.faults = std::move(faults);
  StatusOr<Topology> t = Topology::Build(config, Ici());
  EXPECT_TRUE(t.ok()) << t.status().message();
  return std::move(t).value();
}

Flow Transfer(NodeId src, NodeId dst, int64_t bytes) {
  Flow f;
  f.src = src;
  f.dst = dst;
  f.bytes = bytes;
  return f;
}

FlowNetworkResult MustRun(const Topology& topology, const std::vector<Flow>& flows) {
  Router router(topology);
  FlowNetwork network(topology, router);
  StatusOr<FlowNetworkResult> result = network.Run(flows);
  EXPECT_TRUE(result.ok()) << result.status().message();
  return result.ok() ? *result : FlowNetworkResult{};
}

TEST(FlowNetwork, OneFlowTakesBytesOverBandwidthPlusHopLatency) {
  const Topology line = Build(arch::TopologyKind::kMesh, {2});
  // 1e6 bytes at 1e9 B/s = 1e9 ps, plus one hop.
  const FlowNetworkResult r = MustRun(line, {Transfer(0, 1, 1'000'000)});
  EXPECT_EQ(r.flows[0].start.value(), 0);
  EXPECT_EQ(r.flows[0].finish.value(), 1'000'000'000 + kHop);
  EXPECT_EQ(r.end, r.flows[0].finish);
}

// A flow whose route latency a pipelined phase's floor accounts for finishes
// when its last byte is sent; a dependent still waits for that finish.
TEST(FlowNetwork, RouteLatencyInFloorFinishesAtTheLastByte) {
  const Topology line = Build(arch::TopologyKind::kMesh, {3});
  Flow data = Transfer(0, 2, 1'000'000);  // two hops
  data.route_latency_in_floor = true;
  Flow next = Transfer(2, 1, 0);
  next.after = {0};
  const FlowNetworkResult r = MustRun(line, {data, next});
  EXPECT_EQ(r.flows[0].finish.value(), 1'000'000'000);
  EXPECT_EQ(r.flows[1].start.value(), 1'000'000'000);
  EXPECT_EQ(r.flows[1].finish.value(), 1'000'000'000 + kHop);  // its own hop is still paid
}

TEST(FlowNetwork, TwoFlowsOnOneLinkEachGetHalf) {
  const Topology line = Build(arch::TopologyKind::kMesh, {2});
  // Each at 0.5 GB/s: 1e6 bytes take 2e9 ps.
  const FlowNetworkResult r = MustRun(line, {Transfer(0, 1, 1'000'000), Transfer(0, 1, 1'000'000)});
  EXPECT_EQ(r.flows[0].finish.value(), 2'000'000'000 + kHop);
  EXPECT_EQ(r.flows[1].finish.value(), 2'000'000'000 + kHop);
  EXPECT_EQ(r.link_bytes[0], 2'000'000);
  EXPECT_EQ(r.rate_recomputations, 1);  // both start together, both end together
}

TEST(FlowNetwork, WaterFillingGivesTheBottleneckedFlowsTheirShareAndTheRestToOthers) {
  // Line 0 - 1 - 2. Link A = 0->1, link B = 1->2.
  // f0: 0->2 (A, B); f1: 0->1 (A); f2, f3: 1->2 (B).
  // B is the bottleneck: 3 flows get 1/3 GB/s each. A has 2/3 GB/s left for f1.
  // 3e6 bytes: f1 takes 3e6 / (2/3 GB/s) = 4.5e9 ps; the others 9e9 ps. When
  // f1 ends, A's spare capacity cannot help f0 (B still limits it to 1/3).
  const Topology line = Build(arch::TopologyKind::kMesh, {3});
  const FlowNetworkResult r = MustRun(line, {Transfer(0, 2, 3'000'000), Transfer(0, 1, 3'000'000),
                                             Transfer(1, 2, 3'000'000), Transfer(1, 2, 3'000'000)});
  EXPECT_EQ(r.flows[1].finish.value(), 4'500'000'000 + kHop);
  EXPECT_EQ(r.flows[0].finish.value(), 9'000'000'000 + 2 * kHop);
  EXPECT_EQ(r.flows[2].finish.value(), 9'000'000'000 + kHop);
  EXPECT_EQ(r.flows[3].finish.value(), 9'000'000'000 + kHop);
  EXPECT_EQ(r.rate_recomputations, 2);
}

TEST(FlowNetwork, AFlowEndingFreesBandwidthForTheOther) {
  // Both at 0.5 GB/s until the 1e6-byte flow ends at 2e9 ps; the 3e6-byte flow
  // has 2e6 bytes left and sends them alone at 1 GB/s: 2e9 ps more.
  const Topology line = Build(arch::TopologyKind::kMesh, {2});
  const FlowNetworkResult r = MustRun(line, {Transfer(0, 1, 1'000'000), Transfer(0, 1, 3'000'000)});
  EXPECT_EQ(r.flows[0].finish.value(), 2'000'000'000 + kHop);
  EXPECT_EQ(r.flows[1].finish.value(), 4'000'000'000 + kHop);
  EXPECT_EQ(r.rate_recomputations, 2);
}

TEST(FlowNetwork, ALaterFlowSlowsAnEarlierOne) {
  // f0 alone for 1e9 ps (sends 1e6 of 2e6 bytes), then f1 (1e6 bytes) joins:
  // both at 0.5 GB/s; both have 1e6 left and end together 2e9 ps later.
  const Topology line = Build(arch::TopologyKind::kMesh, {2});
  Flow late = Transfer(0, 1, 1'000'000);
  late.earliest = Picoseconds(1'000'000'000);
  const FlowNetworkResult r = MustRun(line, {Transfer(0, 1, 2'000'000), late});
  EXPECT_EQ(r.flows[1].start.value(), 1'000'000'000);
  EXPECT_EQ(r.flows[0].finish.value(), 3'000'000'000 + kHop);
  EXPECT_EQ(r.flows[1].finish.value(), 3'000'000'000 + kHop);
}

TEST(FlowNetwork, FlowsOnDisjointLinksKeepTheirRatesAcrossEachOthersEvents) {
  // Line 0-1-2-3. On 0->1: 1e6 and 3e6 bytes (ends 2e9 and 4e9, as above).
  // On 2->3: 1.5e6 and 2.5e6 bytes at 0.5 GB/s each until 3e9 ps, then the
  // other 1e6 bytes alone at 1 GB/s: 4e9. The 0->1 event at 2e9 recomputes
  // only its own flows; the 2->3 ones keep their rates and end times.
  const Topology line = Build(arch::TopologyKind::kMesh, {4});
  const FlowNetworkResult r = MustRun(line, {Transfer(0, 1, 1'000'000), Transfer(0, 1, 3'000'000),
                                             Transfer(2, 3, 1'500'000), Transfer(2, 3, 2'500'000)});
  EXPECT_EQ(r.flows[0].finish.value(), 2'000'000'000 + kHop);
  EXPECT_EQ(r.flows[1].finish.value(), 4'000'000'000 + kHop);
  EXPECT_EQ(r.flows[2].finish.value(), 3'000'000'000 + kHop);
  EXPECT_EQ(r.flows[3].finish.value(), 4'000'000'000 + kHop);
  EXPECT_EQ(r.rate_recomputations, 3);  // the start, then one per part's event
}

TEST(FlowNetwork, LatencyIsStartPlusExtraPlusSendTimePlusEveryHop) {
  // 0 -> 3 on a 4-chip line: 3 hops. 1000 bytes take 1e6 ps.
  const Topology line = Build(arch::TopologyKind::kMesh, {4});
  Flow f = Transfer(0, 3, 1000);
  f.earliest = Picoseconds(100);
  f.extra_latency = Picoseconds(500);
  const FlowNetworkResult r = MustRun(line, {f});
  EXPECT_EQ(r.flows[0].start.value(), 100);
  EXPECT_EQ(r.flows[0].finish.value(), 100 + 500 + 1'000'000 + 3 * kHop);
  EXPECT_EQ(r.link_bytes[line.GridLink(0, 0, true)], 1000);
  EXPECT_EQ(r.link_bytes[line.GridLink(1, 0, true)], 1000);
  EXPECT_EQ(r.link_bytes[line.GridLink(2, 0, true)], 1000);
  EXPECT_EQ(r.link_bytes[line.GridLink(1, 0, false)], 0);
}

TEST(FlowNetwork, ZeroBytesAndSameChipFlowsCostOnlyTheirLatency) {
  const Topology line = Build(arch::TopologyKind::kMesh, {3});
  Flow local = Transfer(1, 1, 1'000'000);
  local.extra_latency = Picoseconds(7);
  const FlowNetworkResult r = MustRun(line, {Transfer(0, 2, 0), local});
  EXPECT_EQ(r.flows[0].finish.value(), 2 * kHop);
  EXPECT_EQ(r.flows[1].finish.value(), 7);
}

TEST(FlowNetwork, DependentFlowStartsWhenItsPredecessorsFinish) {
  // f0 finishes at 1e9 + 1000; f1 waits for it, then takes the same again.
  // f2 waits for both: it starts at f1's finish.
  const Topology line = Build(arch::TopologyKind::kMesh, {3});
  Flow second = Transfer(1, 2, 1'000'000);
  second.after = {0};
  Flow third = Transfer(2, 1, 1000);
  third.after = {0, 1};
  const FlowNetworkResult r = MustRun(line, {Transfer(0, 1, 1'000'000), second, third});
  EXPECT_EQ(r.flows[1].start.value(), 1'000'000'000 + kHop);
  EXPECT_EQ(r.flows[1].finish.value(), 2 * (1'000'000'000 + kHop));
  EXPECT_EQ(r.flows[2].start, r.flows[1].finish);
  EXPECT_EQ(r.flows[2].finish.value(), 2 * (1'000'000'000 + kHop) + 1'000'000 + kHop);
}

TEST(FlowNetwork, RejectsForwardReferencesAndBadRoutes) {
  const Topology line = Build(arch::TopologyKind::kMesh, {3});
  Router router(line);
  FlowNetwork network(line, router);
  Flow forward = Transfer(0, 1, 10);
  forward.after = {1};
  StatusOr<FlowNetworkResult> r = network.Run(std::vector<Flow>{forward, Transfer(1, 2, 10)});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(),
              HasSubstr("flow 0: 'after' names flow 1, which is not an earlier flow"));

  Flow detour = Transfer(0, 2, 10);
  detour.route = {line.GridLink(0, 0, true)};  // stops at chip 1
  r = network.Run(std::vector<Flow>{detour});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("ends at node 1, not at its destination 2"));
}

TEST(FlowNetwork, AGivenRouteIsUsedInsteadOfTheRoutersOwn) {
  // On a 4-ring, 0 -> 1 by the long way round (0 -> 3 -> 2 -> 1): three hops.
  const Topology ring = Build(arch::TopologyKind::kTorus, {4});
  Flow f = Transfer(0, 1, 1000);
  f.route = {ring.GridLink(0, 0, false), ring.GridLink(3, 0, false), ring.GridLink(2, 0, false)};
  const FlowNetworkResult r = MustRun(ring, {f});
  EXPECT_EQ(r.flows[0].finish.value(), 1'000'000 + 3 * kHop);
  EXPECT_EQ(r.link_bytes[ring.GridLink(0, 0, true)], 0);
}

TEST(FlowNetwork, TwoTransfersSharingATorusLinkTakeLongerByTheSharedTime) {
  // Ring of 4: flow A 0 -> 2 (a tie, so the positive way: 0->1->2), flow B
  // 1 -> 2. They share 1->2. Alone A takes 1e9 + 2 hops; together each gets
  // 0.5 GB/s on 1->2 (A's other link is not a bottleneck): 2e9 + 2 hops.
  const Topology ring = Build(arch::TopologyKind::kTorus, {4});
  const FlowNetworkResult alone = MustRun(ring, {Transfer(0, 2, 1'000'000)});
  const FlowNetworkResult both =
      MustRun(ring, {Transfer(0, 2, 1'000'000), Transfer(1, 2, 1'000'000)});
  EXPECT_EQ(alone.flows[0].finish.value(), 1'000'000'000 + 2 * kHop);
  EXPECT_EQ(both.flows[0].finish.value(), 2'000'000'000 + 2 * kHop);
  EXPECT_EQ(both.flows[1].finish.value(), 2'000'000'000 + kHop);
}

TEST(FlowNetwork, AFailedLinkReroutesAndTheTransferPaysTheLongerPath) {
  // Ring of 4 with 0-1 down: 0 -> 1 goes 0 -> 3 -> 2 -> 1, three hops.
  const Topology ring =
      Build(arch::TopologyKind::kTorus, {4}, {arch::LinkFault{{0, 1}, Picoseconds(0), 0.0}});
  const FlowNetworkResult r = MustRun(ring, {Transfer(0, 1, 1'000'000)});
  EXPECT_EQ(r.flows[0].finish.value(), 1'000'000'000 + 3 * kHop);
  EXPECT_EQ(r.link_bytes[ring.GridLink(0, 0, false)], 1'000'000);
}

TEST(FlowNetwork, ADegradedLinkSlowsTheFlowsOnIt) {
  // 0-1 at half bandwidth: 1e6 bytes take 2e9 ps.
  const Topology line =
      Build(arch::TopologyKind::kMesh, {2}, {arch::LinkFault{{0, 1}, Picoseconds(0), 0.5}});
  const FlowNetworkResult r = MustRun(line, {Transfer(0, 1, 1'000'000)});
  EXPECT_EQ(r.flows[0].finish.value(), 2'000'000'000 + kHop);
}

TEST(FlowNetwork, AFlowOverAFailedGivenRouteIsAnError) {
  const Topology ring =
      Build(arch::TopologyKind::kTorus, {4}, {arch::LinkFault{{0, 1}, Picoseconds(0), 0.0}});
  Router router(ring);
  FlowNetwork network(ring, router);
  Flow f = Transfer(0, 1, 10);
  f.route = {ring.GridLink(0, 0, true)};
  StatusOr<FlowNetworkResult> r = network.Run(std::vector<Flow>{f});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(r.status().message(), HasSubstr("crosses failed link x+ (0)->(1)"));
}

Topology FromShortForm(const std::string& text) {
  StatusOr<arch::TopologyConfig> config = arch::ParseTopologyShortForm(text);
  EXPECT_TRUE(config.ok()) << config.status().message();
  StatusOr<Topology> t = Topology::Build(*config, Ici());
  EXPECT_TRUE(t.ok()) << t.status().message();
  return std::move(t).value();
}

TEST(FlowNetwork, OversubscribedFatTreeUplinksAndSwitchLatencies) {
  // radix 4, 2 levels: 4 chips, 2 leaves, 2 spines. Injection is 4 links x
  // 1 GB/s = 4 GB/s; oversubscription 2 leaves 2 GB/s on the uplinks.
  // 0 -> 2 crosses leaf 0 -> spine -> leaf 1: 2e6 bytes at 2 GB/s = 1e9 ps,
  // plus three links into switches at 300 ps each (the last link, to the
  // chip, adds nothing). 0 -> 1 stays under leaf 0: 2e6 bytes at 4 GB/s.
  const Topology tree =
      FromShortForm("fattree:radix=4,levels=2,oversubscription=2,switch_latency=300ps");
  const FlowNetworkResult r = MustRun(tree, {Transfer(0, 2, 2'000'000)});
  EXPECT_EQ(r.flows[0].finish.value(), 1'000'000'000 + 3 * 300);
  const FlowNetworkResult local = MustRun(tree, {Transfer(0, 1, 2'000'000)});
  EXPECT_EQ(local.flows[0].finish.value(), 500'000'000 + 300);
}

TEST(FlowNetwork, DcnCarriesTrafficBetweenSlicesAtItsOwnBandwidthAndLatency) {
  // Two slices of a 2-chip line; chips 0 and 1 both send 1e6 bytes to chip 2
  // (slice 1) over DCN at 0.5 GB/s: they share 2's DCN downlink (0.25 GB/s
  // each): 4e9 ps, plus the 20 us DCN latency.
  const Topology t =
      FromShortForm("multislice:slices=2,dcn_bandwidth=0.5GB/s,dcn_latency=20us,slice=mesh:2");
  const FlowNetworkResult r = MustRun(t, {Transfer(0, 2, 1'000'000), Transfer(1, 2, 1'000'000)});
  EXPECT_EQ(r.flows[0].finish.value(), 4'000'000'000 + 20'000'000);
  EXPECT_EQ(r.flows[1].finish.value(), 4'000'000'000 + 20'000'000);
  EXPECT_EQ(r.link_bytes[t.DcnDownLink(2)], 2'000'000);
}

TEST(FlowNetwork, ALinkDegradingMidRunSlowsTheRestOfTheTransfer) {
  // 2e6 bytes at 1 GB/s; at 1e9 ps (1e6 bytes sent) the link drops to half:
  // the other 1e6 bytes take 2e9 ps. Finish 3e9 + one hop.
  const Topology line = Build(arch::TopologyKind::kMesh, {2});
  Router router(line);
  FlowNetwork network(line, router);
  const std::vector<Flow> flows = {Transfer(0, 1, 2'000'000)};
  const std::vector<LinkChange> changes = {
      {line.GridLink(0, 0, true), Picoseconds(1'000'000'000), BytesPerSecond(500'000'000)}};
  StatusOr<FlowNetworkResult> r = network.Run(flows, changes);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->flows[0].finish.value(), 3'000'000'000 + kHop);
  EXPECT_EQ(r->rate_recomputations, 2);
}

TEST(FlowNetwork, ALinkFailingUnderAFlowIsAnErrorNamingItAndTheTime) {
  const Topology line = Build(arch::TopologyKind::kMesh, {2});
  Router router(line);
  FlowNetwork network(line, router);
  const std::vector<LinkChange> down = {
      {line.GridLink(0, 0, true), Picoseconds(5), BytesPerSecond(0)}};
  StatusOr<FlowNetworkResult> r = network.Run(std::vector<Flow>{Transfer(0, 1, 1'000'000)}, down);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(r.status().message(), HasSubstr("flow 0: link x+ (0)->(1) failed at 5ps"));
  // A flow that starts after the failure fails the same way.
  Flow late = Transfer(0, 1, 10);
  late.earliest = Picoseconds(9);
  r = network.Run(std::vector<Flow>{late}, down);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("failed at 5ps"));
}

TEST(FlowNetwork, ConfiguredFaultsBecomeLinkChangesRelativeToTheBatchStart) {
  // Faults at 10 us (0-1 to half), 30 us (0-1 to half again) and chip 2 at
  // 40 us; a batch starting at 20 us sees the 30 us one at 10 us, compounding
  // on the half already applied, and chip 2's two links at 20 us.
  arch::TopologyConfig config;
  config.kind = arch::TopologyKind::kMesh;
  config.dims = {3};
  config.faults = {{{0, 1}, Picoseconds(10'000'000), 0.5}, {{0, 1}, Picoseconds(30'000'000), 0.5}};
  config.chip_faults = {{2, Picoseconds(40'000'000)}};
  StatusOr<Topology> built = Topology::Build(config, Ici());
  ASSERT_TRUE(built.ok());
  const Topology at = built->AtTime(Picoseconds(20'000'000));
  const std::vector<LinkChange> changes = LinkChangesAfter(at, Picoseconds(20'000'000));
  ASSERT_EQ(changes.size(), 4u);
  EXPECT_EQ(changes[0].at.value(), 10'000'000);
  EXPECT_EQ(changes[0].bandwidth.value(), 250'000'000);
  EXPECT_EQ(changes[1].bandwidth.value(), 250'000'000);
  EXPECT_EQ(changes[2].at.value(), 20'000'000);
  EXPECT_EQ(changes[2].bandwidth.value(), 0);
  EXPECT_EQ(at.links()[changes[2].link].to == 2 || at.links()[changes[2].link].from == 2, true);
}

TEST(FlowNetwork, ManyFlowsOnARingStepAreDeterministic) {
  // A ring step on a 16x16 torus: every chip sends to its x+ neighbour and
  // its x- neighbour. Each link carries one flow: all finish at 1e9 + 1 hop.
  const Topology torus = Build(arch::TopologyKind::kTorus, {16, 16});
  std::vector<Flow> flows;
  for (NodeId c = 0; c < 256; ++c) {
    flows.push_back(Transfer(c, torus.links()[torus.GridLink(c, 0, true)].to, 1'000'000));
    flows.push_back(Transfer(c, torus.links()[torus.GridLink(c, 0, false)].to, 1'000'000));
  }
  const FlowNetworkResult r = MustRun(torus, flows);
  for (const FlowTimes& t : r.flows) EXPECT_EQ(t.finish.value(), 1'000'000'000 + kHop);
  EXPECT_EQ(r.rate_recomputations, 1);
}

TEST(FlowNetwork, RepeatedRunsAreBitIdentical) {
  // Pseudo-random transfers on a 4x4x4 torus with uneven sizes (many events).
  const Topology torus = Build(arch::TopologyKind::kTorus, {4, 4, 4});
  std::vector<Flow> flows;
  uint64_t state = 1;
  for (int i = 0; i < 200; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    flows.push_back(Transfer(static_cast<NodeId>((state >> 20) % 64),
                             static_cast<NodeId>((state >> 40) % 64),
                             static_cast<int64_t>((state >> 33) % 10'000'000)));
    if (i % 7 == 3) flows.back().after = {i - 2};
  }
  const FlowNetworkResult a = MustRun(torus, flows);
  const FlowNetworkResult b = MustRun(torus, flows);
  ASSERT_EQ(a.flows.size(), b.flows.size());
  for (size_t i = 0; i < a.flows.size(); ++i) {
    EXPECT_EQ(a.flows[i].start, b.flows[i].start);
    EXPECT_EQ(a.flows[i].finish, b.flows[i].finish);
  }
  EXPECT_EQ(a.link_bytes, b.link_bytes);
  EXPECT_GT(a.rate_recomputations, 50);
  // Every flow between two chips takes at least its bytes at full link rate.
  for (size_t i = 0; i < flows.size(); ++i) {
    if (flows[i].src == flows[i].dst) continue;
    EXPECT_GE(a.flows[i].finish.value() - a.flows[i].start.value(), flows[i].bytes * 1000);
  }
}

}  // namespace
}  // namespace tpusim::ici
