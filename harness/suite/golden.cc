#include "harness/suite/golden.h"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "harness/run/metrics.h"
#include "harness/run/program_io.h"
#include "harness/version.h"
#include "sim/arch/preset_loader.h"
#include "sim/base/file.h"
#include "sim/base/fingerprint.h"
#include "sim/base/json_text.h"
#include "sim/value/npy.h"

namespace tpusim::harness {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

constexpr char kManifest[] = "metrics.json";

}  // namespace

GoldenStamp StampOf(const Scenario& scenario) {
  GoldenStamp stamp;
  stamp.version = std::string(kVersion);
  if (scenario.resolved_chip.has_value())
    stamp.chip_hash = Hex16(arch::ConfigHash(*scenario.resolved_chip));
  stamp.topology = scenario.topology;
  return stamp;
}

std::string GoldenDir(const std::string& root, const std::string& scenario_name) {
  return (fs::path(root) / scenario_name).string();
}

StatusOr<std::optional<Golden>> ReadGolden(const std::string& dir) {
  const std::string manifest_path = (fs::path(dir) / kManifest).string();
  std::error_code ec;
  if (!fs::exists(manifest_path, ec)) return std::optional<Golden>();
  TPUSIM_ASSIGN_OR_RETURN(const std::string text, ReadFile(manifest_path));
  Golden golden;
  try {
    const ordered_json json = ordered_json::parse(text);
    golden.stamp.version = json.at("tpusim_version").get<std::string>();
    golden.stamp.chip_hash = json.at("chip_hash").get<std::string>();
    golden.stamp.topology = json.at("topology").get<std::string>();
    golden.metrics = MetricsFromJson(json.at("metrics"));
    for (const ordered_json& entry : json.at("outputs")) {
      const std::string name = entry.at("name").get<std::string>();
      if (name.empty() || name.find("..") != std::string::npos || name[0] == '/') {
        return InvalidArgument(manifest_path + ": error: bad output name " + Quote(name));
      }
      const std::string file = (fs::path(dir) / (name + ".npy")).string();
      TPUSIM_ASSIGN_OR_RETURN(value::Literal literal, value::ReadNpy(file));
      const std::string checksum = Hex16(Summarize(name, literal).checksum);
      if (checksum != entry.at("checksum").get<std::string>()) {
        return InvalidArgument(file + ": error: checksum " + checksum + " differs from the " +
                               entry.at("checksum").get<std::string>() + " " + manifest_path +
                               " records; run --update-golden");
      }
      golden.outputs.push_back({name, std::move(literal)});
    }
    if (json.contains("module")) {
      const std::string file = (fs::path(dir) / kGoldenModuleFile).string();
      TPUSIM_ASSIGN_OR_RETURN(golden.module_text, ReadFile(file));
      const std::string checksum = Hex16(Fnv1a(golden.module_text));
      if (checksum != json.at("module").at("checksum").get<std::string>()) {
        return InvalidArgument(file + ": error: checksum " + checksum + " differs from the " +
                               json.at("module").at("checksum").get<std::string>() + " " +
                               manifest_path + " records; run --update-golden");
      }
    }
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(manifest_path + ": error: malformed golden manifest: " + e.what());
  }
  return std::optional<Golden>(std::move(golden));
}

Status WriteGolden(const std::string& dir, const Golden& golden) {
  ordered_json json;
  json["tpusim_version"] = golden.stamp.version;
  json["chip_hash"] = golden.stamp.chip_hash;
  json["topology"] = golden.stamp.topology;
  json["metrics"] = MetricsJson(golden.metrics);
  json["outputs"] = ordered_json::array();
  std::set<std::string> files;
  for (const GoldenOutput& output : golden.outputs) {
    const fs::path file = fs::path(dir) / (output.name + ".npy");
    std::error_code ec;
    fs::create_directories(file.parent_path(), ec);
    if (ec)
      return InvalidArgument(file.parent_path().string() +
                             ": error: cannot create directory: " + ec.message());
    TPUSIM_RETURN_IF_ERROR(value::WriteNpy(file.string(), output.value));
    files.insert(file.lexically_normal().string());
    ordered_json entry;
    entry["name"] = output.name;
    entry["shape"] = output.value.shape().ToString();
    entry["checksum"] = Hex16(Summarize(output.name, output.value).checksum);
    json["outputs"].push_back(std::move(entry));
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (!golden.module_text.empty()) {
    const fs::path file = fs::path(dir) / kGoldenModuleFile;
    TPUSIM_RETURN_IF_ERROR(WriteFileAtomically(file.string(), golden.module_text));
    files.insert(file.lexically_normal().string());
    json["module"] = {{"file", kGoldenModuleFile},
                      {"checksum", Hex16(Fnv1a(golden.module_text))}};
  }
  TPUSIM_RETURN_IF_ERROR(
      WriteFileAtomically((fs::path(dir) / kManifest).string(), JsonText(json, 2) + "\n"));
  // Outputs the module no longer has would otherwise linger beside the
  // manifest, and so would the temporary files of an update that was killed.
  std::vector<fs::path> stale;
  for (const auto& entry : fs::recursive_directory_iterator(dir, ec)) {
    const fs::path path = entry.path().lexically_normal();
    const std::string name = path.filename().string();
    const bool leftover = name.starts_with(".") && name.find(".tmp") != std::string::npos;
    if (entry.is_regular_file() &&
        (leftover || ((path.extension() == ".npy" || name == kGoldenModuleFile) &&
                      !files.count(path.string())))) {
      stale.push_back(path);
    }
  }
  for (const fs::path& path : stale) fs::remove(path, ec);
  return Status::Ok();
}

}  // namespace tpusim::harness
