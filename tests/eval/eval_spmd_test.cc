// SPMD evaluation: each collective and each replica-group mode on small
// modules with hand-computed results. Device d's input is usually d + 1 (or a
// pattern built from d), so sums, gathers and permutations are checkable by
// hand; device d = replica * partition_count + partition.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/base/execution_series.h"
#include "sim/eval/evaluator.h"
#include "sim/hlo/parser.h"
#include "sim/hlo/verifier.h"
#include "sim/value/literal.h"
#include "tests/hlo/varying_programs.h"

namespace tpusim::eval {
namespace {

using ::testing::HasSubstr;
using value::Literal;

/// Parses and verifies `text`, then evaluates it on every device of `config`
/// (the module header's counts when absent); `args(d)` gives device d's
/// parameters (none when absent).
StatusOr<std::vector<Literal>> TrySpmd(
    std::string_view text, std::function<std::vector<Literal>(int64_t)> args = {},
    std::optional<SpmdConfig> config = std::nullopt, EvaluatorOptions options = {}) {
  auto module = hlo::ParseHloModule(text);
  if (!module.ok()) return module.status();
  TPUSIM_RETURN_IF_ERROR(hlo::VerifyModule(**module));
  const SpmdConfig c = config.value_or(SpmdConfig::FromModule(**module));
  std::vector<std::vector<Literal>> per_device;
  for (int64_t d = 0; d < c.device_count(); ++d) {
    per_device.push_back(args ? args(d) : std::vector<Literal>{});
  }
  return Evaluator(options).EvaluateSpmd(**module, c, per_device);
}

std::vector<Literal> Spmd(std::string_view text,
                          std::function<std::vector<Literal>(int64_t)> args = {},
                          std::optional<SpmdConfig> config = std::nullopt) {
  StatusOr<std::vector<Literal>> result = TrySpmd(text, std::move(args), config);
  if (!result.ok()) {
    ADD_FAILURE() << result.status().message();
    return {};
  }
  return std::move(result).value();
}

template <typename T>
Literal R1(std::initializer_list<T> values) {
  return Literal::CreateR1<T>(values);
}

/// Device d's argument: the f32 scalar d + 1.
std::vector<Literal> ScalarDPlus1(int64_t d) {
  std::vector<Literal> args;
  args.push_back(Literal::CreateR0<float>(static_cast<float>(d + 1)));
  return args;
}

/// Expects device d's result to be the f32 scalar expected[d].
void ExpectScalars(const std::vector<Literal>& results, std::vector<float> expected) {
  ASSERT_EQ(results.size(), expected.size());
  for (size_t d = 0; d < expected.size(); ++d) {
    EXPECT_EQ(results[d], Literal::CreateR0<float>(expected[d]))
        << "device " << d << ": " << results[d].ToString();
  }
}

constexpr std::string_view kAddF32 = R"(
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
)";

std::string WithAdd(std::string_view header, std::string_view entry) {
  return std::string(header) + "\n" + std::string(kAddF32) + std::string(entry);
}

// --- all-reduce and the group modes ------------------------------------------

TEST(SpmdAllReduce, CrossReplicaGroupsSumTheirReplicas) {
  const std::string text = WithAdd("HloModule m, replica_count=4", R"(
ENTRY e {
  p = f32[] parameter(0)
  ROOT r = f32[] all-reduce(p), replica_groups={{0,1},{2,3}}, to_apply=add
})");
  ExpectScalars(Spmd(text, ScalarDPlus1), {3, 3, 7, 7});
}

TEST(SpmdAllReduce, EmptyGroupsMeanEveryReplica) {
  const std::string text = WithAdd("HloModule m, replica_count=4", R"(
ENTRY e {
  p = f32[] parameter(0)
  ROOT r = f32[] all-reduce(p), replica_groups={}, to_apply=add
})");
  ExpectScalars(Spmd(text, ScalarDPlus1), {10, 10, 10, 10});
}

TEST(SpmdAllReduce, CrossReplicaGroupsStayWithinAPartition) {
  // 2 replicas x 2 partitions, no channel: replica ids, same partition, so
  // device 0 (r0,p0) meets device 2 (r1,p0).
  const std::string text = WithAdd("HloModule m, replica_count=2, num_partitions=2", R"(
ENTRY e {
  p = f32[] parameter(0)
  ROOT r = f32[] all-reduce(p), replica_groups={{0,1}}, to_apply=add
})");
  ExpectScalars(Spmd(text, ScalarDPlus1), {1 + 3, 2 + 4, 1 + 3, 2 + 4});
}

TEST(SpmdAllReduce, ChannelWithoutGlobalIdsGroupsReplicasWithAllTheirPartitions) {
  // kCrossReplicaAndPartition: group {0} is replica 0's devices 0 and 1.
  const std::string text = WithAdd("HloModule m, replica_count=2, num_partitions=2", R"(
ENTRY e {
  p = f32[] parameter(0)
  ROOT r = f32[] all-reduce(p), channel_id=1, replica_groups={{0},{1}}, to_apply=add
})");
  ExpectScalars(Spmd(text, ScalarDPlus1), {1 + 2, 1 + 2, 3 + 4, 3 + 4});
}

TEST(SpmdAllReduce, GlobalDeviceIdsNameDevicesIncludingIotaGroups) {
  // [2,2]<=[2,2]T(1,0) expands to {{0,2},{1,3}}.
  const std::string text = WithAdd("HloModule m, replica_count=2, num_partitions=2", R"(
ENTRY e {
  p = f32[] parameter(0)
  ROOT r = f32[] all-reduce(p), channel_id=1, replica_groups=[2,2]<=[2,2]T(1,0),
      use_global_device_ids=true, to_apply=add
})");
  ExpectScalars(Spmd(text, ScalarDPlus1), {1 + 3, 2 + 4, 1 + 3, 2 + 4});
}

TEST(SpmdAllReduce, CombinesInGroupOrderNotDeviceOrder) {
  // subtract is not commutative: ((x1 - x2) - x0) over the group {1,2,0}.
  const std::string text = R"(HloModule m, replica_count=3
sub {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] subtract(a, b)
}
ENTRY e {
  p = f32[] parameter(0)
  ROOT r = f32[] all-reduce(p), replica_groups={{1,2,0}}, to_apply=sub
})";
  ExpectScalars(Spmd(text, ScalarDPlus1), {-2, -2, -2});
}

TEST(SpmdAllReduce, GeneralReducerIsCalledInGroupOrder) {
  // f(a, b) = 2a + b from the first participant: ((1*2 + 2) * 2 + 3) = 11.
  const std::string text = R"(HloModule m, replica_count=3
twice_plus {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  two = f32[] constant(2)
  a2 = f32[] multiply(a, two)
  ROOT s = f32[] add(a2, b)
}
ENTRY e {
  p = f32[] parameter(0)
  ROOT r = f32[] all-reduce(p), replica_groups={}, to_apply=twice_plus
})";
  ExpectScalars(Spmd(text, ScalarDPlus1), {11, 11, 11});
}

