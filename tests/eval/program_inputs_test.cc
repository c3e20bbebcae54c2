// Seeded program inputs (program_inputs.h) and the evaluator's peak-memory
// estimate, which `tpusim exec` relies on to pick inputs and refuse big runs.
#include "sim/eval/program_inputs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <memory>
#include <numeric>
#include <set>

#include "sim/eval/evaluator.h"
#include "sim/hlo/parser.h"

namespace tpusim::eval {
namespace {

using value::Literal;

std::unique_ptr<hlo::HloModule> Parse(std::string_view text) {
  auto module = hlo::ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status().message();
  return module.ok() ? std::move(*module) : nullptr;
}

std::vector<Literal> Inputs(const hlo::HloModule& module, uint64_t seed, int64_t device = 0) {
  auto inputs = SeededInputs(module, hlo::SpmdConfig::FromModule(module), seed, device,
                             int64_t{1} << 30);
  EXPECT_TRUE(inputs.ok()) << inputs.status().message();
  return inputs.ok() ? std::move(*inputs) : std::vector<Literal>{};
}

constexpr char kTypes[] = R"(HloModule types
ENTRY %main (f: f32[4096], b: bf16[4096], s: s8[4096], u: u32[4096], p: pred[4096], s4: s4[4096]) -> f32[4096] {
  %f = f32[4096]{0} parameter(0)
  %b = bf16[4096]{0} parameter(1)
  %s = s8[4096]{0} parameter(2)
  %u = u32[4096]{0} parameter(3)
  %p = pred[4096]{0} parameter(4)
  %s4 = s4[4096]{0} parameter(5)
  ROOT %r = f32[4096]{0} negate(%f)
}
)";

TEST(SeededInputs, EachTypeGetsItsDistribution) {
  const auto module = Parse(kTypes);
  ASSERT_NE(module, nullptr);
  const std::vector<Literal> in = Inputs(*module, 1);
  ASSERT_EQ(in.size(), 6u);
  // Floats: roughly standard normal (mean near 0, variance near 1 over 4096).
  double sum = 0, sum_sq = 0;
  for (float v : in[0].data<float>()) {
    sum += v;
    sum_sq += static_cast<double>(v) * v;
  }
  EXPECT_NEAR(sum / 4096, 0.0, 0.1);
  EXPECT_NEAR(sum_sq / 4096, 1.0, 0.1);
  // Integers in their small ranges, both ends reached.
  int8_t smin = 127, smax = -128;
  for (int8_t v : in[2].data<int8_t>()) smin = std::min(smin, v), smax = std::max(smax, v);
  EXPECT_EQ(smin, -8);
  EXPECT_EQ(smax, 8);
  uint32_t umax = 0;
  for (uint32_t v : in[3].data<uint32_t>()) umax = std::max(umax, v);
  EXPECT_EQ(umax, 16u);
  int trues = 0;
  for (int64_t i = 0; i < 4096; ++i) trues += in[4].GetAsDouble(i) != 0;
  EXPECT_GT(trues, 1800);
  EXPECT_LT(trues, 2300);
  // s4 holds [-8, 7].
  double s4min = 0, s4max = 0;
  for (int64_t i = 0; i < 4096; ++i) {
    s4min = std::min(s4min, in[5].GetAsDouble(i));
    s4max = std::max(s4max, in[5].GetAsDouble(i));
  }
  EXPECT_EQ(s4min, -8);
  EXPECT_EQ(s4max, 7);
}

TEST(SeededInputs, DeterministicPerSeedAndDevice) {
  const auto module = Parse(kTypes);
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(Inputs(*module, 5)[0], Inputs(*module, 5)[0]);
  EXPECT_FALSE(Inputs(*module, 5)[0] == Inputs(*module, 6)[0]);
  EXPECT_FALSE(Inputs(*module, 5, 0)[0] == Inputs(*module, 5, 1)[0]);
  // Pinned: seeded inputs must not change between releases, or every golden
  // file made from them would.
  const auto first = Inputs(*module, 5);
  EXPECT_EQ(std::bit_cast<uint32_t>(first[0].data<float>()[0]), 0x3F1F8474u);
  EXPECT_EQ(first[2].data<int8_t>()[0], -1);
}

TEST(SeededInputs, ScalarsAndReplicatedParametersAreTheSameOnEveryDevice) {
  const auto module = Parse(R"(HloModule m, replica_count=2
ENTRY %main (flag: pred[], w: f32[64], x: f32[64]) -> f32[64] {
  %flag = pred[] parameter(0)
  %w = f32[64]{0} parameter(1), sharding={replicated}
  %x = f32[64]{0} parameter(2)
  ROOT %r = f32[64]{0} add(%w, %x)
}
)");
  ASSERT_NE(module, nullptr);
  const std::vector<Literal> d0 = Inputs(*module, 3, 0);
  const std::vector<Literal> d1 = Inputs(*module, 3, 1);
  ASSERT_EQ(d0.size(), 3u);
  ASSERT_EQ(d1.size(), 3u);
  EXPECT_EQ(d0[0], d1[0]);  // a branch selector every device must agree on
  EXPECT_EQ(d0[1], d1[1]);  // replicated weights
  EXPECT_FALSE(d0[2] == d1[2]);  // each device's own data
}

// The gather indices arrive as the second leaf of a tuple parameter and go
// through get-tuple-element and a fusion before the gather: rows of a
// [10, 4] table, slices of 3 rows, so valid starts are [0, 7].
constexpr char kGatherThroughTuple[] = R"(HloModule g
%fused (table: f32[10,4], idx: s32[64,1]) -> f32[64,3,4] {
  %table = f32[10,4]{1,0} parameter(0)
  %idx = s32[64,1]{1,0} parameter(1)
  ROOT %g = f32[64,3,4]{2,1,0} gather(%table, %idx), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0}, index_vector_dim=1, slice_sizes={3,4}
}
ENTRY %main (t: (f32[10,4], s32[64,1]), other: s32[64]) -> f32[64,3,4] {
  %t = (f32[10,4]{1,0}, s32[64,1]{1,0}) parameter(0)
  %other = s32[64]{0} parameter(1)
  %table = f32[10,4]{1,0} get-tuple-element(%t), index=0
  %idx = s32[64,1]{1,0} get-tuple-element(%t), index=1
  ROOT %f = f32[64,3,4]{2,1,0} fusion(%table, %idx), kind=kLoop, calls=%fused
}
)";

