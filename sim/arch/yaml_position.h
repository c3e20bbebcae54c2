// How the arch loaders (chip presets, topologies) and the harness's YAML
// reader (harness/yaml_reader.h: scenarios, studies) point into YAML in their
// error messages.
#ifndef TPUSIM_SIM_ARCH_YAML_POSITION_H_
#define TPUSIM_SIM_ARCH_YAML_POSITION_H_

#include <yaml-cpp/yaml.h>

#include <string>
#include <string_view>
#include <vector>

namespace tpusim::arch {

/// "FILE:LINE:COL" (1-based) of `mark`, or just FILE when the node has no position.
inline std::string Where(std::string_view file, const YAML::Mark& mark) {
  if (mark.is_null()) return std::string(file);
  return std::string(file) + ":" + std::to_string(mark.line + 1) + ":" +
         std::to_string(mark.column + 1);
}

/// What a node is, for "expected a mapping, got a sequence".
inline std::string_view NodeKind(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Sequence:
      return "a sequence";
    case YAML::NodeType::Scalar:
      return "a scalar";
    default:
      return "nothing";
  }
}

/// The one YAML document of `text`, as YAML::Load gives it; a second
/// document (after `---`) throws YAML::ParserException at its start rather
/// than being ignored, and so do the loaders' other syntax errors.
inline YAML::Node LoadOneDocument(const std::string& text) {
  std::vector<YAML::Node> documents = YAML::LoadAll(text);
  if (documents.size() > 1) {
    throw YAML::ParserException(documents[1].Mark(),
                                "a second YAML document (after '---'); a file holds one");
  }
  return documents.empty() ? YAML::Node() : documents.front();
}

}  // namespace tpusim::arch

#endif  // TPUSIM_SIM_ARCH_YAML_POSITION_H_
