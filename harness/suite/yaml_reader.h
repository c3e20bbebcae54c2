// Checked reading of the harness's YAML files (scenarios, studies): typed
// values, known keys, and errors as "FILE:LINE:COL: error: key path `a.b`: ...".
#ifndef TPUSIM_HARNESS_SUITE_YAML_READER_H_
#define TPUSIM_HARNESS_SUITE_YAML_READER_H_

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/arch/yaml_position.h"
#include "sim/base/printable.h"
#include "sim/base/status.h"

namespace tpusim::harness {

/// Reads one YAML file (a scenario, a study); every error names the file,
/// position and key path.
class YamlReader {
 public:
  explicit YamlReader(std::string file) : file_(std::move(file)) {}

  std::string Where(const YAML::Node& node) const { return Where(node.Mark()); }
  std::string Where(const YAML::Mark& mark) const { return arch::Where(file_, mark); }
  Status Error(const YAML::Node& node, const std::string& path, const std::string& message) const {
    return InvalidArgument(Printable(Where(node) + ": error: key path `" + path + "`: " + message));
  }

  /// What a node is, for "expected X, got Y": a scalar Quote()d (a whole
  /// file read as one scalar must not be echoed into messages and reports).
  static std::string Got(const YAML::Node& node) {
    if (!node.IsScalar()) return std::string(arch::NodeKind(node));
    return Quote(node.Scalar());
  }

  /// Checks that `node` is a mapping whose keys are all in `known`, once each.
  /// An unknown key does not stop the reading: its error (with the known key
  /// it most likely misspells) is kept, and `Finish` reports every one, so a
  /// user fixes them all in one round.
  Status Keys(const YAML::Node& node, const std::string& path,
              const std::vector<std::string_view>& known) const {
    if (!node.IsMap()) return Error(node, path, "expected a mapping, got " + Got(node));
    std::set<std::string> seen;
    for (const auto& entry : node) {
      const YAML::Node& key = entry.first;
      const std::string key_path = Join(path, key.IsScalar() ? key.Scalar() : "?");
      if (!key.IsScalar()) return Error(key, key_path, "keys must be plain names");
      if (!seen.insert(key.Scalar()).second) return Error(key, key_path, "duplicate key");
      if (std::find(known.begin(), known.end(), key.Scalar()) == known.end()) {
        std::string list;
        for (std::string_view k : known) list += (list.empty() ? "" : ", ") + std::string(k);
        std::string message = "unknown key (known: " + list + ")";
        if (const std::string_view guess = ClosestKey(key.Scalar(), known); !guess.empty()) {
          message += "; did you mean '" + std::string(guess) + "'?";
        }
        unknown_keys_.push_back({key.Mark().line, key.Mark().column,
                                 Error(key, key_path, message).message()});
      }
    }
    return Status::Ok();
  }

  /// True once Keys has met an unknown key: a check across keys (mode needs
  /// chip) may then only echo a misspelling, so it waits for the fix.
  bool HasUnknownKeys() const { return !unknown_keys_.empty(); }

  /// `parsed` when every key was known; else every unknown key's error, one
  /// per line in file order, then `parsed`'s own error if it failed too.
  template <typename T>
  StatusOr<T> Finish(StatusOr<T> parsed) const {
    if (unknown_keys_.empty()) return parsed;
    std::sort(unknown_keys_.begin(), unknown_keys_.end());
    std::string message;
    for (const auto& [line, column, error] : unknown_keys_) {
      message += (message.empty() ? "" : "\n") + error;
    }
    if (!parsed.ok()) message += "\n" + parsed.status().message();
    return InvalidArgument(message);
  }

  /// The known key `key` most likely misspells: the nearest by edit distance,
  /// if at most a third of its letters (and at least one) differ; else empty.
  static std::string_view ClosestKey(std::string_view key,
                                     const std::vector<std::string_view>& known) {
    std::string_view best;
    size_t best_distance = std::max<size_t>(1, key.size() / 3) + 1;
    for (std::string_view k : known) {
      const size_t d = EditDistance(key, k);
      if (d < best_distance) best = k, best_distance = d;
    }
    return best;
  }

  /// Edit distance counting insertions, deletions, substitutions and swaps
  /// of two neighbouring letters (`mdoe` is one from `mode`), ASCII
  /// case-blind: the optimal string alignment distance.
  static size_t EditDistance(std::string_view a, std::string_view b) {
    const auto same = [&](size_t i, size_t j) {
      return std::tolower(static_cast<unsigned char>(a[i])) ==
             std::tolower(static_cast<unsigned char>(b[j]));
    };
    // d[i][j]: the distance between a's first i letters and b's first j.
    std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
    for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
    for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
      for (size_t j = 1; j <= b.size(); ++j) {
        d[i][j] = std::min(
            {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (same(i - 1, j - 1) ? 0 : 1)});
        if (i > 1 && j > 1 && same(i - 1, j - 2) && same(i - 2, j - 1)) {
          d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
      }
    }
    return d[a.size()][b.size()];
  }

  static std::string Join(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }

  StatusOr<std::string> String(const YAML::Node& node, const std::string& path) const {
    if (!node.IsScalar() || node.Scalar().empty()) {
      return Error(node, path, "expected a non-empty string, got " + Got(node));
    }
    return node.Scalar();
  }
  StatusOr<bool> Bool(const YAML::Node& node, const std::string& path) const {
    bool value = false;
    if (!node.IsScalar() || !YAML::convert<bool>::decode(node, value)) {
      return Error(node, path, "expected true or false, got " + Got(node));
    }
    return value;
  }
  StatusOr<double> Number(const YAML::Node& node, const std::string& path) const {
    double value = 0;
    if (!node.IsScalar() || !YAML::convert<double>::decode(node, value) || !std::isfinite(value)) {
      return Error(node, path, "expected a number, got " + Got(node));
    }
    return value;
  }
  StatusOr<double> NonNegative(const YAML::Node& node, const std::string& path) const {
    TPUSIM_ASSIGN_OR_RETURN(const double value, Number(node, path));
    if (value < 0) return Error(node, path, "expected a non-negative number, got " + Got(node));
    return value;
  }
  StatusOr<int64_t> Integer(const YAML::Node& node, const std::string& path, int64_t min) const {
    int64_t value = 0;
    if (node.IsScalar()) {
      const std::string& s = node.Scalar();
      const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
      if (ec == std::errc() && end == s.data() + s.size() && !s.empty() && value >= min) {
        return value;
      }
    }
    return Error(node, path,
                 "expected an integer of at least " + std::to_string(min) + ", got " + Got(node));
  }
  /// A string that `parse` (ParseRunMode, ici::ParseAlgorithm, ...) turns
  /// into a value, with the parser's error located at the node.
  template <typename Parse>
  auto Parsed(const YAML::Node& node, const std::string& path, Parse parse) const
      -> decltype(parse(std::string_view())) {
    TPUSIM_ASSIGN_OR_RETURN(const std::string text, String(node, path));
    auto parsed = parse(text);
    if (!parsed.ok()) return Error(node, path, parsed.status().message());
    return parsed;
  }

  const std::string& file() const { return file_; }

 private:
  std::string file_;
  /// Each unknown key's position (line, column) and located error, for Finish.
  mutable std::vector<std::tuple<int, int, std::string>> unknown_keys_;
};

}  // namespace tpusim::harness

#endif  // TPUSIM_HARNESS_SUITE_YAML_READER_H_
