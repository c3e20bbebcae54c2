#include "harness/run/topology_option.h"

#include <yaml-cpp/yaml.h>

#include "sim/arch/yaml_position.h"
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
    root = arch::LoadOneDocument(contents);
  } catch (const YAML::Exception& e) {
    return InvalidArgument(arch::Where(text, e.mark) + ": error: " + e.msg);
  }
  const YAML::Node node = root.IsMap() && root["topology"] ? root["topology"] : root;
  return arch::ParseTopologyYaml(node, text);
}

}  // namespace tpusim::harness
