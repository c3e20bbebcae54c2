#include "harness/run/topology_option.h"

#include "sim/base/file.h"

namespace tpusim::harness {

StatusOr<arch::TopologyConfig> LoadTopologyOption(const std::string& text,
                                                  std::string_view command) {
  const bool is_file = text.ends_with(".yaml") || text.ends_with(".yml");
  if (!is_file) {
    StatusOr<arch::TopologyConfig> parsed = arch::ParseTopologyShortForm(text);
    if (!parsed.ok()) return parsed.status().WithContext(std::string(command) + "--topology");
    return parsed;
  }
  TPUSIM_ASSIGN_OR_RETURN(const std::string contents, ReadFile(text));
  return arch::ParseTopologyFile(contents, text);
}

}  // namespace tpusim::harness
