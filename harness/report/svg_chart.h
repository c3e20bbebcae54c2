// Self-contained SVG charts for the harness's reports (`tpusim run --report`,
// `tpusim sweep` plots): plain SVG 1.1 text with inline styles and the title
// inside, so a chart reads the same inline in a page or opened alone, with no
// script, stylesheet or other tool.
#ifndef TPUSIM_HARNESS_REPORT_SVG_CHART_H_
#define TPUSIM_HARNESS_REPORT_SVG_CHART_H_

#include <optional>
#include <string>
#include <vector>

namespace tpusim::harness {

/// Text safe inside an XML attribute or element: the five specials escaped,
/// control characters XML 1.0 forbids replaced by '?'.
std::string XmlEscape(const std::string& text);

/// One bar: its length and its fill colour ("#4caf50").
struct Bar {
  double value = 0;
  std::string fill;
};

/// One labelled row of a bar chart: one bar, or several drawn one under the
/// other (e.g. this run and its golden).
struct BarRow {
  std::string label;
  std::vector<Bar> bars;
};

/// A legend entry: a swatch of `fill` and what it means.
struct LegendEntry {
  std::string fill;
  std::string text;
};

/// The i-th of ten distinct colours, cycled: for series and segments.
std::string PaletteColour(size_t i);

/// How the bars of a chart are scaled: all rows from 0 to the largest value
/// of the chart, or each row from 0 to its own largest (a row's total, for
/// stacked bars), so that a small scenario next to a large one still shows
/// its bars' proportions; the labels keep the absolute values either way.
enum class BarScale { kShared, kPerRow };

/// Horizontal bars on a linear scale from 0 (see BarScale), each bar
/// labelled with its value and `unit`.
std::string HorizontalBarChart(const std::string& title, const std::vector<BarRow>& rows,
                               const std::string& unit, const std::vector<LegendEntry>& legend = {},
                               BarScale scale = BarScale::kShared);

/// Horizontal stacked bars: row r is the segments values[r][0], values[r][1],
/// ... left to right, segment s in legend[s]'s fill; each segment's value is
/// its tooltip and the row's total is written after it.
std::string StackedBarChart(const std::string& title, const std::vector<std::string>& row_labels,
                            const std::vector<std::vector<double>>& values,
                            const std::vector<LegendEntry>& legend, const std::string& unit,
                            BarScale scale = BarScale::kShared);

/// A line chart over categories: x_labels evenly spaced along x, one line per
/// series (values[s][x], nullopt where the series has no point), y from 0 to
/// the largest value, with a legend.
std::string LineChart(const std::string& title, const std::string& x_name,
                      const std::vector<std::string>& x_labels, const std::string& y_name,
                      const std::vector<std::string>& series,
                      const std::vector<std::vector<std::optional<double>>>& values);

/// A heatmap: cell (y, x) is values[y][x], shaded white (0) to dark red (the
/// largest value); a nullopt cell is absent (light grey). Every cell's value
/// is its tooltip, and is written in it when the cells are wide enough (few
/// columns); many columns give small square cells.
std::string HeatmapChart(const std::string& title, const std::string& x_name,
                         const std::vector<std::string>& x_labels, const std::string& y_name,
                         const std::vector<std::string>& y_labels,
                         const std::vector<std::vector<std::optional<double>>>& values);

/// One series of a scatter chart: its name and its (x, y) points, each with a tooltip.
struct ScatterSeries {
  std::string name;
  std::vector<double> x;
  std::vector<double> y;
  std::vector<std::string> tooltips;  ///< one per point, or empty
};

/// A log-log scatter of every series (one colour each, with a legend) and the
/// line y = x: the chart of predicted against measured. Non-positive values
/// are left out (they have no logarithm).
std::string LogLogScatterChart(const std::string& title, const std::string& x_name,
                               const std::string& y_name, const std::vector<ScatterSeries>& series);

}  // namespace tpusim::harness

#endif  // TPUSIM_HARNESS_REPORT_SVG_CHART_H_
