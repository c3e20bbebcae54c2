#include "harness/suite_report.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <ostream>
#include <string>

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

/// Text safe inside an XML attribute or element: the five specials escaped,
/// control characters XML 1.0 forbids replaced by '?'.
std::string XmlEscape(const std::string& text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
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
         "\" errors=\"" + std::to_string(Count(results, "error")) + "\" time=\"" +
         Seconds(total) + "\">\n";
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
    xml += ">\n      <" + tag + " message=\"" + XmlEscape(first) + "\" type=\"" + r.status +
           "\">" + XmlEscape(Join(r.messages)) + "</" + tag + ">\n    </testcase>\n";
  }
  xml += "  </testsuite>\n</testsuites>\n";
  return xml;
}

}  // namespace tpusim::harness