TEST(SeededInputs, IndicesReachingGatherStayInBounds) {
  const auto module = Parse(kGatherThroughTuple);
  ASSERT_NE(module, nullptr);
  for (uint64_t seed = 0; seed < 8; ++seed) {
    const std::vector<Literal> in = Inputs(*module, seed);
    ASSERT_EQ(in.size(), 2u);
    int32_t lo = 100, hi = -100;
    for (int32_t v : in[0].tuple_element(1).data<int32_t>()) lo = std::min(lo, v), hi = std::max(hi, v);
    EXPECT_GE(lo, 0);
    EXPECT_LE(hi, 7);
    // The unrelated integer parameter keeps the general range.
    int32_t olo = 100;
    for (int32_t v : in[1].data<int32_t>()) olo = std::min(olo, v);
    EXPECT_LT(olo, 0) << "seed " << seed;
  }
}

TEST(SeededInputs, RaggedDotGroupSizesSplitAllTheRowsUnevenly) {
  // 10 rows in 4 groups, and per batch index 3 of them in 2: each set of
  // sizes adds up to its rows, as a router sends every token somewhere, and
  // the seeds draw different, uneven splits; the module then evaluates.
  const auto module = Parse(R"(HloModule m
ENTRY %main (a: f32[10,3], w: f32[4,3,2], s: s32[4], b: f32[2,3,4], v: f32[2,2,4,5], t: s32[2,2]) -> (f32[10,2], f32[2,3,5]) {
  %a = f32[10,3]{1,0} parameter(0)
  %w = f32[4,3,2]{2,1,0} parameter(1)
  %s = s32[4]{0} parameter(2)
  %r = f32[10,2]{1,0} ragged-dot(%a, %w, %s), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}
  %b = f32[2,3,4]{2,1,0} parameter(3)
  %v = f32[2,2,4,5]{3,2,1,0} parameter(4)
  %t = s32[2,2]{1,0} parameter(5)
  %q = f32[2,3,5]{2,1,0} ragged-dot(%b, %v, %t), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={2}, lhs_ragged_dims={1}, rhs_group_dims={1}
  ROOT %out = (f32[10,2]{1,0}, f32[2,3,5]{2,1,0}) tuple(%r, %q)
}
)");
  ASSERT_NE(module, nullptr);
  std::set<std::vector<int32_t>> splits;
  int uneven = 0;
  for (uint64_t seed = 0; seed < 16; ++seed) {
    std::vector<Literal> in = Inputs(*module, seed);
    ASSERT_EQ(in.size(), 6u);
    const std::span<const int32_t> s = in[2].data<int32_t>();
    EXPECT_EQ(std::accumulate(s.begin(), s.end(), 0), 10) << "seed " << seed;
    EXPECT_GE(*std::min_element(s.begin(), s.end()), 0) << "seed " << seed;
    splits.emplace(s.begin(), s.end());
    if (*std::max_element(s.begin(), s.end()) > 3) ++uneven;
    const std::span<const int32_t> t = in[5].data<int32_t>();
    EXPECT_EQ(t[0] + t[1], 3) << "seed " << seed;
    EXPECT_EQ(t[2] + t[3], 3) << "seed " << seed;
    EXPECT_GE(std::min({t[0], t[1], t[2], t[3]}), 0) << "seed " << seed;
    EXPECT_TRUE(Evaluator().Evaluate(*module, in).ok()) << "seed " << seed;
  }
  EXPECT_GE(splits.size(), 12u);
  EXPECT_GE(uneven, 4);
}

