// Loading chip presets (models/*.yaml) into ChipConfig: `inherits:` chains,
// field-by-field overrides, and errors that name the file, line, column and
// key path. The schema is documented in models/README.md.
#ifndef TPUSIM_SIM_ARCH_PRESET_LOADER_H_
#define TPUSIM_SIM_ARCH_PRESET_LOADER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/arch/chip_config.h"
#include "sim/base/status.h"

namespace tpusim::arch {

/// Loads a chip preset. `name_or_path` is either a preset name ("tpu-v5e",
/// resolved to `models_dir`/tpu-v5e.yaml) or a path to a YAML file (it
/// contains a '/' or ends in ".yaml"). `inherits:` values resolve the same way,
/// paths relative to the inheriting file. Each `overrides` entry is
/// "key.path=value" (e.g. "mxu.rows=256", "hbm.bandwidth=1TB/s") and replaces
/// one field after the whole chain is merged, in order.
///
/// Errors (kInvalidArgument unless noted) read "FILE:LINE:COL: error: ...":
/// YAML syntax, unknown keys (listing the known ones), duplicate keys, values
/// of the wrong type or unit, out-of-range values, inheritance cycles. A
/// missing field after merging reads "FILE: error: missing required key
/// 'hbm.bandwidth'"; an unknown preset name is kNotFound and lists the
/// presets in `models_dir`; a bad override reads "override 'KEY=VALUE': error:
/// ..." (unknown key, bad value, or a cross-field check it breaks).
StatusOr<ChipConfig> LoadChipPreset(std::string_view name_or_path, const std::string& models_dir,
                                    const std::vector<std::string>& overrides = {});

/// Names of the presets directly in `models_dir` (files *.yaml, without the
/// extension), sorted. Subdirectories such as models/test/ are not listed.
StatusOr<std::vector<std::string>> ListPresets(const std::string& models_dir);

/// The hardware fields of `config`, one "key.path=value" line each in schema
/// order, values as integers in the base unit ("clock=1500000000Hz"). Name,
/// inherits and description are left out: renaming a preset or rewording its
/// description does not change what it simulates.
std::string CanonicalDump(const ChipConfig& config);

/// 64-bit FNV-1a over CanonicalDump(config): stable across runs, machines and
/// compilers, recorded in golden files to tell which hardware produced them.
uint64_t ConfigHash(const ChipConfig& config);

}  // namespace tpusim::arch

#endif  // TPUSIM_SIM_ARCH_PRESET_LOADER_H_
