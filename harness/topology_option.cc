#include "harness/topology_option.h"

#include <yaml-cpp/yaml.h>

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
  YAML::Node root;
  try {
    root = YAML::Load(contents);
  } catch (const YAML::Exception& e) {
    return InvalidArgument(text + ":" + std::to_string(e.mark.line + 1) + ":" +
                           std::to_string(e.mark.column + 1) + ": error: " + e.msg);
  }
  const YAML::Node node = root.IsMap() && root["topology"] ? root["topology"] : root;
  return arch::ParseTopologyYaml(node, text);
}

}  // namespace tpusim::harness
