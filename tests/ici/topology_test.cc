// Topology construction: node and link counts per kind, link figures,
// twisted wraparound targets, device assignment, faults, and errors.
#include "sim/ici/topology.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>
#include <vector>

#include "sim/arch/chip_config.h"
#include "sim/arch/topology_config.h"

namespace tpusim::ici {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

arch::IciConfig Ici() {
  return arch::IciConfig{4, BytesPerSecond(45'000'000'000), Picoseconds(1'000'000), 100, {}};
}

StatusOr<Topology> FromShortForm(const std::string& text) {
  StatusOr<arch::TopologyConfig> config = arch::ParseTopologyShortForm(text);
  if (!config.ok()) return config.status();
  return Topology::Build(*config, Ici());
}

Topology Must(const std::string& text) {
  StatusOr<Topology> t = FromShortForm(text);
  EXPECT_TRUE(t.ok()) << text << ": " << t.status().message();
  return std::move(t).value();
}

std::string BuildError(const arch::TopologyConfig& config) {
  StatusOr<Topology> t = Topology::Build(config, Ici());
  EXPECT_FALSE(t.ok());
  return t.ok() ? "" : t.status().message();
}

TEST(Topology, TorusHasTwoLinksPerChipPerAxisEachWay) {
  const Topology t = Must("torus:4x4");
  EXPECT_EQ(t.chip_count(), 16);
  EXPECT_EQ(t.node_count(), 16);
  EXPECT_EQ(t.links().size(), 64u);  // 16 chips x 2 axes x 2 directions
  EXPECT_THAT(t.grid().wraparound, ElementsAre(true, true));
  EXPECT_EQ(t.Describe(),
            "torus 4x4 (wraparound x,y), 16 chips, 64 links, 45 GB/s/link one-way, 1 us/hop");
  for (const Link& l : t.links()) {
    EXPECT_EQ(l.bandwidth.value(), 45'000'000'000);
    EXPECT_EQ(l.latency.value(), 1'000'000);
  }
}

TEST(Topology, MeshAndPartialWraparoundDropTheWrapLinks) {
  EXPECT_EQ(Must("mesh:4x4").links().size(), 48u);  // 2 axes x 4 lines x 3 links x 2 ways
  // x wraps (4 lines of 16 x 2 ways = 128), y does not (16 lines x 3 x 2 = 96).
  const Topology t = Must("torus:16x4,wraparound=1x0");
  EXPECT_EQ(t.links().size(), 224u);
  EXPECT_EQ(t.GridLink(15, 0, true), t.out_links(15)[0]);
  EXPECT_EQ(t.links()[t.GridLink(15, 0, true)].to, 0);
  EXPECT_EQ(t.GridLink(48, 1, true), -1);  // (0,3) has no y+ wrap
  EXPECT_EQ(t.links()[t.GridLink(0, 0, true)].label, "x+ (0,0)->(1,0)");
}

TEST(Topology, AxesOfSizeTwoOrOneHaveNoSeparateWrapLink) {
  EXPECT_EQ(Must("torus:2x1").links().size(), 2u);
}

TEST(Topology, TwistedTorusWrapsTheShortAxesHalfwayAlongTheLongOne) {
  const Topology t = Must("twisted:4x4x8");
  EXPECT_EQ(t.chip_count(), 128);
  EXPECT_EQ(t.links().size(), 768u);
  EXPECT_TRUE(t.grid().twisted);
  // (3,0,0) x+ wraps to (0,0,4); (0,3,1) y+ wraps to (0,0,5); z wraps plainly.
  EXPECT_THAT(t.Coordinates(t.links()[t.GridLink(3, 0, true)].to), ElementsAre(0, 0, 4));
  EXPECT_THAT(t.Coordinates(t.links()[t.GridLink(12 + 16, 1, true)].to), ElementsAre(0, 0, 5));
  EXPECT_THAT(t.Coordinates(t.links()[t.GridLink(7 * 16, 2, true)].to), ElementsAre(0, 0, 0));
  // 4x8x8: x wraps by half of y and of z.
  const Topology u = Must("twisted:4x8x8");
  EXPECT_THAT(u.Coordinates(u.links()[u.GridLink(3, 0, true)].to), ElementsAre(0, 4, 4));
}

TEST(Topology, TwistedTorusRejectsOtherShapes) {
  arch::TopologyConfig c;
  c.kind = arch::TopologyKind::kTwistedTorus;
  c.dims = {4, 4, 4};
  EXPECT_THAT(BuildError(c),
              HasSubstr("twisted torus needs 2A=B=C or 2A=2B=C (e.g. 4x4x8, 4x8x8), got 4x4x4"));
}

TEST(Topology, FatTreeIsAKaryNTree) {
  // radix 8: 4 down, 4 up; 2 levels: 16 chips, 4 leaf and 4 spine switches.
  const Topology t = Must("fattree:radix=8,levels=2,oversubscription=2");
  EXPECT_EQ(t.chip_count(), 16);
  EXPECT_EQ(t.node_count(), 24);
  EXPECT_EQ(t.links().size(), 64u);  // 2 x chips x levels
  // Injection is the chip's 4 links x 45 GB/s; uplinks carry half of that.
  EXPECT_EQ(t.links()[t.fat_tree().chip_up[0]].bandwidth.value(), 180'000'000'000);
  EXPECT_EQ(t.links()[t.fat_tree().up[0][0]].bandwidth.value(), 90'000'000'000);
  // Every leaf reaches every spine: up port j of any leaf goes to spine j.
  for (int64_t s = 0; s < 4; ++s) {
    for (int64_t j = 0; j < 4; ++j) {
      EXPECT_EQ(t.links()[t.fat_tree().up[0][s * 4 + j]].to, 16 + 4 + j);
    }
  }
}

TEST(Topology, FatTreeOfMoreThanSixteenLevelsIsRefused) {
  // Radix 2 has one chip at any depth: Build once looped over 2^31 levels.
  arch::TopologyConfig c;
  c.kind = arch::TopologyKind::kFatTree;
  c.fat_tree_radix = 2;
  c.fat_tree_levels = int64_t{1} << 31;
  EXPECT_EQ(BuildError(c), "levels: a fat tree has at most 16 levels, got 2147483648");
  c.fat_tree_levels = 16;
  EXPECT_EQ(Topology::Build(c, Ici())->node_count(), 17);
}

TEST(Topology, SwitchJoinsEveryChipToOneSwitch) {
  const Topology t = Must("switch:8,switch_latency=250ns");
  EXPECT_EQ(t.node_count(), 9);
  EXPECT_EQ(t.links().size(), 16u);
  EXPECT_EQ(t.links()[0].latency.value(), 250'000);  // into the switch
  EXPECT_EQ(t.links()[1].latency.value(), 0);
}

TEST(Topology, InjectionBandwidthBeyondInt64IsAnErrorOfSwitchedKinds) {
  // 64 links of 9e18 B/s once overflowed into a negative injection bandwidth.
  const arch::IciConfig ici{64, BytesPerSecond(9'000'000'000'000'000'000), Picoseconds(1), 100, {}};
  for (const char* text : {"switch:4", "fattree:radix=4,levels=2"}) {
    StatusOr<Topology> t = Topology::Build(*arch::ParseTopologyShortForm(text), ici);
    ASSERT_FALSE(t.ok()) << text;
    EXPECT_THAT(t.status().message(),
                HasSubstr("link_bandwidth: a chip's links together carry over 2^63 B/s"));
  }
  // A torus's links run one by one: no sum to overflow.
  EXPECT_TRUE(Topology::Build(*arch::ParseTopologyShortForm("torus:4x4"), ici).ok());
}

TEST(Topology, ALinkBandwidthTheEfficiencyRoundsToZeroSaysWhatWasGiven) {
  const arch::IciConfig ici{4, BytesPerSecond(45'000'000'000), Picoseconds(1), 96, {}};
  StatusOr<Topology> t =
      Topology::Build(*arch::ParseTopologyShortForm("torus:2x2,link_bandwidth=1B/s"), ici);
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.status().message(),
              HasSubstr("link_bandwidth: 1B/s at the chip's 96% ICI efficiency leaves 0B/s; it "
                        "must leave at least 1B/s"));
}

TEST(Topology, MultiSliceJoinsSlicesThroughDcn) {
  const Topology t = Must("multislice:slices=2,dcn_bandwidth=5GB/s,slice=torus:2x2");
  EXPECT_EQ(t.chip_count(), 8);
  EXPECT_EQ(t.node_count(), 9);
  EXPECT_EQ(t.links().size(), 32u);  // 2 x 8 inside slices, 2 x 8 to and from DCN
  EXPECT_EQ(t.slice_count(), 2);
  EXPECT_EQ(t.SliceOf(5), 1);
  EXPECT_THAT(t.Coordinates(5), ElementsAre(1, 0));
  EXPECT_EQ(t.links()[t.DcnUpLink(5)].bandwidth.value(), 5'000'000'000);
  EXPECT_EQ(t.links()[t.DcnUpLink(5)].latency.value(), 10'000'000);  // the documented default
}

TEST(Topology, GraphFromEdgesAndItsErrors) {
  arch::TopologyConfig c;
  c.kind = arch::TopologyKind::kGraph;
  c.graph_chips = 4;
  c.edges = {{0, 1}, {1, 2}, {2, 3}, {3, 0}};
  StatusOr<Topology> t = Topology::Build(c, Ici());
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->links().size(), 8u);
  c.edges = {{0, 1}, {2, 3}};
  EXPECT_EQ(BuildError(c), "edges: graph is disconnected: chip 2 cannot reach chip 0");
  c.edges = {{0, 1}, {1, 0}};
  EXPECT_EQ(BuildError(c), "edges[1]: [1, 0] is listed twice");
}

TEST(Topology, DeviceAssignmentMapsDevicesToChips) {
  StatusOr<arch::TopologyConfig> c = arch::ParseTopologyShortForm("mesh:4");
  ASSERT_TRUE(c.ok());
  c->device_assignment = {3, 2, 1, 0};
  StatusOr<Topology> t = Topology::Build(*c, Ici());
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(*t->ChipOfDevice(1), 2);
  EXPECT_THAT(t->ChipOfDevice(4).status().message(), HasSubstr("device 4 does not exist"));
  c->device_assignment = {0, 1, 1, 2};
  EXPECT_THAT(BuildError(*c), HasSubstr("not a permutation of 0..3: entry 2 is 1"));
}

// devices_per_chip = 2: device i on chip i / 2, or where an assignment that
// names every chip twice puts it.
TEST(Topology, SeveralDevicesPerChipMapOntoOneChip) {
  StatusOr<arch::TopologyConfig> c = arch::ParseTopologyShortForm("mesh:4,devices_per_chip=2");
  ASSERT_TRUE(c.ok()) << c.status().message();
  StatusOr<Topology> t = Topology::Build(*c, Ici());
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->devices_per_chip(), 2);
  EXPECT_EQ(*t->ChipOfDevice(0), 0);
  EXPECT_EQ(*t->ChipOfDevice(1), 0);
  EXPECT_EQ(*t->ChipOfDevice(7), 3);
  EXPECT_THAT(t->ChipOfDevice(8).status().message(), HasSubstr("device 8 does not exist (0..7)"));
  EXPECT_THAT(t->Describe(), HasSubstr("4 chips, 2 devices per chip"));
  c->device_assignment = {3, 3, 2, 2, 1, 1, 0, 0};
  t = Topology::Build(*c, Ici());
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(*t->ChipOfDevice(1), 3);
  c->device_assignment = {0, 0, 1, 1, 1, 2, 2, 3};
  EXPECT_THAT(BuildError(*c),
              HasSubstr("must name each chip 0..3 exactly 2 times: entry 4 is 1"));
  c->device_assignment = {0, 0, 1, 1};
  EXPECT_THAT(BuildError(*c), HasSubstr("has 4 entries for 4 chips x 2 devices per chip"));
}

TEST(Topology, DevicesPerChipIsAtMostSixteen) {
  // 4 chips x 2^62 devices once overflowed; 10^11 devices filled memory.
  arch::TopologyConfig c = *arch::ParseTopologyShortForm("torus:2x2");
  c.devices_per_chip = int64_t{1} << 62;
  EXPECT_EQ(BuildError(c), "devices_per_chip: must be between 1 and 16, got 4611686018427387904");
  c.devices_per_chip = 16;
  EXPECT_EQ(Topology::Build(c, Ici())->ChipOfDevice(63).value(), 3);
}

TEST(Topology, FaultsFailDegradeOrNameALinkThatDoesNotExist) {
  StatusOr<arch::TopologyConfig> c = arch::ParseTopologyShortForm("mesh:4");
  ASSERT_TRUE(c.ok());
  c->faults = {{{0, 1}, Picoseconds(0), 0.0},
               {{1, 2}, Picoseconds(0), 0.25},
               {{2, 3}, Picoseconds(5'000'000), 0.0}};
  c->chip_faults = {{3, Picoseconds(9'000'000)}};
  StatusOr<Topology> t = Topology::Build(*c, Ici());
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_FALSE(t->links()[t->GridLink(0, 0, true)].up);
  EXPECT_FALSE(t->links()[t->GridLink(1, 0, false)].up);
  EXPECT_EQ(t->links()[t->GridLink(1, 0, true)].bandwidth.value(), 11'250'000'000);
  EXPECT_TRUE(t->links()[t->GridLink(2, 0, true)].up);  // not yet
  const Topology later = t->AtTime(Picoseconds(5'000'000));
  EXPECT_FALSE(later.links()[later.GridLink(2, 0, true)].up);
  EXPECT_TRUE(later.chip_up(3));
  EXPECT_FALSE(t->AtTime(Picoseconds(9'000'000)).chip_up(3));

  c->faults = {{{0, 2}, Picoseconds(0), 0.0}};
  c->chip_faults.clear();
  EXPECT_EQ(BuildError(*c), "faults[0].link: no link joins nodes 0 and 2");
  c->faults.clear();
  c->slow_devices = {{4, 1.5}};
  EXPECT_EQ(BuildError(*c), "slow_devices[0].device: device 4 does not exist (0..3)");
  // Slowdowns are per device: two devices per chip make devices 0..7.
  c->devices_per_chip = 2;
  EXPECT_TRUE(Topology::Build(*c, Ici()).ok());
}

TEST(Topology, GridOfMoreThanSixteenDimensionsIsRefused) {
  // Each axis of size 1 adds links to every chip: Build's time grew with the
  // square of their number (20,000 took 23 s).
  arch::TopologyConfig c;
  c.dims.assign(17, 1);
  EXPECT_EQ(BuildError(c), "dims: a torus has at most 16 dimensions, got 17");
}

TEST(Topology, ZeroDimensionIsAnError) {
  arch::TopologyConfig c;
  c.dims = {4, 0};
  EXPECT_EQ(BuildError(c), "dims: every dimension must be positive, got 4x0");
}

/// Build's error for the topology of a YAML file `text` (its `topology:` key).
std::string BuildErrorFromYaml(const std::string& text) {
  StatusOr<arch::TopologyConfig> config =
      arch::ParseTopologyYaml(YAML::Load(text)["topology"], "t.yaml");
  EXPECT_TRUE(config.ok()) << config.status().message();
  return config.ok() ? BuildError(*config) : "";
}

// What only the built network can tell is still an error at FILE:LINE:COL of
// the key or value that caused it, as the loader's own errors are.
TEST(Topology, BuildErrorsOfAYamlTopologyNameFileLineColumnAndKeyPath) {
  EXPECT_EQ(BuildErrorFromYaml("topology:\n  kind: mesh\n  dims: [4, 4]\n  faults:\n"
                               "    - {chip: 2}\n    - {link: [0, 5], at: 1us}\n"),
            "t.yaml:6:14: error: topology.faults[1].link: no link joins nodes 0 and 5");
  EXPECT_EQ(BuildErrorFromYaml("topology:\n  kind: mesh\n  dims: [4, 4]\n  faults:\n"
                               "    - {link: [0, 1]}\n    - {chip: 99}\n"),
            "t.yaml:6:14: error: topology.faults[1].chip: chip 99 does not exist (0..15)");
  EXPECT_EQ(BuildErrorFromYaml("topology:\n  kind: graph\n  chips: 3\n"
                               "  edges: [[0, 1], [1, 2], [2, 1]]\n"),
            "t.yaml:4:27: error: topology.edges[2]: [2, 1] is listed twice");
  EXPECT_EQ(BuildErrorFromYaml("topology:\n  kind: graph\n  chips: 4\n  edges: [[0, 1], [2, 3]]\n"),
            "t.yaml:4:10: error: topology.edges: graph is disconnected: chip 2 cannot reach "
            "chip 0");
  EXPECT_EQ(BuildErrorFromYaml("topology:\n  kind: mesh\n  dims: [4, 4]\n"
                               "  device_assignment: [0, 1, 2]\n"),
            "t.yaml:4:22: error: topology.device_assignment: has 3 entries for 16 chips");
  EXPECT_EQ(BuildErrorFromYaml("topology:\n  kind: mesh\n  dims: [2]\n"
                               "  device_assignment: [0, 7]\n"),
            "t.yaml:4:26: error: topology.device_assignment[1]: not a permutation of 0..1: entry 1 "
            "is 7");
  EXPECT_EQ(BuildErrorFromYaml("topology:\n  kind: mesh\n  dims: [4, 4]\n  slow_devices:\n"
                               "    - {device: 16, factor: 2}\n"),
            "t.yaml:5:16: error: topology.slow_devices[0].device: device 16 does not exist "
            "(0..15)");
  EXPECT_EQ(BuildErrorFromYaml("topology:\n  kind: fattree\n  radix: 4\n  levels: 2\n"
                               "  oversubscription: 1e18\n"),
            "t.yaml:5:21: error: topology.oversubscription: leaves the uplinks no bandwidth");
  // The short form as a YAML scalar: at the scalar, with the key path.
  EXPECT_EQ(BuildErrorFromYaml("topology: fattree:radix=4,levels=2,oversubscription=1e18\n"),
            "t.yaml:1:11: error: topology.oversubscription: leaves the uplinks no bandwidth");
}

}  // namespace
}  // namespace tpusim::ici
