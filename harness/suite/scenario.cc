#include "harness/suite/scenario.h"

#include <yaml-cpp/yaml.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <system_error>
#include <utility>

#include "harness/run/dump_dir.h"
#include "harness/suite/yaml_reader.h"
#include "sim/arch/preset_loader.h"
#include "sim/arch/topology_config.h"
#include "sim/arch/yaml_position.h"
#include "sim/base/file.h"
#include "sim/base/printable.h"
#include "sim/base/units.h"
#include "sim/hlo/opcode.h"
#include "sim/hlo/primitive_type.h"
#include "sim/ici/interconnect.h"
#include "sim/ici/topology.h"

namespace tpusim::harness {
namespace {

namespace fs = std::filesystem;

using Reader = YamlReader;

/// A path written in the scenario, relative to the scenario's directory.
std::string Resolve(const std::string& scenario_file, const std::string& path) {
  if (fs::path(path).is_absolute()) return path;
  return (fs::path(scenario_file).parent_path() / path).lexically_normal().string();
}

/// Calls `read(key, value, path)` for each entry of the mapping at `path`
/// (e.g. per_type, per_output); an error when it is not a mapping.
template <typename Read>
Status ForEachEntry(const Reader& r, const YAML::Node& node, const std::string& path,
                    const Read& read) {
  if (!node.IsMap()) return r.Error(node, path, "expected a mapping, got " + Reader::Got(node));
  for (const auto& entry : node) {
    const std::string key = entry.first.Scalar();
    TPUSIM_RETURN_IF_ERROR(read(entry.first, entry.second, path + "." + key));
  }
  return Status::Ok();
}

StatusOr<value::ErrorSpec> ReadTolerance(const Reader& r, const YAML::Node& node,
                                         const std::string& path, bool allow_golden) {
  std::vector<std::string_view> keys = {"exact", "atol", "rtol", "ulp"};
  if (allow_golden) {
    keys.push_back("golden");
    keys.push_back("per_type");
    keys.push_back("per_output");
  }
  TPUSIM_RETURN_IF_ERROR(r.Keys(node, path, keys));
  value::ErrorSpec t;
  if (node["exact"]) {
    TPUSIM_ASSIGN_OR_RETURN(t.exact, r.Bool(node["exact"], Reader::Join(path, "exact")));
  }
  if (node["atol"]) {
    TPUSIM_ASSIGN_OR_RETURN(t.atol, r.NonNegative(node["atol"], Reader::Join(path, "atol")));
  }
  if (node["rtol"]) {
    TPUSIM_ASSIGN_OR_RETURN(t.rtol, r.NonNegative(node["rtol"], Reader::Join(path, "rtol")));
  }
  if (node["ulp"]) {
    TPUSIM_ASSIGN_OR_RETURN(const int64_t ulp, r.Integer(node["ulp"], Reader::Join(path, "ulp"), 0));
    t.ulp = static_cast<uint64_t>(ulp);
  }
  const bool tolerant = node["atol"] || node["rtol"] || node["ulp"];
  if (t.exact && tolerant) {
    return r.Error(node["exact"], Reader::Join(path, "exact"),
                   "exact: true cannot be combined with atol, rtol or ulp");
  }
  t.exact = !tolerant;  // nothing set means exact
  return t;
}

/// A metric check: {golden: true, tolerance: 2%, min: X, max: Y}.
StatusOr<MetricCheck> ReadMetric(const Reader& r, const YAML::Node& node, const std::string& path) {
  TPUSIM_RETURN_IF_ERROR(r.Keys(node, path, {"golden", "tolerance", "min", "max"}));
  MetricCheck check;
  if (node["golden"]) {
    TPUSIM_ASSIGN_OR_RETURN(check.golden, r.Bool(node["golden"], path + ".golden"));
  }
  if (node["tolerance"]) {
    const YAML::Node t = node["tolerance"];
    const StatusOr<double> percent =
        t.IsScalar() ? ParsePercentage(t.Scalar()) : InvalidArgument("not a scalar");
    if (!percent.ok()) {
      return r.Error(t, path + ".tolerance",
                     "expected a percentage like 2%, got " + Reader::Got(t));
    }
    if (!check.golden) {
      return r.Error(t, path + ".tolerance", "a tolerance needs golden: true");
    }
    check.tolerance = *percent / 100;
  }
  if (node["min"]) {
    TPUSIM_ASSIGN_OR_RETURN(check.min, r.Number(node["min"], path + ".min"));
  }
  if (node["max"]) {
    TPUSIM_ASSIGN_OR_RETURN(check.max, r.Number(node["max"], path + ".max"));
  }
  if (check.min && check.max && *check.min > *check.max) {
    return r.Error(node["min"], path + ".min", "min is larger than max");
  }
  if (!check.golden && !check.min && !check.max) {
    return r.Error(node, path, "nothing to check: give golden: true, min or max");
  }
  return check;
}

StatusOr<std::vector<OpMatcher>> ReadOps(const Reader& r, const YAML::Node& node,
                                         const std::string& path) {
  if (!node.IsSequence()) {
    return r.Error(node, path, "expected a list of opcodes, got " + Reader::Got(node));
  }
  std::vector<OpMatcher> ops;
  for (size_t i = 0; i < node.size(); ++i) {
    const std::string item_path = path + "[" + std::to_string(i) + "]";
    const YAML::Node item = node[i];
    OpMatcher op;
    if (item.IsMap()) {
      TPUSIM_RETURN_IF_ERROR(r.Keys(item, item_path, {"op", "scope", "minor_dims"}));
      if (!item["op"]) return r.Error(item, item_path, "missing key `op`");
      if (item["scope"]) {
        TPUSIM_ASSIGN_OR_RETURN(const std::string scope,
                                r.String(item["scope"], item_path + ".scope"));
        if (scope != "entry" && scope != "any") {
          return r.Error(item["scope"], item_path + ".scope",
                         "expected entry or any, got " + Reader::Got(item["scope"]));
        }
        op.entry_only = scope == "entry";
      }
    }
    // (YAML::Node's operator= writes through to the node, so no reassignment.)
    const YAML::Node op_node = item.IsMap() ? item["op"] : item;
    TPUSIM_ASSIGN_OR_RETURN(op.opcode, r.String(op_node, item_path));
    if (!hlo::HloOpcodeFromName(op.opcode).has_value()) {
      return r.Error(op_node, item_path, "unknown HLO opcode " + Reader::Got(op_node));
    }
    if (item.IsMap() && item["minor_dims"]) {
      TPUSIM_ASSIGN_OR_RETURN(op.minor_dims, r.Bool(item["minor_dims"], item_path + ".minor_dims"));
      if (op.opcode != "transpose") {
        return r.Error(item["minor_dims"], item_path + ".minor_dims",
                       "minor_dims applies to transpose only, not " + op.opcode);
      }
    }
    ops.push_back(std::move(op));
  }
  return ops;
}

Status ReadChecks(const Reader& r, const YAML::Node& node, Scenario& s) {
  std::vector<std::string_view> keys = {"outputs", "forbid_ops", "forbid_new_ops", "require_ops"};
  for (const std::string& m : MetricNames()) keys.push_back(m);
  TPUSIM_RETURN_IF_ERROR(r.Keys(node, "checks", keys));
  if (const YAML::Node outputs = node["outputs"]) {
    TPUSIM_ASSIGN_OR_RETURN(s.outputs.tolerance.all,
                            ReadTolerance(r, outputs, "checks.outputs", true));
    if (const YAML::Node per = outputs["per_type"]) {
      TPUSIM_RETURN_IF_ERROR(ForEachEntry(
          r, per, "checks.outputs.per_type",
          [&](const YAML::Node& key, const YAML::Node& value, const std::string& path) -> Status {
            const std::string name = key.Scalar();
            const std::optional<hlo::PrimitiveType> type = hlo::PrimitiveTypeFromName(name);
            if (!type.has_value() || !hlo::IsArrayType(*type)) {
              return r.Error(
                  key, path,
                  "expected an element type such as f32, bf16 or s32, got " + Quote(name));
            }
            TPUSIM_ASSIGN_OR_RETURN(s.outputs.tolerance.by_type[*type],
                                    ReadTolerance(r, value, path, false));
            return Status::Ok();
          }));
    }
    if (outputs["golden"]) {
      TPUSIM_ASSIGN_OR_RETURN(s.outputs.golden, r.Bool(outputs["golden"], "checks.outputs.golden"));
    }
    if (const YAML::Node per = outputs["per_output"]) {
      TPUSIM_RETURN_IF_ERROR(ForEachEntry(
          r, per, "checks.outputs.per_output",
          [&](const YAML::Node& key, const YAML::Node& value, const std::string& path) -> Status {
            const std::string name = key.Scalar();
            TPUSIM_ASSIGN_OR_RETURN(s.outputs.per_output[name], ReadTolerance(r, value, path, false));
            s.outputs.per_output_where[name] = r.Where(key);
            return Status::Ok();
          }));
    }
    if (!s.outputs.golden) {
      return r.Error(outputs, "checks.outputs",
                     "outputs are compared with their golden: give "
                     "golden: true");
    }
    if (s.mode == RunMode::kTiming) {
      return r.Error(outputs, "checks.outputs", "mode timing computes no outputs");
    }
  }
  for (const std::string& metric : MetricNames()) {
    if (const YAML::Node m = node[metric]) {
      TPUSIM_ASSIGN_OR_RETURN(s.metrics[metric], ReadMetric(r, m, "checks." + metric));
      if (s.mode == RunMode::kValues) {
        return r.Error(m, "checks." + metric, "mode values does not time the module");
      }
    }
  }
  if (node["forbid_ops"]) {
    TPUSIM_ASSIGN_OR_RETURN(s.forbid_ops, ReadOps(r, node["forbid_ops"], "checks.forbid_ops"));
  }
  if (node["forbid_new_ops"]) {
    TPUSIM_ASSIGN_OR_RETURN(s.forbid_new_ops,
                            ReadOps(r, node["forbid_new_ops"], "checks.forbid_new_ops"));
  }
  if (node["require_ops"]) {
    TPUSIM_ASSIGN_OR_RETURN(s.require_ops, ReadOps(r, node["require_ops"], "checks.require_ops"));
  }
  return Status::Ok();
}

Status ReadInputs(const Reader& r, const YAML::Node& node, Scenario& s) {
  TPUSIM_RETURN_IF_ERROR(r.Keys(node, "inputs", {"seed", "distribution", "dir"}));
  if (node["seed"] && node["dir"]) {
    return r.Error(node["dir"], "inputs.dir", "give either seed or dir, not both");
  }
  if (node["seed"]) {
    TPUSIM_ASSIGN_OR_RETURN(const int64_t seed, r.Integer(node["seed"], "inputs.seed", 0));
    s.seed = static_cast<uint64_t>(seed);
  }
  if (node["distribution"]) {
    TPUSIM_ASSIGN_OR_RETURN(const std::string d,
                            r.String(node["distribution"], "inputs.distribution"));
    if (d != "normal") {
      return r.Error(node["distribution"], "inputs.distribution",
                     "only normal is supported (floats standard normal, integers as tpusim "
                     "exec's seeded inputs), got " +
                         Reader::Got(node["distribution"]));
    }
    if (node["dir"])
      return r.Error(node["distribution"], "inputs.distribution",
                     "a distribution applies to seeded inputs, not dir");
  }
  if (node["dir"]) {
    TPUSIM_ASSIGN_OR_RETURN(s.inputs_dir, r.String(node["dir"], "inputs.dir"));
    s.inputs_dir = Resolve(r.file(), s.inputs_dir);
    s.inputs_where = r.Where(node["dir"]);
  }
  if (!s.seed && s.inputs_dir.empty()) s.seed = 0;
  return Status::Ok();
}

/// `placement` at `path`: "0-7" and "0,2,4,6" (tpusim exec --placement), or
/// a list of network device numbers.
StatusOr<std::vector<int64_t>> ReadPlacement(const Reader& r, const YAML::Node& node,
                                             const std::string& path) {
  if (node.IsScalar()) {
    StatusOr<std::vector<int64_t>> placement = ParsePlacement(node.Scalar(), "got");
    if (!placement.ok()) return r.Error(node, path, std::string(placement.status().message()));
    return placement;
  }
  if (!node.IsSequence() || node.size() == 0) {
    return r.Error(node, path,
                   "expected network devices such as 0-7, 0,2,4,6 or a list of device numbers, "
                   "got " +
                       Reader::Got(node));
  }
  std::vector<int64_t> placement;
  for (size_t i = 0; i < node.size(); ++i) {
    TPUSIM_ASSIGN_OR_RETURN(placement.emplace_back(),
                            r.Integer(node[i], path + "[" + std::to_string(i) + "]", 0));
  }
  return placement;
}

/// `other_jobs`: a list of {module, placement}; empty (a study's point
/// without them) is none.
Status ReadOtherJobs(const Reader& r, const YAML::Node& node, Scenario& s) {
  if (!node.IsSequence()) {
    return r.Error(
        node, "other_jobs",
        "expected a list of {module: PATH, placement: DEVICES}, got " + Reader::Got(node));
  }
  for (size_t i = 0; i < node.size(); ++i) {
    const std::string path = "other_jobs[" + std::to_string(i) + "]";
    const YAML::Node entry = node[i];
    if (!entry.IsMap()) {
      return r.Error(entry, path,
                     "expected {module: PATH, placement: DEVICES}, got " + Reader::Got(entry));
    }
    TPUSIM_RETURN_IF_ERROR(r.Keys(entry, path, {"module", "placement"}));
    if (!entry["module"]) return r.Error(entry, path + ".module", "missing required key");
    ScenarioOtherJob& job = s.other_jobs.emplace_back();
    TPUSIM_ASSIGN_OR_RETURN(job.module, r.String(entry["module"], path + ".module"));
    job.module = Resolve(r.file(), job.module);
    job.module_where = r.Where(entry["module"]) + ": error: key path `" + path + ".module`";
    job.where = r.Where(entry) + ": error: key path `" + path + "`";
    if (entry["placement"]) {
      TPUSIM_ASSIGN_OR_RETURN(job.placement,
                              ReadPlacement(r, entry["placement"], path + ".placement"));
    }
  }
  return Status::Ok();
}

Status ReadChip(const Reader& r, const YAML::Node& node, Scenario& s) {
  if (node.IsScalar()) {
    TPUSIM_ASSIGN_OR_RETURN(s.chip, r.String(node, "chip"));
    s.chip_where = r.Where(node);
    return Status::Ok();
  }
  TPUSIM_RETURN_IF_ERROR(r.Keys(node, "chip", {"preset", "overrides"}));
  if (!node["preset"]) return r.Error(node, "chip", "missing key `preset`");
  TPUSIM_ASSIGN_OR_RETURN(s.chip, r.String(node["preset"], "chip.preset"));
  s.chip_where = r.Where(node["preset"]);
  if (const YAML::Node o = node["overrides"]) {
    if (!o.IsMap()) {
      return r.Error(
          o, "chip.overrides",
          "expected a mapping of preset fields (hbm.bandwidth: 1TB/s), got " + Reader::Got(o));
    }
    for (const auto& entry : o) {
      const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : "?";
      const std::string path = "chip.overrides." + key;
      if (!entry.first.IsScalar()) return r.Error(entry.first, path, "keys must be plain names");
      if (!entry.second.IsScalar()) {
        return r.Error(entry.second, path,
                       "expected a single value, got " + Reader::Got(entry.second));
      }
      s.overrides.push_back(key + "=" + entry.second.Scalar());
      s.override_where.push_back(r.Where(entry.first) + ": error: key path `" + path + "`");
    }
  }
  return Status::Ok();
}

StatusOr<Scenario> ParseRoot(const Reader& r, const YAML::Node& root) {
  TPUSIM_RETURN_IF_ERROR(r.Keys(root, "",
                                {"name",
                                 "module",
                                 "chip",
                                 "topology",
                                 "device_assignment",
                                 "algorithm",
                                 "placement",
                                 "other_jobs",
                                 "golden",
                                 "inputs",
                                 "mode",
                                 "numerics",
                                 "max_while_iterations",
                                 "max_loop_work",
                                 "max_executed_instructions",
                                 "trip_counts",
                                 "default_trip_count",
                                 "branch",
                                 "branches",
                                 "max_memory",
                                 "timeout",
                                 "require",
                                 "checks",
                                 "expect"}));
  Scenario s;
  s.file = r.file();
  s.name = fs::path(r.file()).stem().string();
  if (root["name"]) {
    TPUSIM_ASSIGN_OR_RETURN(s.name, r.String(root["name"], "name"));
  }
  for (char c : s.name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) {
      return r.Error(root["name"] ? root["name"] : root, "name",
                     "a name may hold letters, digits, '-', '_' and '.' only (it names the "
                     "golden directory), got " +
                         Quote(s.name) +
                         (root["name"] ? "" : " from the file name; give name: NAME"));
    }
  }
  if (s.name.empty() || s.name[0] == '.') return r.Error(root, "name", "must not start with '.'");
  s.golden = s.name;
  if (root["golden"]) {
    TPUSIM_ASSIGN_OR_RETURN(s.golden, r.String(root["golden"], "golden"));
    if (s.golden.empty() || s.golden[0] == '.' || s.golden.find('/') != std::string::npos) {
      return r.Error(root["golden"], "golden", "expected a scenario name, got " + Quote(s.golden));
    }
  }
  if (!root["module"]) return r.Error(root, "module", "missing required key");
  TPUSIM_ASSIGN_OR_RETURN(s.module, r.String(root["module"], "module"));
  s.module = Resolve(r.file(), s.module);
  s.module_where = r.Where(root["module"]);
  if (root["chip"]) TPUSIM_RETURN_IF_ERROR(ReadChip(r, root["chip"], s));
  if (root["topology"]) {
    // The interconnect's own parser: every kind, fault and link override,
    // with FILE:LINE:COL and key path (docs/interconnect.md).
    TPUSIM_ASSIGN_OR_RETURN(s.topology_config, arch::ParseTopologyYaml(root["topology"], r.file()));
  }
  if (const YAML::Node da = root["device_assignment"]) {
    if (!s.topology_config.has_value()) {
      return r.Error(da, "device_assignment", "needs a topology to assign devices to");
    }
    if (!da.IsSequence() || da.size() == 0) {
      return r.Error(da, "device_assignment",
                     "expected a non-empty list of chip ids, got " + Reader::Got(da));
    }
    // Each chip holds devices_per_chip devices: the topology's key, else the
    // chip preset's (Topology::Build checks those once the chip resolves
    // them), else 1.
    const std::optional<int64_t> per_chip = s.chip.empty()
                                                ? s.topology_config->devices_per_chip.value_or(1)
                                                : s.topology_config->devices_per_chip;
    std::map<int64_t, int64_t> held;
    // Topology::Build's errors about the assignment point here.
    std::map<std::string, std::string>& where = s.topology_config->where;
    where["device_assignment"] = r.Where(da) + ": error: key path `device_assignment`";
    for (size_t i = 0; i < da.size(); ++i) {
      const std::string path = "device_assignment[" + std::to_string(i) + "]";
      where[path] = r.Where(da[i]) + ": error: key path `" + path + "`";
      TPUSIM_ASSIGN_OR_RETURN(const int64_t id, r.Integer(da[i], path, 0));
      if (per_chip.has_value() && ++held[id] > *per_chip) {
        return r.Error(da[i], path,
                       "chip " + std::to_string(id) +
                           (*per_chip == 1 ? " is assigned twice"
                                           : " is assigned more than " + std::to_string(*per_chip) +
                                                 " times (devices_per_chip)"));
      }
      s.topology_config->device_assignment.push_back(id);
    }
  }
  if (root["algorithm"]) {
    TPUSIM_ASSIGN_OR_RETURN(s.algorithm,
                            r.Parsed(root["algorithm"], "algorithm", ici::ParseAlgorithm));
    if (!s.topology_config.has_value()) {
      return r.Error(root["algorithm"], "algorithm", "needs a topology to run collectives on");
    }
  }
  for (const char* key : {"placement", "other_jobs"}) {
    if (root[key] && !s.topology_config.has_value()) {
      return r.Error(root[key], key, "needs a topology to place jobs on");
    }
  }
  if (const YAML::Node placement = root["placement"]) {
    TPUSIM_ASSIGN_OR_RETURN(s.placement, ReadPlacement(r, placement, "placement"));
    s.placement_where = r.Where(placement) + ": error: key path `placement`";
  }
  if (root["other_jobs"]) TPUSIM_RETURN_IF_ERROR(ReadOtherJobs(r, root["other_jobs"], s));
  if (root["mode"]) {
    TPUSIM_ASSIGN_OR_RETURN(s.mode, r.Parsed(root["mode"], "mode", ParseRunMode));
  }
  if (s.mode != RunMode::kValues && s.chip.empty() && !r.HasUnknownKeys()) {
    return r.Error(root["mode"] ? root["mode"] : root, "chip",
                   "mode " + std::string(RunModeName(s.mode)) +
                       " times the module: give chip: PRESET (or mode: values)");
  }
  if (root["numerics"]) {
    TPUSIM_ASSIGN_OR_RETURN(s.numerics, r.Parsed(root["numerics"], "numerics", ParseNumerics));
  }
  for (const auto& [key, limit] : {std::pair{"max_while_iterations", &s.max_while_iterations},
                                   std::pair{"max_loop_work", &s.max_loop_work},
                                   std::pair{"max_executed_instructions",
                                             &s.max_executed_instructions}}) {
    if (const YAML::Node node = root[key]) {
      TPUSIM_ASSIGN_OR_RETURN(*limit, r.Integer(node, key, 1));
    }
  }
  for (const char* key :
       {"trip_counts", "default_trip_count", "branch", "branches", "placement", "other_jobs"}) {
    if (root[key] && s.mode == RunMode::kValues) {
      return r.Error(root[key], key, "mode values does not time the module");
    }
  }
  for (const auto& named :
       {std::pair{"trip_counts", &s.trip_counts}, std::pair{"branches", &s.branches}}) {
    const char* key = named.first;
    std::map<std::string, NamedCount>* counts = named.second;  // a lambda captures it below
    const YAML::Node node = root[key];
    if (!node) continue;
    TPUSIM_RETURN_IF_ERROR(ForEachEntry(
        r, node, key,
        [&](const YAML::Node& name, const YAML::Node& value, const std::string& path) -> Status {
          TPUSIM_ASSIGN_OR_RETURN(const int64_t count, r.Integer(value, path, 0));
          (*counts)[name.Scalar()] = {count, r.Where(name) + ": error: key path `" + path + "`"};
          return Status::Ok();
        }));
  }
  if (const YAML::Node count = root["default_trip_count"]) {
    TPUSIM_ASSIGN_OR_RETURN(s.default_trip_count, r.Integer(count, "default_trip_count", 0));
  }
  if (const YAML::Node branch = root["branch"]) {
    TPUSIM_ASSIGN_OR_RETURN(s.branch, r.Integer(branch, "branch", 0));
  }
  if (const YAML::Node m = root["max_memory"]) {
    StatusOr<Bytes> bytes =
        m.IsScalar() ? ParseBytes(m.Scalar()) : InvalidArgument("got " + Reader::Got(m));
    if (!bytes.ok() || bytes->value() <= 0) {
      return r.Error(m, "max_memory",
                     "expected a positive byte count like 8GiB or 512MB, got " + Reader::Got(m));
    }
    s.max_memory = bytes->value();
  }
  if (const YAML::Node t = root["timeout"]) {
    StatusOr<double> seconds =
        t.IsScalar() ? ParseSeconds(t.Scalar()) : InvalidArgument("got " + Reader::Got(t));
    if (!seconds.ok() || *seconds <= 0) {
      return r.Error(t, "timeout",
                     "expected a positive duration like 30s or 500ms, got " + Reader::Got(t));
    }
    s.timeout_seconds = *seconds;
  }
  if (const YAML::Node require = root["require"]) {
    if (!require.IsSequence()) {
      return r.Error(require, "require", "expected a list such as [values], got " +
                                             Reader::Got(require));
    }
    for (size_t i = 0; i < require.size(); ++i) {
      const std::string path = "require[" + std::to_string(i) + "]";
      TPUSIM_ASSIGN_OR_RETURN(const std::string what, r.String(require[i], path));
      if (what != "values") return r.Error(require[i], path, "expected values, got " + Quote(what));
      if (s.mode == RunMode::kTiming) {
        return r.Error(require[i], path, "mode timing computes no values");
      }
      s.require_values = true;
    }
  }
  if (root["inputs"]) {
    TPUSIM_RETURN_IF_ERROR(ReadInputs(r, root["inputs"], s));
  } else {
    s.seed = 0;
  }
  if (root["checks"]) TPUSIM_RETURN_IF_ERROR(ReadChecks(r, root["checks"], s));
  if (const YAML::Node e = root["expect"]) {
    TPUSIM_RETURN_IF_ERROR(r.Keys(e, "expect", {"fail", "reason"}));
    if (!e["fail"]) return r.Error(e, "expect.fail", "missing required key");
    TPUSIM_ASSIGN_OR_RETURN(s.expect_fail, r.Bool(e["fail"], "expect.fail"));
    if (e["reason"]) {
      TPUSIM_ASSIGN_OR_RETURN(s.expect_reason, r.String(e["reason"], "expect.reason"));
      if (!s.expect_fail) return r.Error(e["reason"], "expect.reason", "a reason needs fail: true");
    }
  }
  return s;
}

/// "2.5" followed by `suffix`-free text: the number, or an error.
StatusOr<double> ParseNumberPrefix(std::string_view text, std::string_view& rest) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end == text.data() || !std::isfinite(value) || value < 0) {
    return InvalidArgument("got " + Quote(text));
  }
  rest = std::string_view(end, static_cast<size_t>(text.data() + text.size() - end));
  return value;
}

}  // namespace

