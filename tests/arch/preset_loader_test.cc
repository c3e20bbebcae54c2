#include "sim/arch/preset_loader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "sim/arch/chip_config.h"

namespace tpusim::arch {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::string kModels = TPUSIM_MODELS_DIR;
const std::string kTinyChip = kModels + "/test/tiny-chip.yaml";

ChipConfig MustLoad(const std::string& name, const std::vector<std::string>& overrides = {}) {
  StatusOr<ChipConfig> config = LoadChipPreset(name, kModels, overrides);
  EXPECT_TRUE(config.ok()) << name << ": " << config.status().message();
  return config.ok() ? *config : ChipConfig{};
}

TEST(PresetLoader, ListsEveryPresetInTheModelsDirectory) {
  StatusOr<std::vector<std::string>> names = ListPresets(kModels);
  ASSERT_TRUE(names.ok()) << names.status().message();
  EXPECT_THAT(*names, ElementsAre("tpu-v3", "tpu-v4", "tpu-v5e", "tpu-v5p", "tpu-v6e", "tpu-v7x"));
}

TEST(PresetLoader, EveryPresetLoads) {
  StatusOr<std::vector<std::string>> names = ListPresets(kModels);
  ASSERT_TRUE(names.ok());
  for (const std::string& name : *names) {
    const ChipConfig c = MustLoad(name);
    EXPECT_EQ(c.name, name);
    EXPECT_FALSE(c.description.empty()) << name;
  }
}

/// Every value line of every preset ("key: value") cites a source: its own
/// comment, or the comment block just above it, holds a "[KEY]" citation or the
/// word ASSUMPTION (DESIGN.md: every number in a preset has a source).
TEST(PresetLoader, EveryPresetValueCitesASourceOrStatesAnAssumption) {
  StatusOr<std::vector<std::string>> names = ListPresets(kModels);
  ASSERT_TRUE(names.ok());
  for (const std::string& name : *names) {
    std::ifstream in(kModels + "/" + name + ".yaml");
    std::string line;
    std::string comments_above;  // the run of comment lines just before `line`
    for (int number = 1; std::getline(in, line); ++number) {
      const size_t start = line.find_first_not_of(' ');
      if (start == std::string::npos) {
        comments_above.clear();
        continue;
      }
      if (line[start] == '#') {
        comments_above += line;
        continue;
      }
      const size_t colon = line.find(':');
      const std::string key = line.substr(start, colon - start);
      const std::string value = line.substr(colon + 1, line.find('#') - colon - 1);
      const bool is_leaf = value.find_first_not_of(' ') != std::string::npos;
      if (is_leaf && key != "inherits" && key != "description") {
        const std::string cited = comments_above + line.substr(colon);
        EXPECT_TRUE(cited.find('[') != std::string::npos ||
                    cited.find("ASSUMPTION") != std::string::npos)
            << name << ".yaml:" << number << ": no source for '" << line << "'";
      }
      comments_above.clear();
    }
  }
}

/// Published peak bf16 FLOP/s and HBM bandwidth, exactly as tpu-facts.md §1
/// gives them (the Google Cloud figures).
struct Headline {
  const char* name;
  int64_t peak_bf16;      // FLOP/s
  int64_t hbm_bandwidth;  // B/s
};

TEST(PresetLoader, HeadlineFiguresEqualThePublishedOnes) {
  const Headline kHeadlines[] = {
      {"tpu-v3", 123'000'000'000'000, 900'000'000'000},       // [GC-v3]
      {"tpu-v4", 275'000'000'000'000, 1'200'000'000'000},     // [GC-v4]
      {"tpu-v5e", 197'000'000'000'000, 819'000'000'000},      // [GC-v5e]
      {"tpu-v5p", 459'000'000'000'000, 2'765'000'000'000},    // [GC-v5p]
      {"tpu-v6e", 918'000'000'000'000, 1'638'000'000'000},    // [GC-v6e]
      {"tpu-v7x", 2'307'000'000'000'000, 7'380'000'000'000},  // [GC-7x]
  };
  for (const Headline& h : kHeadlines) {
    const ChipConfig c = MustLoad(h.name);
    EXPECT_EQ(c.peak.bf16.value(), h.peak_bf16) << h.name;
    EXPECT_EQ(c.hbm.bandwidth.value(), h.hbm_bandwidth) << h.name;
  }
}

TEST(PresetLoader, MxuGeometryTimesClockReproducesPublishedPeaksWithinOnePercent) {
  StatusOr<std::vector<std::string>> names = ListPresets(kModels);
  ASSERT_TRUE(names.ok());
  for (const std::string& name : *names) {
    const ChipConfig c = MustLoad(name);
    const double derived = static_cast<double>(MxuPeakBf16(c).value());
    const double published = static_cast<double>(c.peak.bf16.value());
    EXPECT_LT(std::abs(derived / published - 1), 0.01) << name << ": " << derived;
    const double derived_int8 = derived * static_cast<double>(c.mxu.int8_rate);
    const double published_int8 = static_cast<double>(c.peak.int8.value());
    EXPECT_LE(std::abs(derived_int8 - published_int8), 0.01 * published_int8) << name;
  }
}

TEST(PresetLoader, ChildInheritsWhatItDoesNotOverride) {
  const ChipConfig v5e = MustLoad("tpu-v5e");
  const ChipConfig v6e = MustLoad("tpu-v6e");
  EXPECT_EQ(v6e.inherits, "tpu-v5e");
  EXPECT_EQ(v5e.inherits, "");
  EXPECT_EQ(v6e.mxu.rows, 256);                        // overridden
  EXPECT_EQ(v6e.tensorcores_per_chip, 1);              // inherited
  EXPECT_EQ(v6e.vmem.capacity.value(), 128LL << 20);   // inherited
  EXPECT_EQ(v6e.ici.links, v5e.ici.links);             // inherited
  EXPECT_EQ(v6e.hbm.access_granularity.value(), 512);  // inherited
  EXPECT_EQ(v6e.clock.value(), 1'750'000'000);         // overridden

  // A two-level chain: tpu-v7x -> tpu-v5p -> tpu-v5e.
  const ChipConfig v7x = MustLoad("tpu-v7x");
  EXPECT_EQ(v7x.inherits, "tpu-v5p");
  EXPECT_FALSE(v7x.megacore);                         // overrides v5p's true
  EXPECT_EQ(v7x.vpu.alus_per_slot, 4);                // from v5p
  EXPECT_EQ(v7x.vpu.sublanes, 8);                     // from v5e
  EXPECT_EQ(v7x.ici.hop_latency.value(), 1'000'000);  // 1us from v5e
}

TEST(PresetLoader, OverridesReplaceOneFieldInOrder) {
  const ChipConfig base = MustLoad("tpu-v5e");
  const ChipConfig c =
      MustLoad("tpu-v5e", {"mxu.rows=256", "hbm.bandwidth=1TB/s", "megacore=false", "mxu.rows=64"});
  EXPECT_EQ(c.mxu.rows, 64);  // the last override wins
  EXPECT_EQ(c.mxu.cols, 128);
  EXPECT_EQ(c.hbm.bandwidth.value(), 1'000'000'000'000);
  EXPECT_EQ(c.hbm.capacity, base.hbm.capacity);
  EXPECT_NE(ConfigHash(c), ConfigHash(base));
}

TEST(PresetLoader, LoadsAPresetByPath) {
  StatusOr<ChipConfig> c = LoadChipPreset(kTinyChip, kModels);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->name, "tiny-chip");
  EXPECT_EQ(c->mxu.rows, 2);
  EXPECT_EQ(MxuPeakBf16(*c), c->peak.bf16);
}

TEST(PresetLoader, CanonicalDumpListsHardwareFieldsInSchemaOrder) {
  StatusOr<ChipConfig> c = LoadChipPreset(kTinyChip, kModels);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(CanonicalDump(*c),
            "clock=1000000000Hz\n"
            "tensorcores_per_chip=1\n"
            "megacore=false\n"
            "mxu.rows=2\n"
            "mxu.cols=2\n"
            "mxu.count_per_core=1\n"
            "mxu.int8_rate=2\n"
            "mxu.fp8_rate=1\n"
            "mxu.f16_passes=0\n"
            "mxu.convert_exposed_percent=0\n"
            "vpu.sublanes=2\n"
            "vpu.lanes=4\n"
            "vpu.alus_per_slot=1\n"
            "vpu.medium_op_cycles=4\n"
            "vpu.transcendental_op_cycles=16\n"
            "vpu.f16_load_ops=0\n"
            "vpu.f16_store_ops=0\n"
            "xlu.count=1\n"
            "xlu.cycles_per_vreg=8\n"
            "vmem.capacity=65536B\n"
            "vmem.bandwidth=64000000000B/s\n"
            "vmem.pipeline_block=0B\n"
            "hbm.capacity=1048576B\n"
            "hbm.bandwidth=16000000000B/s\n"
            "hbm.efficiency_percent=100\n"
            "hbm.access_granularity=32B\n"
            "ici.links=4\n"
            "ici.bandwidth_per_link_per_direction=8000000000B/s\n"
            "ici.hop_latency=100000ps\n"
            "ici.efficiency_percent=100\n"
            "ici.collective_latency=0ps\n"
            "pcie.bandwidth=0B/s\n"
            "peak.bf16=8000000000FLOP/s\n"
            "peak.int8=16000000000FLOP/s\n"
            "overhead.kernel_start=10cycles\n"
            "overhead.dma_start=10cycles\n"
            "overhead.program_launch=0cycles\n"
            "overhead.pipeline_step=0cycles\n");
}

TEST(PresetLoader, HashIsStableAndIgnoresNamesAndDescriptions) {
  StatusOr<ChipConfig> c = LoadChipPreset(kTinyChip, kModels);
  ASSERT_TRUE(c.ok());
  // Pinned (cross-checked with an independent FNV-1a in Python): a change here
  // means every golden file's preset hash changes.
  EXPECT_EQ(ConfigHash(*c), 0xe30d37c067e02486ULL) << std::hex << ConfigHash(*c);
  ChipConfig renamed = *c;
  renamed.name = "other";
  renamed.description = "reworded";
  renamed.inherits = "tpu-v5e";
  EXPECT_EQ(ConfigHash(renamed), ConfigHash(*c));
  ChipConfig changed = *c;
  changed.hbm.access_granularity = Bytes(64);
  EXPECT_NE(ConfigHash(changed), ConfigHash(*c));
}

TEST(PresetLoader, UnknownPresetNameListsTheKnownOnes) {
  StatusOr<ChipConfig> c = LoadChipPreset("tpu-v9", kModels);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(c.status().message(),
            "unknown chip preset 'tpu-v9' (known: tpu-v3, tpu-v4, tpu-v5e, tpu-v5p, tpu-v6e, "
            "tpu-v7x)");
}

TEST(PresetLoader, AModelsDirectoryThatDoesNotExistIsNamedAsTheCause) {
  StatusOr<ChipConfig> c = LoadChipPreset("tpu-v5e", "/no/such/models");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(),
            "unknown chip preset 'tpu-v5e': /no/such/models: error: cannot list chip presets: No "
            "such file or directory");
}

TEST(PresetLoader, BadOverridesNameTheOverride) {
  const auto error = [](const std::string& o) {
    StatusOr<ChipConfig> c = LoadChipPreset("tpu-v5e", kModels, {o});
    EXPECT_FALSE(c.ok()) << o;
    return c.ok() ? std::string() : c.status().message();
  };
  EXPECT_EQ(error("mxu.rowz=3"),
            "override 'mxu.rowz=3': error: unknown key 'mxu.rowz' (known: rows, cols, "
            "count_per_core, int8_rate, fp8_rate, f16_passes, convert_exposed_percent)");
  EXPECT_EQ(error("mxu.rows=x"),
            "override 'mxu.rows=x': error: mxu.rows: expected a whole number, got 'x'");
  EXPECT_EQ(error("clock"), "override 'clock': error: expected KEY=VALUE, e.g. mxu.rows=256");
  EXPECT_EQ(error("mxu=3"),
            "override 'mxu=3': error: 'mxu' is a group; set one of its keys (rows, cols, "
            "count_per_core, int8_rate, fp8_rate, f16_passes, convert_exposed_percent)");
  EXPECT_THAT(error("gpu.rows=3"), HasSubstr("unknown key 'gpu.rows' (known: inherits, "
                                             "description, clock,"));
  EXPECT_EQ(error("hbm.bandwidth=819GBps"),
            "override 'hbm.bandwidth=819GBps': error: hbm.bandwidth: invalid bandwidth "
            "'819GBps': unknown unit 'GBps' (expected B/s, kB/s, KB/s, MB/s, GB/s, TB/s, "
            "KiB/s, MiB/s, GiB/s, TiB/s)");
  EXPECT_EQ(error("megacore=true"),
            "override 'megacore=true': error: megacore: needs at least 2 tensorcores_per_chip, "
            "got 1");
}

/// Malformed presets, each written to a fresh directory with its parent.
class MalformedPreset : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "tpusim_preset_test_XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ignored;
    if (!dir_.empty()) fs::remove_all(dir_, ignored);
  }

  /// Writes `text` as DIR/NAME.yaml and returns its path.
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / (name + ".yaml")).string();
    std::ofstream(path) << text;
    return path;
  }

  /// Loads preset `name` from DIR (as the models directory) and returns the
  /// error with DIR replaced by "DIR", so expected messages are fixed text.
  std::string ErrorOf(const std::string& name, const std::string& text) {
    Write(name, text);
    StatusOr<ChipConfig> c = LoadChipPreset(name, dir_.string());
    EXPECT_FALSE(c.ok()) << name;
    if (c.ok()) return "";
    std::string message = c.status().message();
    for (size_t at; (at = message.find(dir_.string())) != std::string::npos;) {
      message.replace(at, dir_.string().size(), "DIR");
    }
    return message;
  }

  fs::path dir_;
};