TEST(SpmdAllReduce, FloatSumRoundsInGroupOrderLikeTheElementwiseAdd) {
  // (1e8 + 1) rounds back to 1e8 in f32, then - 1e8 gives 0; any other order
  // would give 1.
  const std::string text = WithAdd("HloModule m, replica_count=3", R"(
ENTRY e {
  p = f32[] parameter(0)
  ROOT r = f32[] all-reduce(p), replica_groups={}, to_apply=add
})");
  const float inputs[] = {1e8f, 1.0f, -1e8f};
  auto args = [&](int64_t d) {
    std::vector<Literal> a;
    a.push_back(Literal::CreateR0<float>(inputs[d]));
    return a;
  };
  for (int run = 0; run < 5; ++run) ExpectScalars(Spmd(text, args), {0, 0, 0});
}

TEST(SpmdAllReduce, VariadicOperandsReduceEachToATupleElement) {
  const std::string text = R"(HloModule m, replica_count=2
add_s32 {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
ENTRY e {
  id = u32[] replica-id()
  x = s32[] convert(id)
  ten = s32[] constant(10)
  y = s32[] multiply(x, ten)
  ROOT r = (s32[], s32[]) all-reduce(x, y), replica_groups={}, to_apply=add_s32
})";
  const std::vector<Literal> results = Spmd(text);
  ASSERT_EQ(results.size(), 2u);
  for (const Literal& r : results) {
    ASSERT_TRUE(r.shape().IsTuple());
    EXPECT_EQ(r.tuple_element(0), Literal::CreateR0<int32_t>(1));
    EXPECT_EQ(r.tuple_element(1), Literal::CreateR0<int32_t>(10));
  }
}

// --- all-gather, reduce-scatter, all-to-all, broadcast ----------------------

TEST(SpmdAllGather, ConcatenatesInGroupOrderAlongTheDimension) {
  const std::string text = R"(HloModule m, replica_count=3
ENTRY e {
  p = s32[2,1] parameter(0)
  ROOT g = s32[2,3] all-gather(p), replica_groups={{2,0,1}}, dimensions={1}
})";
  auto args = [](int64_t d) {
    Literal p(hlo::Shape(hlo::PrimitiveType::kS32, {2, 1}));
    p.Set<int32_t>({0, 0}, static_cast<int32_t>(d + 1));
    p.Set<int32_t>({1, 0}, static_cast<int32_t>(10 * (d + 1)));
    std::vector<Literal> a;
    a.push_back(std::move(p));
    return a;
  };
  const std::vector<Literal> results = Spmd(text, args);
  ASSERT_EQ(results.size(), 3u);
  for (const Literal& r : results) {
    EXPECT_THAT(r.data<int32_t>(), ::testing::ElementsAre(3, 1, 2, 30, 10, 20));
  }
}

TEST(SpmdReduceScatter, EachDeviceGetsItsBlockOfTheSum) {
  const std::string text = R"(HloModule m, replica_count=2
add_s32 {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
ENTRY e {
  p = s32[4] parameter(0)
  ROOT r = s32[2] reduce-scatter(p), replica_groups={{0,1}}, dimensions={0}, to_apply=add_s32
})";
  auto args = [](int64_t d) {
    const int32_t b = static_cast<int32_t>(10 * d);
    std::vector<Literal> a;
    a.push_back(R1<int32_t>({b + 1, b + 2, b + 3, b + 4}));
    return a;
  };
  const std::vector<Literal> results = Spmd(text, args);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0], R1<int32_t>({12, 14}));
  EXPECT_EQ(results[1], R1<int32_t>({16, 18}));
}

TEST(SpmdAllToAll, ArrayFormSplitsAndConcatenatesAcrossPartitions) {
  // channel_id on all-to-all: partition ids (kCrossPartition).
  const std::string text = R"(HloModule m, replica_count=2, num_partitions=2
ENTRY e {
  p = s32[4] parameter(0)
  ROOT a = s32[4] all-to-all(p), channel_id=1, replica_groups={{0,1}}, dimensions={0}
})";
  auto args = [](int64_t d) {
    const int32_t b = static_cast<int32_t>(10 * d);
    std::vector<Literal> a;
    a.push_back(R1<int32_t>({b, b + 1, b + 2, b + 3}));
    return a;
  };
  const std::vector<Literal> results = Spmd(text, args);
  ASSERT_EQ(results.size(), 4u);
  EXPECT_EQ(results[0], R1<int32_t>({0, 1, 10, 11}));
  EXPECT_EQ(results[1], R1<int32_t>({2, 3, 12, 13}));
  EXPECT_EQ(results[2], R1<int32_t>({20, 21, 30, 31}));
  EXPECT_EQ(results[3], R1<int32_t>({22, 23, 32, 33}));
}

TEST(SpmdAllToAll, TupleFormSendsOperandIToParticipantI) {
  const std::string text = R"(HloModule m, replica_count=2
ENTRY e {
  id = u32[] replica-id()
  x = s32[] convert(id)
  ten = s32[] constant(10)
  one = s32[] constant(1)
  two = s32[] constant(2)
  base = s32[] multiply(x, ten)
  a = s32[] add(base, one)
  b = s32[] add(base, two)
  ROOT t = (s32[], s32[]) all-to-all(a, b), replica_groups={{0,1}}
})";
  const std::vector<Literal> results = Spmd(text);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].tuple_element(0), Literal::CreateR0<int32_t>(1));
  EXPECT_EQ(results[0].tuple_element(1), Literal::CreateR0<int32_t>(11));
  EXPECT_EQ(results[1].tuple_element(0), Literal::CreateR0<int32_t>(2));
  EXPECT_EQ(results[1].tuple_element(1), Literal::CreateR0<int32_t>(12));
}

TEST(SpmdRaggedAllToAll, RowsGoToTheOffsetsTheSenderNames) {
  // Each device sends row i of its input to device i, at output row = its own
  // replica id: device 0 ends with {4, 4}... as written per device below.
  const std::string text = R"(HloModule m, replica_count=2
ENTRY e {
  id = u32[] replica-id()
  x = s32[] convert(id)
  xb = s32[3] broadcast(x), dimensions={}
  base = s32[3] constant({10, 20, 30})
  hundred = s32[] constant(100)
  shift = s32[] multiply(x, hundred)
  shiftb = s32[3] broadcast(shift), dimensions={}
  input = s32[3] add(base, shiftb)
  output = s32[3] constant({-1, -1, -1})
  input_offsets = s64[2] constant({0, 1})
  send_sizes = s64[2] constant({1, 2})
  id64 = s64[] convert(id)
  output_offsets = s64[2] broadcast(id64), dimensions={}
  recv_sizes = s64[2] constant({1, 2})
  ROOT r = s32[3] ragged-all-to-all(input, output, input_offsets, send_sizes, output_offsets,
      recv_sizes), replica_groups={{0,1}}
})";
  // Device 0 sends {10} to device 0 at row 0 and {20,30} to device 1 at row 0;
  // device 1 sends {110} to device 0 at row 1 and {120,130} to device 1 at row 1.
  const std::vector<Literal> results = Spmd(text);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0], R1<int32_t>({10, 110, -1}));
  EXPECT_EQ(results[1], R1<int32_t>({20, 120, 130}));
}

