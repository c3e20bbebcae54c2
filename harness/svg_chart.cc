#include "harness/svg_chart.h"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <string>
#include <vector>

namespace tpusim::harness {
namespace {

/// Distinct line colours, cycled.
constexpr const char* kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

std::string Num(double value) {
  char buffer[48];
  std::snprintf(buffer, sizeof buffer, "%.6g", value);
  return buffer;
}

std::string Int(double value) { return std::to_string(static_cast<long>(value)); }

std::string Open(int width, int height, const std::string& title) {
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(width) +
         "\" height=\"" + std::to_string(height) + "\" role=\"img\" font-family=\"sans-serif\">\n" +
         "  <title>" + XmlEscape(title) + "</title>\n  <text x=\"4\" y=\"16\" font-size=\"14\" " +
         "font-weight=\"bold\">" + XmlEscape(title) + "</text>\n";
}

std::string Text(double x, double y, const std::string& text, const std::string& extra = "") {
  return "  <text x=\"" + Int(x) + "\" y=\"" + Int(y) + "\" font-size=\"11\"" + extra + ">" +
         XmlEscape(text) + "</text>\n";
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

std::string SvgBarChart(const std::string& title, const std::vector<std::string>& labels,
                        const std::vector<double>& values, const std::vector<std::string>& colours,
                        const std::string& unit) {
  constexpr int kLabel = 260, kBars = 420, kRow = 18, kTop = 26;
  double most = 0;
  for (double v : values) most = std::max(most, v);
  std::string svg =
      Open(kLabel + kBars + 120, kRow * static_cast<int>(labels.size()) + kTop + 4, title);
  for (size_t i = 0; i < labels.size(); ++i) {
    const int y = static_cast<int>(i) * kRow + kTop;
    const int width = std::max(most > 0 ? static_cast<int>(values[i] / most * kBars) : 0, 1);
    const std::string colour = i < colours.size() && !colours[i].empty() ? colours[i] : kPalette[0];
    svg += Text(0, y + 12, labels[i]);
    svg += "  <rect x=\"" + std::to_string(kLabel) + "\" y=\"" + std::to_string(y) + "\" width=\"" +
           std::to_string(width) + "\" height=\"" + std::to_string(kRow - 4) + "\" fill=\"" +
           colour + "\"/>\n";
    svg += Text(kLabel + width + 4, y + 12, Num(values[i]) + " " + unit);
  }
  return svg + "</svg>\n";
}

std::string SvgLineChart(const std::string& title, const std::string& x_name,
                         const std::vector<std::string>& x_labels, const std::string& y_name,
                         const std::vector<std::string>& series,
                         const std::vector<std::vector<std::optional<double>>>& values) {
  constexpr double kLeft = 80, kTop = 44, kPlotW = 520, kPlotH = 260, kLegend = 220;
  constexpr double kInset = 50;  // keeps the first and last x labels inside the plot
  double most = 0;
  for (const auto& line : values) {
    for (const auto& v : line) most = std::max(most, v.value_or(0));
  }
  if (most <= 0) most = 1;
  const int height = static_cast<int>(kTop + kPlotH + 60);
  std::string svg = Open(static_cast<int>(kLeft + kPlotW + kLegend), height, title);
  const auto x_at = [&](size_t i) {
    return x_labels.size() < 2 ? kLeft + kPlotW / 2
                               : kLeft + kInset +
                                     (kPlotW - 2 * kInset) * static_cast<double>(i) /
                                         static_cast<double>(x_labels.size() - 1);
  };
  const auto y_at = [&](double v) { return kTop + kPlotH - v / most * kPlotH; };
  // Axes, gridlines at quarters with their values, x labels.
  for (int q = 0; q <= 4; ++q) {
    const double v = most * q / 4;
    svg += "  <line x1=\"" + Int(kLeft) + "\" y1=\"" + Int(y_at(v)) + "\" x2=\"" +
           Int(kLeft + kPlotW) + "\" y2=\"" + Int(y_at(v)) + "\" stroke=\"#ddd\"/>\n";
    svg += Text(kLeft - 6, y_at(v) + 4, Num(v), " text-anchor=\"end\"");
  }
  svg += "  <line x1=\"" + Int(kLeft) + "\" y1=\"" + Int(kTop + kPlotH) + "\" x2=\"" +
         Int(kLeft + kPlotW) + "\" y2=\"" + Int(kTop + kPlotH) + "\" stroke=\"#000\"/>\n";
  for (size_t i = 0; i < x_labels.size(); ++i) {
    svg += Text(x_at(i), kTop + kPlotH + 16, x_labels[i], " text-anchor=\"middle\"");
  }
  svg += Text(kLeft + kPlotW / 2, kTop + kPlotH + 40, x_name, " text-anchor=\"middle\"");
  svg += Text(4, kTop - 12, y_name);
  for (size_t s = 0; s < series.size(); ++s) {
    const std::string colour = kPalette[s % std::size(kPalette)];
    std::string points;
    for (size_t i = 0; i < x_labels.size() && i < values[s].size(); ++i) {
      if (!values[s][i].has_value()) continue;
      points += Int(x_at(i)) + "," + Int(y_at(*values[s][i])) + " ";
      svg += "  <circle cx=\"" + Int(x_at(i)) + "\" cy=\"" + Int(y_at(*values[s][i])) +
             "\" r=\"3\" fill=\"" + colour + "\"><title>" +
             XmlEscape(series[s] + ", " + x_labels[i] + ": " + Num(*values[s][i])) +
             "</title></circle>\n";
    }
    svg += "  <polyline fill=\"none\" stroke=\"" + colour + "\" stroke-width=\"2\" points=\"" +
           points + "\"/>\n";
    const double ly = kTop + 14.0 * static_cast<double>(s);
    svg += "  <rect x=\"" + Int(kLeft + kPlotW + 16) + "\" y=\"" + Int(ly) +
           "\" width=\"10\" height=\"10\" fill=\"" + colour + "\"/>\n";
    svg += Text(kLeft + kPlotW + 30, ly + 9, series[s]);
  }
  return svg + "</svg>\n";
}

std::string SvgHeatmap(const std::string& title, const std::string& x_name,
                       const std::vector<std::string>& x_labels, const std::string& y_name,
                       const std::vector<std::string>& y_labels,
                       const std::vector<std::vector<std::optional<double>>>& values) {
  constexpr int kLeft = 200, kTop = 44, kCellW = 110, kCellH = 26;
  double least = 0, most = 0;
  bool any = false;
  for (const auto& row : values) {
    for (const auto& v : row) {
      if (!v.has_value()) continue;
      least = any ? std::min(least, *v) : *v;
      most = any ? std::max(most, *v) : *v;
      any = true;
    }
  }
  std::string svg = Open(kLeft + kCellW * static_cast<int>(x_labels.size()) + 10,
                         kTop + kCellH * static_cast<int>(y_labels.size()) + 30, title);
  svg += Text(4, kTop - 8, y_name + " \\ " + x_name);
  for (size_t x = 0; x < x_labels.size(); ++x) {
    svg += Text(kLeft + kCellW * static_cast<double>(x) + kCellW / 2.0, kTop - 8, x_labels[x],
                " text-anchor=\"middle\"");
  }
  for (size_t y = 0; y < y_labels.size(); ++y) {
    const int top = kTop + kCellH * static_cast<int>(y);
    svg += Text(4, top + 17, y_labels[y]);
    for (size_t x = 0; x < x_labels.size() && x < values[y].size(); ++x) {
      if (!values[y][x].has_value()) continue;
      // Pale yellow to dark red, linear in the value.
      const double t = most > least ? (*values[y][x] - least) / (most - least) : 0.5;
      char colour[32];
      std::snprintf(colour, sizeof colour, "#%02x%02x%02x", 255 - static_cast<int>(t * 75),
                    235 - static_cast<int>(t * 200), 160 - static_cast<int>(t * 140));
      const int left = kLeft + kCellW * static_cast<int>(x);
      svg += "  <rect x=\"" + std::to_string(left) + "\" y=\"" + std::to_string(top) +
             "\" width=\"" + std::to_string(kCellW - 2) + "\" height=\"" +
             std::to_string(kCellH - 2) + "\" fill=\"" + colour + "\"/>\n";
      svg += Text(left + kCellW / 2.0, top + 17, Num(*values[y][x]),
                  std::string(" text-anchor=\"middle\"") + (t > 0.6 ? " fill=\"#fff\"" : ""));
    }
  }
  return svg + "</svg>\n";
}

}  // namespace tpusim::harness
