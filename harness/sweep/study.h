// Study files (docs/sweeps.md): a base scenario and the axes to vary, as a
// grid or a list of points, and the plots to draw. The loader expands every
// point into a scenario text of its own and checks each one as `tpusim run`
// would load it, so that a study that cannot run is refused whole, with
// "FILE:LINE:COL: error: key path `grid.topology[2]`: ...", before anything runs.
#ifndef TPUSIM_HARNESS_SWEEP_STUDY_H_
#define TPUSIM_HARNESS_SWEEP_STUDY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "sim/base/status.h"

namespace tpusim::harness {

/// The file-name suffix of studies. `tpusim run` skips such files, so a study
/// may live beside the scenarios it varies.
inline constexpr char kStudySuffix[] = ".study.yaml";

/// One point of a study: a value for each axis it sets.
struct StudyPoint {
  int64_t index = 0;  ///< position in the study, from 0
  /// The stable identity of the point: 16 hex digits of FNV-1a 64 over its
  /// axis names and value labels (not its index), so that results written by
  /// an earlier run are recognised whatever order the points ran in.
  std::string key;
  /// Per axis of Study::axes, the label of this point's value ("" when an
  /// explicit point leaves the axis at the base scenario's value).
  std::vector<std::string> labels;
  /// The scenario this point runs (YAML, paths absolute, no checks).
  std::string scenario_text;
};

/// One chart of the `plots:` section.
struct StudyPlot {
  std::string kind;    ///< line | bar | heatmap
  std::string title;   ///< default: made from the metric and axes
  std::string metric;  ///< a MetricNames() entry, the plotted value
  std::string x;       ///< axis along x (line, bar, heatmap)
  std::string series;  ///< line: one line per value of this axis; "" for one line
  std::string y;       ///< heatmap: axis along y
  std::string file;    ///< output file name in DIR/plots/, from the plot's name
};

struct Study {
  std::string file;               ///< the study file as given
  std::string name;               ///< `name`, default the file name without .study.yaml
  std::string base;               ///< the base scenario, resolved against the study's directory
  std::vector<std::string> axes;  ///< axis names in the order written
  std::vector<StudyPoint> points;
  std::vector<StudyPlot> plots;
  /// 16 hex digits stamping the results directory: the tpusim version, the
  /// base scenario and every point's key and scenario. `--resume` refuses a
  /// directory stamped by another study (or another version of this one).
  std::string stamp;
};

/// Reads, expands and checks the study at `file`; every error is an input
/// error naming the study file, line, column and key path.
StatusOr<Study> LoadStudy(const std::string& file, const std::string& models_dir);

}  // namespace tpusim::harness

#endif  // TPUSIM_HARNESS_SWEEP_STUDY_H_