TEST(SpmdRaggedAllToAll, TheRunRecordsWhatEachDeviceSent) {
  // Device 0 sends 1 row to itself and 2 to device 1; device 1 sends its 3
  // rows to device 0. Timing needs each device's sizes: the traffic differs.
  const std::string text = R"(HloModule m, replica_count=2
ENTRY e {
  id = u32[] replica-id()
  zero = u32[] constant(0)
  x = s32[] convert(id)
  hundred = s32[] constant(100)
  shift = s32[] multiply(x, hundred)
  shiftb = s32[3] broadcast(shift), dimensions={}
  base = s32[3] constant({10, 20, 30})
  input = s32[3] add(base, shiftb)
  output = s32[4] constant({-1, -1, -1, -1})
  sizes_of = s64[2,2] constant({{1, 2}, {3, 0}})
  in_of = s64[2,2] constant({{0, 1}, {0, 0}})
  out_of = s64[2,2] constant({{0, 0}, {1, 0}})
  recv_of = s64[2,2] constant({{1, 3}, {2, 0}})
  sizes_row = s64[1,2] dynamic-slice(sizes_of, id, zero), dynamic_slice_sizes={1,2}
  in_row = s64[1,2] dynamic-slice(in_of, id, zero), dynamic_slice_sizes={1,2}
  out_row = s64[1,2] dynamic-slice(out_of, id, zero), dynamic_slice_sizes={1,2}
  recv_row = s64[1,2] dynamic-slice(recv_of, id, zero), dynamic_slice_sizes={1,2}
  send_sizes = s64[2] reshape(sizes_row)
  input_offsets = s64[2] reshape(in_row)
  output_offsets = s64[2] reshape(out_row)
  recv_sizes = s64[2] reshape(recv_row)
  ROOT r = s32[4] ragged-all-to-all(input, output, input_offsets, send_sizes, output_offsets,
      recv_sizes), replica_groups={{0,1}}
})";
  RunRecord record;
  EvaluatorOptions options;
  options.record = &record;
  const StatusOr<std::vector<Literal>> results = TrySpmd(text, {}, std::nullopt, options);
  ASSERT_TRUE(results.ok()) << results.status().message();
  EXPECT_EQ((*results)[0], R1<int32_t>({10, 110, 120, 130}));
  EXPECT_EQ((*results)[1], R1<int32_t>({20, 30, -1, -1}));
  // (The records' keys name the module's instructions, gone with it.)
  ASSERT_EQ(record.ragged_send_sizes.size(), 1u);
  EXPECT_EQ(record.ragged_send_sizes.begin()->second.At(0), (std::vector<int64_t>{1, 2}));
  ASSERT_EQ(record.device_ragged_send_sizes.size(), 1u);
  ASSERT_EQ(record.device_ragged_send_sizes.count(1), 1u);
  ASSERT_EQ(record.device_ragged_send_sizes.at(1).size(), 1u);
  EXPECT_EQ(record.device_ragged_send_sizes.at(1).begin()->second.At(0),
            (std::vector<int64_t>{3, 0}));
}

TEST(SpmdCollectiveBroadcast, EveryoneGetsTheFirstDeviceOfTheGroup) {
  const std::string text = R"(HloModule m, replica_count=2
ENTRY e {
  p = f32[] parameter(0)
  ROOT b = f32[] collective-broadcast(p), replica_groups={{1,0}}
})";
  ExpectScalars(Spmd(text, ScalarDPlus1), {2, 2});
}

// --- collective-permute and send/recv ----------------------------------------

TEST(SpmdCollectivePermute, TargetsReceiveAndOthersGetZeros) {
  const std::string text = R"(HloModule m, replica_count=3
ENTRY e {
  p = f32[] parameter(0)
  ROOT c = f32[] collective-permute(p), source_target_pairs={{0,1},{1,2}}
})";
  ExpectScalars(Spmd(text, ScalarDPlus1), {0, 1, 2});
}

TEST(SpmdCollectivePermute, WithAChannelPairsNamePartitions) {
  const std::string text = R"(HloModule m, replica_count=2, num_partitions=2
ENTRY e {
  p = f32[] parameter(0)
  ROOT c = f32[] collective-permute(p), channel_id=1, source_target_pairs={{0,1},{1,0}}
})";
  ExpectScalars(Spmd(text, ScalarDPlus1), {2, 1, 4, 3});
}

/// Device d's argument: f32[4] {10d, 10d+1, 10d+2, 10d+3}.
std::vector<Literal> RowOfTens(int64_t d) {
  const float b = static_cast<float>(10 * d);
  std::vector<Literal> args;
  args.push_back(R1<float>({b, b + 1, b + 2, b + 3}));
  return args;
}

TEST(SpmdCollectivePermute, InPlaceFormWritesTheSourceSliceAtTheTargetOffsets) {
  // Source offset = the source's id, target offset = 2 - the target's id:
  // device 1 gets input0[0:2] at 1, device 2 gets input1[1:3] at 0; device 0
  // is no target and keeps its output operand.
  const std::string text = R"(HloModule m, replica_count=3
ENTRY e {
  p = f32[4] parameter(0)
  m1 = f32[] constant(-1)
  out = f32[4] broadcast(m1), dimensions={}
  id = u32[] replica-id()
  two = u32[] constant(2)
  back = u32[] subtract(two, id)
  in_off = (u32[]) tuple(id)
  out_off = (u32[]) tuple(back)
  ROOT c = f32[4] collective-permute(p, out, in_off, out_off),
      source_target_pairs={{0,1},{1,2}}, slice_sizes={{2}}
})";
  const std::vector<Literal> results = Spmd(text, RowOfTens);
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0], R1<float>({-1, -1, -1, -1}));
  EXPECT_EQ(results[1], R1<float>({-1, 0, 1, -1}));
  EXPECT_EQ(results[2], R1<float>({11, 12, -1, -1}));
}