/// A complete preset that other cases inherit and break one field of.
constexpr char kBase[] = R"(description: base
clock: 1GHz
tensorcores_per_chip: 1
megacore: false
mxu: {rows: 2, cols: 2, count_per_core: 1, int8_rate: 2, fp8_rate: 1}
vpu: {sublanes: 2, lanes: 4, alus_per_slot: 1, medium_op_cycles: 4, transcendental_op_cycles: 16}
xlu: {count: 1, cycles_per_vreg: 8}
vmem: {capacity: 64KiB, bandwidth: 64GB/s}
hbm: {capacity: 1MiB, bandwidth: 16GB/s, access_granularity: 32B}
ici: {links: 4, bandwidth_per_link_per_direction: 8GB/s, hop_latency: 100ns}
peak: {bf16: 8GFLOP/s, int8: 16GFLOP/s}
overhead: {kernel_start: 10, dma_start: 10}
)";

TEST_F(MalformedPreset, BaseIsValid) {
  Write("base", kBase);
  StatusOr<ChipConfig> c = LoadChipPreset("base", dir_.string());
  EXPECT_TRUE(c.ok()) << c.status().message();
}

TEST_F(MalformedPreset, UnknownNestedKeyGivesLineColumnAndKnownKeys) {
  Write("base", kBase);
  EXPECT_EQ(ErrorOf("bad", "inherits: base\nmxu:\n  rows: 4\n  rowz: 4\n"),
            "DIR/bad.yaml:4:3: error: unknown key 'mxu.rowz' (known: rows, cols, count_per_core, "
            "int8_rate, fp8_rate, f16_passes, convert_exposed_percent)");
}

