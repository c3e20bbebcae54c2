#include "harness/run/topology_option.h"

#include "sim/base/file.h"

namespace tpusim::harness {

StatusOr<arch::TopologyConfig> LoadTopologyOption(const std::string& text, std::string_view command,
                                                  const arch::ChipConfig* chip,
                                                  std::string_view flag) {
  const bool is_file = text.ends_with(".yaml") || text.ends_with(".yml");
  if (is_file) {
    TPUSIM_ASSIGN_OR_RETURN(const std::string contents, ReadFile(text));
    TPUSIM_ASSIGN_OR_RETURN(arch::TopologyConfig config, arch::ParseTopologyFile(contents, text));
    if (chip != nullptr) TPUSIM_RETURN_IF_ERROR(arch::ResolveChipDefaults(config, *chip));
    return config;
  }
  const std::string option = std::string(command) + std::string(flag);
  StatusOr<arch::TopologyConfig> parsed = arch::ParseTopologyShortForm(text);
  if (!parsed.ok()) return parsed.status().WithContext(option);
  if (chip != nullptr) {
    const Status applied = arch::ResolveChipDefaults(*parsed, *chip);
    if (!applied.ok()) return applied.WithContext(option + ": " + Quote(text));
  }
  // Errors found later, when the network is built (arch::TopologyError),
  // name the option and what it said, as a YAML file's name its line.
  parsed->where[""] = option + ": " + Quote(text) + ": topology";
  return parsed;
}

}  // namespace tpusim::harness
