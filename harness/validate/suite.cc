#include "harness/validate/suite.h"

#include <filesystem>
#include <set>

#include "harness/suite/yaml_reader.h"
#include "sim/arch/yaml_position.h"
#include "sim/base/file.h"
#include "sim/base/units.h"

namespace tpusim::harness {
namespace {

/// "12%" as a number of percent.
StatusOr<double> Percent(const YamlReader& reader, const YAML::Node& node,
                         const std::string& path) {
  if (node.IsScalar()) {
    const StatusOr<double> percent = ParsePercentage(node.Scalar());
    if (percent.ok() && *percent > 0) return percent;
  }
  return reader.Error(node, path,
                      "expected a positive percentage such as '8%', got " + YamlReader::Got(node));
}

StatusOr<ValidationSuite> ParseValidationSuite(const YamlReader& reader, const YAML::Node& root,
                                               const std::string& path) {
  TPUSIM_RETURN_IF_ERROR(reader.Keys(root, "", {"families"}));
  const YAML::Node families = root["families"];
  if (!families.IsSequence() || families.size() == 0) {
    return reader.Error(families, "families", "expected a non-empty list of families");
  }
  ValidationSuite suite;
  suite.path = path;
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  std::set<std::string> names;
  for (size_t i = 0; i < families.size(); ++i) {
    const YAML::Node f = families[i];
    const std::string at = "families[" + std::to_string(i) + "]";
    TPUSIM_RETURN_IF_ERROR(
        reader.Keys(f, at, {"name", "file", "chip", "description", "max_mape", "target_mape"}));
    for (const char* required : {"name", "file", "chip", "max_mape", "target_mape"}) {
      if (!f[required]) return reader.Error(f, at, std::string("missing key '") + required + "'");
    }
    ValidationFamily family;
    TPUSIM_ASSIGN_OR_RETURN(family.name, reader.String(f["name"], at + ".name"));
    if (!names.insert(family.name).second) {
      return reader.Error(f["name"], at + ".name", "duplicate family " + Quote(family.name));
    }
    TPUSIM_ASSIGN_OR_RETURN(const std::string file, reader.String(f["file"], at + ".file"));
    family.file = (dir / file).string();
    TPUSIM_ASSIGN_OR_RETURN(family.chip, reader.String(f["chip"], at + ".chip"));
    if (f["description"]) {
      TPUSIM_ASSIGN_OR_RETURN(family.description,
                              reader.String(f["description"], at + ".description"));
    }
    TPUSIM_ASSIGN_OR_RETURN(family.max_mape, Percent(reader, f["max_mape"], at + ".max_mape"));
    TPUSIM_ASSIGN_OR_RETURN(family.target_mape,
                            Percent(reader, f["target_mape"], at + ".target_mape"));
    suite.families.push_back(std::move(family));
  }
  return suite;
}

}  // namespace

StatusOr<ValidationSuite> LoadValidationSuite(const std::string& path) {
  TPUSIM_ASSIGN_OR_RETURN(const std::string text, ReadFile(path));
  const YamlReader reader(path);
  YAML::Node root;
  try {
    root = arch::LoadOneDocument(text);
  } catch (const YAML::Exception& e) {
    return InvalidArgument(reader.Where(e.mark) + ": error: " + e.msg);
  }
  return reader.Finish(ParseValidationSuite(reader, root, path));
}

}  // namespace tpusim::harness