const std::vector<std::string>& MetricNames() {
  static const std::vector<std::string> kNames = {
#define V(name) #name,
#include "harness/run/metrics.def"
#undef V
  };
  return kNames;
}

StatusOr<double> ParseSeconds(std::string_view text) {
  std::string_view rest;
  TPUSIM_ASSIGN_OR_RETURN(const double value, ParseNumberPrefix(text, rest));
  if (rest.empty() || rest == "s") return value;
  if (rest == "ms") return value / 1000;
  if (rest == "min") return value * 60;
  return InvalidArgument("got " + Quote(text));
}

StatusOr<Scenario> ParseScenario(std::string_view text, const std::string& file) {
  const Reader reader(file);
  YAML::Node root;
  try {
    root = arch::LoadOneDocument(std::string(text));
    if (!root.IsMap()) {
      return InvalidArgument(reader.Where(root) +
                             ": error: a scenario must be a mapping of keys, got " +
                             std::string(arch::NodeKind(root)));
    }
    return reader.Finish(ParseRoot(reader, root));
  } catch (const YAML::Exception& e) {
    return InvalidArgument(reader.Where(e.mark) + ": error: " + e.msg);
  }
}

namespace {

/// `module` a module file, or DIR/NAME with DIR an XLA dump directory: its
/// after-optimizations module named NAME (a shell pattern), whatever its
/// module_NNNN number, which replaces it. `where` starts errors.
Status ResolveModule(std::string& module, const std::string& where) {
  std::error_code ec;
  if (fs::is_regular_file(module, ec)) return Status::Ok();
  // A device or a FIFO is there, only not a file: "no such file" would mislead.
  const fs::file_status status = fs::status(module, ec);
  if (fs::exists(status) && !fs::is_directory(status)) {
    return InvalidArgument(Printable(where + module + ": not a regular file"));
  }
  const fs::path path(module);
  const std::string dir = path.parent_path().string();
  if (!fs::is_directory(dir, ec) || !ListDumpModules(dir).ok()) {
    // A directory where the module goes is named as one.
    return InvalidArgument(
        Printable(where + module +
                  (fs::is_directory(status) ? ": a directory, not an HLO file (or DUMP_DIR/NAME)"
                                            : ": no such file")));
  }
  StatusOr<std::string> found = FindDumpModule(dir, path.filename().string());
  if (!found.ok()) return InvalidArgument(Printable(where + std::string(found.status().message())));
  module = *std::move(found);
  return Status::Ok();
}

/// What the golden stamp adds to the topology for a module that shares its
/// network: " placement 0-7, other job b.hlo on 8-15" (the file names as
/// written, the placements as given); "" when it has it alone.
std::string SharingText(const Scenario& scenario) {
  std::string text;
  if (!scenario.placement.empty()) text += " placement " + PlacementText(scenario.placement);
  for (const ScenarioOtherJob& job : scenario.other_jobs) {
    text += (text.empty() ? " " : ", ") + std::string("other job ") +
            fs::path(job.module).filename().string();
    if (!job.placement.empty()) text += " on " + PlacementText(job.placement);
  }
  return text;
}

}  // namespace

