// The corpus modules that contain collectives, run on all their devices with
// seeded inputs. Each must either run, or stop at an opcode the evaluator
// does not implement yet (kUnimplemented), or be too large for a unit test;
// the modules listed in kMustRun must run, and some results are checked by
// value or by a property of the collective.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "sim/eval/evaluator.h"
#include "sim/hlo/collective_groups.h"
#include "sim/hlo/parser.h"
#include "sim/hlo/verifier.h"
#include "sim/value/literal.h"
#include "sim/value/random.h"
#include "tests/corpus/corpus_modules.h"

namespace tpusim::eval {
namespace {

namespace fs = std::filesystem;
using hlo::HloOpcode;
using value::Literal;

/// Modules whose SPMD run must succeed (more may run as the evaluator grows).
const char* const kMustRun[] = {
    "e2e_all_to_all_dot_np4.hlo",
    "e2e_collective_broadcast.hlo",
    "e2e_manual_sharding_permute_loop.hlo",
    "e2e_ragged_all_to_all.hlo",
    "e2e_reduce_scatter_while.hlo",
    "e2e_replicated_collectives_rc2.hlo",
    "custom_call_variants.hlo",
    "gpu_async_collectives_annotated.hlo",
    "gpu_lhs_p2p_allreduce_permute.hlo",
    "gpu_reduce_scatter_start_done.hlo",
    "import_async_collectives_allreduce.hlo",
    "import_async_collectives_reduce_scatter.hlo",
    "tpu_collective_pipeliner_ag_ar_send.hlo",
    "tpu_lhs_collective_permute_all_gather.hlo",
    "while_all_gather_sched_groups_rc4_np2.hlo",
};

/// Unit-test limits: larger programs are left to the harness.
constexpr int64_t kMaxDevices = 16;
constexpr int64_t kMaxInputBytes = int64_t{4} << 20;

/// A value of `shape` with seeded contents: floats uniform in [-1, 1),
/// integers in [0, 3], pred either.
Literal SeededValue(const hlo::Shape& shape, value::Random& rng) {
  if (shape.IsTuple()) {
    std::vector<Literal> elements;
    for (const hlo::Shape& element : shape.tuple_shapes()) {
      elements.push_back(SeededValue(element, rng));
    }
    return Literal::CreateTuple(std::move(elements));
  }
  Literal value(shape);
  if (!shape.IsArray()) return value;
  const hlo::PrimitiveType type = shape.element_type();
  for (int64_t i = 0; i < value.element_count(); ++i) {
    if (hlo::IsFloatingPoint(type)) {
      value.SetFromDouble(i, rng.UniformDouble() * 2 - 1);
    } else if (type == hlo::PrimitiveType::kPred) {
      value.SetFromDouble(i, static_cast<double>(rng.UniformInt(0, 1)));
    } else {
      value.SetFromDouble(i, static_cast<double>(rng.UniformInt(0, 3)));
    }
  }
  return value;
}

struct CorpusRun {
  std::unique_ptr<hlo::HloModule> module;
  SpmdConfig config;
  std::vector<std::vector<Literal>> args;
  StatusOr<std::vector<Literal>> results = std::vector<Literal>{};
  std::string skipped;  ///< why it was not run, if it was not
};

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

/// Parses, verifies and runs one module on all its devices.
CorpusRun RunModule(const fs::path& path) {
  CorpusRun run;
  auto module = hlo::ParseHloModule(ReadFile(path), path.string());
  if (!module.ok()) {
    run.results = module.status();
    return run;
  }
  run.module = std::move(module).value();
  if (Status verified = hlo::VerifyModule(*run.module); !verified.ok()) {
    run.results = verified;
    return run;
  }
  run.config = SpmdConfig::CoveringModule(*run.module);
  const int64_t n = run.config.device_count();
  if (n > kMaxDevices) {
    run.skipped = std::to_string(n) + " devices";
    return run;
  }
  int64_t bytes = 0;
  for (const hlo::HloInstruction* parameter : run.module->entry()->parameters()) {
    StatusOr<int64_t> size = Literal::ByteSizeOf(parameter->shape());
    bytes += size.ok() ? *size : kMaxInputBytes;
  }
  if (bytes * n > kMaxInputBytes) {
    run.skipped = std::to_string(bytes * n) + " input bytes";
    return run;
  }
  for (int64_t d = 0; d < n; ++d) {
    std::vector<Literal> args;
    const auto& parameters = run.module->entry()->parameters();
    for (size_t i = 0; i < parameters.size(); ++i) {
      value::Random rng(/*seed=*/42, /*stream=*/static_cast<uint64_t>(d) * 1024 + i);
      args.push_back(SeededValue(parameters[i]->shape(), rng));
    }
    run.args.push_back(std::move(args));
  }
  EvaluatorOptions options;
  options.max_bytes = int64_t{256} << 20;
  options.max_while_iterations = int64_t{1} << 16;
  run.results = Evaluator(options).EvaluateSpmd(*run.module, run.config, run.args);
  return run;
}

/// Modules whose values take tens of seconds even optimised (1.1 GB over 8
/// devices): the sanitizer build, minutes on them, leaves them to Release.
bool SkippedUnderSanitizers(const std::string& name) {
  return TPUSIM_SANITIZED && name == "tpu_lhs_collective_permute_all_gather.hlo";
}

/// The run of corpus module `name`, evaluated on first use.
const CorpusRun& RunOf(const std::string& name) {
  static std::map<std::string, CorpusRun> runs;
  auto found = runs.find(name);
  if (found == runs.end()) {
    found = runs.emplace(name, RunModule(fs::path(TPUSIM_CORPUS_DIR) / name)).first;
  }
  return found->second;
}

/// Corpus modules that stop at a problem outside the collectives, with the
/// text of the error they must give.
const std::map<std::string, std::string> kKnownFailures = {
    // `add(c1, recv-data)` adds a u32[] to a u32[2] (the module relies on an
    // implicit broadcast XLA's text form does not have).
    {"p2p_pipelined_send_recv_loop.hlo", "add s: operand u32[] does not match"},
};

TEST(SpmdCorpus, AtLeastTwentyModulesHaveCollectives) {
  EXPECT_GE(test::CollectiveModuleNames(TPUSIM_CORPUS_DIR).size(), 20u)
      << "corpus at " << TPUSIM_CORPUS_DIR;
}

TEST(SpmdCorpus, ListedModulesRunOnAllTheirDevices) {
  for (const char* name : kMustRun) {
    if (SkippedUnderSanitizers(name)) continue;
    const CorpusRun& run = RunOf(name);
    EXPECT_TRUE(run.skipped.empty()) << name << ": " << run.skipped;
    EXPECT_TRUE(run.results.ok()) << name << ": " << run.results.status().message();
  }
}

class SpmdCorpusModule : public ::testing::TestWithParam<std::string> {};

TEST_P(SpmdCorpusModule, RunsOnAllDevicesOrStopsAtAnUnimplementedOpcode) {
  const std::string& name = GetParam();
  if (SkippedUnderSanitizers(name)) GTEST_SKIP() << name << ": the Release build runs it";
  const CorpusRun& run = RunOf(name);
  const bool must_run = std::find(std::begin(kMustRun), std::end(kMustRun), name) != std::end(kMustRun);
  if (!run.skipped.empty()) {
    EXPECT_FALSE(must_run) << name << " was skipped: " << run.skipped;
    std::cout << "not run (too large for a unit test): " << run.skipped << "\n";
    return;
  }
  if (!run.results.ok()) {
    const std::string& message = run.results.status().message();
    EXPECT_FALSE(must_run) << message;
    if (const auto known = kKnownFailures.find(name); known != kKnownFailures.end()) {
      EXPECT_THAT(message, ::testing::HasSubstr(known->second));
    } else {
      EXPECT_EQ(run.results.status().code(), StatusCode::kUnimplemented) << message;
    }
    std::cout << "stopped: " << message << "\n";
    return;
  }
  ASSERT_EQ(static_cast<int64_t>(run.results->size()), run.config.device_count());
  for (const Literal& result : *run.results) {
    EXPECT_TRUE(result.shape().Compatible(run.module->entry()->root()->shape()));
  }
}

std::string TestName(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param.substr(0, info.param.size() - 4);  // without ".hlo"
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Corpus, SpmdCorpusModule,
                         ::testing::ValuesIn(test::CollectiveModuleNames(TPUSIM_CORPUS_DIR)),
                         TestName);

TEST(SpmdCorpus, ReplicatedCollectivesGiveTheIdsSumsGatherAndSwap) {
  // ar = 0 + 1, ag = {0, 1}, cp swaps the replica ids.
  const CorpusRun& run = RunOf("e2e_replicated_collectives_rc2.hlo");
  ASSERT_TRUE(run.results.ok()) << run.results.status().message();
  ASSERT_EQ(run.results->size(), 2u);
  for (uint32_t d = 0; d < 2; ++d) {
    const Literal& r = (*run.results)[d];
    EXPECT_EQ(r.tuple_element(0), Literal::CreateR0<uint32_t>(1));
    EXPECT_EQ(r.tuple_element(1), Literal::CreateR1<uint32_t>({0, 1}));
    EXPECT_EQ(r.tuple_element(2), Literal::CreateR0<uint32_t>(1 - d));
  }
}

TEST(SpmdCorpus, CollectiveBroadcastSendsTheFirstReplicaOfTheGroup) {
  // Group {1, 0}: replica 1's value, 1 + 10, everywhere.
  const CorpusRun& run = RunOf("e2e_collective_broadcast.hlo");
  ASSERT_TRUE(run.results.ok()) << run.results.status().message();
  for (const Literal& r : *run.results) EXPECT_EQ(r, Literal::CreateR1<uint32_t>({11, 11}));
}

TEST(SpmdCorpus, RaggedAllToAllGathersEachRowFromEveryReplica) {
  // Each replica sends {4} to replica 0 and {8} to replica 1, at its own id.
  const CorpusRun& run = RunOf("e2e_ragged_all_to_all.hlo");
  ASSERT_TRUE(run.results.ok()) << run.results.status().message();
  ASSERT_EQ(run.results->size(), 2u);
  EXPECT_EQ((*run.results)[0].ToString(), "bf16[2] {4, 4}");
  EXPECT_EQ((*run.results)[1].ToString(), "bf16[2] {8, 8}");
}

TEST(SpmdCorpus, AllReduceStartGivesEachGroupTheSumOfItsInputs) {
  // Groups {0,1} and {2,3} of global device ids; f32 adds in group order.
  const CorpusRun& run = RunOf("import_async_collectives_allreduce.hlo");
  ASSERT_TRUE(run.results.ok()) << run.results.status().message();
  ASSERT_EQ(run.results->size(), 4u);
  for (int64_t d = 0; d < 4; ++d) {
    const int64_t first = d / 2 * 2;
    const auto a = run.args[first][0].data<float>();
    const auto b = run.args[first + 1][0].data<float>();
    const auto got = (*run.results)[d].data<float>();
    ASSERT_EQ(got.size(), a.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], a[i] + b[i]) << "device " << d;
  }
}

TEST(SpmdCorpus, InPlacePermutesChainAllGatheredBlocksThroughTheTiledBitcast) {
  // Each replica's all-gather fills rows [0, 4256) of f32[33712,8,128] with
  // its group's ids (2128 rows each); three in-place permutes copy the
  // source's newest 4256 rows to the next 4256. Device 0's sources are 1, 3
  // (1's), 2 (3's): blocks of 2128 rows hold 0 6 | 1 7 | 3 5 | 2 4, then 0.
  // The bitcast to f32[33708,1024] T(8,128) reads tile (R/8, C/128), so
  // result [R, C] is row (R/8)*8 + C/128.
  if (SkippedUnderSanitizers("tpu_lhs_collective_permute_all_gather.hlo")) {
    GTEST_SKIP() << "the Release build runs it";
  }
  const CorpusRun& run = RunOf("tpu_lhs_collective_permute_all_gather.hlo");
  ASSERT_TRUE(run.results.ok()) << run.results.status().message();
  ASSERT_EQ(run.results->size(), 8u);
  const float blocks[] = {0, 6, 1, 7, 3, 5, 2, 4};
  const auto got = (*run.results)[0].data<float>();
  ASSERT_EQ(got.size(), size_t{33708} * 1024);
  int64_t mismatches = 0;
  for (int64_t r = 0; r < 33708; ++r) {
    for (int64_t c = 0; c < 1024; ++c) {
      const int64_t row = r / 8 * 8 + c / 128;
      const float want = row < 8 * 2128 ? blocks[row / 2128] : 0.0f;
      mismatches += got[r * 1024 + c] != want;
    }
  }
  EXPECT_EQ(mismatches, 0);
  // Devices 0 and 6 (same all-gather group, same chain of group sources)
  // agree; device 1 differs.
  EXPECT_EQ((*run.results)[0], (*run.results)[6]);
  EXPECT_NE((*run.results)[0], (*run.results)[1]);
}

TEST(SpmdCorpus, ManualShardingAssemblesTheFullValueFromEveryPartition) {
  // Both outputs are SPMDShardToFullShape over devices=[1,4]: partition p's
  // shard is columns [96p, 96p + 96) of every device's (equal) full result.
  const CorpusRun& run = RunOf("e2e_manual_sharding_permute_loop.hlo");
  ASSERT_TRUE(run.results.ok()) << run.results.status().message();
  ASSERT_EQ(run.results->size(), 4u);
  for (int64_t d = 1; d < 4; ++d) EXPECT_EQ((*run.results)[d], (*run.results)[0]);
  EXPECT_EQ((*run.results)[0].tuple_element(0).shape().dimensions(),
            (std::vector<int64_t>{32, 384}));
}

}  // namespace
}  // namespace tpusim::eval