// A key or value quoted in an error cannot drive the terminal: ESC and BEL
// print as \x escapes, in the file's own messages and in its parent's name.
TEST_F(MalformedPreset, ControlCharactersInKeysAndValuesAreEscaped) {
  Write("base", kBase);
  EXPECT_EQ(ErrorOf("bad", "inherits: base\nmxu:\n  ro\x1b[2Jws: 4\n"),
            "DIR/bad.yaml:3:3: error: unknown key 'mxu.ro\\x1b[2Jws' (known: rows, cols, "
            "count_per_core, int8_rate, fp8_rate, f16_passes, convert_exposed_percent)");
  EXPECT_EQ(ErrorOf("bad", "inherits: base\nmxu:\n  rows: \"4\\a\"\n"),
            "DIR/bad.yaml:3:9: error: mxu.rows: expected a whole number, got '4\\x07'");
  EXPECT_THAT(ErrorOf("bad", "inherits: \"ba\\ese\"\n"),
              HasSubstr("DIR/bad.yaml:1:11: error: inherits: unknown chip preset 'ba\\x1bse'"));
}

TEST_F(MalformedPreset, InheritingFromADeviceIsRefusedNotReadForever) {
  EXPECT_EQ(ErrorOf("zero", "inherits: /dev/zero\n"),
            "/dev/zero: error: cannot read file: it is a device, not a file");
}

