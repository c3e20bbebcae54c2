#include "harness/validate/measurement.h"

#include <charconv>
#include <cmath>
#include <map>
#include <set>
#include <string_view>
#include <system_error>

#include "sim/base/file.h"

namespace tpusim::harness {
namespace {

/// One field of a CSV record and where it starts.
struct Field {
  std::string text;
  int64_t line = 0;
  int64_t column = 0;
};

/// Splits CSV text into records of fields (RFC 4180: quoted fields may hold
/// commas, doubled quotes and line breaks).
class CsvReader {
 public:
  CsvReader(std::string_view text, std::string file) : text_(text), file_(std::move(file)) {}

  bool AtEnd() const { return pos_ >= text_.size(); }

  /// The next record; an empty record for a blank line.
  StatusOr<std::vector<Field>> Next() {
    std::vector<Field> record;
    if (AtEnd()) return record;
    if (text_[pos_] == '\n' || text_[pos_] == '\r') {
      SkipLineEnd();
      return record;
    }
    while (true) {
      Field field{"", line_, column_};
      if (pos_ < text_.size() && text_[pos_] == '"') {
        Advance();
        while (true) {
          if (AtEnd()) {
            return InvalidArgument(Where(field.line, field.column) +
                                   ": error: unterminated quoted field (expected a closing '\"')");
          }
          const char c = text_[pos_];
          if (c == '"') {
            Advance();
            if (pos_ < text_.size() && text_[pos_] == '"') {
              field.text += '"';
              Advance();
              continue;
            }
            break;
          }
          field.text += c;
          Advance();
        }
        if (pos_ < text_.size() && text_[pos_] != ',' && text_[pos_] != '\n' &&
            text_[pos_] != '\r') {
          return InvalidArgument(
              Where(line_, column_) +
              ": error: expected ',' or the end of the line after a quoted field");
        }
      } else {
        while (pos_ < text_.size() && text_[pos_] != ',' && text_[pos_] != '\n' &&
               text_[pos_] != '\r') {
          field.text += text_[pos_];
          Advance();
        }
      }
      record.push_back(std::move(field));
      if (pos_ < text_.size() && text_[pos_] == ',') {
        Advance();
        continue;
      }
      SkipLineEnd();
      return record;
    }
  }

  std::string Where(int64_t line, int64_t column) const {
    return file_ + ":" + std::to_string(line) + ":" + std::to_string(column);
  }
  int64_t line() const { return line_; }

 private:
  void Advance() {
    if (text_[pos_] == '\n') {
      ++line_;
      column_ = 1;
    } else {
      ++column_;
    }
    ++pos_;
  }
  void SkipLineEnd() {
    if (pos_ < text_.size() && text_[pos_] == '\r') ++pos_;
    if (pos_ < text_.size() && text_[pos_] == '\n') Advance();
  }

  std::string_view text_;
  std::string file_;
  size_t pos_ = 0;
  int64_t line_ = 1;
  int64_t column_ = 1;
};

constexpr std::string_view kColumns[] = {
    "id",     "chip",   "devices",     "devices_per_chip", "topology", "op",  "dtype",
    "shapes", "groups", "measured_us", "statistic",        "source",   "note"};

}  // namespace

StatusOr<std::vector<Measurement>> LoadMeasurements(const std::string& path) {
  TPUSIM_ASSIGN_OR_RETURN(const std::string text, ReadFile(path));
  CsvReader reader(text, path);
  TPUSIM_ASSIGN_OR_RETURN(const std::vector<Field> header, reader.Next());
  std::map<std::string_view, size_t> column;
  for (size_t i = 0; i < header.size(); ++i) column.emplace(header[i].text, i);
  for (std::string_view name : kColumns) {
    if (!column.contains(name)) {
      return InvalidArgument(reader.Where(1, 1) + ": error: the header has no column " +
                             Quote(name));
    }
  }
  std::vector<Measurement> rows;
  std::set<std::string> ids;
  while (!reader.AtEnd()) {
    const int64_t line = reader.line();
    TPUSIM_ASSIGN_OR_RETURN(const std::vector<Field> record, reader.Next());
    if (record.empty()) continue;
    const auto get = [&](std::string_view name) -> StatusOr<const Field*> {
      const size_t i = column.at(name);
      if (i >= record.size()) {
        return InvalidArgument(reader.Where(line, 1) + ": error: the row has " +
                               std::to_string(record.size()) + " fields; expected a " +
                               Quote(name) + " field (column " + std::to_string(i + 1) + ")");
      }
      return &record[i];
    };
    const auto integer = [&](std::string_view name) -> StatusOr<int64_t> {
      TPUSIM_ASSIGN_OR_RETURN(const Field* f, get(name));
      int64_t value = 0;
      const auto [end, ec] =
          std::from_chars(f->text.data(), f->text.data() + f->text.size(), value);
      if (ec != std::errc() || end != f->text.data() + f->text.size() || value < 1) {
        return InvalidArgument(reader.Where(f->line, f->column) + ": error: column " + Quote(name) +
                               ": expected a positive integer, got '" + f->text + "'");
      }
      return value;
    };
    const auto text_of = [&](std::string_view name) -> StatusOr<std::string> {
      TPUSIM_ASSIGN_OR_RETURN(const Field* f, get(name));
      return f->text;
    };
    Measurement m;
    m.where = path + ":" + std::to_string(line);
    TPUSIM_ASSIGN_OR_RETURN(m.id, text_of("id"));
    TPUSIM_ASSIGN_OR_RETURN(m.chip, text_of("chip"));
    TPUSIM_ASSIGN_OR_RETURN(m.devices, integer("devices"));
    TPUSIM_ASSIGN_OR_RETURN(m.devices_per_chip, integer("devices_per_chip"));
    TPUSIM_ASSIGN_OR_RETURN(m.topology, text_of("topology"));
    TPUSIM_ASSIGN_OR_RETURN(m.op, text_of("op"));
    TPUSIM_ASSIGN_OR_RETURN(m.dtype, text_of("dtype"));
    TPUSIM_ASSIGN_OR_RETURN(m.shapes, text_of("shapes"));
    TPUSIM_ASSIGN_OR_RETURN(m.groups, text_of("groups"));
    TPUSIM_ASSIGN_OR_RETURN(m.statistic, text_of("statistic"));
    TPUSIM_ASSIGN_OR_RETURN(m.source, text_of("source"));
    TPUSIM_ASSIGN_OR_RETURN(m.note, text_of("note"));
    TPUSIM_ASSIGN_OR_RETURN(const Field* time, get("measured_us"));
    const std::string& t = time->text;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), m.measured_us);
    if (ec != std::errc() || end != t.data() + t.size() || !std::isfinite(m.measured_us) ||
        m.measured_us <= 0) {
      return InvalidArgument(reader.Where(time->line, time->column) +
                             ": error: column 'measured_us': expected a positive number of "
                             "microseconds, got " +
                             Quote(t));
    }
    if (m.id.empty() || !ids.insert(m.id).second) {
      TPUSIM_ASSIGN_OR_RETURN(const Field* id, get("id"));
      return InvalidArgument(reader.Where(id->line, id->column) + ": error: column 'id': " +
                             (m.id.empty() ? std::string("empty") : "duplicate id " + Quote(m.id)));
    }
    rows.push_back(std::move(m));
  }
  return rows;
}

}  // namespace tpusim::harness
