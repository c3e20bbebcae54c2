// Runs the entry computation of every corpus module on one device with seeded
// inputs and checks each outcome against the table below: "ok" for a module
// that evaluates, else the error's code and a phrase of its message (why it
// cannot run yet). A module whose outcome changes, either way, fails its test
// and the table is updated with the reason; each test prints the outcome and
// the time it took.
#include <gtest/gtest.h>

#include <cctype>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "sim/eval/evaluator.h"
#include "sim/hlo/parser.h"
#include "sim/hlo/verifier.h"
#include "sim/value/literal.h"
#include "sim/value/random.h"

namespace tpusim::eval {
namespace {

namespace fs = std::filesystem;
using value::Literal;

/// Expected outcome per module: "ok", or "CODE: phrase" where the phrase is
/// part of the error message.
const std::map<std::string, std::string>& ExpectedOutcomes() {
  static const auto* table = new std::map<std::string, std::string>{
#include "tests/eval/corpus_run_expectations.inc"
  };
  return *table;
}

/// Fills every array element of `value` from `random`: floats uniform in
/// [-1, 1), integers in [0, 4) (small enough to be valid indices for most
/// gathers; dynamic-slice and gather clamp any index anyway), pred 0 or 1.
void Fill(Literal& value, value::Random& random) {
  if (value.shape().IsTuple()) {
    for (int64_t i = 0; i < value.tuple_size(); ++i) Fill(value.mutable_tuple_element(i), random);
    return;
  }
  if (!value.shape().IsArray()) return;
  const hlo::PrimitiveType type = value.element_type();
  for (int64_t i = 0; i < value.element_count(); ++i) {
    if (hlo::IsFloatingPoint(type) || hlo::IsComplex(type)) {
      value.SetFromDouble(i, 2 * random.UniformDouble() - 1);
    } else {
      value.SetFromDouble(i, static_cast<double>(random.UniformInt(0, 3)));
    }
  }
}

std::string CodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kInvalidArgument:
      return "kInvalidArgument";
    case StatusCode::kUnimplemented:
      return "kUnimplemented";
    case StatusCode::kResourceExhausted:
      return "kResourceExhausted";
    case StatusCode::kFailedPrecondition:
      return "kFailedPrecondition";
    default:
      return "code " + std::to_string(static_cast<int>(code));
  }
}

/// Evaluates `computation` of `module` as the entry with seeded arguments;
/// "ok" or "CODE: message".
std::string RunComputation(hlo::HloModule& module, hlo::HloComputation* computation) {
  module.set_entry(computation);
  // Bounded so that the whole corpus runs in CI time: 256 MiB per value,
  // 4096 loop iterations.
  const EvaluatorOptions options{.max_bytes = int64_t{256} << 20, .max_while_iterations = 4096};
  std::vector<Literal> args;
  value::Random random(/*seed=*/42);
  for (const hlo::HloInstruction* parameter : computation->parameters()) {
    auto arg = Literal::Create(parameter->shape(), options.max_bytes);
    if (!arg.ok()) return CodeName(arg.status().code()) + ": argument: " + arg.status().message();
    Fill(*arg, random);
    args.push_back(std::move(*arg));
  }
  auto result = Evaluator(options).Evaluate(module, args);
  if (!result.ok()) return CodeName(result.status().code()) + ": " + result.status().message();
  return "ok";
}

/// Parses and verifies the module at `path`; nullptr and `error` set on failure.
std::unique_ptr<hlo::HloModule> Load(const fs::path& path, std::string& error) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  auto module = hlo::ParseHloModule(text.str(), path.filename().string());
  if (!module.ok()) {
    error = CodeName(module.status().code()) + ": " + module.status().message();
    return nullptr;
  }
  if (Status verified = hlo::VerifyModule(**module); !verified.ok()) {
    error = CodeName(verified.code()) + ": " + verified.message();
    return nullptr;
  }
  return std::move(*module);
}

/// Parses, verifies and evaluates one module's entry computation.
std::string RunModule(const fs::path& path) {
  std::string error;
  std::unique_ptr<hlo::HloModule> module = Load(path, error);
  if (module == nullptr) return error;
  return RunComputation(*module, module->entry());
}

/// One test per module of the table (so ctest runs them in parallel, each
/// with its own timeout).
class CorpusRun : public ::testing::TestWithParam<std::string> {};

TEST_P(CorpusRun, ModuleHasItsExpectedOutcome) {
  const std::string& name = GetParam();
  const fs::path path = fs::path(TPUSIM_CORPUS_DIR) / name;
  ASSERT_TRUE(fs::exists(path)) << path << " is missing (TPUSIM_CORPUS_DIR)";
  const auto start = std::chrono::steady_clock::now();
  const std::string outcome = RunModule(path);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - start)
                      .count();
  std::cout << name << " [" << ms << " ms]: " << outcome.substr(0, outcome.find('\n')) << "\n";
  const std::string& expected = ExpectedOutcomes().at(name);
  if (expected == "ok") {
    EXPECT_EQ(outcome, "ok");
    return;
  }
  const size_t colon = expected.find(':');
  EXPECT_EQ(outcome.substr(0, outcome.find(':')), expected.substr(0, colon)) << outcome;
  EXPECT_NE(outcome.find(expected.substr(colon + 2)), std::string::npos) << outcome;
}

std::vector<std::string> TableNames() {
  std::vector<std::string> names;
  for (const auto& [name, outcome] : ExpectedOutcomes()) names.push_back(name);
  return names;
}

/// gtest names allow only letters, digits and underscores.
std::string TestName(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param.substr(0, info.param.size() - 4);  // drop ".hlo"
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Corpus, CorpusRun, ::testing::ValuesIn(TableNames()), TestName);

TEST(CorpusRunTable, ListsEveryCorpusModule) {
  const fs::path dir = TPUSIM_CORPUS_DIR;
  std::error_code ec;
  int modules = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() != ".hlo") continue;
    ++modules;
    EXPECT_TRUE(ExpectedOutcomes().count(entry.path().filename().string()))
        << entry.path().filename() << " is not in corpus_run_expectations.inc";
  }
  EXPECT_FALSE(ec) << "cannot list " << dir;
  EXPECT_GT(modules, 0) << "no .hlo files in " << dir << " (TPUSIM_CORPUS_DIR)";
}

/// hlo_import_all_ops.hlo holds one small computation per opcode; those of
/// the operations with their own kernels here (complex, rng, linear algebra,
/// fft, feeds) must each run as an entry.
TEST(CorpusRunTable, ImportAllOpsComputationsOfTheseKernelsRun) {
  std::string error;
  auto module = Load(fs::path(TPUSIM_CORPUS_DIR) / "hlo_import_all_ops.hlo", error);
  ASSERT_NE(module, nullptr) << error;
  const char* names[] = {"test_cholesky",
                         "test_complex",
                         "test_fft",
                         "test_imag",
                         "test_real",
                         "test_infeed",
                         "test_outfeed",
                         "test_rng_normal",
                         "test_rng_uniform",
                         "complex_type",
                         "rngbitgen_tuple_shape",
                         "rngbitgen_array_shape",
                         "test_triangular_solve"};
  for (const char* name : names) {
    hlo::HloComputation* found = nullptr;
    for (const auto& computation : module->computations()) {
      if (computation->name() == name) found = computation.get();
    }
    ASSERT_NE(found, nullptr) << name;
    EXPECT_EQ(RunComputation(*module, found), "ok") << name;
  }
}

}  // namespace
}  // namespace tpusim::eval