TEST_F(MalformedPreset, UnknownTopLevelKey) {
  Write("base", kBase);
  EXPECT_EQ(ErrorOf("bad", "inherits: base\nclocks: 1GHz\n"),
            "DIR/bad.yaml:2:1: error: unknown key 'clocks' (known: inherits, description, clock, "
            "tensorcores_per_chip, megacore, mxu, vpu, xlu, vmem, hbm, ici, pcie, peak, overhead)");
}

TEST_F(MalformedPreset, WrongScalarType) {
  Write("base", kBase);
  EXPECT_EQ(ErrorOf("bad", "inherits: base\nmxu: {rows: 1.5}\n"),
            "DIR/bad.yaml:2:13: error: mxu.rows: expected a whole number, got '1.5'");
}

TEST_F(MalformedPreset, BadBool) {
  Write("base", kBase);
  EXPECT_EQ(ErrorOf("bad", "inherits: base\nmegacore: yes\n"),
            "DIR/bad.yaml:2:11: error: megacore: expected true or false, got 'yes'");
}

TEST_F(MalformedPreset, MissingUnit) {
  Write("base", kBase);
  EXPECT_EQ(ErrorOf("bad", "inherits: base\nhbm:\n  bandwidth: 819\n"),
            "DIR/bad.yaml:3:14: error: hbm.bandwidth: invalid bandwidth '819': missing unit "
            "(expected B/s, kB/s, KB/s, MB/s, GB/s, TB/s, KiB/s, MiB/s, GiB/s, TiB/s)");
}

