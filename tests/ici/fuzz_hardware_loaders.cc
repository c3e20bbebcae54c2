// libFuzzer target for the hardware loaders: chip presets (models/*.yaml, with
// `inherits:`) and topologies (short forms and YAML), through to the built
// interconnect graph and a route across it (TPUSIM_FUZZ=ON, clang).
//
// An input is a preset, a topology, or a preset and a topology as two YAML
// documents split by a "---" line. Without the split line the whole input is
// offered to both loaders (each refuses the other's form at once). A preset
// that loads is then the chip the topology is built for; otherwise one of the
// presets in models/, picked by the input's size, is.
//
// Any input must give a config or an error status, never a crash, hang or
// sanitizer report, and two round trips must hold (they trap otherwise):
// - a preset's CanonicalDump, applied as overrides ("key=value" lines, as
//   `-p` takes them) to the same file, loads to the same dump;
// - a short form's CanonicalTopologyText parses to a config with the same text.
//
//   <build-fuzz>/bin/fuzz_hardware_loaders -dict=tests/ici/fuzz_hardware.dict SEED_DIR
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "sim/arch/chip_config.h"
#include "sim/arch/preset_loader.h"
#include "sim/arch/topology_config.h"
#include "sim/ici/routing.h"
#include "sim/ici/topology.h"

namespace {

namespace fs = std::filesystem;
using tpusim::StatusOr;
using tpusim::arch::ChipConfig;
using tpusim::arch::TopologyConfig;

/// Topologies up to this many chips are built. Larger ones are legal (up to
/// arch::kMaxChips) but take up to seconds each to build instrumented, which
/// would spend a run on a handful of inputs; the loaders' own size checks
/// still see them.
constexpr int64_t kMaxBuiltChips = 4096;

[[noreturn]] void Fail(const std::string& what, const std::string& expected,
                       const std::string& got) {
  std::fprintf(stderr, "fuzz_hardware_loaders: %s\n--- expected ---\n%s\n--- got ---\n%s\n",
               what.c_str(), expected.c_str(), got.c_str());
  __builtin_trap();
}

/// Traps unless `again`, `text` loaded back, loads and prints as `text` again.
template <typename Config>
void CheckRoundTrip(const std::string& what, const std::string& text, const StatusOr<Config>& again,
                    std::string (*print)(const Config&)) {
  if (!again.ok()) Fail(what + " is refused", text, again.status().message());
  if (print(*again) != text) Fail(what + " loads to something else", text, print(*again));
}

/// This process's directory for the preset file: presets are loaded from files
/// (`inherits:` paths are relative to them). Removed at exit, by a handler
/// that runs after static destructors: hence a path never destroyed.
const fs::path& ScratchDir() {
  static const fs::path* const dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") +
                          "/fuzz_hardware_loaders.XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
      std::perror("fuzz_hardware_loaders: mkdtemp");
      std::abort();
    }
    std::atexit([] {
      std::error_code ec;
      fs::remove_all(ScratchDir(), ec);
    });
    return new fs::path(pattern);
  }();
  return *dir;
}

/// The presets in models/ (and models/test/), loaded once: the chips a
/// topology is built for when the input has no preset of its own.
const std::vector<ChipConfig>& RealPresets() {
  static const std::vector<ChipConfig> presets = [] {
    std::vector<ChipConfig> loaded;
    const std::vector<std::string> names = *tpusim::arch::ListPresets(TPUSIM_MODELS_DIR);
    for (const std::string& name : names) {
      loaded.push_back(*tpusim::arch::LoadChipPreset(name, TPUSIM_MODELS_DIR));
    }
    loaded.push_back(
        *tpusim::arch::LoadChipPreset(TPUSIM_MODELS_DIR "/test/tiny-chip.yaml", TPUSIM_MODELS_DIR));
    return loaded;
  }();
  return presets;
}