// Four replicas in two groups; the sizes reach the collective through a tuple
// and a copy, as they do in programs that compute them.
constexpr char kRaggedAllToAll[] = R"(HloModule ragged, replica_count=4
ENTRY %main (input: f32[9,2], output: f32[7,2], input_offsets: s32[2], t: (s32[2]), output_offsets: s32[2], recv_sizes: s32[2]) -> f32[7,2] {
  %input = f32[9,2]{1,0} parameter(0)
  %output = f32[7,2]{1,0} parameter(1)
  %input_offsets = s32[2]{0} parameter(2)
  %t = (s32[2]{0}) parameter(3)
  %send_sizes = s32[2]{0} get-tuple-element(%t), index=0
  %sizes = s32[2]{0} copy(%send_sizes)
  %output_offsets = s32[2]{0} parameter(4)
  %recv_sizes = s32[2]{0} parameter(5)
  ROOT %r = f32[7,2]{1,0} ragged-all-to-all(%input, %output, %input_offsets, %sizes, %output_offsets, %recv_sizes), replica_groups={{3,0},{1,2}}
}
)";

TEST(SeededInputs, RaggedAllToAllOffsetsAndSizesAgreeAcrossTheGroup) {
  const auto module = Parse(kRaggedAllToAll);
  ASSERT_NE(module, nullptr);
  const std::vector<std::vector<int64_t>> groups = {{3, 0}, {1, 2}};
  // Rows per pair: min(9, 7) / 2 = 3.
  constexpr int64_t kRowsPerPair = 3;
  bool some_sizes_differ = false;
  for (uint64_t seed = 0; seed < 8; ++seed) {
    std::vector<std::vector<Literal>> in;
    for (int64_t device = 0; device < 4; ++device) in.push_back(Inputs(*module, seed, device));
    auto at = [&](int64_t device, int param, int64_t i) -> int64_t {
      const Literal& v = param == 3 ? in[device][3].tuple_element(0) : in[device][param];
      return static_cast<int64_t>(v.GetAsDouble(i));
    };
    for (const std::vector<int64_t>& group : groups) {
      for (int64_t rank = 0; rank < 2; ++rank) {
        const int64_t device = group[rank];
        for (int64_t peer = 0; peer < 2; ++peer) {
          EXPECT_EQ(at(device, 2, peer), peer * kRowsPerPair);
          EXPECT_EQ(at(device, 4, peer), rank * kRowsPerPair);
          const int64_t sent = at(device, 3, peer);
          EXPECT_GE(sent, 0);
          EXPECT_LE(sent, kRowsPerPair);
          // The receiver expects exactly what the sender sends.
          EXPECT_EQ(at(group[peer], 5, rank), sent) << "seed " << seed;
          some_sizes_differ |= sent != at(device, 3, 1 - peer);
        }
      }
    }
  }
  EXPECT_TRUE(some_sizes_differ);  // ragged, not one size for all
}

