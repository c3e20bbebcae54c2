#include "harness/suite_report.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "harness/svg_chart.h"
#include "harness/version.h"

namespace tpusim::harness {
namespace {

std::string Seconds(double s) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3f", s);
  return buffer;
}

int Count(const std::vector<ScenarioResult>& results, const std::string& status) {
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
  double total = 0;
  for (const ScenarioResult& r : results) {
    std::string status = r.status;
    for (char& c : status) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    const std::string seconds = Seconds(r.seconds);
    out << status << std::string(8 - std::min<size_t>(8, status.size()), ' ')
        << std::string(7 - std::min<size_t>(7, seconds.size()), ' ') << seconds << "  " << r.name
        << std::string(width - r.name.size(), ' ') << "  "
        << (r.messages.empty() ? "" : r.messages.front()) << '\n';
    for (size_t i = 1; i < r.messages.size(); ++i) {
      out << std::string(19 + width, ' ') << r.messages[i] << '\n';
    }
    total += r.seconds;
  }
  out << results.size() << " scenario(s): " << Count(results, "pass") << " passed, "
      << Count(results, "fail") << " failed, " << Count(results, "stale") << " stale, "
      << Count(results, "error") << " error(s)\n";
}

std::string SuiteJson(const std::vector<ScenarioResult>& results) {
  nlohmann::ordered_json json;
  json["tpusim_version"] = std::string(kVersion);
  json["passed"] = Count(results, "pass");
  json["failed"] = Count(results, "fail");
  json["stale"] = Count(results, "stale");
  json["errors"] = Count(results, "error");
  json["scenarios"] = nlohmann::ordered_json::array();
  for (const ScenarioResult& r : results) {
    json["scenarios"].push_back(nlohmann::ordered_json::parse(ResultToJson(r)));
  }
  return json.dump(2) + "\n";
}

std::string SuiteJUnit(const std::vector<ScenarioResult>& results) {
  double total = 0;
  for (const ScenarioResult& r : results) total += r.seconds;
  std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  xml += "<testsuites name=\"tpusim run\" tests=\"" + std::to_string(results.size()) +
         "\" failures=\"" + std::to_string(Count(results, "fail") + Count(results, "stale")) +
         "\" errors=\"" + std::to_string(Count(results, "error")) + "\" time=\"" + Seconds(total) +
         "\">\n";
  xml += "  <testsuite name=\"tpusim\" tests=\"" + std::to_string(results.size()) +
         "\" failures=\"" + std::to_string(Count(results, "fail") + Count(results, "stale")) +
         "\" errors=\"" + std::to_string(Count(results, "error")) + "\" skipped=\"0\" time=\"" +
         Seconds(total) + "\">\n";
  for (const ScenarioResult& r : results) {
    xml += "    <testcase name=\"" + XmlEscape(r.name) + "\" classname=\"" + XmlEscape(r.file) +
           "\" time=\"" + Seconds(r.seconds) + "\"";
    if (r.status == "pass") {
      xml += "/>\n";
      continue;
    }
    const std::string tag = r.status == "error" ? "error" : "failure";
    const std::string first = r.messages.empty() ? r.status : r.messages.front();
    xml += ">\n      <" + tag + " message=\"" + XmlEscape(first) + "\" type=\"" + r.status + "\">" +
           XmlEscape(Join(r.messages)) + "</" + tag + ">\n    </testcase>\n";
  }
  xml += "  </testsuite>\n</testsuites>\n";
  return xml;
}

namespace {

/// Bars coloured by scenario status.
std::string StatusBars(const std::string& title, const std::vector<ScenarioResult>& results,
                       const std::vector<double>& values, const std::string& unit) {
  std::vector<std::string> names, colours;
  for (const ScenarioResult& r : results) {
    names.push_back(r.name);
    colours.push_back(r.status == "pass"    ? "#4caf50"
                      : r.status == "stale" ? "#fb8c00"
                      : r.status == "error" ? "#8e24aa"
                                            : "#e53935");
  }
  return "<h2>" + XmlEscape(title) + "</h2>\n" + SvgBarChart(title, names, values, colours, unit);
}

std::string Metric(const ScenarioResult& r, const std::string& name) {
  const auto it = r.metrics.find(name);
  if (it == r.metrics.end()) return "";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6g", it->second);
  return buffer;
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
          " scenario(s): " + std::to_string(Count(results, "pass")) + " passed, " +
          std::to_string(Count(results, "fail")) + " failed, " +
          std::to_string(Count(results, "stale")) + " stale, " +
          std::to_string(Count(results, "error")) + " error(s).</p>\n";
  std::vector<double> wall, simulated;
  for (const ScenarioResult& r : results) {
    wall.push_back(r.seconds);
    const auto it = r.metrics.find("time_us");
    simulated.push_back(it != r.metrics.end() ? it->second : 0);
  }
  html += StatusBars("Wall time per scenario", results, wall, "s");
  html += StatusBars("Simulated time per scenario", results, simulated, "us");
  html +=
      "<h2>Scenarios</h2>\n<table>\n<tr><th>status</th><th>scenario</th><th>wall s</th>"
      "<th>cycles</th><th>time us</th><th>HBM bytes</th><th>utilisation</th>"
      "<th>trace</th><th>details</th></tr>\n";
  for (const ScenarioResult& r : results) {
    const bool timed = r.metrics.count("cycles") != 0;
    html += "<tr><td class=\"" + r.status + "\">" + r.status + "</td><td>" + XmlEscape(r.name) +
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
