#include "harness/report/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>

#include "sim/base/units.h"

namespace tpusim::harness {
namespace {

constexpr int kLabelWidth = 260;  ///< the row labels' column
constexpr int kPlotWidth = 420;   ///< the longest bar
constexpr int kBarHeight = 12;
constexpr int kRowGap = 6;
constexpr int kLegendRow = 18;

std::string Px(double value) { return FormatFixed(value, 1); }

constexpr int kTitleHeight = 26;  ///< the title line at the top of every chart

/// The opening tag and the title, shown at the top and named for tools.
std::string SvgOpen(int width, int height, const std::string& title) {
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(width) +
         "\" height=\"" + std::to_string(height) +
         "\" role=\"img\" font-family=\"sans-serif\" font-size=\"12\">\n  <title>" + XmlEscape(title) +
         "</title>\n  <text x=\"0\" y=\"16\" font-size=\"14\" font-weight=\"bold\">" +
         XmlEscape(title) + "</text>\n";
}

/// Distinct colours for series and segments.
constexpr const char* kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

std::string Text(double x, double y, const std::string& text, const std::string& extra = "") {
  return "  <text x=\"" + Px(x) + "\" y=\"" + Px(y) + "\"" + extra + ">" + XmlEscape(text) + "</text>\n";
}

std::string Rect(double x, double y, double width, double height, const std::string& fill,
                 const std::string& tooltip = "") {
  std::string rect = "  <rect x=\"" + Px(x) + "\" y=\"" + Px(y) + "\" width=\"" + Px(width) +
                     "\" height=\"" + Px(height) + "\" fill=\"" + XmlEscape(fill) + "\"";
  if (tooltip.empty()) return rect + "/>\n";
  return rect + "><title>" + XmlEscape(tooltip) + "</title></rect>\n";
}

/// Legend entries four to a line from `top`; returns the height used.
int Legend(const std::vector<LegendEntry>& legend, int top, std::string& svg) {
  constexpr int kPerLine = 4, kEntryWidth = 200;
  for (size_t i = 0; i < legend.size(); ++i) {
    const int x = static_cast<int>(i % kPerLine) * kEntryWidth;
    const int y = top + static_cast<int>(i / kPerLine) * kLegendRow;
    svg += Rect(x, y + 3, 12, 12, legend[i].fill);
    svg += Text(x + 16, y + 13, legend[i].text);
  }
  const int lines = static_cast<int>((legend.size() + kPerLine - 1) / kPerLine);
  return lines == 0 ? 0 : lines * kLegendRow + 6;
}

/// The fill of a heatmap cell: white at 0 to dark red at 1.
std::string Shade(double fraction) {
  const double t = std::clamp(fraction, 0.0, 1.0);
  const auto mix = [t](int from, int to) { return static_cast<int>(from + (to - from) * t + 0.5); };
  char fill[8];
  std::snprintf(fill, sizeof fill, "#%02x%02x%02x", mix(255, 183), mix(255, 28), mix(255, 28));
  return fill;
}

/// A chart's title, saying so when each row has its own scale.
std::string ScaledTitle(const std::string& title, BarScale scale) {
  return scale == BarScale::kPerRow ? title + " (each row to its own scale)" : title;
}

}  // namespace

std::string XmlEscape(const std::string& text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') {
          out += '?';
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string PaletteColour(size_t i) { return kPalette[i % std::size(kPalette)]; }

std::string HorizontalBarChart(const std::string& title, const std::vector<BarRow>& rows,
                               const std::string& unit, const std::vector<LegendEntry>& legend,
                               BarScale scale) {
  const auto largest = [](const BarRow& row) {
    double most = 0;
    for (const Bar& bar : row.bars) most = std::max(most, bar.value);
    return most;
  };
  double shared = 0;
  for (const BarRow& row : rows) shared = std::max(shared, largest(row));
  std::string body;
  int y = kTitleHeight + Legend(legend, kTitleHeight, body);
  for (const BarRow& row : rows) {
    const double most = scale == BarScale::kPerRow ? largest(row) : shared;
    body += Text(0, y + kBarHeight - 2, row.label);
    for (const Bar& bar : row.bars) {
      const double width = most > 0 ? std::max(bar.value / most * kPlotWidth, 1.0) : 1.0;
      body += Rect(kLabelWidth, y, width, kBarHeight - 2, bar.fill);
      body += Text(kLabelWidth + width + 4, y + kBarHeight - 2, FormatSignificant(bar.value) + " " + unit);
      y += kBarHeight;
    }
    if (row.bars.empty()) y += kBarHeight;
    y += kRowGap;
  }
  return SvgOpen(kLabelWidth + kPlotWidth + 140, y + 4, ScaledTitle(title, scale)) + body +
         "</svg>\n";
}

std::string StackedBarChart(const std::string& title, const std::vector<std::string>& row_labels,
                            const std::vector<std::vector<double>>& values,
                            const std::vector<LegendEntry>& legend, const std::string& unit,
                            BarScale scale) {
  const auto sum = [](const std::vector<double>& row) {
    double total = 0;
    for (double v : row) total += v;
    return total;
  };
  double shared = 0;
  for (const std::vector<double>& row : values) shared = std::max(shared, sum(row));
  std::string body;
  int y = kTitleHeight + Legend(legend, kTitleHeight, body);
  for (size_t r = 0; r < row_labels.size(); ++r) {
    body += Text(0, y + kBarHeight, row_labels[r]);
    double x = kLabelWidth, total = 0;
    const std::vector<double>& row = r < values.size() ? values[r] : std::vector<double>{};
    const double most = scale == BarScale::kPerRow ? sum(row) : shared;
    for (size_t s = 0; s < row.size() && s < legend.size(); ++s) {
      total += row[s];
      if (row[s] <= 0 || most <= 0) continue;
      const double width = row[s] / most * kPlotWidth;
      body += Rect(x, y, width, kBarHeight, legend[s].fill,
                   legend[s].text + ": " + FormatSignificant(row[s]) + " " + unit);
      x += width;
    }
    body += Text(x + 4, y + kBarHeight, FormatSignificant(total) + " " + unit);
    y += kBarHeight + kRowGap;
  }
  return SvgOpen(kLabelWidth + kPlotWidth + 140, y + 4, ScaledTitle(title, scale)) + body +
         "</svg>\n";
}

std::string LineChart(const std::string& title, const std::string& x_name,
                      const std::vector<std::string>& x_labels, const std::string& y_name,
                      const std::vector<std::string>& series,
                      const std::vector<std::vector<std::optional<double>>>& values) {
  constexpr double kLeft = 100, kTop = 44, kPlotW = 520, kPlotH = 260, kLegend = 220;
  constexpr double kInset = 50;  // keeps the first and last x labels inside the plot
  double most = 0;
  for (const auto& line : values) {
    for (const auto& v : line) most = std::max(most, v.value_or(0));
  }
  if (most <= 0) most = 1;
  const auto x_at = [&](size_t i) {
    return x_labels.size() < 2 ? kLeft + kPlotW / 2
                               : kLeft + kInset + (kPlotW - 2 * kInset) * static_cast<double>(i) /
                                                      static_cast<double>(x_labels.size() - 1);
  };
  const auto y_at = [&](double v) { return kTop + kPlotH - v / most * kPlotH; };
  const auto line = [](double x1, double y1, double x2, double y2, const std::string& stroke) {
    return "  <line x1=\"" + Px(x1) + "\" y1=\"" + Px(y1) + "\" x2=\"" + Px(x2) + "\" y2=\"" +
           Px(y2) + "\" stroke=\"" + stroke + "\"/>\n";
  };
  std::string body;
  // Gridlines at quarters with their values, the x axis, its labels and names.
  for (int q = 0; q <= 4; ++q) {
    const double v = most * q / 4;
    body += line(kLeft, y_at(v), kLeft + kPlotW, y_at(v), "#ddd");
    body += Text(kLeft - 6, y_at(v) + 4, FormatSignificant(v), " text-anchor=\"end\"");
  }
  body += line(kLeft, kTop + kPlotH, kLeft + kPlotW, kTop + kPlotH, "#000");
  for (size_t i = 0; i < x_labels.size(); ++i) {
    body += Text(x_at(i), kTop + kPlotH + 16, x_labels[i], " text-anchor=\"middle\"");
  }
  body += Text(kLeft + kPlotW / 2, kTop + kPlotH + 40, x_name, " text-anchor=\"middle\"");
  body += Text(0, kTop - 12, y_name);
  for (size_t s = 0; s < series.size() && s < values.size(); ++s) {
    const std::string colour = PaletteColour(s);
    std::string points;
    for (size_t i = 0; i < x_labels.size() && i < values[s].size(); ++i) {
      if (!values[s][i].has_value()) continue;
      const double x = x_at(i), y = y_at(*values[s][i]);
      points += Px(x) + "," + Px(y) + " ";
      body += "  <circle cx=\"" + Px(x) + "\" cy=\"" + Px(y) + "\" r=\"3\" fill=\"" + colour +
              "\"><title>" + XmlEscape(series[s] + ", " + x_labels[i] + ": " + FormatSignificant(*values[s][i])) +
              "</title></circle>\n";
    }
    body += "  <polyline fill=\"none\" stroke=\"" + colour + "\" stroke-width=\"2\" points=\"" +
            points + "\"/>\n";
    const double legend_y = kTop + 14.0 * static_cast<double>(s);
    body += Rect(kLeft + kPlotW + 16, legend_y, 10, 10, colour);
    body += Text(kLeft + kPlotW + 30, legend_y + 9, series[s]);
  }
  return SvgOpen(static_cast<int>(kLeft + kPlotW + kLegend), static_cast<int>(kTop + kPlotH + 60),
                 title) +
         body + "</svg>\n";
}

std::string HeatmapChart(const std::string& title, const std::string& x_name,
                         const std::vector<std::string>& x_labels, const std::string& y_name,
                         const std::vector<std::string>& y_labels,
                         const std::vector<std::vector<std::optional<double>>>& values) {
  double most = 0;
  for (const auto& row : values) {
    for (const auto& v : row) most = std::max(most, v.value_or(0));
  }
  const int columns = static_cast<int>(x_labels.size());
  // Few columns: wide cells with their values written in them and column
  // labels across; many: square cells (values as tooltips), labels rotated,
  // on every step-th cell when they would overlap.
  const bool wide = columns <= 8;
  const int cell_w = wide ? 110 : std::clamp(480 / std::max(columns, 1), 6, 24);
  const int cell_h = wide ? 26 : cell_w;
  const int step = wide || cell_w >= 12 ? 1 : (12 + cell_w - 1) / cell_w;
  const int left = 200, top = kTitleHeight + (wide ? 44 : 96);
  std::string body;
  // The axes' names above the column labels: rows are y, columns x.
  body += Text(0, kTitleHeight + 10, "rows: " + y_name + ", columns: " + x_name);
  for (int x = 0; x < columns; x += step) {
    const double middle = left + x * cell_w + cell_w / 2.0;
    body += wide ? Text(middle, top - 8, x_labels[x], " text-anchor=\"middle\"")
                 : Text(middle + 4, top - 4, x_labels[x],
                        " transform=\"rotate(-90 " + Px(middle + 4) + " " + Px(top - 4) + ")\"");
  }
  for (size_t y = 0; y < y_labels.size(); ++y) {
    const double row_top = top + static_cast<double>(y) * cell_h;
    if (y % static_cast<size_t>(step) == 0) {
      body += Text(left - 4, row_top + cell_h / 2.0 + 4, y_labels[y], " text-anchor=\"end\"");
    }
    for (int x = 0; x < columns; ++x) {
      const std::optional<double> v =
          y < values.size() && static_cast<size_t>(x) < values[y].size() ? values[y][x] : std::nullopt;
      const double cell_left = left + x * cell_w;
      if (!v.has_value()) {
        body += Rect(cell_left, row_top, cell_w - 1, cell_h - 1, "#f2f2f2");
        continue;
      }
      const double fraction = most > 0 ? *v / most : 0;
      body += Rect(cell_left, row_top, cell_w - 1, cell_h - 1, Shade(fraction),
                   y_labels[y] + " \u2192 " + x_labels[x] + ": " + FormatSignificant(*v));
      if (wide) {
        body += Text(cell_left + cell_w / 2.0, row_top + 17, FormatSignificant(*v),
                     std::string(" text-anchor=\"middle\"") + (fraction > 0.6 ? " fill=\"#fff\"" : ""));
      }
    }
  }
  // The scale: ten steps from 0 to the largest value.
  const int scale_y = top + static_cast<int>(y_labels.size()) * cell_h + 12;
  for (int i = 0; i < 10; ++i) body += Rect(left + i * 20, scale_y, 20, 10, Shade((i + 0.5) / 10));
  body += Text(left, scale_y + 24, "0");
  body += Text(left + 200, scale_y + 24, FormatSignificant(most), " text-anchor=\"end\"");
  return SvgOpen(std::max(left + columns * cell_w + 20, left + 220), scale_y + 32, title) + body +
         "</svg>\n";
}


std::string LogLogScatterChart(const std::string& title, const std::string& x_name,
                               const std::string& y_name, const std::vector<ScatterSeries>& series) {
  constexpr double kLeft = 80, kTop = 44, kPlot = 480, kLegend = 240;
  // Axis range: whole decades around every positive value on either axis.
  double low = 0, high = 0;
  bool any = false;
  for (const ScatterSeries& s : series) {
    for (const std::vector<double>* axis : {&s.x, &s.y}) {
      for (double v : *axis) {
        if (!(v > 0)) continue;
        low = any ? std::min(low, v) : v;
        high = any ? std::max(high, v) : v;
        any = true;
      }
    }
  }
  const int first = any ? static_cast<int>(std::floor(std::log10(low))) : 0;
  const int last = any ? std::max(first + 1, static_cast<int>(std::ceil(std::log10(high)))) : 1;
  const double decades = last - first;
  const auto x_at = [&](double v) { return kLeft + (std::log10(v) - first) / decades * kPlot; };
  const auto y_at = [&](double v) { return kTop + kPlot - (std::log10(v) - first) / decades * kPlot; };
  const auto line = [](double x1, double y1, double x2, double y2, const std::string& style) {
    return "  <line x1=\"" + Px(x1) + "\" y1=\"" + Px(y1) + "\" x2=\"" + Px(x2) + "\" y2=\"" +
           Px(y2) + "\" " + style + "/>\n";
  };
  std::string body;
  for (int d = first; d <= last; ++d) {
    const double v = std::pow(10.0, d);
    body += line(x_at(v), kTop, x_at(v), kTop + kPlot, "stroke=\"#ddd\"");
    body += line(kLeft, y_at(v), kLeft + kPlot, y_at(v), "stroke=\"#ddd\"");
    body += Text(x_at(v), kTop + kPlot + 16, FormatSignificant(v), " text-anchor=\"middle\"");
    body += Text(kLeft - 6, y_at(v) + 4, FormatSignificant(v), " text-anchor=\"end\"");
  }
  const double lo = std::pow(10.0, first), hi = std::pow(10.0, last);
  body += line(x_at(lo), y_at(lo), x_at(hi), y_at(hi), "stroke=\"#000\" stroke-dasharray=\"4 3\"");
  body += Text(kLeft + kPlot / 2, kTop + kPlot + 38, x_name, " text-anchor=\"middle\"");
  body += Text(0, kTop - 12, y_name);
  for (size_t s = 0; s < series.size(); ++s) {
    const ScatterSeries& points = series[s];
    const std::string colour = PaletteColour(s);
    for (size_t i = 0; i < points.x.size() && i < points.y.size(); ++i) {
      if (!(points.x[i] > 0) || !(points.y[i] > 0)) continue;
      const std::string circle = "  <circle cx=\"" + Px(x_at(points.x[i])) + "\" cy=\"" +
                                 Px(y_at(points.y[i])) + "\" r=\"2.5\" fill=\"" + colour +
                                 "\" fill-opacity=\"0.6\"";
      body += i < points.tooltips.size()
                  ? circle + "><title>" + XmlEscape(points.tooltips[i]) + "</title></circle>\n"
                  : circle + "/>\n";
    }
    const double legend_y = kTop + 16.0 * static_cast<double>(s);
    body += Rect(kLeft + kPlot + 16, legend_y, 10, 10, colour);
    body += Text(kLeft + kPlot + 30, legend_y + 9,
                 points.name + " (" + std::to_string(points.x.size()) + ")");
  }
  return SvgOpen(static_cast<int>(kLeft + kPlot + kLegend), static_cast<int>(kTop + kPlot + 52),
                 title) +
         body + "</svg>\n";
}

}  // namespace tpusim::harness