TEST(SeededInputs, RaggedAllToAllModuleEvaluatesOnEveryDevice) {
  const auto module = Parse(kRaggedAllToAll);
  ASSERT_NE(module, nullptr);
  std::vector<std::vector<Literal>> inputs;
  for (int64_t device = 0; device < 4; ++device) inputs.push_back(Inputs(*module, 5, device));
  const std::vector<Literal> sent_by_0 = Inputs(*module, 5, 0);
  auto results = Evaluator().EvaluateSpmd(*module, inputs);
  ASSERT_TRUE(results.ok()) << results.status().message();
  ASSERT_EQ(results->size(), 4u);
  // Device 3 (rank 0 of its group) receives device 0's rows at rank 1's place.
  const int64_t rows = static_cast<int64_t>(sent_by_0[3].tuple_element(0).GetAsDouble(0));
  for (int64_t row = 0; row < rows; ++row) {
    for (int64_t col = 0; col < 2; ++col) {
      EXPECT_EQ((*results)[3].GetAsDouble((3 + row) * 2 + col),
                sent_by_0[0].GetAsDouble(row * 2 + col));
    }
  }
}

TEST(EstimatePeakBytes, CountsArgumentsLiveValuesAndCallees) {
  // The entry holds at most two values of its own at once (x and y, then y
  // and z); while z's fusion runs its callee holds its result, and reads its
  // parameter in place: peak = 8 + 4 KiB, plus the 4 KiB argument, which the
  // entry's p reads in place too.
  const auto module = Parse(R"(HloModule m
%f (a: f32[1024]) -> f32[1024] {
  %a = f32[1024]{0} parameter(0)
  ROOT %n = f32[1024]{0} negate(%a)
}
ENTRY %main (p: f32[1024]) -> f32[1024] {
  %p = f32[1024]{0} parameter(0)
  %x = f32[1024]{0} negate(%p)
  %y = f32[1024]{0} negate(%x)
  ROOT %z = f32[1024]{0} fusion(%y), kind=kLoop, calls=%f
}
)");
  ASSERT_NE(module, nullptr);
  const StatusOr<int64_t> peak = Evaluator::EstimatePeakBytes(*module);
  ASSERT_TRUE(peak.ok()) << peak.status().message();
  EXPECT_EQ(*peak, 4096 * 4);
}

TEST(EstimatePeakBytes, AnUnboundedDimensionIsAnErrorAtItsInstruction) {
  const auto module = Parse(R"(HloModule m
ENTRY e {
  p = f32[?,784] parameter(0)
  ROOT n = f32[?,784] negate(p)
})");
  ASSERT_NE(module, nullptr);
  const StatusOr<int64_t> peak = Evaluator::EstimatePeakBytes(*module);
  ASSERT_FALSE(peak.ok());
  EXPECT_EQ(peak.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(peak.status().message().ends_with(
      ":3:3: error: p: shape f32[?,784] has an unbounded dimension 0: a value needs a size or a "
      "bound"))
      << peak.status().message();
}

}  // namespace
}  // namespace tpusim::eval
