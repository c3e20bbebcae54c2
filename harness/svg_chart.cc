#include "harness/svg_chart.h"

#include <algorithm>
#include <cstdio>

namespace tpusim::harness {
namespace {

constexpr int kLabelWidth = 260;  ///< the row labels' column
constexpr int kPlotWidth = 420;   ///< the longest bar
constexpr int kBarHeight = 12;
constexpr int kRowGap = 6;
constexpr int kLegendRow = 18;

std::string Number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

std::string Px(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", value);
  return text;
}

std::string SvgOpen(int width, int height) {
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(width) +
         "\" height=\"" + std::to_string(height) + "\" font-family=\"sans-serif\" font-size=\"12\">\n";
}

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

/// Legend entries four to a line from the top; returns the height used.
int Legend(const std::vector<LegendEntry>& legend, std::string& svg) {
  constexpr int kPerLine = 4, kEntryWidth = 200;
  for (size_t i = 0; i < legend.size(); ++i) {
    const int x = static_cast<int>(i % kPerLine) * kEntryWidth;
    const int y = static_cast<int>(i / kPerLine) * kLegendRow;
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

std::string HorizontalBarChart(const std::vector<BarRow>& rows, const std::string& unit,
                               const std::vector<LegendEntry>& legend) {
  double most = 0;
  int bar_count = 0;
  for (const BarRow& row : rows) {
    for (const Bar& bar : row.bars) most = std::max(most, bar.value);
    bar_count += static_cast<int>(std::max<size_t>(row.bars.size(), 1));
  }
  std::string body;
  int y = Legend(legend, body);
  for (const BarRow& row : rows) {
    body += Text(0, y + kBarHeight - 2, row.label);
    for (const Bar& bar : row.bars) {
      const double width = most > 0 ? std::max(bar.value / most * kPlotWidth, 1.0) : 1.0;
      body += Rect(kLabelWidth, y, width, kBarHeight - 2, bar.fill);
      body += Text(kLabelWidth + width + 4, y + kBarHeight - 2, Number(bar.value) + " " + unit);
      y += kBarHeight;
    }
    if (row.bars.empty()) y += kBarHeight;
    y += kRowGap;
  }
  return SvgOpen(kLabelWidth + kPlotWidth + 140, y + 4) + body + "</svg>\n";
}

std::string StackedBarChart(const std::vector<std::string>& row_labels,
                            const std::vector<std::vector<double>>& values,
                            const std::vector<LegendEntry>& legend, const std::string& unit) {
  double most = 0;
  for (const std::vector<double>& row : values) {
    double total = 0;
    for (double v : row) total += v;
    most = std::max(most, total);
  }
  std::string body;
  int y = Legend(legend, body);
  for (size_t r = 0; r < row_labels.size(); ++r) {
    body += Text(0, y + kBarHeight, row_labels[r]);
    double x = kLabelWidth, total = 0;
    const std::vector<double>& row = r < values.size() ? values[r] : std::vector<double>{};
    for (size_t s = 0; s < row.size() && s < legend.size(); ++s) {
      total += row[s];
      if (row[s] <= 0 || most <= 0) continue;
      const double width = row[s] / most * kPlotWidth;
      body += Rect(x, y, width, kBarHeight, legend[s].fill,
                   legend[s].text + ": " + Number(row[s]) + " " + unit);
      x += width;
    }
    body += Text(x + 4, y + kBarHeight, Number(total) + " " + unit);
    y += kBarHeight + kRowGap;
  }
  return SvgOpen(kLabelWidth + kPlotWidth + 140, y + 4) + body + "</svg>\n";
}

std::string HeatmapChart(const std::vector<std::string>& labels, const std::vector<double>& values,
                         double full, const std::string& row_axis, const std::string& column_axis) {
  const int n = static_cast<int>(labels.size());
  const int cell = std::clamp(480 / std::max(n, 1), 6, 24);
  // Labels on every cell when they fit, else on every step-th.
  const int step = cell >= 12 ? 1 : (12 + cell - 1) / cell;
  constexpr int kMargin = 80;
  const int side = n * cell;
  std::string body;
  body += Text(kMargin, 12, column_axis + " →");
  body += Text(0, 12, row_axis + " ↓");
  for (int i = 0; i < n; i += step) {
    const double middle = kMargin + i * cell + cell / 2.0;
    body += Text(kMargin - 4, middle + 4, labels[i], " text-anchor=\"end\"");
    body += Text(middle + 4, kMargin - 4, labels[i],
                 " text-anchor=\"start\" transform=\"rotate(-90 " + Px(middle + 4) + " " +
                     Px(kMargin - 4) + ")\"");
  }
  for (int r = 0; r < n; ++r) {
    for (int c = 0; c < n; ++c) {
      const size_t at = static_cast<size_t>(r) * n + c;
      const double v = at < values.size() ? values[at] : -1;
      const double x = kMargin + c * cell, y = kMargin + r * cell;
      if (v < 0) {
        body += Rect(x, y, cell, cell, "#f2f2f2");
      } else {
        body += Rect(x, y, cell, cell, Shade(full > 0 ? v / full : 0),
                     labels[r] + " → " + labels[c] + ": " + Number(v));
      }
    }
  }
  // The scale: ten steps from 0 to `full`.
  const int scale_y = kMargin + side + 12;
  for (int i = 0; i < 10; ++i) body += Rect(kMargin + i * 20, scale_y, 20, 10, Shade((i + 0.5) / 10));
  body += Text(kMargin, scale_y + 24, "0");
  body += Text(kMargin + 200, scale_y + 24, Number(full), " text-anchor=\"end\"");
  return SvgOpen(kMargin + side + 20, scale_y + 32) + body + "</svg>\n";
}

}  // namespace tpusim::harness