/// "key=value" lines of `dump`, as overrides.
std::vector<std::string> Lines(const std::string& dump) {
  std::vector<std::string> lines;
  for (size_t begin = 0; begin < dump.size();) {
    const size_t end = dump.find('\n', begin);
    lines.push_back(dump.substr(begin, end - begin));
    begin = end == std::string::npos ? dump.size() : end + 1;
  }
  return lines;
}

/// Loads `text` as a preset file; checks the dump's round trip when it loads.
StatusOr<ChipConfig> LoadPreset(std::string_view text) {
  const std::string file = (ScratchDir() / "fuzz.yaml").string();
  // A new file each time: ext4 flushes a file truncated and rewritten to disk
  // when it is closed, which would be most of the run's time.
  std::error_code ec;
  fs::remove(file, ec);
  std::ofstream(file, std::ios::binary)
      .write(text.data(), static_cast<std::streamsize>(text.size()));
  StatusOr<ChipConfig> chip = tpusim::arch::LoadChipPreset(file, TPUSIM_MODELS_DIR);
  if (!chip.ok()) return chip;
  const std::string dump = tpusim::arch::CanonicalDump(*chip);
  CheckRoundTrip("the preset's dump, as overrides,", dump,
                 tpusim::arch::LoadChipPreset(file, TPUSIM_MODELS_DIR, Lines(dump)),
                 tpusim::arch::CanonicalDump);
  return chip;
}

/// Parses `text` as a short form; checks its canonical text's round trip.
StatusOr<TopologyConfig> ParseShortForm(std::string_view text) {
  StatusOr<TopologyConfig> config = tpusim::arch::ParseTopologyShortForm(text);
  if (!config.ok()) return config;
  const std::string canonical = tpusim::arch::CanonicalTopologyText(*config);
  CheckRoundTrip("the canonical short form", canonical,
                 tpusim::arch::ParseTopologyShortForm(canonical),
                 tpusim::arch::CanonicalTopologyText);
  return config;
}

/// Builds `config` for `chip` as exec and collective do, then the network at
/// the last fault's time, and routes from the first chip to the last and back.
void Build(TopologyConfig config, const ChipConfig& chip) {
  if (tpusim::arch::ChipCount(config) > kMaxBuiltChips) return;
  if (!tpusim::arch::ResolveChipDefaults(config, chip).ok()) return;
  StatusOr<tpusim::ici::Topology> built = tpusim::ici::Topology::Build(config, chip.ici);
  if (!built.ok()) return;
  tpusim::Picoseconds last_fault;
  for (const auto& f : config.faults) last_fault = std::max(last_fault, f.at);
  for (const auto& f : config.chip_faults) last_fault = std::max(last_fault, f.at);
  const tpusim::ici::Topology network = built->AtTime(last_fault);
  const tpusim::ici::Router router(network);
  const auto last = static_cast<tpusim::ici::NodeId>(network.chip_count() - 1);
  (void)router.Route(0, last);
  (void)router.Route(last, 0);
  (void)network.Describe();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  constexpr std::string_view kSplit = "\n---\n";
  const size_t split = input.find(kSplit);
  const std::string_view preset_text =
      split == std::string_view::npos ? input : input.substr(0, split + 1);
  const std::string_view topology_text =
      split == std::string_view::npos ? input : input.substr(split + kSplit.size());

  const std::vector<ChipConfig>& presets = RealPresets();
  StatusOr<ChipConfig> preset = LoadPreset(preset_text);
  const ChipConfig& chip = preset.ok() ? *preset : presets[size % presets.size()];

  StatusOr<TopologyConfig> from_file =
      tpusim::arch::ParseTopologyFile(std::string(topology_text), "fuzz.yaml");
  if (from_file.ok()) Build(*from_file, chip);
  StatusOr<TopologyConfig> short_form = ParseShortForm(topology_text);
  if (short_form.ok()) Build(*short_form, chip);
  return 0;
}
