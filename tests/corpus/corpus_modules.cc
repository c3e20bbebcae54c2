#include "tests/corpus/corpus_modules.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "sim/base/file.h"
#include "sim/hlo/collective_groups.h"
#include "sim/hlo/parser.h"

namespace tpusim::test {

std::vector<std::string> CollectiveModuleNames(const std::string& corpus_dir) {
  namespace fs = std::filesystem;
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(corpus_dir, ec)) {
    if (entry.path().extension() != ".hlo") continue;
    StatusOr<std::string> text = ReadFile(entry.path().string());
    if (!text.ok()) continue;
    auto module = hlo::ParseHloModule(*text, entry.path().string());
    if (!module.ok()) continue;
    bool has_collective = false;
    for (const auto& computation : (*module)->computations()) {
      for (const auto& inst : computation->instructions()) {
        has_collective |= hlo::FindCollective(*inst).has_value();
      }
    }
    if (has_collective) names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace tpusim::test
