#include "harness/validate/validation_report.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <ostream>
#include <vector>

#include "harness/report/svg_chart.h"
#include "sim/base/json_text.h"
#include "sim/base/units.h"

namespace tpusim::harness {
namespace {

std::string Percent(double value) { return FormatPercent(value); }
std::string Signed(double value) { return FormatPercent(value, PercentSign::kSigned); }
std::string Micros(double value) { return FormatSignificant(value, 4); }

/// Rows with a prediction, largest |error| first (ties by id, so the order is stable).
std::vector<const ValidationRow*> Worst(const ValidationResult& result, int count) {
  std::vector<const ValidationRow*> rows;
  for (const ValidationRow& row : result.rows) {
    if (row.skipped.empty()) rows.push_back(&row);
  }
  std::stable_sort(rows.begin(), rows.end(), [](const ValidationRow* a, const ValidationRow* b) {
    const double ea = std::fabs(a->Error()), eb = std::fabs(b->Error());
    return ea != eb ? ea > eb : a->measurement.id < b->measurement.id;
  });
  if (static_cast<int>(rows.size()) > count) rows.resize(std::max(count, 0));
  return rows;
}

/// A table as text: a header, then rows, columns padded; column 0 left-aligned.
void PrintTable(const std::vector<std::vector<std::string>>& table, std::ostream& out) {
  std::vector<size_t> width;
  for (const auto& row : table) {
    width.resize(std::max(width.size(), row.size()));
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  for (const auto& row : table) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      const std::string pad(width[i] - row[i].size(), ' ');
      line +=
          i == 0 || i + 1 == row.size() ? row[i] + (i + 1 == row.size() ? "" : pad) : pad + row[i];
      if (i + 1 < row.size()) line += "  ";
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << '\n';
  }
}

std::vector<std::vector<std::string>> FamilyTable(const ValidationResult& result) {
  std::vector<std::vector<std::string>> table = {{"FAMILY", "CHIP", "N", "SKIPPED", "MAPE",
                                                  "MEDIAN", "MAX", "BIAS", "R2(LOG)", "BOUND",
                                                  "TARGET", "STATUS"}};
  for (const FamilyStats& f : result.families) {
    const bool all = f.name == "all";
    std::string status = all                ? ""
                         : f.over_bound()   ? "FAIL (over bound)"
                         : f.skipped > 0    ? "FAIL (rows skipped)"
                         : f.mape > f.target_mape ? "ok (above target)"
                                                  : "ok";
    table.push_back({f.name, all ? "" : f.chip, std::to_string(f.rows), std::to_string(f.skipped),
                     Percent(f.mape), Percent(f.median), Percent(f.max), Signed(f.bias),
                     FormatFixed(f.r2, 3), all ? "" : Percent(f.max_mape),
                     all ? "" : Percent(f.target_mape), status});
  }
  return table;
}

std::vector<std::vector<std::string>> WorstTable(const ValidationResult& result, int worst) {
  std::vector<std::vector<std::string>> table = {
      {"ID", "FAMILY", "MEASURED US", "TPUSIM US", "ERROR", "BOUND BY", "WORKLOAD"}};
  for (const ValidationRow* row : Worst(result, worst)) {
    table.push_back({row->measurement.id, row->family, Micros(row->measurement.measured_us),
                     Micros(row->predicted_us), Signed(row->Error() * 100), row->bound_by,
                     row->measurement.op + " " + row->measurement.shapes});
  }
  return table;
}

std::string HtmlTable(const std::vector<std::vector<std::string>>& table) {
  std::string html = "<table>\n";
  for (size_t r = 0; r < table.size(); ++r) {
    html += "<tr>";
    for (const std::string& cell : table[r]) {
      html += (r == 0 ? "<th>" : "<td>") + XmlEscape(cell) + (r == 0 ? "</th>" : "</td>");
    }
    html += "</tr>\n";
  }
  return html + "</table>\n";
}

}  // namespace

void PrintValidationTables(const ValidationResult& result, int worst, std::ostream& out) {
  PrintTable(FamilyTable(result), out);
  if (worst <= 0) return;
  out << "\nWorst " << worst << " rows by |error|:\n";
  PrintTable(WorstTable(result, worst), out);
  int64_t skipped = 0;
  const ValidationRow* first = nullptr;
  for (const ValidationRow& row : result.rows) {
    if (row.skipped.empty()) continue;
    if (++skipped == 1) first = &row;
  }
  if (first != nullptr) {
    out << "\n"
        << skipped << " rows skipped; the first: " << first->measurement.id << ": "
        << first->skipped << "\n";
  }
}

std::string ValidationJson(const ValidationResult& result) {
  nlohmann::ordered_json doc;
  doc["families"] = nlohmann::ordered_json::array();
  for (const FamilyStats& f : result.families) {
    nlohmann::ordered_json j;
    j["name"] = f.name;
    if (f.name != "all") j["chip"] = f.chip;
    j["rows"] = f.rows;
    j["skipped"] = f.skipped;
    j["mape_percent"] = f.mape;
    j["median_abs_error_percent"] = f.median;
    j["max_abs_error_percent"] = f.max;
    j["bias_percent"] = f.bias;
    j["r2_log"] = f.r2;
    if (f.name != "all") {
      j["max_mape_percent"] = f.max_mape;
      j["target_mape_percent"] = f.target_mape;
      j["over_bound"] = f.over_bound();
      j["failed"] = f.failed();
    }
    doc["families"].push_back(std::move(j));
  }
  doc["rows"] = nlohmann::ordered_json::array();
  for (const ValidationRow& row : result.rows) {
    nlohmann::ordered_json j;
    j["id"] = row.measurement.id;
    j["family"] = row.family;
    j["measured_us"] = row.measurement.measured_us;
    if (row.skipped.empty()) {
      j["predicted_us"] = row.predicted_us;
      j["error_percent"] = row.Error() * 100;
      j["bound_by"] = row.bound_by;
    } else {
      j["skipped"] = row.skipped;
    }
    doc["rows"].push_back(std::move(j));
  }
  return JsonText(doc, 1) + "\n";
}

std::string ValidationHtml(const ValidationResult& result, int worst) {
  std::vector<ScatterSeries> series;
  for (const FamilyStats& f : result.families) {
    if (f.name == "all") continue;
    ScatterSeries s;
    s.name = f.name;
    for (const ValidationRow& row : result.rows) {
      if (row.family != f.name || !row.skipped.empty()) continue;
      s.x.push_back(row.measurement.measured_us);
      s.y.push_back(row.predicted_us);
      s.tooltips.push_back(row.measurement.id + ": measured " +
                           Micros(row.measurement.measured_us) + " us, tpusim " +
                           Micros(row.predicted_us) + " us (" + Signed(row.Error() * 100) + ", " +
                           row.bound_by + ")");
    }
    series.push_back(std::move(s));
  }
  std::string html =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<title>tpusim validate</title>\n<style>\nbody { font-family: sans-serif; margin: 24px; }\n"
      "table { border-collapse: collapse; margin-bottom: 24px; }\n"
      "th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: right; }\n"
      "th:first-child, td:first-child, td:last-child { text-align: left; }\n</style>\n</head>\n"
      "<body>\n<h1>tpusim against published TPU timings</h1>\n"
      "<p>Error = (tpusim - measured) / measured. MAPE: mean |error|; bias: mean signed error; "
      "R2(LOG): squared correlation of log times. BOUND fails the run; TARGET is the goal.</p>\n";
  html += HtmlTable(FamilyTable(result));
  html += LogLogScatterChart("Predicted against measured time (us), log-log", "measured (us)",
                             "tpusim (us)", series);
  html +=
      "<h2>Worst " + std::to_string(worst) + " rows</h2>\n" + HtmlTable(WorstTable(result, worst));
  return html + "</body>\n</html>\n";
}

}  // namespace tpusim::harness
