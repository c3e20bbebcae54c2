#include "harness/sweep/study.h"

#include <yaml-cpp/yaml.h>

#include <cctype>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "harness/suite/scenario.h"
#include "harness/version.h"
#include "harness/suite/yaml_reader.h"
#include "sim/base/file.h"
#include "sim/base/fingerprint.h"

namespace tpusim::harness {
namespace {

namespace fs = std::filesystem;

/// Points one study may hold: far more than anyone plots, few enough that a
/// typo multiplying two long axes is caught before it runs for a week.
constexpr size_t kMaxPoints = 100000;

/// The scenario keys an axis may vary, besides `chip.overrides.FIELD` (any
/// preset field) and `topology.KEY` (a key of a topology mapping).
const std::vector<std::string_view>& PlainAxes() {
  static const std::vector<std::string_view> kAxes = {"module",
                                                      "chip",
                                                      "topology",
                                                      "device_assignment",
                                                      "algorithm",
                                                      "placement",
                                                      "other_jobs",
                                                      "mode",
                                                      "numerics",
                                                      "inputs.seed",
                                                      "max_while_iterations",
                                                      "max_loop_work",
                                                      "max_executed_instructions"};
  return kAxes;
}

/// One value of an axis: its label in results and plots, and where it was written.
struct AxisValue {
  std::string label;
  YAML::Node value;
};

struct Axis {
  std::string name;
  YAML::Node key;  ///< where the axis is named, for errors about the axis itself
  std::vector<AxisValue> values;
};


/// The label of a value written in a list: the scalar itself, else its YAML
/// in flow style on one line ({kind: torus, dims: [4, 4]}).
std::string LabelOf(const YAML::Node& value) {
  if (value.IsScalar()) return value.Scalar();
  YAML::Emitter emitter;
  emitter.SetMapFormat(YAML::Flow);
  emitter.SetSeqFormat(YAML::Flow);
  emitter << value;
  return emitter.c_str();
}

/// A preset written as a path (not a name) is resolved like a module path.
bool IsPathLike(const std::string& chip) {
  return chip.find('/') != std::string::npos || chip.ends_with(".yaml");
}

std::string Absolute(const std::string& anchor_file, const std::string& path) {
  if (fs::path(path).is_absolute()) return path;
  return fs::absolute(fs::path(anchor_file).parent_path() / path).lexically_normal().string();
}

/// Makes the module paths of `other_jobs` (a scenario's list) absolute
/// against `anchor_file`.
void AbsoluteOtherJobs(YAML::Node other_jobs, const std::string& anchor_file) {
  if (!other_jobs.IsSequence()) return;
  for (YAML::Node job : other_jobs) {
    if (job.IsMap() && job["module"] && job["module"].IsScalar()) {
      job["module"] = Absolute(anchor_file, job["module"].Scalar());
    }
  }
}

/// Makes the paths of scenario `root` absolute against `anchor_file`, so the
/// point's scenario runs from anywhere.
void AbsolutePaths(YAML::Node root, const std::string& anchor_file) {
  if (root["module"] && root["module"].IsScalar()) {
    root["module"] = Absolute(anchor_file, root["module"].Scalar());
  }
  if (root["other_jobs"]) AbsoluteOtherJobs(root["other_jobs"], anchor_file);
  if (root["inputs"] && root["inputs"].IsMap() && root["inputs"]["dir"] &&
      root["inputs"]["dir"].IsScalar()) {
    root["inputs"]["dir"] = Absolute(anchor_file, root["inputs"]["dir"].Scalar());
  }
  if (root["chip"] && root["chip"].IsScalar() && IsPathLike(root["chip"].Scalar())) {
    root["chip"] = Absolute(anchor_file, root["chip"].Scalar());
  }
  if (root["chip"] && root["chip"].IsMap() && root["chip"]["preset"] &&
      root["chip"]["preset"].IsScalar() && IsPathLike(root["chip"]["preset"].Scalar())) {
    root["chip"]["preset"] = Absolute(anchor_file, root["chip"]["preset"].Scalar());
  }
}

/// Checks an axis name against the scenario keys it may vary.
Status CheckAxisName(const YamlReader& r, const YAML::Node& key, const std::string& path,
                     const YAML::Node& base) {
  const std::string name = key.Scalar();
  for (std::string_view plain : PlainAxes()) {
    if (name == plain) return Status::Ok();
  }
  if (name.starts_with("chip.overrides.") && name.size() > 15) {
    if (!base["chip"]) return r.Error(key, path, "the base scenario names no chip to override");
    return Status::Ok();
  }
  if (name.starts_with("topology.") && name.size() > 9) {
    if (!base["topology"] || !base["topology"].IsMap()) {
      return r.Error(key, path,
                     "the base scenario's topology is not a mapping; write it as one "
                     "(docs/interconnect.md) to vary one of its keys");
    }
    return Status::Ok();
  }
  std::string known;
  for (std::string_view plain : PlainAxes()) known += std::string(plain) + ", ";
  return r.Error(key, path,
                 "unknown axis " + Quote(name) + " (known: " + known +
                     "chip.overrides.FIELD for any preset field, topology.KEY for a key of a "
                     "topology mapping)");
}

/// Sets axis `name` to `value` in the scenario `root` (a copy of the base).
void SetAxis(YAML::Node root, const std::string& name, const YAML::Node& value,
             const std::string& study_file) {
  YAML::Node v = YAML::Clone(value);
  if (name == "module" && v.IsScalar()) v = Absolute(study_file, v.Scalar());
  if (name == "other_jobs") AbsoluteOtherJobs(v, study_file);
  if (name == "chip" && v.IsScalar() && IsPathLike(v.Scalar())) {
    v = Absolute(study_file, v.Scalar());
  }
  if (name == "chip" && root["chip"] && root["chip"].IsMap()) {
    root["chip"]["preset"] = v;
  } else if (name == "inputs.seed") {
    if (!root["inputs"] || !root["inputs"].IsMap())
      root["inputs"] = YAML::Node(YAML::NodeType::Map);
    root["inputs"].remove(std::string("dir"));
    root["inputs"]["seed"] = v;
  } else if (name.starts_with("chip.overrides.")) {
    const std::string field = name.substr(15);
    if (root["chip"].IsScalar()) {
      YAML::Node chip(YAML::NodeType::Map);
      chip["preset"] = root["chip"].Scalar();
      root["chip"] = chip;
    }
    root["chip"]["overrides"][field] = v;
  } else if (name.starts_with("topology.")) {
    root["topology"][name.substr(9)] = v;
  } else {
    root[name] = v;
  }
}

/// Everything after "...: error: " of a scenario loader's message.
std::string WithoutPosition(const std::string& message) {
  const size_t at = message.find(": error: ");
  return at == std::string::npos ? message : message.substr(at + 9);
}

/// The scenario text of a point: the base with `values` applied, named after
/// the study, without what only a suite needs (checks, goldens, expectations).
std::string PointScenario(const YAML::Node& base, const std::string& study_file,
                          const std::string& name,
                          const std::vector<std::pair<std::string, YAML::Node>>& values) {
  YAML::Node root = YAML::Clone(base);
  for (const char* key : {"checks", "expect", "golden", "name"}) root.remove(std::string(key));
  root["name"] = name;
  for (const auto& [axis, value] : values) SetAxis(root, axis, value, study_file);
  YAML::Emitter emitter;
  emitter << root;
  return std::string(emitter.c_str()) + "\n";
}

/// Loads the point's scenario as `tpusim run` would; "" when it loads.
std::string ScenarioProblem(const std::string& text, const std::string& label,
                            const std::string& models_dir) {
  StatusOr<Scenario> scenario = ParseScenario(text, label);
  if (!scenario.ok()) return WithoutPosition(scenario.status().message());
  const Status resolved = ResolveScenario(*scenario, models_dir);
  return resolved.ok() ? "" : WithoutPosition(resolved.message());
}

StatusOr<std::vector<AxisValue>> ReadAxisValues(const YamlReader& r, const YAML::Node& node,
                                                const std::string& path) {
  std::vector<AxisValue> values;
  std::set<std::string> labels;
  if (node.IsSequence()) {
    for (size_t i = 0; i < node.size(); ++i) {
      values.push_back({LabelOf(node[i]), node[i]});
    }
  } else if (node.IsMap()) {
    for (const auto& entry : node) {
      TPUSIM_ASSIGN_OR_RETURN(std::string label, r.String(entry.first, path));
      values.push_back({std::move(label), entry.second});
    }
  } else {
    return r.Error(
        node, path,
        "expected a list of values, or a mapping of label: value, got " + YamlReader::Got(node));
  }
  if (values.empty()) return r.Error(node, path, "an axis needs at least one value");
  for (const AxisValue& v : values) {
    if (!labels.insert(v.label).second) {
      return r.Error(v.value, path, "value " + Quote(v.label) + " is given twice");
    }
  }
  return values;
}

StatusOr<std::vector<StudyPlot>> ReadPlots(const YamlReader& r, const YAML::Node& node,
                                           const std::vector<std::string>& axes) {
  if (!node.IsSequence()) {
    return r.Error(node, "plots", "expected a list of plots, got " + YamlReader::Got(node));
  }
  std::vector<StudyPlot> plots;
  std::set<std::string> files;
  for (size_t i = 0; i < node.size(); ++i) {
    const std::string path = "plots[" + std::to_string(i) + "]";
    const YAML::Node p = node[i];
    TPUSIM_RETURN_IF_ERROR(
        r.Keys(p, path, {"name", "kind", "title", "metric", "x", "series", "y"}));
    StudyPlot plot;
    for (const char* key : {"name", "kind", "metric"}) {
      if (!p[key]) return r.Error(p, path + "." + key, "missing required key");
    }
    TPUSIM_ASSIGN_OR_RETURN(const std::string name, r.String(p["name"], path + ".name"));
    for (const char c : name) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') {
        return r.Error(p["name"], path + ".name",
                       "a plot name names its file: letters, digits, '-' and '_' only");
      }
    }
    plot.file = name + ".svg";
    if (!files.insert(plot.file).second) {
      return r.Error(p["name"], path + ".name", "another plot has this name");
    }
    TPUSIM_ASSIGN_OR_RETURN(plot.kind, r.String(p["kind"], path + ".kind"));
    if (plot.kind != "line" && plot.kind != "bar" && plot.kind != "heatmap") {
      return r.Error(p["kind"], path + ".kind",
                     "expected line, bar or heatmap, got " + Quote(plot.kind));
    }
    TPUSIM_ASSIGN_OR_RETURN(plot.metric, r.String(p["metric"], path + ".metric"));
    bool known_metric = false;
    std::string metrics;
    for (const std::string& m : MetricNames()) {
      known_metric = known_metric || m == plot.metric;
      metrics += (metrics.empty() ? "" : ", ") + m;
    }
    if (!known_metric) {
      return r.Error(p["metric"], path + ".metric",
                     "unknown metric " + Quote(plot.metric) + " (known: " + metrics + ")");
    }
    if (p["title"]) {
      TPUSIM_ASSIGN_OR_RETURN(plot.title, r.String(p["title"], path + ".title"));
    }
    // Which axis keys each kind takes, and that each names an axis of the study.
    const std::map<std::string, std::string*> refs = {
        {"x", &plot.x}, {"series", &plot.series}, {"y", &plot.y}};
    for (const auto& [key, field] : refs) {
      const YAML::Node ref = p[key];
      const bool allowed = (key == "x" && plot.kind != "bar") ||
                           (key == "series" && plot.kind == "line") ||
                           (key == "y" && plot.kind == "heatmap");
      if (!ref) {
        if (allowed && key != "series") {
          return r.Error(p, path + "." + key, "a " + plot.kind + " plot needs `" + key + "`");
        }
        continue;
      }
      if (!allowed) {
        return r.Error(ref, path + "." + key, "a " + plot.kind + " plot takes no `" + key + "`");
      }
      TPUSIM_ASSIGN_OR_RETURN(*field, r.String(ref, path + "." + key));
      bool is_axis = false;
      for (const std::string& a : axes) is_axis = is_axis || a == *field;
      if (!is_axis) {
        return r.Error(ref, path + "." + key, "'" + *field + "' is not an axis of this study");
      }
    }
    if (plot.title.empty()) {
      plot.title = plot.metric + (plot.x.empty() ? " per point" : " by " + plot.x) +
                   (plot.series.empty() ? "" : ", one line per " + plot.series) +
                   (plot.y.empty() ? "" : " and " + plot.y);
    }
    plots.push_back(std::move(plot));
  }
  return plots;
}

