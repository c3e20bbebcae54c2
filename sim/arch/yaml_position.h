// How the arch loaders (chip presets, topologies) and the harness's YAML
// reader (harness/suite/yaml_reader.h: scenarios, studies) point into YAML in their
// error messages.
#ifndef TPUSIM_SIM_ARCH_YAML_POSITION_H_
#define TPUSIM_SIM_ARCH_YAML_POSITION_H_

#include <yaml-cpp/yaml.h>

#include <string>
#include <string_view>

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
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return "nothing";
  }
  return "nothing";  // unreachable: every NodeType returns above
}

/// The one YAML document of `text`, as YAML::Load gives it. Throws
/// YAML::ParserException, positioned, for what YAML::Load would pass over in
/// silence or never return from: a NUL byte (yaml-cpp ends the stream there
/// and drops the rest), a second document (after `---` or `...`), and a
/// token no node can start with, such as a leading ',' (yaml-cpp 0.7's
/// LoadAll then makes empty documents without end); also collections nested
/// deeper than yaml-cpp's limit, which it reports only as "bad file".
YAML::Node LoadOneDocument(const std::string& text);

}  // namespace tpusim::arch

#endif  // TPUSIM_SIM_ARCH_YAML_POSITION_H_