TEST_F(MalformedPreset, WrongUnitKind) {
  Write("base", kBase);
  EXPECT_EQ(ErrorOf("bad", "inherits: base\nclock: 16GiB\n"),
            "DIR/bad.yaml:2:8: error: clock: invalid frequency '16GiB': unknown unit 'GiB' "
            "(expected Hz, kHz, MHz, GHz)");
}

TEST_F(MalformedPreset, GroupGivenAsScalar) {
  Write("base", kBase);
  EXPECT_EQ(ErrorOf("bad", "inherits: base\nmxu: 128\n"),
            "DIR/bad.yaml:2:6: error: mxu: expected a mapping, got a scalar");
}

TEST_F(MalformedPreset, LeafGivenAsSequence) {
  Write("base", kBase);
  EXPECT_EQ(ErrorOf("bad", "inherits: base\nmxu:\n  rows: [128, 128]\n"),
            "DIR/bad.yaml:3:9: error: mxu.rows: expected a single value, got a sequence");
}

TEST_F(MalformedPreset, OutOfRange) {
  Write("base", kBase);
  EXPECT_EQ(ErrorOf("bad", "inherits: base\nmxu: {rows: 0}\n"),
            "DIR/bad.yaml:2:13: error: mxu.rows: must be at least 1, got '0'");
  EXPECT_EQ(ErrorOf("bad", "inherits: base\nclock: 20GHz\n"),
            "DIR/bad.yaml:2:8: error: clock: must be at most 10000000000Hz, got '20GHz'");
}

