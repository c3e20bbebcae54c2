// Helpers shared by the subcommands.
#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <ostream>
#include <string>
#include <system_error>

#include "harness/cli/cli.h"
#include "harness/suite/process_pool.h"
#include "harness/suite/scenario.h"
#include "sim/base/units.h"
#include "sim/ici/interconnect.h"

namespace tpusim::harness {

namespace {

/// `relative` under PREFIX/share/tpusim when the binary runs from PREFIX/bin
/// and that path exists (an installed tpusim, wherever its prefix was moved),
/// else `built_in`.
std::string InstalledOr(const std::filesystem::path& relative, const char* built_in) {
  const std::filesystem::path installed =
      std::filesystem::path(SelfPath()).parent_path().parent_path() / "share" / "tpusim" / relative;
  std::error_code ec;
  return std::filesystem::exists(installed, ec) ? installed.string() : built_in;
}

}  // namespace

const std::string& DefaultModelsDir() {
  // Once per process: every subcommand's --models-dir shows the same default.
  static const std::string dir = [] {
    const char* env = std::getenv("TPUSIM_MODELS_DIR");
    if (env != nullptr && *env != '\0') return std::string(env);
    return InstalledOr("models", TPUSIM_MODELS_DIR);
  }();
  return dir;
}

void AddModelsDirOption(CLI::App& command, std::string& models_dir, const std::string& what) {
  models_dir = DefaultModelsDir();
  command.add_option("--models-dir", models_dir, what + "; default: " + models_dir)
      ->option_text("DIR");
}

std::string DefaultValidationSuite() {
  return InstalledOr(std::filesystem::path("validation") / "tpu.validation.yaml",
                     TPUSIM_VALIDATION_SUITE);
}

namespace {

/// A validator of numbers that `accept` holds to, refusing otherwise with
/// "must be WHAT, got 'TEXT'" ("expected a number" for text that is none, "out
/// of range" for text no double holds).
CLI::Validator NumberCheck(bool (*accept)(double), const char* what, const char* name) {
  return CLI::Validator(
      [accept, what](const std::string& text) -> std::string {
        char* end = nullptr;
        errno = 0;
        const double value = std::strtod(text.c_str(), &end);
        if (end == text.c_str() || *end != '\0') return "expected a number, got " + Quote(text);
        if (!accept(value)) return std::string("must be ") + what + ", got " + Quote(text);
        if (errno == ERANGE) return Quote(text) + " is out of range";
        return "";
      },
      name);
}

}  // namespace

namespace {

/// States each option's default after its description. CLI11 prints a
/// captured default beside the option's type, which option_text replaces,
/// so without this no default reached the help.
class DefaultsFormatter : public CLI::Formatter {
 public:
  std::string make_option_desc(const CLI::Option* option) const override {
    std::string description = CLI::Formatter::make_option_desc(option);
    const std::string& value = option->get_default_str();
    // Flags, repeatable options (captured as "[]") and descriptions that
    // already say their default keep their text.
    if (value.empty() || value == "[]" || option->get_type_size() == 0 ||
        description.find("efault") != std::string::npos) {
      return description;
    }
    return description + " (default: " + value + ")";
  }
};

}  // namespace

std::string CollectiveAlgorithmChoices() {
  std::string choices;
  for (const auto& [algorithm, name] : ici::kAlgorithmNames) {
    choices += (choices.empty() ? "" : ", ") + std::string(name);
    if (algorithm == ici::Algorithm::kAuto) {
      choices += " (what a TPU runtime would use; docs/interconnect.md)";
    }
  }
  return choices;
}

void StateDefaultsInHelp(CLI::App& app) { app.formatter(std::make_shared<DefaultsFormatter>()); }

const CLI::Validator& PositiveNumber() {
  static const CLI::Validator positive =
      NumberCheck([](double value) { return value > 0; }, "positive", "POSITIVE");
  return positive;
}

const CLI::Validator& Duration() {
  static const CLI::Validator duration(
      [](std::string& text) -> std::string {
        const StatusOr<double> seconds = ParseSeconds(text);
        if (!seconds.ok()) return "expected a duration like 30s, 500ms or 2min, got " + Quote(text);
        text = FormatSignificant(*seconds, 17);
        return "";
      },
      "DURATION");
  return duration;
}

const CLI::Validator& NonNegativeNumber() {
  static const CLI::Validator non_negative =
      NumberCheck([](double value) { return value >= 0; }, "at least 0", "NONNEGATIVE");
  return non_negative;
}

const CLI::Validator& OutputFile() {
  static const CLI::Validator output(
      [](const std::string& path) -> std::string {
        if (path != "-") return "";
        return "'-' is not standard output here: give /dev/stdout, or ./- for a file named -";
      },
      "");
  return output;
}

const CLI::Validator& NonEmpty() {
  static const CLI::Validator non_empty(
      [](const std::string& text) -> std::string {
        return text.empty() ? "must not be empty" : "";
      },
      "");
  return non_empty;
}

void CheckIntegerOptions(CLI::App& app) {
  // CLI11 2.1 reads an integer with strtoll's base 0: `--top 010` ran as 8 (octal)
  // and `--top 08` was refused. A value of decimal digits is decimal, leading zeros
  // and all (a hexadecimal 0x10 stays hexadecimal).
  static const CLI::Validator decimal(
      [](std::string& text) -> std::string {
        const size_t sign = !text.empty() && (text[0] == '-' || text[0] == '+') ? 1 : 0;
        if (text.size() <= sign + 1 ||
            text.find_first_not_of("0123456789", sign) != std::string::npos) {
          return "";
        }
        const size_t first_nonzero = text.find_first_not_of('0', sign);
        const size_t end = first_nonzero == std::string::npos ? text.size() - 1 : first_nonzero;
        text.erase(sign, end - sign);
        return "";
      },
      "");
  // CLI11 2.1 converts with strtoll and never looks at errno, so a count past
  // INT64_MAX (--top 99999999999999999999) became INT64_MAX without a word;
  // and text that is no integer (--top 1.5) got "Could not convert".
  static const CLI::Validator in_range(
      [](const std::string& text) -> std::string {
        errno = 0;
        char* end = nullptr;
        const int64_t value = std::strtoll(text.c_str(), &end, 0);  // CLI11's own parse
        if (end == text.c_str() || *end != '\0') return "expected an integer, got " + Quote(text);
        if (errno != ERANGE) return "";
        return Quote(text) + " is out of range: " +
               (value < 0 ? "at least " + std::to_string(INT64_MIN)
                          : "at most " + std::to_string(INT64_MAX));
      },
      "");
  // CLI11 names the type of an integer option (int64_t or optional) "INT",
  // followed by its validators' names (INT:POSITIVE).
  for (CLI::Option* option : app.get_options([](CLI::Option*) { return true; })) {
    const std::string type = option->get_type_name();
    if (type == "INT" || type.rfind("INT:", 0) == 0) option->transform(decimal)->check(in_range);
  }
  for (CLI::App* command : app.get_subcommands([](CLI::App*) { return true; })) {
    CheckIntegerOptions(*command);
  }
}

void AddMaxMemoryOption(CLI::App& command, std::string& max_memory) {
  command
      .add_option("--max-memory", max_memory,
                  "Bytes the values may take (e.g. 8GiB, 512MB; default: half the physical "
                  "memory). Over it for every device, only device 0's group runs, or device 0 "
                  "alone when every device computes the same values (the first line says "
                  "which); over it even then, the run is refused before allocating")
      ->option_text("BYTES");
}

void AddLoopLimitOptions(CLI::App& command, LoopLimits& limits) {
  const struct {
    const char* flag;
    int64_t* value;
    const char* help;
  } options[] = {
      {"--max-while-iterations", &limits.max_while_iterations,
       "A while loop of the values run that iterates more than this is an error naming the "
       "loop (a guard against loops that never end)"},
      {"--max-loop-work", &limits.max_loop_work,
       "A while loop of the values run that does more work than this is an error naming the "
       "loop; work is 64 per executed instruction plus its result's elements, about 10^8 a "
       "second"},
      {"--max-executed-instructions", &limits.max_executed_instructions,
       "Timing lowers each loop body once and simulates its iterations until one repeats "
       "exactly, then fast-forwards the rest; a program longer than this, or more instructions "
       "simulated one by one, is an error naming the instruction or the loop"},
  };
  for (const auto& option : options) {
    command.add_option(option.flag, *option.value, option.help)
        ->option_text("N")
        ->check(PositiveNumber())
        ->capture_default_str();
  }
}

}  // namespace tpusim::harness