TEST(SpmdCollectivePermute, InPlaceFormWithSeveralSlicesAndRankTwo) {
  // Two slices of f32[2,4]: slice 0 (1x1) from [0,0] to [1,3]; slice 1 (2x2)
  // from [0,2] to [0,0]. Device d's input is 100d + 10*row + col.
  const std::string text = R"(HloModule m, replica_count=2
ENTRY e {
  id = u32[] replica-id()
  idf = f32[] convert(id)
  hundred = f32[] constant(100)
  base = f32[] multiply(idf, hundred)
  bb = f32[2,4] broadcast(base), dimensions={}
  rows = f32[2,4] iota(), iota_dimension=0
  ten = f32[2,4] constant({{10,10,10,10},{10,10,10,10}})
  rows10 = f32[2,4] multiply(rows, ten)
  cols = f32[2,4] iota(), iota_dimension=1
  rc = f32[2,4] add(rows10, cols)
  p = f32[2,4] add(bb, rc)
  m1 = f32[] constant(-1)
  out = f32[2,4] broadcast(m1), dimensions={}
  z = s32[] constant(0)
  one = s32[] constant(1)
  two = s32[] constant(2)
  three = s32[] constant(3)
  in0 = (s32[], s32[]) tuple(z, z)
  in1 = (s32[], s32[]) tuple(z, two)
  out0 = (s32[], s32[]) tuple(one, three)
  out1 = (s32[], s32[]) tuple(z, z)
  in_off = ((s32[], s32[]), (s32[], s32[])) tuple(in0, in1)
  out_off = ((s32[], s32[]), (s32[], s32[])) tuple(out0, out1)
  ROOT c = f32[2,4] collective-permute(p, out, in_off, out_off),
      source_target_pairs={{0,1},{1,0}}, slice_sizes={{1,1},{2,2}}
})";
  const std::vector<Literal> results = Spmd(text);
  ASSERT_EQ(results.size(), 2u);
  // Device 1 from device 0; device 0 from device 1 (+100).
  const auto flat = [](const Literal& l) {
    EXPECT_EQ(l.shape().dimensions(), (std::vector<int64_t>{2, 4}));
    return std::vector<float>(l.data<float>().begin(), l.data<float>().end());
  };
  EXPECT_EQ(flat(results[1]), (std::vector<float>{2, 3, -1, -1, 12, 13, -1, 0}));
  EXPECT_EQ(flat(results[0]), (std::vector<float>{102, 103, -1, -1, 112, 113, -1, 100}));
}

TEST(SpmdCollectivePermute, InPlaceStartDoneGivesTheSyncResultAndKeepsTheInput) {
  // Device 1 gets input0[1:3] at 0; device 0 is no target. The start tuple's
  // element 0 is the input alone (not the offsets).
  const std::string text = R"(HloModule m, replica_count=2
ENTRY e {
  p = f32[4] parameter(0)
  z = f32[] constant(0)
  out = f32[4] broadcast(z), dimensions={}
  one = u32[] constant(1)
  zero = u32[] constant(0)
  in_off = (u32[]) tuple(one)
  out_off = (u32[]) tuple(zero)
  s = (f32[4], f32[4], u32[], u32[]) collective-permute-start(p, out, in_off, out_off),
      source_target_pairs={{0,1}}, slice_sizes={{2}}
  d = f32[4] collective-permute-done(s)
  kept = f32[4] get-tuple-element(s), index=0
  ROOT t = (f32[4], f32[4]) tuple(d, kept)
})";
  const std::vector<Literal> results = Spmd(text, RowOfTens);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].tuple_element(0), R1<float>({0, 0, 0, 0}));
  EXPECT_EQ(results[1].tuple_element(0), R1<float>({1, 2, 0, 0}));
  EXPECT_EQ(results[1].tuple_element(1), R1<float>({10, 11, 12, 13}));
}

TEST(SpmdCollectivePermute, InPlaceFormWithBadSliceSizesTextIsALocatedError) {
  const std::string text = R"(HloModule m, replica_count=2
ENTRY e {
  p = f32[4] parameter(0)
  id = u32[] replica-id()
  off = (u32[]) tuple(id)
  ROOT c = f32[4] collective-permute(p, p, off, off),
      source_target_pairs={{0,1},{1,0}}, slice_sizes={{2,x}}
})";
  StatusOr<std::vector<Literal>> results = TrySpmd(text, RowOfTens);
  ASSERT_FALSE(results.ok());
  EXPECT_THAT(results.status().message(), HasSubstr("slice_sizes must be"));
  EXPECT_THAT(results.status().message(), HasSubstr(":6:"));
}

TEST(SpmdCollectivePermute, InPlaceFormsTheEvaluatorLacksAreUnimplementedNotBadInput) {
  // Slices to two peers each (pairs that repeat an id) and buffers in
  // tuples are XLA's; the evaluator does not run them, so full mode times the
  // module without values rather than refusing it.
  const std::string several_peers = R"(HloModule m, replica_count=4
ENTRY e {
  p = f32[4] parameter(0)
  zero = u32[] constant(0)
  off = (u32[]) tuple(zero)
  offs = ((u32[]), (u32[])) tuple(off, off)
  ROOT c = f32[4] collective-permute(p, p, offs, offs),
      source_target_pairs={{0,1},{1,2},{2,3},{0,3},{2,1},{3,2}}, slice_sizes={{2},{2}}
})";
  StatusOr<std::vector<Literal>> results = TrySpmd(several_peers, RowOfTens);
  ASSERT_FALSE(results.ok());
  EXPECT_EQ(results.status().code(), StatusCode::kUnimplemented) << results.status().message();
  EXPECT_THAT(results.status().message(), HasSubstr("pairs repeat an id"));
  const std::string tuples = R"(HloModule m, replica_count=2
ENTRY e {
  p = f32[4] parameter(0)
  buffers = (f32[4], f32[4]) tuple(p, p)
  zero = u32[] constant(0)
  off = (u32[]) tuple(zero)
  offs = ((u32[]), (u32[])) tuple(off, off)
  ROOT c = (f32[4], f32[4]) collective-permute(buffers, buffers, offs, offs),
      source_target_pairs={{0,1},{1,0}}, slice_sizes={{2},{2}}
})";
  results = TrySpmd(tuples, RowOfTens);
  ASSERT_FALSE(results.ok());
  EXPECT_EQ(results.status().code(), StatusCode::kUnimplemented) << results.status().message();
  EXPECT_THAT(results.status().message(), HasSubstr("tuples of buffers"));
}

// Six devices fail on their own at once, each on its thread: the error is the
// lowest one's, every run, not whichever thread came first.
TEST(SpmdAllReduce, DevicesInNoGroupGiveTheLowestDevicesErrorEveryRun) {
  const std::string text = WithAdd("HloModule m, replica_count=8", R"(ENTRY e {
  p = f32[] parameter(0)
  ROOT r = f32[] all-reduce(p), replica_groups={{0,1}}, to_apply=add
})");
  for (int run = 0; run < 8; ++run) {
    StatusOr<std::vector<Literal>> results = TrySpmd(text, ScalarDPlus1);
    ASSERT_FALSE(results.ok());
    EXPECT_THAT(results.status().message(), HasSubstr("replica 2 is in no replica group"));
  }
}

// --- SPMD shape conversions (custom calls) ----------------------------------