Status ResolveScenario(Scenario& scenario, const std::string& models_dir) {
  std::error_code ec;
  const std::string sharing = SharingText(scenario);  // the paths as the scenario wrote them
  TPUSIM_RETURN_IF_ERROR(
      ResolveModule(scenario.module, scenario.module_where + ": error: key path `module`: "));
  for (ScenarioOtherJob& job : scenario.other_jobs) {
    TPUSIM_RETURN_IF_ERROR(ResolveModule(job.module, job.module_where + ": "));
  }
  if (!scenario.inputs_dir.empty() && !fs::is_directory(scenario.inputs_dir, ec)) {
    return InvalidArgument(Printable(scenario.inputs_where + ": error: key path `inputs.dir`: " +
                                     scenario.inputs_dir + ": no such directory"));
  }
  if (scenario.chip.empty()) return Status::Ok();
  std::string chip = scenario.chip;
  if (chip.find('/') != std::string::npos || chip.ends_with(".yaml")) {
    chip = Resolve(scenario.file, chip);
  }
  StatusOr<arch::ChipConfig> config = arch::LoadChipPreset(chip, models_dir, scenario.overrides);
  if (!config.ok()) {
    const std::string& message = config.status().message();
    for (size_t i = 0; i < scenario.overrides.size(); ++i) {
      // The preset loader's messages are Printable, and so is what they quote.
      const std::string prefix = Printable("override '" + scenario.overrides[i] + "': error: ");
      if (message.rfind(prefix, 0) == 0) {
        return InvalidArgument(
            Printable(scenario.override_where[i] + ": " + message.substr(prefix.size())));
      }
    }
    return InvalidArgument(Printable(scenario.chip_where + ": error: key path `chip`: " + message));
  }
  scenario.resolved_chip = std::move(*config);
  if (scenario.topology_config.has_value()) {
    // Build the network now, so an impossible one (a twisted torus of the
    // wrong shape, a device assignment that is no permutation, a fault on a
    // link that does not exist) is an input error of the scenario.
    arch::TopologyConfig& topology = *scenario.topology_config;
    Status checked = arch::ResolveChipDefaults(topology, *scenario.resolved_chip);
    if (checked.ok())
      checked = ici::Topology::Build(topology, scenario.resolved_chip->ici).status();
    // Both point into the scenario where the topology wrote what they refuse.
    TPUSIM_RETURN_IF_ERROR(checked);
    scenario.topology = arch::CanonicalTopologyText(topology) + sharing;
  }
  return Status::Ok();
}

StatusOr<Scenario> LoadScenario(const std::string& file, const std::string& models_dir) {
  TPUSIM_ASSIGN_OR_RETURN(const std::string text, ReadFile(file));
  TPUSIM_ASSIGN_OR_RETURN(Scenario scenario, ParseScenario(text, file));
  TPUSIM_RETURN_IF_ERROR(ResolveScenario(scenario, models_dir));
  return scenario;
}

}  // namespace tpusim::harness
