// Self-contained SVG charts for the reports tpusim writes (the HTML report of
// `tpusim run`): plain SVG 1.1 text with inline styles, so a page or file that
// embeds one needs no script, stylesheet or other tool to be read.
#ifndef TPUSIM_HARNESS_SVG_CHART_H_
#define TPUSIM_HARNESS_SVG_CHART_H_

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

/// Horizontal bars on one linear scale from 0 to the largest value, each bar
/// labelled with its value and `unit`.
std::string HorizontalBarChart(const std::vector<BarRow>& rows, const std::string& unit,
                               const std::vector<LegendEntry>& legend = {});

/// Horizontal stacked bars: row r is the segments values[r][0], values[r][1],
/// ... left to right, segment s in fill `fills[s]`, named by legend[s]; the
/// total is written at the end of the bar.
std::string StackedBarChart(const std::vector<std::string>& row_labels,
                            const std::vector<std::vector<double>>& values,
                            const std::vector<LegendEntry>& legend, const std::string& unit);

/// A square matrix of cells: cell (r, c) is values[r * labels.size() + c],
/// shaded from white (0) to dark red (`full`); a negative value is an absent
/// cell (drawn light grey). Each cell's exact value is its tooltip.
std::string HeatmapChart(const std::vector<std::string>& labels, const std::vector<double>& values,
                         double full, const std::string& row_axis, const std::string& column_axis);

}  // namespace tpusim::harness

#endif  // TPUSIM_HARNESS_SVG_CHART_H_