/// A module of `partitions` partitions that shards iota(`full`) with
/// `sharding`, takes each partition's shard (f32[`shard`]) under `manual`,
/// adds 10p to it on partition p, and reassembles the full value:
/// (shard, full) per partition.
std::string ShardRoundTrip(int partitions, int full, int shard, const std::string& sharding,
                           const std::string& manual = "{manual}") {
  const std::string f = "f32[" + std::to_string(full) + "]";
  const std::string s = "f32[" + std::to_string(shard) + "]";
  return "HloModule m, num_partitions=" + std::to_string(partitions) + "\nENTRY e {\n" +
         "  full = " + f + " iota(), iota_dimension=0\n" +
         "  sh = " + f + " custom-call(full), custom_call_target=\"Sharding\", sharding=" +
         sharding + "\n" +
         "  shard = " + s + " custom-call(sh), custom_call_target=\"SPMDFullToShardShape\", " +
         "sharding=" + manual + "\n" +
         "  id = u32[] partition-id()\n  idf = f32[] convert(id)\n  ten = f32[] constant(10)\n" +
         "  off = f32[] multiply(idf, ten)\n  offs = " + s + " broadcast(off), dimensions={}\n" +
         "  moved = " + s + " add(shard, offs)\n" +
         "  back = " + f + " custom-call(moved), custom_call_target=\"SPMDShardToFullShape\", " +
         "sharding=" + sharding + "\n" +
         "  ROOT t = (" + s + ", " + f + ") tuple(shard, back)\n}";
}

TEST(SpmdShardShape, FullToShardAndBackFollowAPermutedTileAssignment) {
  // devices=[2]1,0: partition 1 holds tile 0, partition 0 holds tile 1.
  // Partition p adds 10p to its shard before the shards are reassembled.
  const std::string text = ShardRoundTrip(2, 4, 2, "{devices=[2]1,0}");
  const std::vector<Literal> results = Spmd(text);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].tuple_element(0), R1<float>({2, 3}));
  EXPECT_EQ(results[1].tuple_element(0), R1<float>({0, 1}));
  for (const Literal& r : results) EXPECT_EQ(r.tuple_element(1), R1<float>({10, 11, 2, 3}));
}

TEST(SpmdShardShape, ReplicatedTileDimAndUnevenTilesTakeTheFirstHolderAndPad) {
  // f32[3] in 2 tiles of 2 (the last padded with zeros), each held by two
  // partitions: tile 0 by 0 and 1, tile 1 by 2 and 3. Partition p adds 10p;
  // the full value takes tile 0 from partition 0 and tile 1 from partition 2.
  const std::string text = ShardRoundTrip(4, 3, 2, "{devices=[2,2]<=[4] last_tile_dim_replicate}");
  const std::vector<Literal> results = Spmd(text);
  ASSERT_EQ(results.size(), 4u);
  EXPECT_EQ(results[0].tuple_element(0), R1<float>({0, 1}));
  EXPECT_EQ(results[1].tuple_element(0), R1<float>({0, 1}));
  EXPECT_EQ(results[2].tuple_element(0), R1<float>({2, 0}));
  EXPECT_EQ(results[3].tuple_element(0), R1<float>({2, 0}));
  for (const Literal& r : results) EXPECT_EQ(r.tuple_element(1), R1<float>({0, 1, 22}));
}

TEST(SpmdShardShape, NamedShardingsActAsTheTileAssignmentTheyStandFor) {
  // {mesh[a=2,b=2], [{b}]} is {devices=[2,2]0,2,1,3 last_tile_dim_replicate}:
  // tile 0 is held by partitions 0 and 2, tile 1 by 1 and 3. Partition p adds
  // 10p; the full value takes tile 0 from partition 0 and tile 1 from 1.
  const std::string text = ShardRoundTrip(4, 4, 2, "{mesh[a=2,b=2], [{b}]}", "{mesh[a=2,b=2], manual}");
  const std::vector<Literal> results = Spmd(text);
  ASSERT_EQ(results.size(), 4u);
  EXPECT_EQ(results[0].tuple_element(0), R1<float>({0, 1}));
  EXPECT_EQ(results[1].tuple_element(0), R1<float>({2, 3}));
  EXPECT_EQ(results[2].tuple_element(0), R1<float>({0, 1}));
  EXPECT_EQ(results[3].tuple_element(0), R1<float>({2, 3}));
  for (const Literal& r : results) EXPECT_EQ(r.tuple_element(1), R1<float>({0, 1, 12, 13}));
}

TEST(SpmdShardShape, NamedShardingWithUnreducedAxesIsALocatedErrorNotAMisreading) {
  const std::string text = R"(HloModule m, num_partitions=4
ENTRY e {
  p = f32[2] parameter(0)
  ROOT back = f32[4] custom-call(p), custom_call_target="SPMDShardToFullShape",
      sharding={mesh[a=2,b=2], [{a}], unreduced={b}}
})";
  StatusOr<std::vector<Literal>> results = TrySpmd(text, [](int64_t) {
    std::vector<Literal> args;
    args.push_back(R1<float>({1, 2}));
    return args;
  });
  ASSERT_FALSE(results.ok());
  EXPECT_THAT(results.status().message(),
              HasSubstr("is a named sharding with unreduced axes, which no tile assignment stands "
                        "for"));
  EXPECT_THAT(results.status().message(), HasSubstr(":4:"));
}

TEST(SpmdShardShape, ShapeChangeWithoutATiledShardingIsALocatedError) {
  const std::string text = R"(HloModule m, num_partitions=2
ENTRY e {
  p = f32[2] parameter(0)
  ROOT back = f32[4] custom-call(p), custom_call_target="SPMDShardToFullShape",
      sharding={replicated}
})";
  StatusOr<std::vector<Literal>> results = TrySpmd(text, [](int64_t) {
    std::vector<Literal> args;
    args.push_back(R1<float>({1, 2}));
    return args;
  });
  ASSERT_FALSE(results.ok());
  EXPECT_THAT(results.status().message(), HasSubstr("must be tiled"));
  EXPECT_THAT(results.status().message(), HasSubstr(":4:"));
}

TEST(SpmdSendRecv, BidirectionalExchangeDoesNotDeadlock) {
  // Both devices receive before they send (text order), as a scheduled module
  // does: recv only reserves, recv-done waits.
  const std::string text = R"(HloModule m, num_partitions=2
ENTRY e {
  p = f32[] parameter(0)
  token = token[] after-all()
  recv = (f32[], u32[], token[]) recv(token), channel_id=5,
      frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1},{1,0}}"}
  send = (f32[], u32[], token[]) send(p, token), channel_id=5,
      frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1},{1,0}}"}
  recv-done = (f32[], token[]) recv-done(recv), channel_id=5
  send-done = token[] send-done(send), channel_id=5
  ROOT data = f32[] get-tuple-element(recv-done), index=0
})";
  // channel_id=5: the pairs name partitions.
  ExpectScalars(Spmd(text, ScalarDPlus1), {2, 1});
}

TEST(SpmdSendRecv, DeviceThatIsNoTargetReceivesZerosAndUnreadSendsStillRun) {
  // The send is read by nothing: it runs anyway (it has a side effect).
  const std::string text = R"(HloModule m, replica_count=2
ENTRY e {
  p = f32[] parameter(0)
  token = token[] after-all()
  recv = (f32[], u32[], token[]) recv(token),
      frontend_attributes={_xla_send_recv_source_target_pairs="{{1,0}}"}
  send = (f32[], u32[], token[]) send(p, token), control-predecessors={recv},
      frontend_attributes={_xla_send_recv_source_target_pairs="{{1,0}}"}
  recv-done = (f32[], token[]) recv-done(recv)
  send-done = token[] send-done(send)
  ROOT data = f32[] get-tuple-element(recv-done), index=0
})";
  ExpectScalars(Spmd(text, ScalarDPlus1), {2, 0});
}

