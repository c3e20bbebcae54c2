// `tpusim presets [--models-dir DIR]`: list the chip presets with their headline figures.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <ostream>
#include <string>
#include <vector>

#include "harness/cli/cli.h"
#include "sim/arch/chip_config.h"
#include "sim/arch/preset_loader.h"
#include "sim/base/units.h"

namespace tpusim::harness {
namespace {

constexpr double kGiga = 1e9;
constexpr double kTera = 1e12;
constexpr double kGibi = 1024.0 * 1024.0 * 1024.0;

/// One table row, columns in the order of kHeader.
std::vector<std::string> Row(const arch::ChipConfig& c) {
  return {
      c.name,
      c.inherits.empty() ? "-" : c.inherits,
      FormatSignificant(static_cast<double>(c.clock.value()) / kGiga, 4) + " GHz",
      std::to_string(c.tensorcores_per_chip) + "x" + std::to_string(c.mxu.count_per_core) + " " +
          std::to_string(c.mxu.rows) + "x" + std::to_string(c.mxu.cols),
      std::to_string(arch::DevicesPerChip(c)),
      FormatSignificant(static_cast<double>(c.peak.bf16.value()) / kTera, 6),
      FormatSignificant(static_cast<double>(c.hbm.bandwidth.value()) / kGiga, 6),
      FormatFixed(static_cast<double>(c.hbm.capacity.value()) / kGibi, 1),
      std::to_string(c.ici.links) + " x " +
          FormatSignificant(
              static_cast<double>(c.ici.bandwidth_per_link_per_direction.value()) / kGiga, 6),
  };
}

const std::vector<std::string> kHeader = {
    "NAME",         "INHERITS", "CLOCK",   "MXUS (TCxN RxC)", "DEVICES/CHIP",
    "BF16 TFLOP/S", "HBM GB/S", "HBM GIB", "ICI LINKS x GB/S"};

/// Columns 0-3 are text (left-aligned); the rest are numbers (right-aligned).
constexpr size_t kFirstNumericColumn = 4;

void PrintTable(const std::vector<std::vector<std::string>>& rows, std::ostream& out) {
  std::vector<size_t> widths(kHeader.size());
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      const std::string pad(widths[i] - row[i].size(), ' ');
      const bool last = i + 1 == row.size();
      if (i >= kFirstNumericColumn && !last) {
        line += pad + row[i];
      } else {
        line += row[i] + (last ? "" : pad);
      }
      if (!last) line += "  ";
    }
    out << line << '\n';
  }
}

}  // namespace

CLI::App* AddPresetsCommand(CLI::App& app, PresetsOptions& options) {
  CLI::App* presets =
      app.add_subcommand("presets", "List the chip presets and their headline figures");
  AddModelsDirOption(*presets, options.models_dir, "Directory of chip presets (*.yaml) to list");
  presets->footer(R"(One row per preset: the preset it inherits from, TensorCore clock, TensorCores
x MXUs per core and MXU shape, the devices the runtime exposes per chip (one per
TensorCore without megacore; a topology's default devices_per_chip), peak dense
bf16 TFLOP/s per chip, HBM bandwidth and capacity per chip, and ICI links x one-way
GB/s per link. Sources for every figure are in the preset files and docs/presets.md.

Exit codes:
  0  every preset loaded
  2  the directory could not be read or a preset failed to load (reported on stderr))");
  return presets;
}

int RunPresets(const PresetsOptions& options, std::ostream& out, std::ostream& err) {
  StatusOr<std::vector<std::string>> names = arch::ListPresets(options.models_dir);
  if (!names.ok()) {
    PrintError(names.status(), err);
    return kExitInputError;
  }
  int exit_code = kExitOk;
  std::vector<std::vector<std::string>> rows = {kHeader};
  for (const std::string& name : *names) {
    StatusOr<arch::ChipConfig> config = arch::LoadChipPreset(name, options.models_dir);
    if (!config.ok()) {
      PrintError(config.status(), err);
      exit_code = kExitInputError;
      continue;
    }
    rows.push_back(Row(*config));
  }
  PrintTable(rows, out);
  out.flush();
  return exit_code;
}

}  // namespace tpusim::harness
