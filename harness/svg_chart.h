// Self-contained SVG charts for the harness's HTML reports (`tpusim run
// --report`, `tpusim sweep`): no script, no stylesheet, no other file, so a
// chart reads the same inline in a page or opened alone.
#ifndef TPUSIM_HARNESS_SVG_CHART_H_
#define TPUSIM_HARNESS_SVG_CHART_H_

#include <optional>
#include <string>
#include <vector>

namespace tpusim::harness {

/// Text safe inside an XML attribute or element: the five specials escaped,
/// control characters XML 1.0 forbids replaced by '?'.
std::string XmlEscape(const std::string& text);

/// A horizontal bar chart: one bar per label, coloured `colours[i]` (a CSS
/// colour; empty: one default colour), its value written after it with `unit`.
std::string SvgBarChart(const std::string& title, const std::vector<std::string>& labels,
                        const std::vector<double>& values, const std::vector<std::string>& colours,
                        const std::string& unit);

/// A line chart over categories: x_labels evenly spaced along x, one line per
/// series (values[s][x], nullopt where the series has no point), y from 0 to
/// the largest value, with a legend.
std::string SvgLineChart(const std::string& title, const std::string& x_name,
                         const std::vector<std::string>& x_labels, const std::string& y_name,
                         const std::vector<std::string>& series,
                         const std::vector<std::vector<std::optional<double>>>& values);

/// A heatmap: one cell per (y, x) coloured from pale (smallest) to dark
/// (largest) with its value written in it; nullopt cells stay blank.
std::string SvgHeatmap(const std::string& title, const std::string& x_name,
                       const std::vector<std::string>& x_labels, const std::string& y_name,
                       const std::vector<std::string>& y_labels,
                       const std::vector<std::vector<std::optional<double>>>& values);

}  // namespace tpusim::harness

#endif  // TPUSIM_HARNESS_SVG_CHART_H_