TEST(SpmdSendRecv, HostTransferSendLeavesItsDeclaredBufferZeroFilled) {
  // Real dumps declare a host buffer type (s32) unlike the data (f32): the
  // host is not simulated, so the buffer element stays zeros of its own shape.
  const std::string text = R"(HloModule m, replica_count=2
ENTRY e {
  p = f32[] parameter(0)
  token = token[] after-all()
  send = (s32[], u32[], token[]) send(p, token), channel_id=3, is_host_transfer=true
  send-done = token[] send-done(send), channel_id=3, is_host_transfer=true
  ROOT buffer = s32[] get-tuple-element(send), index=0
})";
  const std::vector<Literal> results = Spmd(text, ScalarDPlus1);
  ASSERT_EQ(results.size(), 2u);
  for (const Literal& r : results) EXPECT_EQ(r, Literal::CreateR0<int32_t>(0));
}

TEST(SpmdSendRecv, DeviceSendWhoseBufferTypeDiffersFromTheDataIsAnError) {
  const std::string text = R"(HloModule m, replica_count=2
ENTRY e {
  p = f32[] parameter(0)
  token = token[] after-all()
  send = (s32[], u32[], token[]) send(p, token),
      frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1}}"}
  ROOT send-done = token[] send-done(send)
})";
  StatusOr<std::vector<Literal>> results = TrySpmd(text, ScalarDPlus1);
  ASSERT_FALSE(results.ok());
  EXPECT_THAT(results.status().message(), HasSubstr("does not match the started operation"));
}

// --- asynchronous forms -------------------------------------------------------

TEST(SpmdAsync, StartDonePairsGiveTheSyncResults) {
  const std::string text = WithAdd("HloModule m, replica_count=2", R"(
ENTRY e {
  p = f32[1] parameter(0)
  ars = f32[1] all-reduce-start(p), replica_groups={}, to_apply=add
  ar = f32[1] all-reduce-done(ars)
  ags = (f32[1], f32[2]) all-gather-start(p), replica_groups={}, dimensions={0}
  ag = f32[2] all-gather-done(ags)
  cps = (f32[1], f32[1], u32[], u32[]) collective-permute-start(p),
      source_target_pairs={{0,1},{1,0}}
  cp = f32[1] collective-permute-done(cps)
  rss = ((f32[2]), f32[1]) reduce-scatter-start(ag), replica_groups={}, dimensions={0},
      to_apply=add
  rs = f32[1] reduce-scatter-done(rss)
  ROOT t = (f32[1], f32[2], f32[1], f32[1]) tuple(ar, ag, cp, rs)
})");
  auto args = [](int64_t d) {
    std::vector<Literal> a;
    a.push_back(R1<float>({static_cast<float>(d + 1)}));
    return a;
  };
  const std::vector<Literal> results = Spmd(text, args);
  ASSERT_EQ(results.size(), 2u);
  for (int64_t d = 0; d < 2; ++d) {
    const Literal& r = results[d];
    EXPECT_EQ(r.tuple_element(0), R1<float>({3}));
    EXPECT_EQ(r.tuple_element(1), R1<float>({1, 2}));
    EXPECT_EQ(r.tuple_element(2), R1<float>({d == 0 ? 2.0f : 1.0f}));
    // reduce-scatter of the gathered {1,2} on both devices: {2,4}, split.
    EXPECT_EQ(r.tuple_element(3), R1<float>({d == 0 ? 2.0f : 4.0f}));
  }
}

TEST(SpmdAsync, AsyncStartWrappingACollectiveComputation) {
  const std::string text = WithAdd("HloModule m, replica_count=2", R"(
wrapped {
  x = f32[] parameter(0)
  ROOT r = f32[] all-reduce(x), replica_groups={}, to_apply=add
}
ENTRY e {
  p = f32[] parameter(0)
  s = ((f32[]), f32[]) async-start(p), calls=wrapped
  ROOT d = f32[] async-done(s), calls=wrapped
})");
  ExpectScalars(Spmd(text, ScalarDPlus1), {3, 3});
}

TEST(SpmdAllReduce, RepeatedInsideAWhileLoopMeetsPerIteration) {
  // x <- all-reduce(x) three times over 2 replicas: (1 + 2) * 2 * 2.
  const std::string text = WithAdd("HloModule m, replica_count=2", R"(
cond {
  s = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[] get-tuple-element(s), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  y = f32[] all-reduce(x), replica_groups={}, to_apply=add
  ROOT t = (s32[], f32[]) tuple(i1, y)
}
ENTRY e {
  p = f32[] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[]) tuple(zero, p)
  w = (s32[], f32[]) while(init), condition=cond, body=body
  ROOT x = f32[] get-tuple-element(w), index=1
})");
  ExpectScalars(Spmd(text, ScalarDPlus1), {12, 12});
}

/// What `text`'s run on each of its devices, from f32 zeros of `elements`,
/// records; the module is kept beside it, since the record points into it.
struct Recorded {
  std::unique_ptr<hlo::HloModule> module;
  RunRecord record;
};
Recorded RecordRun(std::string_view text, int64_t elements) {
  Recorded run;
  auto module = hlo::ParseHloModule(text);
  if (!module.ok()) {
    ADD_FAILURE() << module.status().message();
    return run;
  }
  run.module = std::move(module).value();
  EvaluatorOptions options;
  options.record = &run.record;
  const SpmdConfig config = SpmdConfig::FromModule(*run.module);
  std::vector<std::vector<Literal>> per_device(config.device_count());
  for (std::vector<Literal>& args : per_device) {
    args.emplace_back(hlo::Shape(hlo::PrimitiveType::kF32, {elements}));
  }
  const auto results = Evaluator(options).EvaluateSpmd(*run.module, config, per_device);
  EXPECT_TRUE(results.ok()) << results.status().message();
  return run;
}

TEST(Spmd, TheRunRecordsEachDevicesTripCountsAndBranches) {
  // Device d's loop runs d + 1 iterations.
  const Recorded loops = RecordRun(test::kDeviceTripCounts, 65536);
  ASSERT_EQ(loops.record.trip_counts.size(), 1u);
  const hlo::HloInstruction* w = loops.record.trip_counts.begin()->first;
  EXPECT_EQ(w->name(), "w");
  EXPECT_EQ(loops.record.trip_counts.at(w), ExecutionSeries<int64_t>(1));
  // The others' are kept by device number.
  EXPECT_EQ(loops.record.device_trip_counts.count(0), 0u);
  EXPECT_EQ(loops.record.device_trip_counts.at(1).at(w), ExecutionSeries<int64_t>(2));
  // Device 0 alone takes the true branch (0).
  const Recorded branches = RecordRun(test::kStageBranch, 1048576);
  ASSERT_EQ(branches.record.branches.size(), 1u);
  const hlo::HloInstruction* stage = branches.record.branches.begin()->first;
  EXPECT_EQ(stage->name(), "stage");
  EXPECT_EQ(branches.record.branches.at(stage), ExecutionSeries<int64_t>(0));
  EXPECT_EQ(branches.record.device_branches.count(0), 0u);
  EXPECT_EQ(branches.record.device_branches.at(1).at(stage), ExecutionSeries<int64_t>(1));
}

