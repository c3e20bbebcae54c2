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
#include <utility>
#include <vector>

#include "sim/arch/yaml_position.h"
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
    return InvalidArgument(
        arch::Printable(Where(node) + ": error: key path `" + path + "`: " + message));
  }

  /// What a node is, for "expected X, got Y": a scalar quoted when short,
  /// else only its first 40 characters of its first line (a whole file read as
  /// one scalar must not be echoed into messages and reports).
  static std::string Got(const YAML::Node& node) {
    if (!node.IsScalar()) return std::string(arch::NodeKind(node));
    const std::string& text = node.Scalar();
    const size_t cut = std::min(text.find('\n'), size_t{40});
    if (cut >= text.size()) return "'" + text + "'";
    return "'" + text.substr(0, cut) + "...' (" + std::to_string(text.size()) + " characters)";
  }

  /// Checks that `node` is a mapping whose keys are all in `known`, once each.
  Status Keys(const YAML::Node& node, const std::string& path,
              const std::vector<std::string_view>& known) const {
    if (!node.IsMap()) return Error(node, path, "expected a mapping, got " + Got(node));
    std::set<std::string> seen;
    for (const auto& entry : node) {
      const YAML::Node& key = entry.first;
      const std::string key_path = Join(path, key.IsScalar() ? key.Scalar() : "?");
      if (!key.IsScalar()) return Error(key, key_path, "keys must be plain names");
      if (!seen.insert(key.Scalar()).second) return Error(key, key_path, "duplicate key");
      bool found = false;
      for (std::string_view k : known) found = found || k == key.Scalar();
      if (!found) {
        std::string list;
        for (std::string_view k : known) list += (list.empty() ? "" : ", ") + std::string(k);
        return Error(key, key_path, "unknown key (known: " + list + ")");
      }
    }
    return Status::Ok();
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

  const std::string& file() const { return file_; }

 private:
  std::string file_;
};

}  // namespace tpusim::harness

#endif  // TPUSIM_HARNESS_SUITE_YAML_READER_H_
