#include "harness/sweep/plots.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "harness/suite/scenario.h"
#include "harness/report/svg_chart.h"
#include "harness/version.h"
#include "sim/base/file.h"
#include "sim/base/units.h"

namespace tpusim::harness {
namespace {

namespace fs = std::filesystem;

size_t AxisIndex(const Study& study, const std::string& axis) {
  return static_cast<size_t>(std::find(study.axes.begin(), study.axes.end(), axis) -
                             study.axes.begin());
}

/// The labels of `axis` in the order the points first take them.
std::vector<std::string> Labels(const Study& study, size_t axis) {
  std::vector<std::string> labels;
  for (const StudyPoint& p : study.points) {
    if (std::find(labels.begin(), labels.end(), p.labels[axis]) == labels.end()) {
      labels.push_back(p.labels[axis]);
    }
  }
  return labels;
}

size_t Position(const std::vector<std::string>& labels, const std::string& label) {
  return static_cast<size_t>(std::find(labels.begin(), labels.end(), label) - labels.begin());
}

std::optional<double> MetricOf(const PointResult& r, const std::string& metric) {
  const auto it = r.metrics.find(metric);
  if (r.status != "ok" || it == r.metrics.end()) return std::nullopt;
  return it->second;
}

}  // namespace

std::string PlotSvg(const Study& study, const StudyPlot& plot,
                    const std::vector<PointResult>& unsorted) {
  std::vector<PointResult> results = unsorted;
  std::sort(results.begin(), results.end(),
            [](const PointResult& a, const PointResult& b) { return a.index < b.index; });
  const auto labels_of = [&](const PointResult& r) -> const std::vector<std::string>& {
    return study.points[static_cast<size_t>(r.index)].labels;
  };
  if (plot.kind == "bar") {
    // A bar per point, named by the axes that vary.
    std::vector<size_t> varying;
    for (size_t a = 0; a < study.axes.size(); ++a) {
      if (Labels(study, a).size() > 1) varying.push_back(a);
    }
    std::vector<BarRow> rows;
    for (const PointResult& r : results) {
      std::string name;
      for (size_t a : varying) name += (name.empty() ? "" : ", ") + labels_of(r)[a];
      const std::optional<double> v = MetricOf(r, plot.metric);
      // A point without the metric (it failed) is a red stub.
      rows.push_back({name.empty() ? "point " + std::to_string(r.index) : name,
                      {{v.value_or(0), v.has_value() ? PaletteColour(0) : "#e53935"}}});
    }
    return HorizontalBarChart(plot.title, rows, plot.metric);
  }
  const size_t x_axis = AxisIndex(study, plot.x);
  const std::vector<std::string> xs = Labels(study, x_axis);
  const size_t other = AxisIndex(study, plot.kind == "line" ? plot.series : plot.y);
  const bool has_other = other < study.axes.size();
  const std::vector<std::string> rows =
      has_other ? Labels(study, other) : std::vector<std::string>{plot.metric};
  std::vector<std::vector<std::optional<double>>> values(
      rows.size(), std::vector<std::optional<double>>(xs.size()));
  std::vector<std::vector<bool>> filled(rows.size(), std::vector<bool>(xs.size(), false));
  for (const PointResult& r : results) {
    const size_t row = has_other ? Position(rows, labels_of(r)[other]) : 0;
    const size_t col = Position(xs, labels_of(r)[x_axis]);
    if (filled[row][col]) continue;  // the lowest index wins
    filled[row][col] = true;
    values[row][col] = MetricOf(r, plot.metric);
  }
  if (plot.kind == "line") {
    return LineChart(plot.title, plot.x, xs, plot.metric, rows, values);
  }
  return HeatmapChart(plot.title, plot.x, xs, plot.y, rows, values);
}

Status WriteSweepReport(const std::string& dir, const Study& study,
                        const std::vector<PointResult>& unsorted) {
  std::vector<PointResult> results = unsorted;
  std::sort(results.begin(), results.end(),
            [](const PointResult& a, const PointResult& b) { return a.index < b.index; });
  std::error_code ec;
  fs::create_directories(fs::path(dir) / "plots", ec);
  if (ec) return InvalidArgument(dir + "/plots: error: cannot create directory: " + ec.message());
  std::string html =
      "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n"
      "<meta charset=\"utf-8\"/>\n<title>" +
      XmlEscape(study.name) +
      "</title>\n<style>\nbody { font-family: sans-serif; margin: 2em; }\n"
      "table { border-collapse: collapse; }\n"
      "td, th { border: 1px solid #ccc; padding: 2px 6px; text-align: left; }\n"
      "td.bad { color: #c62828; }\n</style>\n</head>\n<body>\n<h1>" +
      XmlEscape(study.name) + "</h1>\n<p>" + std::to_string(results.size()) + " point(s), tpusim " +
      std::string(kVersion) +
      ". Results: <a href=\"results.csv\">results.csv</a>, "
      "<a href=\"results.jsonl\">results.jsonl</a>.</p>\n";
  for (const StudyPlot& plot : study.plots) {
    const std::string svg = PlotSvg(study, plot, results);
    TPUSIM_RETURN_IF_ERROR(
        WriteFileAtomically((fs::path(dir) / "plots" / plot.file).string(), svg));
    html += "<p><a href=\"plots/" + XmlEscape(plot.file) + "\">plots/" + XmlEscape(plot.file) +
            "</a></p>\n" + svg;
  }
  html += "<h2>Points</h2>\n<table>\n<tr><th>index</th>";
  for (const std::string& axis : study.axes) html += "<th>" + XmlEscape(axis) + "</th>";
  html += "<th>status</th>";
  for (const std::string& metric : MetricNames()) html += "<th>" + metric + "</th>";
  html += "<th>message</th></tr>\n";
  for (const PointResult& r : results) {
    html += "<tr><td>" + std::to_string(r.index) + "</td>";
    for (const std::string& label : study.points[static_cast<size_t>(r.index)].labels) {
      html += "<td>" + XmlEscape(label) + "</td>";
    }
    html +=
        std::string("<td") + (r.status == "ok" ? "" : " class=\"bad\"") + ">" + r.status + "</td>";
    for (const std::string& metric : MetricNames()) {
      const auto it = r.metrics.find(metric);
      html += "<td>" + (it == r.metrics.end() ? std::string() : FormatSignificant(it->second)) + "</td>";
    }
    html += "<td>" + XmlEscape(r.message) + "</td></tr>\n";
  }
  html += "</table>\n</body>\n</html>\n";
  return WriteFileAtomically((fs::path(dir) / "index.html").string(), html);
}

}  // namespace tpusim::harness
