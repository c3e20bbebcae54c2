// Routing: dimension order and shortest direction on tori, wraparound only
// where it exists, twisted wraps, fat-tree up/down with ECMP, multi-slice,
// and rerouting around failed links and chips.
#include "sim/ici/routing.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "sim/arch/chip_config.h"
#include "sim/arch/topology_config.h"
#include "sim/ici/topology.h"

namespace tpusim::ici {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

arch::IciConfig Ici() {
  return arch::IciConfig{4, BytesPerSecond(45'000'000'000), Picoseconds(1'000'000), 100, {}};
}

Topology Must(const std::string& text, std::vector<arch::LinkFault> faults = {},
              std::vector<arch::ChipFault> chip_faults = {}) {
  StatusOr<arch::TopologyConfig> config = arch::ParseTopologyShortForm(text);
  EXPECT_TRUE(config.ok()) << config.status().message();
  config->faults = std::move(faults);
  config->chip_faults = std::move(chip_faults);
  StatusOr<Topology> t = Topology::Build(*config, Ici());
  EXPECT_TRUE(t.ok()) << text << ": " << t.status().message();
  return std::move(t).value();
}

std::vector<LinkId> MustRoute(const Router& router, NodeId src, NodeId dst, uint64_t key = 0) {
  StatusOr<std::vector<LinkId>> route = router.Route(src, dst, key);
  EXPECT_TRUE(route.ok()) << route.status().message();
  return route.ok() ? *route : std::vector<LinkId>{};
}

/// The chips a route visits after its source.
std::vector<NodeId> Visits(const Topology& t, const std::vector<LinkId>& route) {
  std::vector<NodeId> nodes;
  for (LinkId l : route) nodes.push_back(t.links()[l].to);
  return nodes;
}

TEST(Routing, RingTakesTheShorterDirectionAndPositiveOnATie) {
  const Topology t = Must("torus:8");
  const Router r(t);
  EXPECT_THAT(Visits(t, MustRoute(r, 0, 3)), ElementsAre(1, 2, 3));
  EXPECT_THAT(Visits(t, MustRoute(r, 0, 5)), ElementsAre(7, 6, 5));
  EXPECT_THAT(Visits(t, MustRoute(r, 0, 4)), ElementsAre(1, 2, 3, 4));
  EXPECT_THAT(Visits(t, MustRoute(r, 6, 1)), ElementsAre(7, 0, 1));
  EXPECT_TRUE(MustRoute(r, 2, 2).empty());
}

TEST(Routing, MeshNeverWrapsAround) {
  const Topology t = Must("mesh:8");
  const Router r(t);
  EXPECT_EQ(MustRoute(r, 0, 7).size(), 7u);
  EXPECT_THAT(Visits(t, MustRoute(r, 6, 1)), ElementsAre(5, 4, 3, 2, 1));
}

TEST(Routing, DimensionOrderGoesAlongXFirst) {
  // 4x4 torus, (0,0) -> (1,3): x+ once, then y- once (3 is one step back).
  const Topology t = Must("torus:4x4");
  const Router r(t);
  const std::vector<LinkId> route = MustRoute(r, 0, 1 + 3 * 4);
  ASSERT_EQ(route.size(), 2u);
  EXPECT_EQ(route[0], t.GridLink(0, 0, true));
  EXPECT_EQ(route[1], t.GridLink(1, 1, false));
  // Without wraparound on y the same pair is 1 + 3 hops.
  const Topology open = Must("torus:4x4,wraparound=1x0");
  EXPECT_EQ(MustRoute(Router(open), 0, 13).size(), 4u);
}

TEST(Routing, TwistedTorusUsesTheTwistedWrapLinks) {
  // 4x4x8: (0,0,0) -> (3,0,4) is one x- hop over the twisted wrap link, where
  // a plain torus would need 1 + 4 hops.
  const Topology t = Must("twisted:4x4x8");
  const Router r(t);
  const NodeId dst = 3 + 4 * 16;
  EXPECT_THAT(MustRoute(r, 0, dst), ElementsAre(t.GridLink(0, 0, false)));
  EXPECT_EQ(MustRoute(Router(Must("torus:4x4x8")), 0, dst).size(), 5u);
}

TEST(Routing, FatTreeGoesUpToTheLowestCommonSwitchThenDown) {
  // radix 8, 3 levels: 64 chips, 4 per leaf, 16 per level-1 subtree.
  const Topology t = Must("fattree:radix=8,levels=3");
  const Router r(t);
  EXPECT_EQ(MustRoute(r, 0, 3).size(), 2u);   // same leaf
  EXPECT_EQ(MustRoute(r, 0, 5).size(), 4u);   // same level-1 subtree
  EXPECT_EQ(MustRoute(r, 0, 63).size(), 6u);  // through the top
  const std::vector<LinkId> route = MustRoute(r, 0, 63, 7);
  EXPECT_EQ(t.links()[route.front()].from, 0);
  EXPECT_EQ(t.links()[route.back()].to, 63);
  for (size_t i = 1; i < route.size(); ++i) {
    EXPECT_EQ(t.links()[route[i - 1]].to, t.links()[route[i]].from);
  }
}

TEST(Routing, FatTreeEcmpIsDeterministicAndSpreadsOverUplinks) {
  const Topology t = Must("fattree:radix=8,levels=2");
  const Router r(t);
  EXPECT_EQ(MustRoute(r, 0, 9, 42), MustRoute(r, 0, 9, 42));
  EXPECT_EQ(MustRoute(Router(t), 0, 9, 42), MustRoute(r, 0, 9, 42));
  std::set<LinkId> uplinks;
  for (uint64_t key = 0; key < 64; ++key) uplinks.insert(MustRoute(r, 0, 9, key)[1]);
  EXPECT_EQ(uplinks.size(), 4u);  // all four spines get used
}

TEST(Routing, ReroutesAroundAFailedLinkByFewestHops) {
  // 4x4 torus, (0,0)-(1,0) down: (0,0) -> (1,0) takes a 3-hop detour.
  const Topology t = Must("torus:4x4", {{{0, 1}, Picoseconds(0), 0.0}});
  const Router r(t);
  const std::vector<LinkId> route = MustRoute(r, 0, 1);
  EXPECT_EQ(route.size(), 3u);
  for (LinkId l : route) EXPECT_TRUE(t.links()[l].up);
  EXPECT_EQ(t.links()[route.back()].to, 1);
  // Routes not crossing the failed link keep dimension order.
  EXPECT_THAT(MustRoute(r, 1, 2), ElementsAre(t.GridLink(1, 0, true)));
  // Deterministic.
  EXPECT_EQ(MustRoute(Router(t), 0, 1), route);
}

TEST(Routing, ADownChipCannotBeReachedButCanBeAvoided) {
  const Topology t = Must("mesh:3x3", {}, {{4, Picoseconds(0)}});  // the centre
  const Router r(t);
  StatusOr<std::vector<LinkId>> to_dead = r.Route(0, 4);
  ASSERT_FALSE(to_dead.ok());
  EXPECT_EQ(to_dead.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(to_dead.status().message(), HasSubstr("chip 4 is down"));
  // (1,0) -> (1,2) would go through (1,1); it goes around: 4 hops.
  EXPECT_EQ(MustRoute(r, 1, 7).size(), 4u);
}

TEST(Routing, DisconnectedByFailuresIsAClearError) {
  const Topology t = Must("mesh:3", {{{1, 2}, Picoseconds(0), 0.0}});
  StatusOr<std::vector<LinkId>> route = Router(t).Route(0, 2);
  ASSERT_FALSE(route.ok());
  EXPECT_THAT(route.status().message(),
              HasSubstr("no route from chip 0 to chip 2: failed links disconnect them"));
}

TEST(Routing, MultiSliceUsesDcnBetweenSlicesOnly) {
  const Topology t = Must("multislice:slices=2,slice=torus:4x4");
  const Router r(t);
  EXPECT_THAT(MustRoute(r, 1, 16 + 2), ElementsAre(t.DcnUpLink(1), t.DcnDownLink(18)));
  EXPECT_THAT(Visits(t, MustRoute(r, 16, 18)), ElementsAre(17, 18));
}

TEST(Routing, GraphRoutesByFewestHops) {
  arch::TopologyConfig c;
  c.kind = arch::TopologyKind::kGraph;
  c.graph_chips = 5;
  c.edges = {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {0, 4}};
  StatusOr<Topology> t = Topology::Build(c, Ici());
  ASSERT_TRUE(t.ok());
  const Router r(*t);
  EXPECT_THAT(Visits(*t, MustRoute(r, 0, 3)), ElementsAre(4, 3));
  EXPECT_THAT(Visits(*t, MustRoute(r, 1, 3)), ElementsAre(2, 3));
}

}  // namespace
}  // namespace tpusim::ici