StatusOr<Study> ParseStudy(const YamlReader& r, const YAML::Node& root,
                           const std::string& models_dir) {
  TPUSIM_RETURN_IF_ERROR(
      r.Keys(root, "", {"name", "description", "base", "grid", "points", "plots"}));
  Study study;
  study.file = r.file();
  const std::string file_name = fs::path(r.file()).filename().string();
  study.name = file_name.ends_with(kStudySuffix)
                   ? file_name.substr(0, file_name.size() - std::string_view(kStudySuffix).size())
                   : fs::path(file_name).stem().string();
  if (root["name"]) {
    TPUSIM_ASSIGN_OR_RETURN(study.name, r.String(root["name"], "name"));
  }
  for (const char c : study.name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') {
      return r.Error(
          root["name"] ? root["name"] : root, "name",
          "a name may hold letters, digits, '-', '_' and '.' only, got " + Quote(study.name));
    }
  }
  if (root["description"]) {
    TPUSIM_RETURN_IF_ERROR(r.String(root["description"], "description").status());
  }
  if (!root["base"]) return r.Error(root, "base", "missing required key (the base scenario)");
  TPUSIM_ASSIGN_OR_RETURN(const std::string base_path, r.String(root["base"], "base"));
  study.base = (fs::path(r.file()).parent_path() / base_path).lexically_normal().string();
  StatusOr<std::string> base_text = ReadFile(study.base);
  if (!base_text.ok()) {
    return r.Error(root["base"], "base", study.base + ": cannot read the base scenario");
  }
  // The base must load on its own: its own errors point into its own file.
  TPUSIM_RETURN_IF_ERROR(LoadScenario(study.base, models_dir).status());
  YAML::Node base = arch::LoadOneDocument(*base_text);
  AbsolutePaths(base, study.base);

  if (root["grid"] && root["points"]) {
    return r.Error(root["points"], "points", "give either grid or points, not both");
  }
  if (!root["grid"] && !root["points"]) {
    return r.Error(root, "grid", "missing: give the axes as grid: or the points as points:");
  }
  std::vector<Axis> axes;
  std::map<std::string, size_t> axis_index;
  // Explicit points, each a list of (axis, value) pairs, with where it was written.
  std::vector<std::vector<std::pair<std::string, YAML::Node>>> point_values;
  std::vector<YAML::Node> point_nodes;
  std::vector<std::string> point_paths;
  const auto add_axis = [&](const YAML::Node& key, const std::string& path) -> Status {
    TPUSIM_ASSIGN_OR_RETURN(const std::string name, r.String(key, path));
    TPUSIM_RETURN_IF_ERROR(CheckAxisName(r, key, path, base));
    if (axis_index.emplace(name, axes.size()).second) axes.push_back({name, key, {}});
    return Status::Ok();
  };
  if (const YAML::Node grid = root["grid"]) {
    if (!grid.IsMap()) {
      return r.Error(grid, "grid",
                     "expected a mapping of axis: values, got " + YamlReader::Got(grid));
    }
    if (grid.size() == 0) return r.Error(grid, "grid", "the grid has no axes");
    std::set<std::string> seen;
    for (const auto& entry : grid) {
      const std::string path = "grid." + (entry.first.IsScalar() ? entry.first.Scalar() : "?");
      TPUSIM_RETURN_IF_ERROR(add_axis(entry.first, path));
      if (!seen.insert(entry.first.Scalar()).second) {
        return r.Error(entry.first, path, "duplicate axis");
      }
      TPUSIM_ASSIGN_OR_RETURN(axes.back().values, ReadAxisValues(r, entry.second, path));
    }
    size_t count = 1;
    for (const Axis& axis : axes) {
      count *= axis.values.size();
      if (count > kMaxPoints) {
        return r.Error(grid, "grid",
                       "more than " + std::to_string(kMaxPoints) + " points; split the study");
      }
    }
    // The product, first axis slowest.
    for (size_t n = 0; n < count; ++n) {
      std::vector<std::pair<std::string, YAML::Node>> values;
      size_t rest = n;
      std::vector<size_t> digits(axes.size());
      for (size_t a = axes.size(); a-- > 0;) {
        digits[a] = rest % axes[a].values.size();
        rest /= axes[a].values.size();
      }
      for (size_t a = 0; a < axes.size(); ++a) {
        values.emplace_back(axes[a].name, axes[a].values[digits[a]].value);
      }
      point_values.push_back(std::move(values));
      point_nodes.push_back(grid);
      point_paths.push_back("grid");
    }
  } else {
    const YAML::Node list = root["points"];
    if (!list.IsSequence() || list.size() == 0) {
      return r.Error(list, "points",
                     "expected a non-empty list of points (axis: value mappings), got " +
                         YamlReader::Got(list));
    }
    if (list.size() > kMaxPoints) {
      return r.Error(list, "points", "more than " + std::to_string(kMaxPoints) + " points");
    }
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string path = "points[" + std::to_string(i) + "]";
      const YAML::Node p = list[i];
      if (!p.IsMap() || p.size() == 0) {
        return r.Error(p, path, "expected a mapping of axis: value, got " + YamlReader::Got(p));
      }
      std::vector<std::pair<std::string, YAML::Node>> values;
      for (const auto& entry : p) {
        const std::string key_path =
            path + "." + (entry.first.IsScalar() ? entry.first.Scalar() : "?");
        TPUSIM_RETURN_IF_ERROR(add_axis(entry.first, key_path));
        values.emplace_back(entry.first.Scalar(), entry.second);
      }
      point_values.push_back(std::move(values));
      point_nodes.push_back(p);
      point_paths.push_back(path);
    }
  }
  for (const Axis& axis : axes) study.axes.push_back(axis.name);

  // Each grid value on its own first, so that a bad one is reported where it
  // is written (or, for a preset field that does not exist, at the axis).
  for (const Axis& axis : axes) {
    for (size_t i = 0; i < axis.values.size(); ++i) {
      const std::string text =
          PointScenario(base, r.file(), study.name, {{axis.name, axis.values[i].value}});
      const std::string problem =
          ScenarioProblem(text, r.file() + " (axis " + axis.name + ")", models_dir);
      if (problem.empty()) continue;
      const bool no_field =
          axis.name.starts_with("chip.overrides.") &&
          problem.find("unknown key '" + axis.name.substr(15) + "'") != std::string::npos;
      return r.Error(no_field ? axis.key : axis.values[i].value,
                     "grid." + axis.name + (no_field ? "" : "[" + std::to_string(i) + "]"),
                     "in the point's scenario: " + problem);
    }
  }

  std::set<std::string> keys;
  uint64_t stamp = Fnv1a(kVersion);
  stamp = Fnv1a(*base_text, stamp);
  for (size_t n = 0; n < point_values.size(); ++n) {
    StudyPoint point;
    point.index = static_cast<int64_t>(n);
    point.labels.assign(axes.size(), "");
    for (const auto& [axis, value] : point_values[n]) {
      point.labels[axis_index[axis]] = LabelOf(value);
    }
    if (root["grid"]) {
      // Grid labels may be the user's (label: value mappings).
      size_t rest = n;
      for (size_t a = axes.size(); a-- > 0;) {
        point.labels[a] = axes[a].values[rest % axes[a].values.size()].label;
        rest /= axes[a].values.size();
      }
    }
    std::string identity;
    for (size_t a = 0; a < axes.size(); ++a) {
      identity += axes[a].name + '\x1f' + point.labels[a] + '\x1e';
    }
    point.key = Hex16(Fnv1a(identity));
    if (!keys.insert(point.key).second) {
      return r.Error(point_nodes[n], point_paths[n],
                     "point " + std::to_string(n) + " repeats an earlier point's values");
    }
    point.scenario_text =
        PointScenario(base, r.file(), study.name + "-" + point.key, point_values[n]);
    const std::string problem = ScenarioProblem(
        point.scenario_text, r.file() + " (point " + std::to_string(n) + ")", models_dir);
    if (!problem.empty()) {
      return r.Error(point_nodes[n], point_paths[n],
                     "in the scenario of point " + std::to_string(n) + ": " + problem);
    }
    stamp = Fnv1a(point.key, stamp);
    stamp = Fnv1a(point.scenario_text, stamp);
    study.points.push_back(std::move(point));
  }
  study.stamp = Hex16(stamp);
  if (root["plots"]) {
    TPUSIM_ASSIGN_OR_RETURN(study.plots, ReadPlots(r, root["plots"], study.axes));
  }
  return study;
}

}  // namespace

StatusOr<Study> LoadStudy(const std::string& file, const std::string& models_dir) {
  TPUSIM_ASSIGN_OR_RETURN(const std::string text, ReadFile(file));
  const YamlReader reader(file);
  try {
    const YAML::Node root = arch::LoadOneDocument(text);
    if (!root.IsMap()) {
      return InvalidArgument(reader.Where(root) +
                             ": error: a study must be a mapping of keys, got " +
                             std::string(arch::NodeKind(root)));
    }
    return reader.Finish(ParseStudy(reader, root, models_dir));
  } catch (const YAML::Exception& e) {
    return InvalidArgument(reader.Where(e.mark) + ": error: " + e.msg);
  }
}

}  // namespace tpusim::harness