// --- errors --------------------------------------------------------------------

TEST(SpmdErrors, DevicesAtDifferentCollectivesAreADeadlockNamingBoth) {
  // Replica 0 takes the true branch and replica 1 the false one: each waits
  // for the other at a different all-reduce.
  const std::string text = WithAdd("HloModule m, replica_count=2", R"(
on_zero {
  x = f32[] parameter(0)
  ROOT a = f32[] all-reduce(x), replica_groups={}, to_apply=add
}
on_other {
  x = f32[] parameter(0)
  ROOT b = f32[] all-reduce(x), replica_groups={}, to_apply=add
}
ENTRY e {
  p = f32[] parameter(0)
  id = u32[] replica-id()
  zero = u32[] constant(0)
  is_zero = pred[] compare(id, zero), direction=EQ
  ROOT c = f32[] conditional(is_zero, p, p), true_computation=on_zero, false_computation=on_other
})");
  StatusOr<std::vector<Literal>> result = TrySpmd(text, ScalarDPlus1);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(result.status().message(), HasSubstr("all-reduce a: deadlock"));
  EXPECT_THAT(result.status().message(), HasSubstr("all-reduce b: deadlock"));
  EXPECT_THAT(result.status().message(),
              HasSubstr("device 1 (replica 1, partition 0) waits at all-reduce b"));
}

TEST(SpmdErrors, DeviceThatFinishesWithoutArrivingIsReported) {
  const std::string text = WithAdd("HloModule m, replica_count=2", R"(
reduce_it {
  x = f32[] parameter(0)
  ROOT a = f32[] all-reduce(x), replica_groups={}, to_apply=add
}
skip {
  ROOT x = f32[] parameter(0)
}
ENTRY e {
  p = f32[] parameter(0)
  id = u32[] replica-id()
  zero = u32[] constant(0)
  is_zero = pred[] compare(id, zero), direction=EQ
  ROOT c = f32[] conditional(is_zero, p, p), true_computation=reduce_it, false_computation=skip
})");
  StatusOr<std::vector<Literal>> result = TrySpmd(text, ScalarDPlus1);
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.status().message(), HasSubstr("all-reduce a: deadlock: devices 0 wait"));
  EXPECT_THAT(result.status().message(), HasSubstr("device 1 (replica 1, partition 0) finished"));
}

TEST(SpmdErrors, ReceiveThatIsNeverSentIsADeadlock) {
  // The recv uses channel 1, the send channel 2: nothing matches.
  const std::string text = R"(HloModule m, num_partitions=2
ENTRY e {
  p = f32[] parameter(0)
  token = token[] after-all()
  recv = (f32[], u32[], token[]) recv(token), channel_id=1,
      frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1}}"}
  send = (f32[], u32[], token[]) send(p, token), channel_id=2,
      frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1}}"}
  recv-done = (f32[], token[]) recv-done(recv), channel_id=1
  send-done = token[] send-done(send), channel_id=2
  ROOT data = f32[] get-tuple-element(recv-done), index=0
})";
  StatusOr<std::vector<Literal>> result = TrySpmd(text, ScalarDPlus1);
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.status().message(), HasSubstr("recv-done recv-done: deadlock"));
  EXPECT_THAT(result.status().message(), HasSubstr("which is never sent"));
}

TEST(SpmdErrors, AFailingDeviceStopsTheOthersWithItsError) {
  // Replica 1 loops forever (capped); replica 0 waits at the all-reduce and
  // must be released, not hang.
  const std::string text = WithAdd("HloModule m, replica_count=2", R"(
cond {
  s = f32[] parameter(0)
  id = u32[] replica-id()
  one = u32[] constant(1)
  ROOT is_one = pred[] compare(id, one), direction=EQ
}
body {
  ROOT s = f32[] parameter(0)
}
ENTRY e {
  p = f32[] parameter(0)
  w = f32[] while(p), condition=cond, body=body
  ROOT r = f32[] all-reduce(w), replica_groups={}, to_apply=add
})");
  EvaluatorOptions options;
  options.max_while_iterations = 100;
  StatusOr<std::vector<Literal>> result = TrySpmd(text, ScalarDPlus1, std::nullopt, options);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(result.status().message(),
              HasSubstr("while w: loop did not finish within 100 iterations"));
}

TEST(SpmdErrors, GroupIdOutOfRangeNamesTheInstruction) {
  const std::string text = WithAdd("HloModule m, replica_count=2", R"(
ENTRY e {
  p = f32[] parameter(0)
  ROOT r = f32[] all-reduce(p), replica_groups={{0,1,2}}, to_apply=add
})");
  StatusOr<std::vector<Literal>> result = TrySpmd(text, ScalarDPlus1);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(result.status().message(),
              HasSubstr("all-reduce r: replica_groups name replica 2, but the program has 2"));
}

TEST(SpmdSubset, DevicesClosedUnderTheCollectivesGiveTheSameValues) {
  const std::string text = WithAdd("HloModule m, replica_count=4", R"(
ENTRY e {
  p = f32[] parameter(0)
  ROOT r = f32[] all-reduce(p), replica_groups={{0,2},{1,3}}, to_apply=add
})");
  auto module = hlo::ParseHloModule(text);
  ASSERT_TRUE(module.ok());
  const SpmdConfig config{4, 1};
  const std::vector<int64_t> devices = {0, 2};
  std::vector<std::vector<Literal>> args;
  for (const int64_t d : devices) args.push_back(ScalarDPlus1(d));
  StatusOr<std::vector<Literal>> some = Evaluator().EvaluateSpmd(**module, config, devices, args);
  ASSERT_TRUE(some.ok()) << some.status().message();
  ExpectScalars(*some, {4, 4});  // 1 + 3, as in the run of all four
  ExpectScalars(Spmd(text, ScalarDPlus1), {4, 6, 4, 6});

  // A subset that a group leaves is refused, not hung.
  const std::vector<int64_t> broken = {0, 1};
  args.clear();
  for (const int64_t d : broken) args.push_back(ScalarDPlus1(d));
  StatusOr<std::vector<Literal>> open = Evaluator().EvaluateSpmd(**module, config, broken, args);
  ASSERT_FALSE(open.ok());
  EXPECT_EQ(open.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(open.status().message(), HasSubstr("needs device 2, which is not being evaluated"));
}

TEST(SpmdErrors, WrongNumberOfArgumentListsIsAnError) {
  auto module = hlo::ParseHloModule("HloModule m, replica_count=2\nENTRY e {\n  ROOT c = f32[] constant(1)\n}\n");
  ASSERT_TRUE(module.ok());
  std::vector<std::vector<Literal>> args(3);
  StatusOr<std::vector<Literal>> result = Evaluator().EvaluateSpmd(**module, args);
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.status().message(), HasSubstr("2 devices need one argument list each, got 3"));
}

