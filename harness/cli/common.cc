// Helpers shared by the subcommands.
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <filesystem>
#include <ostream>
#include <system_error>

#include "harness/cli/cli.h"

namespace tpusim::harness {

void PrintError(const Status& status, std::ostream& err) {
  const std::string& message = status.message();
  err << message;
  if (message.empty() || message.back() != '\n') err << '\n';
  err.flush();
}

std::string SelfPath() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? "/proc/self/exe" : self.string();
}

const CLI::Validator& PositiveNumber() {
  static const CLI::Validator positive(
      [](const std::string& text) -> std::string {
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        if (end == text.c_str() || *end != '\0' || !(value > 0)) {
          return "must be positive, got '" + text + "'";
        }
        return "";
      },
      "POSITIVE");
  return positive;
}

}  // namespace tpusim::harness
