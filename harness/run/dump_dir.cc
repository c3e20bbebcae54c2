#include "harness/run/dump_dir.h"

#include <algorithm>
#include <charconv>
#include <fnmatch.h>
#include <filesystem>
#include <map>
#include <regex>
#include <system_error>
#include <tuple>

namespace tpusim::harness {
namespace {

/// XLA's name for a module's HLO text after optimizations. The name may hold
/// dots (PyTorch/XLA's SyncTensorsGraph.123), so it is matched greedily; the
/// platform part holds none but GPU's compute capability (sm_8.0_gpu_).
const std::regex& AfterOptimizationsPattern() {
  static const std::regex pattern(
      R"(^module_(\d{1,18})\.(.+)\.(?:(?:sm_\d+\.\d+_)?[A-Za-z]\w*_)?after_optimizations\.txt$)");
  return pattern;
}

/// The modules of one name on each side, in number order.
struct SameName {
  std::vector<const DumpModule*> before;
  std::vector<const DumpModule*> after;
};

}  // namespace

std::optional<DumpFileName> ParseDumpFileName(std::string_view file_name) {
  std::match_results<std::string_view::const_iterator> match;
  if (!std::regex_match(file_name.begin(), file_name.end(), match, AfterOptimizationsPattern())) {
    return std::nullopt;
  }
  DumpFileName name;
  name.module = match[2].str();
  const std::string digits = match[1].str();
  std::from_chars(digits.data(), digits.data() + digits.size(), name.number);
  return name;
}

StatusOr<std::vector<DumpModule>> ListDumpModules(const std::string& dir) {
  std::error_code ec;
  std::vector<DumpModule> modules;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    std::optional<DumpFileName> name = ParseDumpFileName(it->path().filename().string());
    if (name.has_value()) modules.push_back({std::move(*name), it->path().string()});
  }
  if (ec) return InvalidArgument(dir + ": error: cannot list directory: " + ec.message());
  if (modules.empty()) {
    return InvalidArgument(dir +
                           ": error: no module_NNNN.NAME.*after_optimizations.txt file: not an "
                           "XLA dump directory (--xla_dump_to with --xla_dump_hlo_as_text)");
  }
  std::sort(modules.begin(), modules.end(), [](const DumpModule& a, const DumpModule& b) {
    return std::tie(a.name.module, a.name.number, a.path) <
           std::tie(b.name.module, b.name.number, b.path);
  });
  return modules;
}

StatusOr<std::string> FindDumpModule(const std::string& dir, const std::string& pattern) {
  TPUSIM_ASSIGN_OR_RETURN(const std::vector<DumpModule> modules, ListDumpModules(dir));
  std::vector<const DumpModule*> matches;
  for (const DumpModule& m : modules) {
    if (fnmatch(pattern.c_str(), m.name.module.c_str(), 0) == 0) matches.push_back(&m);
  }
  if (matches.size() == 1) return matches.front()->path;
  // What the directory holds, so that the user can name one.
  constexpr size_t kListed = 10;
  const std::vector<const DumpModule*> listed = [&] {
    if (!matches.empty()) return matches;
    std::vector<const DumpModule*> all;
    for (const DumpModule& m : modules) all.push_back(&m);
    return all;
  }();
  std::string names;
  for (size_t i = 0; i < std::min(kListed, listed.size()); ++i) {
    names += (i == 0 ? "" : ", ") + std::filesystem::path(listed[i]->path).filename().string();
  }
  if (listed.size() > kListed) names += " and " + std::to_string(listed.size() - kListed) + " more";
  return InvalidArgument(
      matches.empty()
          ? dir + " holds no module named " + Quote(pattern) + " (it holds " + names + ")"
          : dir + " holds " + std::to_string(matches.size()) + " modules named " + Quote(pattern) +
                " (" + names + "): name one, or give the file");
}

DumpPairing PairDumpModules(const std::vector<DumpModule>& before,
                            const std::vector<DumpModule>& after) {
  std::map<std::string, SameName> by_name;
  for (const DumpModule& m : before) by_name[m.name.module].before.push_back(&m);
  for (const DumpModule& m : after) by_name[m.name.module].after.push_back(&m);
  DumpPairing pairing;
  for (const auto& [name, same] : by_name) {
    const size_t count = std::max(same.before.size(), same.after.size());
    if (count > 1) {
      pairing.notes.push_back(std::to_string(same.before.size()) + " modules named " + name +
                              " before, " + std::to_string(same.after.size()) +
                              " after: paired in module-number order as " + name + "#1.." + name +
                              "#" + std::to_string(count));
    }
    for (size_t k = 0; k < count; ++k) {
      DumpModulePair pair;
      pair.label = count > 1 ? name + "#" + std::to_string(k + 1) : name;
      if (k < same.before.size()) pair.before = *same.before[k];
      if (k < same.after.size()) pair.after = *same.after[k];
      pairing.pairs.push_back(std::move(pair));
    }
  }
  return pairing;
}

}  // namespace tpusim::harness