// --- single device and configuration --------------------------------------------

TEST(SpmdSingleDevice, EvaluateRunsAGroupOfItselfAndRejectsLargerOnes) {
  const std::string alone = WithAdd("HloModule m", R"(
ENTRY e {
  p = f32[] parameter(0)
  ROOT r = f32[] all-reduce(p), replica_groups={}, to_apply=add
})");
  auto module = hlo::ParseHloModule(alone);
  ASSERT_TRUE(module.ok());
  std::vector<Literal> args;
  args.push_back(Literal::CreateR0<float>(5));
  StatusOr<Literal> one = Evaluator().Evaluate(**module, args);
  ASSERT_TRUE(one.ok()) << one.status().message();
  EXPECT_EQ(*one, Literal::CreateR0<float>(5));
  ExpectScalars(Spmd(alone, ScalarDPlus1), {1});

  const std::string pair = WithAdd("HloModule m, replica_count=2", R"(
ENTRY e {
  p = f32[] parameter(0)
  ROOT r = f32[] all-reduce(p), replica_groups={}, to_apply=add
})");
  auto two = hlo::ParseHloModule(pair);
  ASSERT_TRUE(two.ok());
  StatusOr<Literal> lonely = Evaluator().Evaluate(**two, args);
  ASSERT_FALSE(lonely.ok());
  EXPECT_EQ(lonely.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(lonely.status().message(), HasSubstr("Evaluator::EvaluateSpmd"));
}

TEST(SpmdCollectivePermute, SeveralOperandsPermuteTogether) {
  const std::string text = R"(HloModule m, replica_count=2
ENTRY e {
  id = u32[] replica-id()
  x = s32[] convert(id)
  ten = s32[] constant(10)
  y = s32[] add(x, ten)
  ROOT c = (s32[], s32[]) collective-permute(x, y), source_target_pairs={{0,1},{1,0}}
})";
  const std::vector<Literal> results = Spmd(text);
  ASSERT_EQ(results.size(), 2u);
  for (int32_t d = 0; d < 2; ++d) {
    EXPECT_EQ(results[d].tuple_element(0), Literal::CreateR0<int32_t>(1 - d));
    EXPECT_EQ(results[d].tuple_element(1), Literal::CreateR0<int32_t>(11 - d));
  }
}

// --- every device alike: device 0 stands for all ------------------------------

// Equal inputs, no device ids, and collectives that keep devices equal:
// device 0 evaluated alone, each collective taking the others'
// contributions to be its own, gives what every device gives in a full run.
TEST(SpmdAlike, DeviceZeroAloneGivesWhatEveryDeviceGives) {
  const std::string text = WithAdd("HloModule m, replica_count=4", R"(
ENTRY e {
  p = f32[2] parameter(0)
  s = f32[2] all-reduce(p), replica_groups={{0,1},{2,3}}, to_apply=add
  g = f32[4] all-gather(s), replica_groups={{0,2},{1,3}}, dimensions={0}
  c = f32[4] collective-permute(g), source_target_pairs={{0,1},{1,2},{2,3},{3,0}}
  b = f32[4] collective-broadcast(c), replica_groups={{3,2,1,0}}
  ROOT r = f32[4] all-reduce(b), replica_groups={}, to_apply=add
})");
  auto module = hlo::ParseHloModule(text);
  ASSERT_TRUE(module.ok()) << module.status().message();
  const SpmdConfig config = SpmdConfig::FromModule(**module);
  StatusOr<std::optional<std::string>> differ = WhyDevicesDiffer(**module, config);
  ASSERT_TRUE(differ.ok()) << differ.status().message();
  EXPECT_EQ(*differ, std::nullopt);
  const auto args = [](int64_t) {
    std::vector<Literal> a;
    a.push_back(R1<float>({1.5f, -2.0f}));
    return a;
  };
  const std::vector<Literal> all = Spmd(text, args);
  ASSERT_EQ(all.size(), 4u);
  const Literal expected = R1<float>({12.0f, -16.0f, 12.0f, -16.0f});
  for (const Literal& device : all) EXPECT_EQ(device, expected) << device.ToString();
  StatusOr<Literal> alone = Evaluator().EvaluateAlike(**module, config, args(0));
  ASSERT_TRUE(alone.ok()) << alone.status().message();
  EXPECT_EQ(*alone, expected) << alone->ToString();
}

// Each way a program can give devices different values from equal inputs
// is named, at the first instruction that does it.
TEST(SpmdAlike, WhatMakesDevicesDifferIsNamed) {
  const auto why = [](std::string_view header, std::string_view entry) {
    auto module = hlo::ParseHloModule(WithAdd(header, entry), "m.hlo");
    EXPECT_TRUE(module.ok()) << module.status().message();
    if (!module.ok()) return std::string();
    StatusOr<std::optional<std::string>> differ =
        WhyDevicesDiffer(**module, SpmdConfig::FromModule(**module));
    EXPECT_TRUE(differ.ok()) << differ.status().message();
    return differ.ok() ? differ->value_or("alike") : std::string();
  };
  struct Case {
    std::string_view header, entry, why;
  };
  for (const Case& c : std::vector<Case>{
           {"HloModule m, replica_count=2", "ROOT id = u32[] replica-id()",
            "replica-id id (m.hlo:11:3) reads its device's id"},
           {"HloModule m, num_partitions=2",
            "ROOT s = f32[1] custom-call(p), custom_call_target=\"SPMDFullToShardShape\", "
            "sharding={manual}",
            "custom-call s (m.hlo:11:3) takes its partition's tile"},
           {"HloModule m, replica_count=2",
            "ROOT r = f32[1] reduce-scatter(p), replica_groups={}, dimensions={0}, to_apply=add",
            "reduce-scatter r (m.hlo:11:3) gives each device a different part"},
           {"HloModule m, replica_count=3",
            "ROOT r = f32[2] all-reduce(p), replica_groups={{0,1},{2}}, to_apply=add",
            "all-reduce r (m.hlo:11:3) has groups of different sizes"},
           {"HloModule m, replica_count=3",
            "ROOT c = f32[2] collective-permute(p), source_target_pairs={{0,1},{1,2}}",
            "collective-permute c (m.hlo:11:3) sends nothing to some devices"},
           {"HloModule m, replica_count=2",
            "ROOT c = f32[2] collective-permute(p), source_target_pairs={{0,1},{1,0}}", "alike"}}) {
    EXPECT_EQ(why(c.header, "\nENTRY e {\n  p = f32[2] parameter(0)\n  " +
                                std::string(c.entry) + "\n}\n"),
              c.why);
  }
}

}  // namespace
}  // namespace tpusim::eval
