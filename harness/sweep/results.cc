#include "harness/sweep/results.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include "harness/run/metrics.h"
#include "harness/suite/scenario.h"
#include "harness/version.h"
#include "sim/base/file.h"
#include "sim/base/json_text.h"

namespace tpusim::harness {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

constexpr char kJournal[] = "results.jsonl";
constexpr char kTable[] = "results.csv";
constexpr char kStampFile[] = "study.json";

/// A CSV field, quoted when it holds a comma, quote or line break.
std::string CsvField(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char c : text) {
    quoted += c;
    if (c == '"') quoted += '"';
  }
  return quoted + "\"";
}

/// A metric as JSON writes it (shortest text that reads back the same double),
/// so that the CSV and the journal agree digit for digit.
std::string Number(double value) { return JsonText(ordered_json(value)); }

std::string StampJson(const Study& study) {
  ordered_json json;
  json["study"] = study.name;
  json["stamp"] = study.stamp;
  json["tpusim_version"] = std::string(kVersion);
  json["points"] = study.points.size();
  json["axes"] = study.axes;
  return JsonText(json, 2) + "\n";
}

Status WriteAll(int fd, const std::string& text, const std::string& path) {
  size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return InvalidArgument(path + ": error: cannot write file: " + std::strerror(errno));
    written += static_cast<size_t>(n);
  }
  if (fsync(fd) != 0) {
    return InvalidArgument(path + ": error: cannot write file: " + std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace

std::string ResultJsonLine(const Study& study, const PointResult& result) {
  ordered_json json;
  json["index"] = result.index;
  json["point"] = result.key;
  json["params"] = ordered_json::object();
  const StudyPoint& point = study.points[static_cast<size_t>(result.index)];
  for (size_t a = 0; a < study.axes.size(); ++a) json["params"][study.axes[a]] = point.labels[a];
  json["status"] = result.status;
  json["metrics"] = MetricsJson(result.metrics);
  json["message"] = result.message;
  return JsonText(json);
}

StatusOr<PointResult> ResultFromJsonLine(const Study& study, const std::string& line,
                                         const std::string& where) {
  PointResult result;
  try {
    const ordered_json json = ordered_json::parse(line);
    result.index = json.at("index").get<int64_t>();
    result.key = json.at("point").get<std::string>();
    result.status = json.at("status").get<std::string>();
    result.metrics = MetricsFromJson(json.at("metrics"));
    result.message = json.at("message").get<std::string>();
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(where + ": error: malformed result line: " + e.what());
  }
  if (result.index < 0 || result.index >= static_cast<int64_t>(study.points.size()) ||
      study.points[static_cast<size_t>(result.index)].key != result.key) {
    return InvalidArgument(where + ": error: point " + std::to_string(result.index) + " (" +
                           result.key + ") is not a point of study " + study.file);
  }
  // The statuses a sweep writes; anything else was edited, and would be
  // carried into results.csv and the exit code as if it were a result.
  constexpr std::string_view kStatuses[] = {"ok", "error", "crashed", "timeout"};
  if (std::find(std::begin(kStatuses), std::end(kStatuses), result.status) ==
      std::end(kStatuses)) {
    return InvalidArgument(where + ": error: point " + std::to_string(result.index) +
                           " has status " + Quote(result.status) +
                           ", expected ok, error, crashed or timeout");
  }
  return result;
}

std::string ResultsCsvHeader(const Study& study) {
  std::string row = "index,point";
  for (const std::string& axis : study.axes) row += "," + CsvField(axis);
  row += ",status";
  for (const std::string& metric : MetricNames()) row += "," + metric;
  return row + ",message\n";
}

std::string ResultCsvRow(const Study& study, const PointResult& result) {
  std::string row = std::to_string(result.index) + "," + result.key;
  for (const std::string& label : study.points[static_cast<size_t>(result.index)].labels) {
    row += "," + CsvField(label);
  }
  row += "," + result.status;
  for (const std::string& metric : MetricNames()) {
    const auto it = result.metrics.find(metric);
    row += "," + (it == result.metrics.end() ? std::string() : Number(it->second));
  }
  return row + "," + CsvField(result.message) + "\n";
}

StatusOr<ResultsDir> ResultsDir::Open(const std::string& dir, const Study& study, bool resume) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return InvalidArgument(dir + ": error: cannot create directory: " + ec.message());
  const std::string stamp_path = (fs::path(dir) / kStampFile).string();
  const std::string journal_path = (fs::path(dir) / kJournal).string();
  ResultsDir results(dir, study);
  StatusOr<std::string> stamp = ReadFile(stamp_path);
  if (stamp.ok() && !resume) {
    return InvalidArgument(dir + ": error: holds a sweep already (" + stamp_path +
                           "); continue it with --resume, or choose another --out");
  }
  if (stamp.ok()) {
    std::string found;
    try {
      found = ordered_json::parse(*stamp).at("stamp").get<std::string>();
    } catch (const nlohmann::json::exception& e) {
      return InvalidArgument(stamp_path + ": error: malformed study stamp: " + e.what());
    }
    if (found != study.stamp) {
      return InvalidArgument(stamp_path + ": error: the results here are of another study, or of " +
                             study.file + " before it changed (stamp " + found + ", now " +
                             study.stamp + "); choose another --out");
    }
    StatusOr<std::string> journal = ReadFile(journal_path);
    const std::string text = journal.ok() ? *journal : "";
    std::vector<bool> seen(study.points.size(), false);
    size_t line_number = 0;
    // Complete lines only: a line without its newline was cut by a kill.
    for (size_t pos = 0, end; (end = text.find('\n', pos)) != std::string::npos; pos = end + 1) {
      ++line_number;
      const std::string where = journal_path + ":" + std::to_string(line_number);
      TPUSIM_ASSIGN_OR_RETURN(PointResult done,
                              ResultFromJsonLine(study, text.substr(pos, end - pos), where));
      if (seen[static_cast<size_t>(done.index)]) continue;
      seen[static_cast<size_t>(done.index)] = true;
      results.done_.push_back(std::move(done));
    }
  }
  // Both files as the journal says (dropping a torn line, rebuilding a CSV
  // that a kill left a row behind), then appended to.
  std::string journal, table = ResultsCsvHeader(study);
  for (const PointResult& r : results.done_) {
    journal += ResultJsonLine(study, r) + "\n";
    table += ResultCsvRow(study, r);
  }
  TPUSIM_RETURN_IF_ERROR(WriteFileAtomically(journal_path, journal));
  TPUSIM_RETURN_IF_ERROR(WriteFileAtomically((fs::path(dir) / kTable).string(), table));
  TPUSIM_RETURN_IF_ERROR(WriteFileAtomically(stamp_path, StampJson(study)));
  TPUSIM_RETURN_IF_ERROR(results.OpenForAppend());
  return results;
}

ResultsDir::ResultsDir(ResultsDir&& other) noexcept
    : dir_(std::move(other.dir_)),
      study_(other.study_),
      done_(std::move(other.done_)),
      jsonl_fd_(std::exchange(other.jsonl_fd_, -1)),
      csv_fd_(std::exchange(other.csv_fd_, -1)) {}

ResultsDir::~ResultsDir() {
  if (jsonl_fd_ >= 0) close(jsonl_fd_);
  if (csv_fd_ >= 0) close(csv_fd_);
}

Status ResultsDir::OpenForAppend() {
  for (const auto& [name, fd] : {std::pair{kJournal, &jsonl_fd_}, std::pair{kTable, &csv_fd_}}) {
    const std::string path = (fs::path(dir_) / name).string();
    if (*fd >= 0) close(*fd);
    *fd = open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    if (*fd < 0) {
      return InvalidArgument(path + ": error: cannot open file: " + std::strerror(errno));
    }
  }
  return Status::Ok();
}

Status ResultsDir::Append(const PointResult& result) {
  // The journal first: a kill between the two leaves a CSV one row short,
  // which the next --resume rebuilds from the journal.
  TPUSIM_RETURN_IF_ERROR(WriteAll(jsonl_fd_, ResultJsonLine(*study_, result) + "\n",
                                  (fs::path(dir_) / kJournal).string()));
  TPUSIM_RETURN_IF_ERROR(
      WriteAll(csv_fd_, ResultCsvRow(*study_, result), (fs::path(dir_) / kTable).string()));
  done_.push_back(result);
  return Status::Ok();
}

Status ResultsDir::Finish() {
  std::vector<PointResult> sorted = done_;
  std::sort(sorted.begin(), sorted.end(),
            [](const PointResult& a, const PointResult& b) { return a.index < b.index; });
  std::string journal, table = ResultsCsvHeader(*study_);
  for (const PointResult& r : sorted) {
    journal += ResultJsonLine(*study_, r) + "\n";
    table += ResultCsvRow(*study_, r);
  }
  TPUSIM_RETURN_IF_ERROR(WriteFileAtomically((fs::path(dir_) / kJournal).string(), journal));
  TPUSIM_RETURN_IF_ERROR(WriteFileAtomically((fs::path(dir_) / kTable).string(), table));
  return OpenForAppend();
}

}  // namespace tpusim::harness
