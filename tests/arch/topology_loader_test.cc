// Topology short forms and YAML mappings: what each key sets, canonical text,
// and errors with FILE:LINE:COL and key paths.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <string>

#include "sim/arch/chip_config.h"
#include "sim/arch/topology_config.h"

namespace tpusim::arch {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TopologyConfig MustShort(const std::string& text) {
  StatusOr<TopologyConfig> c = ParseTopologyShortForm(text);
  EXPECT_TRUE(c.ok()) << text << ": " << c.status().message();
  return c.ok() ? *c : TopologyConfig{};
}

std::string ShortError(const std::string& text) {
  StatusOr<TopologyConfig> c = ParseTopologyShortForm(text);
  EXPECT_FALSE(c.ok()) << text;
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  return c.ok() ? "" : c.status().message();
}

StatusOr<TopologyConfig> FromYaml(const std::string& text) {
  return ParseTopologyYaml(YAML::Load(text)["topology"], "s.yaml");
}

std::string YamlError(const std::string& text) {
  StatusOr<TopologyConfig> c = FromYaml(text);
  EXPECT_FALSE(c.ok()) << text;
  return c.ok() ? "" : c.status().message();
}

TEST(TopologyShortForm, GridKinds) {
  const TopologyConfig torus = MustShort("torus:4x4x4");
  EXPECT_EQ(torus.kind, TopologyKind::kTorus);
  EXPECT_THAT(torus.dims, ElementsAre(4, 4, 4));
  EXPECT_TRUE(torus.wraparound.empty());  // default: every axis wraps
  EXPECT_THAT(MustShort("torus:16x8,wraparound=1x0").wraparound, ElementsAre(true, false));
  EXPECT_THAT(MustShort("torus:16x8,wraparound=false").wraparound, ElementsAre(false, false));
  EXPECT_EQ(MustShort("mesh:8x4").kind, TopologyKind::kMesh);
  EXPECT_EQ(MustShort("twisted:4x8x8").kind, TopologyKind::kTwistedTorus);
  const TopologyConfig fast = MustShort("torus:4,link_bandwidth=100GB/s,hop_latency=500ns");
  EXPECT_EQ(fast.link_bandwidth->value(), 100'000'000'000);
  EXPECT_EQ(fast.hop_latency->value(), 500'000);
}

TEST(TopologyShortForm, SwitchedKinds) {
  const TopologyConfig ft =
      MustShort("fattree:radix=64,levels=2,oversubscription=2,switch_latency=300ns");
  EXPECT_EQ(ft.kind, TopologyKind::kFatTree);
  EXPECT_EQ(ft.fat_tree_radix, 64);
  EXPECT_EQ(ft.fat_tree_levels, 2);
  EXPECT_EQ(ft.oversubscription, 2.0);
  EXPECT_EQ(ft.switch_latency->value(), 300'000);
  EXPECT_THAT(MustShort("switch:64").dims, ElementsAre(64));
  const TopologyConfig ms =
      MustShort("multislice:slices=4,dcn_latency=20us,slice=torus:4x4,wraparound=1x0");
  EXPECT_EQ(ms.slices, 4);
  EXPECT_EQ(ms.dcn_latency->value(), 20'000'000);
  EXPECT_EQ(ms.slice_topology_text, "torus:4x4,wraparound=1x0");
}

TEST(TopologyShortForm, CanonicalTextRoundTrips) {
  for (const std::string text :
       {"torus:4x4,wraparound=1x0", "mesh:8", "twisted:4x4x8", "switch:16",
        "fattree:radix=16,levels=3,oversubscription=1.5", "multislice:slices=2,slice=torus:4x4",
        "torus:2x2x1,devices_per_chip=2"}) {
    const TopologyConfig c = MustShort(text);
    EXPECT_EQ(CanonicalTopologyText(MustShort(CanonicalTopologyText(c))), CanonicalTopologyText(c));
  }
  EXPECT_EQ(CanonicalTopologyText(MustShort("torus:4x4,hop_latency=1us")),
            "torus:4x4,hop_latency=1000000ps");
}

TEST(TopologyShortForm, Errors) {
  EXPECT_THAT(ShortError("torus"), HasSubstr("invalid topology 'torus': expected KIND:SHAPE"));
  EXPECT_THAT(ShortError("donut:4x4"), HasSubstr("unknown kind 'donut'"));
  EXPECT_THAT(ShortError("torus:4xx4"),
              HasSubstr("dims: expected dimensions like 4x4x8, got '4xx4'"));
  EXPECT_THAT(ShortError("torus:4x0"),
              HasSubstr("dims: every dimension must be positive, got 4x0"));
  EXPECT_THAT(ShortError("twisted:4x4x4"), HasSubstr("twisted torus needs 2A=B=C or 2A=2B=C"));
  EXPECT_THAT(ShortError("torus:4x4,wraparound=1x0x1"),
              HasSubstr("wraparound: 3 entries for 2 dimensions"));
  EXPECT_THAT(
      ShortError("torus:4x4,radix=4"),
      HasSubstr("unknown key 'radix' for torus (known: wraparound, link_bandwidth, hop_latency, "
                "devices_per_chip)"));
  EXPECT_THAT(ShortError("fattree:radix=7,levels=2"),
              HasSubstr("radix: fat tree needs an even switch radix"));
  EXPECT_THAT(ShortError("fattree:levels=2,levels=3"), HasSubstr("key 'levels' given twice"));
  EXPECT_THAT(ShortError("multislice:slices=2,slice=switch:4"),
              HasSubstr("slice: must be a torus"));
  EXPECT_THAT(ShortError("torus:4,hop_latency=1parsec"), HasSubstr("hop_latency: "));
}

TEST(TopologyYaml, MappingWithEveryListKey) {
  StatusOr<TopologyConfig> c = FromYaml(R"(
topology:
  kind: torus
  dims: [4, 2]
  wraparound: [true, false]
  device_assignment: [7, 6, 5, 4, 3, 2, 1, 0]
  faults:
    - {link: [0, 1], at: 10us, bandwidth: 0.5}
    - {link: [[0, 1], [1, 1]]}
    - {chip: 3, at: 0}
  slow_devices: [{device: 3, factor: 1.2}]
)");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_THAT(c->dims, ElementsAre(4, 2));
  EXPECT_THAT(c->wraparound, ElementsAre(true, false));
  EXPECT_EQ(c->device_assignment.size(), 8u);
  ASSERT_EQ(c->faults.size(), 2u);
  EXPECT_EQ(c->faults[0].at.value(), 10'000'000);
  EXPECT_EQ(c->faults[0].bandwidth_fraction, 0.5);
  EXPECT_EQ(c->faults[1].link.a, 4);  // (0,1) on a 4x2 grid
  EXPECT_EQ(c->faults[1].link.b, 5);
  EXPECT_EQ(c->faults[1].bandwidth_fraction, 0.0);
  ASSERT_EQ(c->chip_faults.size(), 1u);
  EXPECT_EQ(c->chip_faults[0].chip, 3);
  ASSERT_EQ(c->slow_devices.size(), 1u);
  EXPECT_EQ(c->slow_devices[0].factor, 1.2);
}

TEST(TopologyYaml, ShortFormScalarAndGraph) {
  StatusOr<TopologyConfig> s = FromYaml("topology: torus:16x16\n");
  ASSERT_TRUE(s.ok());
  EXPECT_THAT(s->dims, ElementsAre(16, 16));
  StatusOr<TopologyConfig> g =
      FromYaml("topology: {kind: graph, chips: 3, edges: [[0, 1], [1, 2]]}\n");
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->graph_chips, 3);
  EXPECT_EQ(g->edges.size(), 2u);
}

// TPU7x (and v4/v5p without megacore) expose each TensorCore as a device:
// the short form, the mapping and the canonical text all carry it; chip i
// holds devices i*d .. i*d+d-1 unless a device assignment says otherwise.
TEST(TopologyDevicesPerChip, ShortFormMappingAndCanonicalText) {
  const TopologyConfig short_form = MustShort("torus:2x2x1,wraparound=tpu,devices_per_chip=2");
  EXPECT_EQ(short_form.devices_per_chip, 2);
  EXPECT_TRUE(short_form.tpu_wraparound);
  EXPECT_FALSE(MustShort("torus:4").devices_per_chip.has_value());  // the chip's
  EXPECT_EQ(CanonicalTopologyText(short_form), "torus:2x2x1,wraparound=tpu,devices_per_chip=2");
  EXPECT_EQ(CanonicalTopologyText(MustShort("torus:4")), "torus:4");  // stamps unchanged
  StatusOr<TopologyConfig> mapping = FromYaml(
      "topology:\n  kind: torus\n  dims: [2, 2]\n  devices_per_chip: 2\n"
      "  device_assignment: [0, 0, 1, 1, 3, 3, 2, 2]\n");
  ASSERT_TRUE(mapping.ok()) << mapping.status().message();
  EXPECT_EQ(mapping->devices_per_chip, 2);
  EXPECT_THAT(mapping->device_assignment, ElementsAre(0, 0, 1, 1, 3, 3, 2, 2));
}

TEST(TopologyDevicesPerChip, MalformedValuesAreLocatedErrors) {
  EXPECT_THAT(ShortError("torus:2x2,devices_per_chip=0"),
              HasSubstr("devices_per_chip: must be at least 1, got '0'"));
  // At most a chip's TensorCores: 2^62 once overflowed chips x devices, and
  // 10^11 filled memory with the device table.
  EXPECT_THAT(ShortError("torus:2x2,devices_per_chip=17"),
              HasSubstr("devices_per_chip: must be at most 16 (a chip's TensorCores), got '17'"));
  EXPECT_THAT(ShortError("torus:2x2,devices_per_chip=4611686018427387904"),
              HasSubstr("devices_per_chip: must be at most 16"));
  EXPECT_EQ(MustShort("torus:2x2,devices_per_chip=16").devices_per_chip, 16);
  EXPECT_THAT(ShortError("torus:2x2,devices_per_chip=two"),
              HasSubstr("devices_per_chip: expected a whole number, got 'two'"));
  EXPECT_THAT(ShortError("multislice:slices=2,slice=torus:2x2,devices_per_chip=2"),
              HasSubstr("slice: devices_per_chip belongs to the multi-slice topology"));
  EXPECT_EQ(YamlError("topology:\n  kind: torus\n  dims: [2, 2]\n  devices_per_chip: -1\n"),
            "s.yaml:4:21: error: topology.devices_per_chip: expected a whole number, got '-1'");
  EXPECT_EQ(YamlError("topology:\n  kind: torus\n  dims: [2, 2]\n  devices_per_chip: [2]\n"),
            "s.yaml:4:21: error: topology.devices_per_chip: expected a single value, got a "
            "sequence");
  EXPECT_EQ(YamlError("topology: torus:2x2,devices_per_chip=0\n"),
            "s.yaml:1:11: error: topology: invalid topology 'torus:2x2,devices_per_chip=0': "
            "devices_per_chip: must be at least 1, got '0'");
}

TEST(TopologyShortForm, MoreThanTheChipLimitIsRefusedUpFront) {
  // Each once ran for minutes without a word; the limit is kMaxChips (65536).
  EXPECT_THAT(ShortError("torus:1024x1024"),
              HasSubstr("dims: torus 1024x1024 has 1048576 chips, more than the 65536 tpusim "
                        "simulates"));
  EXPECT_THAT(ShortError("torus:99999999999x99999999999"),
              HasSubstr("dims: torus 99999999999x99999999999 has over 2^63 chips"));
  EXPECT_THAT(ShortError("switch:16777216"),
              HasSubstr("chips: the switch has 16777216 chips, more than the 65536"));
  EXPECT_THAT(ShortError("fattree:radix=64,levels=4"),
              HasSubstr("levels: a fat tree of radix 64 and 4 levels has 1048576 chips"));
  EXPECT_THAT(ShortError("multislice:slices=1000000,slice=torus:4x4"),
              HasSubstr("slices: 1000000 slices of torus:4x4 has 16000000 chips"));
  EXPECT_EQ(MustShort("torus:256x256").dims, (std::vector<int64_t>{256, 256}));
  EXPECT_EQ(MustShort("switch:65536").dims, (std::vector<int64_t>{65536}));
}

TEST(TopologyShortForm, FatTreeHasAtMostSixteenLevels) {
  // 16 levels of radix 4 is kMaxChips; radix 2 makes one chip whatever the
  // levels, and levels near 2^51 once kept the size check looping for hours.
  EXPECT_EQ(MustShort("fattree:radix=4,levels=16").fat_tree_levels, 16);
  EXPECT_THAT(ShortError("fattree:radix=2,levels=17"),
              HasSubstr("levels: a fat tree has at most 16 levels, got 17"));
  EXPECT_THAT(ShortError("fattree:radix=36,levels=2147483648491271"),
              HasSubstr("levels: a fat tree has at most 16 levels, got 2147483648491271"));
}

TEST(TopologyShortForm, GridHasAtMostSixteenDimensions) {
  // Axes of size 1 add no chips: 20,000 of them once took Build 23 s, the
  // time growing with their square.
  std::string ones = "1";
  for (int d = 1; d < 16; ++d) ones += "x1";
  EXPECT_EQ(MustShort("mesh:" + ones).dims.size(), 16u);
  EXPECT_THAT(ShortError("torus:" + ones + "x1"),
              HasSubstr("dims: a torus has at most 16 dimensions, got 17"));
  std::string list = "1";
  for (int d = 1; d < 17; ++d) list += ", 1";
  EXPECT_THAT(YamlError("topology: {kind: mesh, dims: [" + list + "]}\n"),
              HasSubstr("s.yaml:1:30: error: topology.dims: a mesh has at most 16 dimensions, "
                        "got 17"));
}

TEST(TopologyChipCount, CountsEveryKindAndSaturates) {
  EXPECT_EQ(ChipCount(MustShort("torus:4x4x8")), 128);
  EXPECT_EQ(ChipCount(MustShort("fattree:radix=8,levels=2")), 16);
  EXPECT_EQ(ChipCount(MustShort("switch:64")), 64);
  EXPECT_EQ(ChipCount(MustShort("multislice:slices=3,slice=mesh:2x2")), 12);
  TopologyConfig huge;
  huge.dims = {int64_t{1} << 40, int64_t{1} << 40};
  EXPECT_EQ(ChipCount(huge), INT64_MAX);
  // Arity 1 stays at one chip however many levels; arity 2 saturates.
  huge = TopologyConfig{};
  huge.kind = TopologyKind::kFatTree;
  huge.fat_tree_levels = INT64_MAX;
  huge.fat_tree_radix = 2;
  EXPECT_EQ(ChipCount(huge), 1);
  huge.fat_tree_radix = 4;
  EXPECT_EQ(ChipCount(huge), INT64_MAX);
}

TEST(TopologyFile, TheRootOrItsTopologyKeyIsTheTopology) {
  StatusOr<TopologyConfig> root = ParseTopologyFile("kind: mesh\ndims: [2, 4]\n", "t.yaml");
  ASSERT_TRUE(root.ok()) << root.status().message();
  EXPECT_EQ(CanonicalTopologyText(*root), "mesh:2x4");
  StatusOr<TopologyConfig> scenario = ParseTopologyFile("name: s\ntopology: torus:4x4\n", "s.yaml");
  ASSERT_TRUE(scenario.ok()) << scenario.status().message();
  EXPECT_EQ(CanonicalTopologyText(*scenario), "torus:4x4");
  EXPECT_THAT(ParseTopologyFile("kind: mesh\ndims: [2, 4\n", "t.yaml").status().message(),
              HasSubstr("t.yaml:3:1: error: "));
  EXPECT_EQ(ParseTopologyFile("kind: mesh\n---\nkind: torus\n", "t.yaml").status().code(),
            StatusCode::kInvalidArgument);
}

TEST(TopologyYaml, ErrorsNameFileLineColumnAndKeyPath) {
  EXPECT_EQ(YamlError("topology:\n  kind: torus\n  dims: [1024, 1024]\n"),
            "s.yaml:3:9: error: topology.dims: torus 1024x1024 has 1048576 chips, more than the "
            "65536 tpusim simulates (a TPU v5p pod is 8960)");
  EXPECT_THAT(YamlError("topology:\n  kind: graph\n  chips: 100000\n  edges: [[0, 1]]\n"),
              HasSubstr("s.yaml:3:10: error: topology.chips: the graph has 100000 chips"));
  EXPECT_EQ(YamlError("topology:\n  kind: torus\n  dims: [4, 4]\n  radix: 4\n"),
            "s.yaml:4:3: error: topology: unknown key 'radix' (known: kind, dims, wraparound, "
            "link_bandwidth, hop_latency, devices_per_chip, device_assignment, faults, "
            "slow_devices)");
  EXPECT_EQ(YamlError("topology:\n  kind: torus\n  dims: [4, 0]\n"),
            "s.yaml:3:9: error: topology.dims: every dimension must be positive, got 4x0");
  EXPECT_EQ(YamlError("topology:\n  kind: twisted\n  dims: [4, 4, 4]\n"),
            "s.yaml:3:9: error: topology.dims: twisted torus needs 2A=B=C or 2A=2B=C (e.g. 4x4x8, "
            "4x8x8), got 4x4x4");
  EXPECT_THAT(
      YamlError(
          "topology:\n  kind: mesh\n  dims: [4]\n  faults:\n    - {link: [0, 1], bandwidth: 2}\n"),
      HasSubstr("s.yaml:5:33: error: topology.faults[0].bandwidth: expected the remaining "
                "bandwidth fraction"));
  EXPECT_THAT(
      YamlError("topology:\n  kind: mesh\n  dims: [4]\n  faults:\n    - {chip: 1, link: [0, 1]}\n"),
      HasSubstr("s.yaml:5:7: error: topology.faults[0]: needs exactly one of 'link' or 'chip'"));
  EXPECT_THAT(YamlError("topology: {kind: donut}\n"),
              HasSubstr("s.yaml:1:18: error: topology.kind: expected one of torus"));
  EXPECT_THAT(YamlError("topology: torus:4x0\n"),
              HasSubstr("s.yaml:1:11: error: topology: invalid topology 'torus:4x0'"));
  EXPECT_THAT(YamlError("topology:\n  kind: torus\n  dims: [4]\n  dims: [4]\n"),
              HasSubstr("s.yaml:4:3: error: topology.dims: duplicate key"));
}

// Topology::Build checks what needs the built network (links that exist,
// chip and device ids, a connected graph) and reports it through
// TopologyError at the part the file wrote (tests/ici/topology_test.cc).
TEST(TopologyYaml, FaultCoordinatesOnATooLargeGridAreRefusedForItsSize) {
  // Faults are read before the size check: their chip ids once overflowed
  // (UBSan: signed integer overflow) before the dims were refused.
  EXPECT_THAT(YamlError("topology:\n  kind: torus\n"
                        "  dims: [4294967296, 4294967296, 4294967296]\n  faults:\n"
                        "    - {link: [[4294967295, 4294967295, 4294967295], [0, 0, 0]]}\n"),
              HasSubstr("s.yaml:3:9: error: topology.dims: torus "
                        "4294967296x4294967296x4294967296 has over 2^63 chips"));
}

TEST(TopologyYaml, RecordsWhereEachPartWasWrittenForLaterErrors) {
  StatusOr<TopologyConfig> c = FromYaml(
      "topology:\n  kind: mesh\n  dims: [4]\n  device_assignment: [3, 2, 1, 0]\n  faults:\n"
      "    - {chip: 1}\n    - {link: [0, 1], at: 2us}\n  slow_devices: [{device: 2, factor: 2}]\n");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(TopologyError(*c, "faults[0].link", "m").message(),
            "s.yaml:7:14: error: topology.faults[1].link: m");
  EXPECT_EQ(TopologyError(*c, "chip_faults[0].chip", "m").message(),
            "s.yaml:6:14: error: topology.faults[0].chip: m");
  EXPECT_EQ(TopologyError(*c, "device_assignment[2]", "m").message(),
            "s.yaml:4:29: error: topology.device_assignment[2]: m");
  EXPECT_EQ(TopologyError(*c, "slow_devices[0].factor", "m").message(),
            "s.yaml:8:38: error: topology.slow_devices[0].factor: m");
  // A part not written is at the nearest part that was, with its own path.
  EXPECT_EQ(TopologyError(*c, "link_bandwidth", "m").message(),
            "s.yaml:2:3: error: topology.link_bandwidth: m");
  // A short form on the command line has no file: the part names itself.
  EXPECT_EQ(TopologyError(MustShort("mesh:4"), "faults[0].link", "m").message(),
            "faults[0].link: m");
}

TEST(TopologyYaml, ControlCharactersInKeysAndValuesAreEscaped) {
  EXPECT_EQ(YamlError("topology:\n  kind: torus\n  dims: [4]\n  \"li\\enk\": 3\n"),
            "s.yaml:4:3: error: topology: unknown key 'li\\x1bnk' (known: kind, dims, wraparound, "
            "link_bandwidth, hop_latency, devices_per_chip, device_assignment, faults, "
            "slow_devices)");
  EXPECT_EQ(YamlError("topology: \"torus:4\\ex4\"\n"),
            "s.yaml:1:11: error: topology: invalid topology 'torus:4\\x1bx4': dims: expected "
            "dimensions like 4x4x8, got '4\\x1bx4'");
}

// Unstated, devices_per_chip is what the chip's runtime exposes: one device
// per TensorCore without megacore (TPU7x, v3), the whole chip with it (v4,
// v5p) or with one TensorCore (v5e, v6e). A stated value stays.
TEST(TopologyDevicesPerChip, UnstatedIsTheChipsDevices) {
  ChipConfig chip;
  chip.name = "tpu-v7x";
  chip.tensorcores_per_chip = 2;
  TopologyConfig c = MustShort("torus:2x2x1,wraparound=tpu");
  ASSERT_TRUE(ResolveChipDefaults(c, chip).ok());
  EXPECT_EQ(c.devices_per_chip, 2);
  EXPECT_EQ(CanonicalTopologyText(c), "torus:2x2x1,wraparound=0x0x0,devices_per_chip=2");
  c = MustShort("torus:2x2x1,devices_per_chip=1");
  ASSERT_TRUE(ResolveChipDefaults(c, chip).ok());
  EXPECT_EQ(c.devices_per_chip, 1);
  c = MustShort("multislice:slices=2,slice=torus:2x2");
  ASSERT_TRUE(ResolveChipDefaults(c, chip).ok());
  EXPECT_EQ(c.devices_per_chip, 2);

  chip.name = "tpu-v4";
  chip.megacore = true;
  c = MustShort("torus:2x2x1");
  ASSERT_TRUE(ResolveChipDefaults(c, chip).ok());
  EXPECT_EQ(c.devices_per_chip, 1);
  EXPECT_EQ(CanonicalTopologyText(c), "torus:2x2x1");  // stamps unchanged
  chip.name = "tpu-v5e";
  chip.megacore = false;
  chip.tensorcores_per_chip = 1;
  c = MustShort("torus:2x2");
  ASSERT_TRUE(ResolveChipDefaults(c, chip).ok());
  EXPECT_EQ(c.devices_per_chip, 1);
}

TEST(TopologyTpuWraparound, FollowsEachGenerationsRule) {
  ChipConfig chip;
  chip.name = "tpu-v5e";
  TopologyConfig c = MustShort("torus:16x8,wraparound=tpu");
  EXPECT_TRUE(c.tpu_wraparound);
  ASSERT_TRUE(ResolveChipDefaults(c, chip).ok());
  EXPECT_THAT(c.wraparound, ElementsAre(true, false));  // v5e: only axes of 16 wrap
  EXPECT_FALSE(c.tpu_wraparound);

  chip.name = "my-v5p";  // a custom preset inheriting v5p's rule
  chip.inherits = "tpu-v5p";
  c = MustShort("torus:4x4x8x6,wraparound=tpu");
  ASSERT_TRUE(ResolveChipDefaults(c, chip).ok());
  EXPECT_THAT(c.wraparound, ElementsAre(true, true, true, false));  // multiples of 4

  c = MustShort("multislice:slices=2,slice=torus:16x4,wraparound=tpu");
  chip.name = "tpu-v6e";
  ASSERT_TRUE(ResolveChipDefaults(c, chip).ok());
  EXPECT_EQ(c.slice_topology_text, "torus:16x4,wraparound=1x0");

  // models/tpu-v3.yaml inherits tpu-v4's numbers, not its pods' wraparound.
  chip.name = "tpu-v3";
  chip.inherits = "tpu-v4";
  c = MustShort("torus:4x4,wraparound=tpu");
  const Status unknown = ResolveChipDefaults(c, chip);
  EXPECT_THAT(unknown.message(), HasSubstr("wraparound: tpu has no rule for chip 'tpu-v3'"));
  chip.name = "my-v3";
  chip.inherits = "tpu-v3";
  c = MustShort("torus:4x4,wraparound=tpu");
  EXPECT_THAT(ResolveChipDefaults(c, chip).message(),
              HasSubstr("wraparound: tpu has no rule for chip 'my-v3'"));
  chip.name = "tpu-v3";
  // From a file, at the key; a multi-slice's, at its slice.
  c = *FromYaml("topology:\n  kind: torus\n  dims: [4, 4]\n  wraparound: tpu\n");
  EXPECT_THAT(ResolveChipDefaults(c, chip).message(),
              HasSubstr("s.yaml:4:15: error: topology.wraparound: tpu has no rule for chip"));
  c = *FromYaml("topology: multislice:slices=2,slice=torus:4x4,wraparound=tpu\n");
  EXPECT_THAT(ResolveChipDefaults(c, chip).message(),
              HasSubstr("s.yaml:1:11: error: topology.slice: wraparound: tpu has no rule for"));
}

}  // namespace
}  // namespace tpusim::arch
