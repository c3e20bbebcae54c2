// The plots of a finished sweep (the study's `plots:` section) as SVG files
// in DIR/plots/, and DIR/index.html showing them with the results table.
#ifndef TPUSIM_HARNESS_SWEEP_PLOTS_H_
#define TPUSIM_HARNESS_SWEEP_PLOTS_H_

#include <string>
#include <vector>

#include "harness/sweep/study.h"
#include "harness/sweep/results.h"
#include "sim/base/status.h"

namespace tpusim::harness {

/// The SVG of one plot over `results` (any order). Where several points
/// fall on one x (line) or cell (heatmap), because an axis the plot does not
/// name varies too, the point of lowest index is drawn.
std::string PlotSvg(const Study& study, const StudyPlot& plot,
                    const std::vector<PointResult>& results);

/// Writes DIR/plots/NAME.svg for every plot and DIR/index.html (the plots
/// inline, then one table row per point), each atomically.
Status WriteSweepReport(const std::string& dir, const Study& study,
                        const std::vector<PointResult>& results);

}  // namespace tpusim::harness

#endif  // TPUSIM_HARNESS_SWEEP_PLOTS_H_