TEST_F(MalformedPreset, DuplicateKey) {
  Write("base", kBase);
  EXPECT_EQ(ErrorOf("bad", "inherits: base\nclock: 1GHz\nclock: 2GHz\n"),
            "DIR/bad.yaml:3:1: error: duplicate key 'clock' (first at DIR/bad.yaml:2:1)");
}

TEST_F(MalformedPreset, MissingRequiredFieldNamesTheKeyPath) {
  EXPECT_EQ(ErrorOf("bad", "clock: 1GHz\n"),
            "DIR/bad.yaml:1:1: error: missing required key 'tensorcores_per_chip' (in this "
            "preset or one it inherits)");
  std::string without_granularity = kBase;
  without_granularity.replace(without_granularity.find(", access_granularity: 32B"),
                              std::string(", access_granularity: 32B").size(), "");
  EXPECT_EQ(ErrorOf("bad", without_granularity),
            "DIR/bad.yaml:1:1: error: missing required key 'hbm.access_granularity' (in this "
            "preset or one it inherits)");
}

TEST_F(MalformedPreset, InheritanceCycle) {
  Write("a", "inherits: b\n");
  EXPECT_EQ(ErrorOf("b", "inherits: a\nclock: 1GHz\n"),
            "DIR/a.yaml:1:11: error: inheritance cycle: b.yaml -> a.yaml -> b.yaml");
  EXPECT_EQ(ErrorOf("self", "inherits: self\n"),
            "DIR/self.yaml:1:11: error: inheritance cycle: self.yaml -> self.yaml");
}

TEST_F(MalformedPreset, UnknownParent) {
  Write("base", kBase);
  EXPECT_EQ(ErrorOf("bad", "inherits: nowhere\n"),
            "DIR/bad.yaml:1:11: error: inherits: unknown chip preset 'nowhere' (known: bad, base)");
  EXPECT_THAT(ErrorOf("bad2", "inherits: ./missing.yaml\n"),
              HasSubstr("DIR/missing.yaml: error: cannot open file"));
}

TEST_F(MalformedPreset, YamlSyntaxError) {
  EXPECT_EQ(ErrorOf("bad", "mxu: {rows: 2\n"),
            "DIR/bad.yaml:2:1: error: end of map flow not found");
}

TEST_F(MalformedPreset, NotAMapping) {
  EXPECT_EQ(ErrorOf("bad", "- clock: 1GHz\n"),
            "DIR/bad.yaml:1:1: error: a preset must be a mapping of keys, got a sequence");
  EXPECT_EQ(ErrorOf("empty", ""),
            "DIR/empty.yaml: error: a preset must be a mapping of keys, got nothing");
}

TEST_F(MalformedPreset, ASecondYamlDocumentIsAnErrorNotIgnored) {
  EXPECT_EQ(ErrorOf("two", "inherits: base\n---\nclock: 2GHz\n"),
            "DIR/two.yaml:3:1: error: a second YAML document (after '---'); a file holds one");
}

TEST_F(MalformedPreset, MegacoreNeedsTwoTensorCores) {
  Write("base", kBase);
  EXPECT_EQ(ErrorOf("bad", "inherits: base\nmegacore: true\n"),
            "DIR/bad.yaml:2:11: error: megacore: needs at least 2 tensorcores_per_chip, got 1");
}

}  // namespace
}  // namespace tpusim::arch
