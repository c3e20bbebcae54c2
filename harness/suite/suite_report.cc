#include "harness/suite/suite_report.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <system_error>

#include "harness/report/svg_chart.h"
#include "harness/version.h"
#include "sim/base/json_text.h"
#include "sim/base/units.h"

namespace tpusim::harness {
namespace {

std::string Seconds(double s) { return FormatFixed(s, 3); }

/// A testcase's classname: the scenario file without `.yaml`, its other dots
/// made `_`, since Jenkins reads the part before the last dot as a package.
std::string JUnitClassName(std::string file) {
  if (file.ends_with(".yaml")) file.resize(file.size() - 5);
  std::replace(file.begin(), file.end(), '.', '_');
  return file;
}

/// The shortest decimal that reads back as `value` (std::to_chars), so a
/// metric in the JUnit report is the one the run measured.
std::string ShortestDecimal(double value) {
  char text[32];
  const auto [end, ec] = std::to_chars(text, text + sizeof text, value);
  return ec == std::errc() ? std::string(text, end) : std::string("nan");
}

/// "PASS", "FAIL", ...: the status as the table and annotations shout it.
std::string UpperStatus(ScenarioStatus status) {
  std::string text(ScenarioStatusName(status));
  for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

int Count(const std::vector<ScenarioResult>& results, ScenarioStatus status) {
  int n = 0;
  for (const ScenarioResult& r : results) n += r.status == status ? 1 : 0;
  return n;
}

std::string Join(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  return text;
}

}  // namespace

void PrintSuiteTable(const std::vector<ScenarioResult>& results, std::ostream& out) {
  size_t width = 8;
  for (const ScenarioResult& r : results) width = std::max(width, r.name.size());
  out << "status  seconds  " << std::string("scenario") << std::string(width - 8, ' ')
      << "  detail\n";
  for (const ScenarioResult& r : results) {
    const std::string status = UpperStatus(r.status);
    const std::string seconds = Seconds(r.seconds);
    out << status << std::string(8 - std::min<size_t>(8, status.size()), ' ')
        << std::string(7 - std::min<size_t>(7, seconds.size()), ' ') << seconds << "  " << r.name
        << std::string(width - r.name.size(), ' ') << "  "
        << (r.messages.empty() ? "" : r.messages.front()) << '\n';
    for (size_t i = 1; i < r.messages.size(); ++i) {
      out << std::string(19 + width, ' ') << r.messages[i] << '\n';
    }
  }
  out << results.size() << " scenario(s): " << Count(results, ScenarioStatus::kPass) << " passed, "
      << Count(results, ScenarioStatus::kFail) << " failed, " << Count(results, ScenarioStatus::kStale) << " stale, "
      << Count(results, ScenarioStatus::kError) << " error(s)\n";
}

std::string SuiteJson(const std::vector<ScenarioResult>& results) {
  nlohmann::ordered_json json;
  json["tpusim_version"] = std::string(kVersion);
  json["passed"] = Count(results, ScenarioStatus::kPass);
  json["failed"] = Count(results, ScenarioStatus::kFail);
  json["stale"] = Count(results, ScenarioStatus::kStale);
  json["errors"] = Count(results, ScenarioStatus::kError);
  json["scenarios"] = nlohmann::ordered_json::array();
  for (const ScenarioResult& r : results) {
    json["scenarios"].push_back(nlohmann::ordered_json::parse(ResultToJson(r)));
  }
  return JsonText(json, 2) + "\n";
}

namespace {

/// `text` escaped for a workflow command's message, or with `property` also
/// for one of its `key=value` properties (GitHub's toolkit escaping rules).
std::string GithubEscape(const std::string& text, bool property) {
  std::string out;
  for (char c : text) {
    if (c == '%') {
      out += "%25";
    } else if (c == '\r') {
      out += "%0D";
    } else if (c == '\n') {
      out += "%0A";
    } else if (property && c == ':') {
      out += "%3A";
    } else if (property && c == ',') {
      out += "%2C";
    } else {
      out += c;
    }
  }
  return out;
}

/// FILE, LINE and COL of a message that starts `FILE:LINE:COL:` or
/// `FILE:LINE:` (tpusim's located errors); nullopt when it is not located.
struct MessageLocation {
  std::string file;
  int64_t line = 0;
  int64_t column = 0;
};
std::optional<MessageLocation> LocationOf(const std::string& message) {
  const size_t colon = message.find(':');
  if (colon == std::string::npos || colon == 0) return std::nullopt;
  // The all-digit field from `from` up to the next ':', or npos.
  const auto number = [&](size_t from, int64_t& value) -> size_t {
    size_t end = from;
    while (end < message.size() && std::isdigit(static_cast<unsigned char>(message[end]))) ++end;
    if (end == from || end - from > 9 || end >= message.size() || message[end] != ':') {
      return std::string::npos;
    }
    std::from_chars(message.data() + from, message.data() + end, value);
    return end;
  };
  MessageLocation at{message.substr(0, colon)};
  const size_t after_line = number(colon + 1, at.line);
  if (after_line == std::string::npos || at.line <= 0) return std::nullopt;
  number(after_line + 1, at.column);
  return at;
}

}  // namespace

std::string SuiteGithubAnnotations(const std::vector<ScenarioResult>& results) {
  std::string out;
  for (const ScenarioResult& r : results) {
    if (r.status == ScenarioStatus::kPass) continue;
    std::optional<MessageLocation> at;
    for (const std::string& m : r.messages) {
      if ((at = LocationOf(m))) break;
    }
    std::string where = "file=" + GithubEscape(at ? at->file : r.file, true);
    if (at) {
      where += ",line=" + std::to_string(at->line);
      if (at->column > 0) where += ",col=" + std::to_string(at->column);
    }
    std::string message;
    for (const std::string& m : r.messages) message += (message.empty() ? "" : "\n") + m;
    if (message.empty()) message = ScenarioStatusName(r.status);
    const std::string status = UpperStatus(r.status);
    out += (r.status == ScenarioStatus::kStale ? "::warning " : "::error ") + where +
           ",title=" + GithubEscape("tpusim scenario " + r.name + ": " + status, true) +
           "::" + GithubEscape(message, false) + "\n";
  }
  return out;
}

std::string SuiteJUnit(const std::vector<ScenarioResult>& results) {
  double total = 0;
  for (const ScenarioResult& r : results) total += r.seconds;
  std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  xml += "<testsuites name=\"tpusim run\" tests=\"" + std::to_string(results.size()) +
         "\" failures=\"" + std::to_string(Count(results, ScenarioStatus::kFail) + Count(results, ScenarioStatus::kStale)) +
         "\" errors=\"" + std::to_string(Count(results, ScenarioStatus::kError)) + "\" time=\"" + Seconds(total) +
         "\">\n";
  xml += "  <testsuite name=\"tpusim\" tests=\"" + std::to_string(results.size()) +
         "\" failures=\"" + std::to_string(Count(results, ScenarioStatus::kFail) + Count(results, ScenarioStatus::kStale)) +
         "\" errors=\"" + std::to_string(Count(results, ScenarioStatus::kError)) + "\" skipped=\"0\" time=\"" +
         Seconds(total) + "\">\n";
  for (const ScenarioResult& r : results) {
    xml += "    <testcase name=\"" + XmlEscape(r.name) + "\" classname=\"" +
           XmlEscape(JUnitClassName(r.file)) + "\" time=\"" + Seconds(r.seconds) + "\"";
    if (r.status == ScenarioStatus::kPass && r.metrics.empty()) {
      xml += "/>\n";
      continue;
    }
    xml += ">\n";
    if (!r.metrics.empty()) {
      xml += "      <properties>\n";
      for (const auto& [name, value] : r.metrics) {
        xml += "        <property name=\"" + XmlEscape(name) + "\" value=\"" +
               ShortestDecimal(value) + "\"/>\n";
      }
      xml += "      </properties>\n";
    }
    if (r.status != ScenarioStatus::kPass) {
      const std::string tag = r.status == ScenarioStatus::kError ? "error" : "failure";
      const std::string first =
          r.messages.empty() ? std::string(ScenarioStatusName(r.status)) : r.messages.front();
      xml += "      <" + tag + " message=\"" + XmlEscape(first) + "\" type=\"" + std::string(ScenarioStatusName(r.status)) + "\">" +
             XmlEscape(Join(r.messages)) + "</" + tag + ">\n";
    }
    xml += "    </testcase>\n";
  }
  xml += "  </testsuite>\n</testsuites>\n";
  return xml;
}

namespace {

/// Bar colours by scenario status, and the golden's.
std::string StatusFill(ScenarioStatus status) {
  if (status == ScenarioStatus::kPass) return "#4caf50";
  if (status == ScenarioStatus::kFail) return "#e53935";
  if (status == ScenarioStatus::kStale) return "#fb8c00";
  return "#8e24aa";
}
constexpr char kGoldenFill[] = "#9e9e9e";

double MetricValue(const std::map<std::string, double>& metrics, const std::string& name) {
  const auto it = metrics.find(name);
  return it != metrics.end() ? it->second : 0;
}

/// One bar per scenario of `metric`; with `against_golden`, the golden's
/// value under it where the scenario was checked against one.
std::string MetricChart(const std::string& title, const std::vector<ScenarioResult>& results,
                        const std::string& metric,
                        const std::string& unit, bool against_golden) {
  std::vector<BarRow> rows;
  bool any_golden = false;
  for (const ScenarioResult& r : results) {
    BarRow row{r.name, {{MetricValue(r.metrics, metric), StatusFill(r.status)}}};
    if (against_golden && r.golden_metrics.count(metric) != 0) {
      row.bars.push_back({r.golden_metrics.at(metric), kGoldenFill});
      any_golden = true;
    }
    rows.push_back(std::move(row));
  }
  std::vector<LegendEntry> legend;
  if (any_golden) legend = {{StatusFill(ScenarioStatus::kPass), "this run (colour: status)"}, {kGoldenFill, "golden"}};
  // Against a golden, what matters is each scenario's change: its own scale.
  return HorizontalBarChart(title, rows, unit, legend,
                            against_golden ? BarScale::kPerRow : BarScale::kShared);
}

/// Simulated time by opcode, per scenario: the seven opcodes that take the
/// most time over the suite, then the rest as "other".
std::string OpTimeChart(const std::vector<ScenarioResult>& results) {
  std::map<std::string, double> totals;
  for (const ScenarioResult& r : results) {
    for (const auto& [opcode, us] : r.op_time_us) totals[opcode] += us;
  }
  std::vector<std::pair<std::string, double>> ranked(totals.begin(), totals.end());
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  constexpr size_t kShown = 7;
  std::vector<LegendEntry> legend;
  for (size_t i = 0; i < ranked.size() && i < kShown; ++i) {
    legend.push_back({PaletteColour(i), ranked[i].first});
  }
  if (ranked.size() > kShown) legend.push_back({"#bdbdbd", "other"});
  std::vector<std::string> labels;
  std::vector<std::vector<double>> values;
  for (const ScenarioResult& r : results) {
    labels.push_back(r.name);
    std::vector<double> row(legend.size(), 0.0);
    for (const auto& [opcode, us] : r.op_time_us) {
      size_t segment = kShown;
      for (size_t i = 0; i < ranked.size() && i < kShown; ++i) {
        if (ranked[i].first == opcode) segment = i;
      }
      if (segment < row.size()) row[segment] += us;
    }
    values.push_back(std::move(row));
  }
  // Each scenario's mix, whatever its size; the totals are written beside.
  return StackedBarChart("Simulated time by opcode", labels, values, legend, "us",
                         BarScale::kPerRow);
}

/// The scenario's link utilisation as a from-node x to-node heatmap; networks
/// of more than kMaxCells nodes are shown in blocks of consecutive nodes, each
/// cell the busiest link between two blocks.
std::string LinkHeatmap(const ScenarioResult& r) {
  constexpr size_t kMaxCells = 64;
  const size_t nodes = r.network_nodes.size();
  if (nodes == 0) return "";
  const size_t block = (nodes + kMaxCells - 1) / kMaxCells;
  const size_t cells = (nodes + block - 1) / block;
  std::vector<std::string> labels;
  for (size_t c = 0; c < cells; ++c) {
    const size_t first = c * block, last = std::min(nodes, first + block) - 1;
    labels.push_back(first == last ? r.network_nodes[first]
                                   : r.network_nodes[first] + " .. " + r.network_nodes[last]);
  }
  std::vector<std::vector<std::optional<double>>> values(cells, std::vector<std::optional<double>>(cells));
  for (const LinkLoad& link : r.links) {
    if (link.from < 0 || link.to < 0 || static_cast<size_t>(link.from) >= nodes ||
        static_cast<size_t>(link.to) >= nodes) {
      continue;
    }
    std::optional<double>& cell = values[static_cast<size_t>(link.from) / block][static_cast<size_t>(link.to) / block];
    cell = std::max(cell.value_or(0), link.utilisation);
  }
  return HeatmapChart("Link utilisation: " + r.name, "to", labels, "from", labels, values);
}

std::string Metric(const ScenarioResult& r, const std::string& name) {
  const auto it = r.metrics.find(name);
  if (it == r.metrics.end()) return "";
  return FormatSignificant(it->second);
}

}  // namespace

std::string SuiteHtml(const std::vector<ScenarioResult>& results, const std::string& trace_dir) {
  std::string html =
      "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n"
      "<meta charset=\"utf-8\"/>\n<title>tpusim run</title>\n<style>\n"
      "body { font-family: sans-serif; margin: 2em; }\n"
      "table { border-collapse: collapse; }\n"
      "td, th { border: 1px solid #ccc; padding: 2px 6px; text-align: left; vertical-align: top; "
      "}\n"
      "td.pass { color: #2e7d32; } td.fail, td.error { color: #c62828; } td.stale { color: "
      "#ef6c00; }\n"
      "</style>\n</head>\n<body>\n";
  html += "<h1>tpusim run (tpusim " + std::string(kVersion) + ")</h1>\n<p>" +
          std::to_string(results.size()) +
          " scenario(s): " + std::to_string(Count(results, ScenarioStatus::kPass)) + " passed, " +
          std::to_string(Count(results, ScenarioStatus::kFail)) + " failed, " +
          std::to_string(Count(results, ScenarioStatus::kStale)) + " stale, " +
          std::to_string(Count(results, ScenarioStatus::kError)) + " error(s).</p>\n";
  std::vector<BarRow> wall;
  for (const ScenarioResult& r : results) wall.push_back({r.name, {{r.seconds, StatusFill(r.status)}}});
  html += "<h2>Charts</h2>\n" + HorizontalBarChart("Wall time per scenario", wall, "s");
  html += MetricChart("Simulated time against golden", results, "time_us", "us", true);
  html += OpTimeChart(results);
  html += MetricChart("HBM bytes against golden", results, "hbm_bytes", "B", true);
  std::vector<ScenarioResult> networked;
  std::copy_if(results.begin(), results.end(), std::back_inserter(networked),
               [](const ScenarioResult& r) { return !r.links.empty(); });
  if (!networked.empty()) {
    html += MetricChart("ICI bytes against golden (multi-chip scenarios)", networked, "ici_bytes",
                        "B", true);
    for (const ScenarioResult& r : networked) {
      const std::string busiest = FormatPercent(100 * MetricValue(r.metrics, "link_utilisation"));
      html += "<p>" + XmlEscape(r.name) + ": each cell is the link from a row's node to a column's; "
              "the darkest is the busiest link, busy " + busiest +
              " of the run at its full bandwidth.</p>\n" + LinkHeatmap(r);
    }
  }
  html +=
      "<h2>Scenarios</h2>\n<table>\n<tr><th>status</th><th>scenario</th><th>wall s</th>"
      "<th>cycles</th><th>time us</th><th>HBM bytes</th><th>utilisation</th>"
      "<th>trace</th><th>details</th></tr>\n";
  for (const ScenarioResult& r : results) {
    const bool timed = r.metrics.count("cycles") != 0;
    const std::string status(ScenarioStatusName(r.status));
    html += "<tr><td class=\"" + status + "\">" + status + "</td><td>" + XmlEscape(r.name) +
            "<br/><small>" + XmlEscape(r.file) + "</small></td><td>" + Seconds(r.seconds) +
            "</td><td>" + Metric(r, "cycles") + "</td><td>" + Metric(r, "time_us") + "</td><td>" +
            Metric(r, "hbm_bytes") + "</td><td>" + Metric(r, "utilisation") + "</td><td>";
    if (timed) {
      html += "<a href=\"" + XmlEscape(trace_dir + "/" + r.name + ".json") +
              "\" title=\"open in ui.perfetto.dev\">trace</a>";
    }
    html += "</td><td>";
    for (const std::string& m : r.messages) html += XmlEscape(m) + "<br/>";
    html += "</td></tr>\n";
  }
  html +=
      "</table>\n<p>Traces are Chrome/Perfetto JSON: open them in "
      "<a href=\"https://ui.perfetto.dev\">ui.perfetto.dev</a>.</p>\n</body>\n</html>\n";
  return html;
}

}  // namespace tpusim::harness
