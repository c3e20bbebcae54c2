// The SPMD timing runtime with a test interconnect of known durations: sync
// collectives wait for their group and the network, stragglers delay the
// others, async collectives overlap, participants follow the HLO group
// rules, deadlocks are reported, and symmetry gives the same answer as
// simulating every device. Each TEST runs in its own process (one SystemC
// run each).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "sim/timing/report.h"
#include "sim/timing/timing.h"
#include "tests/hlo/varying_programs.h"
#include "tests/timing/test_timer.h"
#include "tests/timing/timing_test_util.h"

namespace tpusim::timing {
namespace {

using Groups = std::vector<std::vector<int64_t>>;

TimingOptions WithTimer(const TestTimer& timer) {
  TimingOptions options;
  options.interconnect = &timer;
  return options;
}

TEST(Spmd, SyncCollectiveWaitsForTheNetworkAndIsRecorded) {
  const arch::ChipConfig v5e = IdealPreset("tpu-v5e");
  auto m = Parse(std::string("HloModule ar, replica_count=2\n") + kAdd + R"(
ENTRY e {
  p = f32[1024]{0} parameter(0)
  ROOT ar = f32[1024]{0} all-reduce(p), replica_groups={{0,1}}, to_apply=add
})");
  ASSERT_NE(m, nullptr);
  const TestTimer timer(10'000'000);  // 10 us
  auto r = SimulateModule(*m, v5e, WithTimer(timer));
  ASSERT_TRUE(r.ok()) << r.status().message();
  const int64_t network = CyclesOf(10'000'000, v5e.clock.value());
  const OpRecord& ar = Op(r->ops, "ar");
  EXPECT_EQ(ar.start_cycle, 0);
  EXPECT_EQ(ar.cycles, network);
  EXPECT_EQ(ar.bound_by, BoundBy::kIci);
  EXPECT_EQ(r->cycles, network);
  EXPECT_EQ(r->device_count, 2);
  ASSERT_EQ(r->collectives.size(), 1u);
  const CollectiveRecord& c = r->collectives[0];
  EXPECT_EQ(c.instruction->name(), "ar");
  EXPECT_EQ(c.kind, ici::CollectiveKind::kAllReduce);
  EXPECT_EQ(c.start_cycle, 0);
  EXPECT_EQ(c.cycles, network);
  EXPECT_EQ(c.bytes, 4096);
  EXPECT_EQ(c.ici_bytes, 3 * 4096);
  EXPECT_EQ(c.algorithm, ici::Algorithm::kRing);
  EXPECT_EQ(c.groups, (Groups{{0, 1}}));
  ASSERT_EQ(timer.calls.size(), 1u);
  EXPECT_EQ(timer.calls[0].kind, ici::CollectiveKind::kAllReduce);
  EXPECT_EQ(timer.calls[0].bytes, 4096);
  EXPECT_EQ(timer.calls[0].groups, (Groups{{0, 1}}));
  // Links: totals over the run and utilisation against the test bandwidth.
  ASSERT_EQ(r->links.size(), 2u);
  EXPECT_EQ(r->links[1].name, "L1");
  EXPECT_EQ(r->links[1].bytes, 2 * 4096);
  const double seconds = static_cast<double>(r->cycles) / static_cast<double>(v5e.clock.value());
  EXPECT_DOUBLE_EQ(r->links[1].utilisation,
                   2 * 4096 / (static_cast<double>(TestTimer::kBandwidth.value()) * seconds));
  // The reports carry it.
  const auto json = nlohmann::json::parse(TimingJson(*r));
  EXPECT_EQ(json["symmetry"], "used");
  EXPECT_EQ(json["collectives"][0]["participants"], nlohmann::json::parse("[[0,1]]"));
  EXPECT_EQ(json["links"][1]["bytes"], 8192);
  const std::string trace = TimingTraceJson(*r);
  EXPECT_NE(trace.find("\"link L1\""), std::string::npos);
  const std::string table = FormatOpTable(*r);
  EXPECT_NE(table.find("2 devices (symmetry: used)"), std::string::npos);
  EXPECT_NE(table.find("{0,1}"), std::string::npos);
}

TEST(Spmd, TheTraceMirrorsSymmetricDevicesAndCarriesSourceMetadata) {
  const arch::ChipConfig v5e = IdealPreset("tpu-v5e");
  auto m = Parse(std::string("HloModule ar, replica_count=3\n") + kAdd + R"(
ENTRY e {
  p = f32[1024]{0} parameter(0)
  x = f32[1024]{0} exponential(p), metadata={op_name="jit(f)/exp" source_file="model.py" source_line=42}
  ROOT ar = f32[1024]{0} all-reduce(x), replica_groups={{0,1,2}}, to_apply=add
})");
  ASSERT_NE(m, nullptr);
  const TestTimer timer(1'000'000);
  auto r = SimulateModule(*m, v5e, WithTimer(timer));
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->symmetry, "used");
  const nlohmann::json trace = nlohmann::json::parse(TimingTraceJson(*r));
  std::vector<std::string> processes;
  int exp_slices = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") processes.push_back(e["args"]["name"]);
    if (e["ph"] == "X" && e["name"] == "x" && e.contains("args")) {
      ++exp_slices;
      EXPECT_EQ(e["args"]["op_name"], "jit(f)/exp");
      EXPECT_EQ(e["args"]["source_file"], "model.py");
      EXPECT_EQ(e["args"]["source_line"], 42);
    }
  }
  EXPECT_THAT(processes, ::testing::Contains("device 1 (mirrors device 0: the devices are "
                                             "symmetric)"));
  EXPECT_THAT(processes, ::testing::Contains("device 2 (mirrors device 0: the devices are "
                                             "symmetric)"));
  EXPECT_EQ(exp_slices, 3);  // device 0's instruction track and its two mirrors
}

// The collective table has a row per instruction: two all-reduces named
// `ar` in different computations are two rows, each saying whose it is (rows
// keyed by name had summed them into one row of 2 runs).
TEST(Spmd, CollectiveTableRowsAreInstructionsNotNames) {
  const arch::ChipConfig v5e = IdealPreset("tpu-v5e");
  auto m = Parse(std::string("HloModule twice, replica_count=2\n") + kAdd + R"(
inner {
  x = f32[1024]{0} parameter(0)
  ROOT ar = f32[1024]{0} all-reduce(x), replica_groups={{0,1}}, to_apply=add
}
ENTRY e {
  p = f32[1024]{0} parameter(0)
  c = f32[1024]{0} call(p), to_apply=inner
  ROOT ar = f32[1024]{0} all-reduce(c), replica_groups={{0,1}}, to_apply=add
})");
  ASSERT_NE(m, nullptr);
  const TestTimer timer(10'000'000);
  auto r = SimulateModule(*m, v5e, WithTimer(timer));
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->collectives.size(), 2u);
  const std::string table = FormatOpTable(*r);
  const size_t collectives = table.find("\ncollective ");
  ASSERT_NE(collectives, std::string::npos) << table;
  const std::string rows = table.substr(collectives);
  EXPECT_NE(rows.find("\ninner/ar "), std::string::npos) << table;
  EXPECT_NE(rows.find("\ne/ar "), std::string::npos) << table;
  EXPECT_EQ(rows.find("\nar "), std::string::npos) << table;
}

TEST(Spmd, StragglerDelaysTheCollectiveForEveryone) {
  const arch::ChipConfig v5e = IdealPreset("tpu-v5e");
  auto m = Parse(std::string("HloModule straggle, replica_count=2\n") + kAdd + R"(
ENTRY e {
  p = f32[65536]{0} parameter(0)
  x = f32[65536]{0} exponential(p)
  ROOT ar = f32[65536]{0} all-reduce(x), replica_groups={}, to_apply=add
})");
  ASSERT_NE(m, nullptr);
  const TestTimer timer(100'000'000);  // longer than the slowed local adds
  TimingOptions options = WithTimer(timer);
  options.device_slowdown = {{1, 4.0}};
  auto r = SimulateModule(*m, v5e, options);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->symmetry, "not used: device 1 is slowed down");
  ASSERT_EQ(r->devices.size(), 2u);
  const int64_t k0 = Op(r->ops, "x").cycles;
  ASSERT_GT(k0, 0);
  EXPECT_EQ(Op(r->devices[1].ops, "x").cycles, 4 * k0);
  const int64_t network = CyclesOf(100'000'000, v5e.clock.value());
  ASSERT_EQ(r->collectives.size(), 1u);
  EXPECT_EQ(r->collectives[0].start_cycle, 4 * k0);  // when the straggler arrives
  EXPECT_EQ(r->collectives[0].groups, (Groups{{0, 1}}));
  // Device 0 arrives at k0 and waits for device 1.
  EXPECT_EQ(Op(r->ops, "ar").start_cycle, k0);
  EXPECT_EQ(Op(r->ops, "ar").cycles, 3 * k0 + network);
  EXPECT_EQ(r->devices[0].collective_wait_cycles, 3 * k0);
  EXPECT_EQ(r->devices[1].collective_wait_cycles, 0);
  EXPECT_EQ(r->devices[0].end_cycle, 4 * k0 + network);
  EXPECT_EQ(r->devices[1].end_cycle, 4 * k0 + network);
  EXPECT_EQ(r->cycles, 4 * k0 + network);
}

/// Expert parallelism on 2 devices: a grouped matmul over 4 experts whose
/// result the devices sum.
constexpr char kExpertParallelModule[] = R"(
ENTRY e {
  tokens = bf16[1024,512]{1,0} parameter(0)
  experts = bf16[4,512,512]{2,1,0} parameter(1)
  sizes = s32[4]{0} parameter(2)
  moe = bf16[1024,512]{1,0} ragged-dot(tokens, experts, sizes), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}
  ROOT ar = bf16[1024,512]{1,0} all-reduce(moe), replica_groups={}, to_apply=add
})";

/// kExpertParallelModule timed on 2 devices of an ideal v5e, device 0's
/// ragged-dot having held `first` and device 1's `second`; the module outlives
/// the result, whose records point into it.
struct ExpertParallelRun {
  std::unique_ptr<hlo::HloModule> module;
  StatusOr<TimingResult> result = InvalidArgument("the module did not parse");
};

ExpertParallelRun TimeExpertParallel(std::vector<int64_t> first, std::vector<int64_t> second) {
  ExpertParallelRun run;
  run.module =
      Parse(std::string("HloModule moe, replica_count=2\n") + kAdd + kExpertParallelModule);
  if (run.module == nullptr) return run;
  const hlo::HloInstruction* moe = run.module->entry()->root()->operand(0);
  const TestTimer timer(1'000'000);
  TimingOptions options = WithTimer(timer);
  options.ragged_group_shares = {{moe, ExecutionSeries(std::move(first))}};
  options.device_ragged_group_shares[1] = {{moe, ExecutionSeries(std::move(second))}};
  run.result = SimulateModule(*run.module, IdealPreset("tpu-v5e"), options);
  return run;
}

TEST(Spmd, EachDeviceIsTimedWithItsOwnRaggedDotGroups) {
  // Device 0's router sent 128 of 1024 rows to one expert, device 1's all
  // 1024 to four: device 1 reads four experts' weights and does 8x the
  // work, and device 0 waits for it at the all-reduce.
  const ExpertParallelRun run = TimeExpertParallel({128, 0, 0, 0}, {256, 256, 256, 256});
  const StatusOr<TimingResult>& r = run.result;
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->symmetry, "not used: the ragged-dot groups of moe differ on device 1");
  ASSERT_EQ(r->devices.size(), 2u);
  const OpRecord& light = Op(r->ops, "moe");
  const OpRecord& heavy = Op(r->devices[1].ops, "moe");
  EXPECT_EQ(light.flops, 2LL * 128 * 512 * 512);
  EXPECT_EQ(heavy.flops, 2LL * 1024 * 512 * 512);
  EXPECT_EQ(heavy.hbm_bytes - light.hbm_bytes, 3 * 512 * 512 * 2);
  EXPECT_GT(heavy.cycles, light.cycles);
  ASSERT_EQ(r->collectives.size(), 1u);
  EXPECT_EQ(r->collectives[0].start_cycle, heavy.cycles);  // when the straggler arrives
  EXPECT_EQ(r->devices[0].collective_wait_cycles, heavy.cycles - light.cycles);
  EXPECT_EQ(r->devices[1].collective_wait_cycles, 0);
}

TEST(Spmd, DevicesWhoseRaggedDotGroupsAreAlikeAreStillSymmetric) {
  const ExpertParallelRun run = TimeExpertParallel({128, 0, 0, 0}, {128, 0, 0, 0});
  const StatusOr<TimingResult>& r = run.result;
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->symmetry, "used");
  EXPECT_EQ(Op(r->ops, "moe").flops, 2LL * 128 * 512 * 512);
}

TEST(Spmd, EachDeviceTakesItsOwnBranches) {
  // Device 0, the first pipeline stage, embeds its input; device 1 takes the
  // branch that passes it on, and waits for device 0 at the all-reduce.
  auto m = Parse(test::kStageBranch);
  ASSERT_NE(m, nullptr);
  const TestTimer timer(1'000'000);
  TimingOptions options = WithTimer(timer);
  options.device_branches[1][Named(*m, "stage")] = ExecutionSeries<int64_t>(1);
  auto r = SimulateModule(*m, IdealPreset("tpu-v5e"), options);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->symmetry, "not used: stage takes other branches on device 1");
  ASSERT_EQ(r->devices.size(), 2u);
  const OpRecord& embed = Op(r->ops, "embed");
  for (const OpRecord& op : r->devices[1].ops) EXPECT_NE(op.instruction->name(), "embed");
  ASSERT_EQ(r->collectives.size(), 1u);
  EXPECT_EQ(r->devices[0].collective_wait_cycles, 0);
  EXPECT_EQ(r->devices[1].collective_wait_cycles, embed.cycles);
}

TEST(Spmd, EachDeviceIteratesItsOwnTripCounts) {
  // Device 1's loop runs 3 iterations, device 0's the default one (its bound
  // is not a constant); device 0 waits for device 1 at the all-reduce.
  auto m = Parse(test::kDeviceTripCounts);
  ASSERT_NE(m, nullptr);
  const TestTimer timer(1'000'000);
  TimingOptions options = WithTimer(timer);
  options.device_trip_counts[1][Named(*m, "w")] = ExecutionSeries<int64_t>(3);
  auto r = SimulateModule(*m, IdealPreset("tpu-v5e"), options);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->symmetry, "not used: w iterates otherwise on device 1");
  ASSERT_EQ(r->devices.size(), 2u);
  const auto squares = [](const std::vector<OpRecord>& ops) {
    int64_t runs = 0;
    for (const OpRecord& op : ops) runs += op.instruction->name() == "square" ? op.runs : 0;
    return runs;
  };
  EXPECT_EQ(squares(r->ops), 1);
  EXPECT_EQ(squares(r->devices[1].ops), 3);
  EXPECT_GT(r->devices[0].collective_wait_cycles, 0);
  EXPECT_EQ(r->devices[1].collective_wait_cycles, 0);
}

constexpr char kAsyncModule[] = R"(
ENTRY e {
  p = f32[1024]{0} parameter(0)
  q = f32[1024,1024]{1,0} parameter(1)
  s = f32[1024]{0} all-reduce-start(p), replica_groups={{0,1}}, to_apply=add
  d = f32[1024,1024]{1,0} dot(q, q), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  done = f32[1024]{0} all-reduce-done(s)
  ROOT t = (f32[1024]{0}, f32[1024,1024]{1,0}) tuple(done, d)
})";

TEST(Spmd, AsyncCollectiveOverlapsTheInstructionsBetweenStartAndDone) {
  const arch::ChipConfig v5e = IdealPreset("tpu-v5e");
  auto m = Parse(std::string("HloModule async, replica_count=2\n") + kAdd + kAsyncModule);
  ASSERT_NE(m, nullptr);
  const TestTimer fast(1'000);            // 1 ns: hidden behind the dot
  const TestTimer slow(1'000'000'000);    // 1 ms: longer than the dot
  const std::vector<SimulationJob> jobs = {{m.get(), &v5e, WithTimer(fast)},
                                           {m.get(), &v5e, WithTimer(slow)}};
  auto r = AllTimed(SimulateBatch(jobs));
  ASSERT_TRUE(r.ok()) << r.status().message();
  const TimingResult& hidden = (*r)[0];
  const TimingResult& exposed = (*r)[1];
  // The dot starts as soon as the collective starts, in both.
  EXPECT_EQ(Op(hidden.ops, "d").start_cycle, Op(hidden.ops, "s").start_cycle);
  EXPECT_EQ(Op(exposed.ops, "d").cycles, Op(hidden.ops, "d").cycles);
  EXPECT_EQ(Op(hidden.ops, "done").cycles, 0);
  const int64_t network = CyclesOf(1'000'000'000, v5e.clock.value());
  ASSERT_GT(network, Op(exposed.ops, "d").cycles);
  const OpRecord& done = Op(exposed.ops, "done");
  EXPECT_EQ(done.start_cycle + done.cycles, exposed.collectives.at(0).start_cycle + network);
  EXPECT_EQ(done.bound_by, BoundBy::kIci);
  EXPECT_EQ(exposed.cycles, network);
  EXPECT_EQ(exposed.collectives.at(0).instruction->name(), "s");
  EXPECT_EQ(exposed.collectives.at(0).kind, ici::CollectiveKind::kAllReduce);  // not a -start kind
}

TEST(Spmd, ParticipantsFollowIotaGroupsAndPermutePairs) {
  const arch::ChipConfig v5e = IdealPreset("tpu-v5e");
  auto m = Parse(std::string("HloModule groups, replica_count=4\n") + kAdd + R"(
ENTRY e {
  p = f32[256]{0} parameter(0)
  ar = f32[256]{0} all-reduce(p), replica_groups=[2,2]<=[2,2]T(1,0), to_apply=add
  ag = f32[512]{0} all-gather(ar), replica_groups={{0,1},{2,3}}, dimensions={0}
  ROOT cp = f32[512]{0} collective-permute(ag), source_target_pairs={{0,1},{1,2},{2,3},{3,0}}
})");
  ASSERT_NE(m, nullptr);
  const TestTimer timer(1'000'000);
  TimingOptions options = WithTimer(timer);
  options.exploit_symmetry = false;
  auto r = SimulateModule(*m, v5e, options);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->collectives.size(), 3u);
  EXPECT_EQ(r->collectives[0].instruction->name(), "ar");
  EXPECT_EQ(r->collectives[0].groups, (Groups{{0, 2}, {1, 3}}));
  EXPECT_EQ(r->collectives[1].instruction->name(), "ag");
  EXPECT_EQ(r->collectives[1].groups, (Groups{{0, 1}, {2, 3}}));
  EXPECT_EQ(r->collectives[1].bytes, 2048);  // the gathered result
  EXPECT_EQ(r->collectives[2].instruction->name(), "cp");
  EXPECT_EQ(r->collectives[2].kind, ici::CollectiveKind::kCollectivePermute);
  EXPECT_EQ(r->collectives[2].groups, (Groups{{0, 1, 2, 3}}));
  // The interconnect is asked once per instance, with every group.
  ASSERT_EQ(timer.calls.size(), 3u);
  EXPECT_EQ(timer.calls[2].pairs,
            (std::vector<std::pair<int64_t, int64_t>>{{0, 1}, {1, 2}, {2, 3}, {3, 0}}));
  EXPECT_EQ(r->devices.size(), 4u);
}

TEST(Spmd, ChannelAndGlobalDeviceIdsNameDevices) {
  const arch::ChipConfig v5e = IdealPreset("tpu-v5e");
  auto m = Parse(std::string("HloModule global, replica_count=2, num_partitions=2\n") + kAdd + R"(
ENTRY e {
  p = f32[256]{0} parameter(0)
  ar = f32[256]{0} all-reduce(p), channel_id=1, replica_groups={{0,3},{1,2}}, use_global_device_ids=true, to_apply=add
  ROOT ag = f32[1024]{0} all-gather(ar), channel_id=2, replica_groups={{0},{1}}, dimensions={0}
})");
  ASSERT_NE(m, nullptr);
  const TestTimer timer(1'000'000);
  auto r = SimulateModule(*m, v5e, WithTimer(timer));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->device_count, 4);
  ASSERT_EQ(r->collectives.size(), 2u);
  EXPECT_EQ(r->collectives[0].groups, (Groups{{0, 3}, {1, 2}}));
  // Replica ids with every partition of each replica.
  EXPECT_EQ(r->collectives[1].groups, (Groups{{0, 1}, {2, 3}}));
}

/// A send on channel 7 from partition 0 to 1, whose recv only the false
/// branch of a conditional runs.
constexpr char kSendRecvModule[] = R"(HloModule p2p, num_partitions=2
skip {
  x = f32[8]{0} parameter(0)
  ROOT y = f32[8]{0} negate(x)
}
receive {
  x = f32[8]{0} parameter(0)
  t = token[] after-all()
  r = (f32[8]{0}, u32[], token[]) recv(t), channel_id=7, frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1}}"}
  rd = (f32[8]{0}, token[]) recv-done(r), channel_id=7
  ROOT v = f32[8]{0} get-tuple-element(rd), index=0
}
ENTRY e {
  p = f32[8]{0} parameter(0)
  c = pred[] parameter(1)
  tok = token[] after-all()
  snd = (f32[8]{0}, u32[], token[]) send(p, tok), channel_id=7, frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1}}"}
  out = f32[8]{0} conditional(c, p, p), true_computation=skip, false_computation=receive
  sd = token[] send-done(snd), channel_id=7
  ROOT t = (f32[8]{0}, token[]) tuple(out, sd)
})";

TEST(Spmd, RecvThatNeverRunsIsADeadlockNamingTheSend) {
  const arch::ChipConfig v5e = IdealPreset("tpu-v5e");
  auto m = Parse(kSendRecvModule);
  ASSERT_NE(m, nullptr);
  const TestTimer timer(1'000'000);
  TimingOptions options = WithTimer(timer);  // branch 0 skips the recv
  options.exploit_symmetry = false;
  auto r = SimulateModule(*m, v5e, options);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  const std::string message(r.status().message());
  EXPECT_NE(message.find("test.hlo:"), std::string::npos) << message;
  // Device 1 (the target) never runs the recv; device 0 (the source) waits.
  EXPECT_NE(message.find("send/recv snd (execution 0) never completes: devices {1} do not reach "
                         "it (a transfer needs its source's send and its target's recv), devices "
                         "{0} wait"),
            std::string::npos)
      << message;
}

TEST(Spmd, ARecvInTheBranchOnlyItsTargetTakesMeetsTheSend) {
  // Device 0, the source, skips the recv; device 1, the target, takes the
  // branch with it: no deadlock.
  auto m = Parse(kSendRecvModule);
  ASSERT_NE(m, nullptr);
  const TestTimer timer(1'000'000);
  TimingOptions options = WithTimer(timer);
  options.device_branches[1][Named(*m, "out")] = ExecutionSeries<int64_t>(1);
  auto r = SimulateModule(*m, IdealPreset("tpu-v5e"), options);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->collectives.size(), 1u);
  EXPECT_EQ(r->collectives[0].instruction->name(), "snd");
  ASSERT_EQ(r->devices.size(), 2u);
  for (const OpRecord& op : r->ops) EXPECT_NE(op.instruction->name(), "rd");
  const OpRecord& target_rd = Op(r->devices[1].ops, "rd");
  EXPECT_EQ(target_rd.bound_by, BoundBy::kIci);
}

TEST(Spmd, SendAndRecvMeetAsOneInstance) {
  const arch::ChipConfig v5e = IdealPreset("tpu-v5e");
  auto m = Parse(kSendRecvModule);
  ASSERT_NE(m, nullptr);
  const TestTimer timer(1'000'000);
  TimingOptions options = WithTimer(timer);
  options.conditional_branch = 1;  // the branch with the recv
  auto r = SimulateModule(*m, v5e, options);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->collectives.size(), 1u);
  EXPECT_EQ(r->collectives[0].instruction->name(), "snd");
  EXPECT_EQ(r->collectives[0].kind, ici::CollectiveKind::kSendRecv);
  EXPECT_EQ(r->collectives[0].bytes, 32);
  EXPECT_EQ(r->collectives[0].groups, (Groups{{0, 1}}));
  ASSERT_EQ(timer.calls.size(), 1u);
  EXPECT_EQ(timer.calls[0].pairs, (std::vector<std::pair<int64_t, int64_t>>{{0, 1}}));
  // The target's recv-done and the source's send-done wait for the transfer,
  // which starts when the target reaches its recv; the source's recv-done
  // (it receives nothing) does not wait.
  EXPECT_EQ(r->symmetry, "not used: snd makes devices wait on their own transfers");
  ASSERT_EQ(r->devices.size(), 2u);
  const int64_t transfer_end =
      r->collectives[0].start_cycle + CyclesOf(1'000'000, v5e.clock.value());
  const OpRecord& target_rd = Op(r->devices[1].ops, "rd");
  EXPECT_EQ(target_rd.start_cycle + target_rd.cycles, transfer_end);
  const OpRecord& source_sd = Op(r->ops, "sd");
  EXPECT_EQ(source_sd.start_cycle + source_sd.cycles, transfer_end);
  const OpRecord& source_rd = Op(r->ops, "rd");
  EXPECT_NE(source_rd.bound_by, BoundBy::kIci);
  EXPECT_LT(source_rd.start_cycle + source_rd.cycles, transfer_end);
}

constexpr char kSymmetricModule[] = R"(
ENTRY e {
  p = f32[4096]{0} parameter(0)
  x = f32[4096]{0} exponential(p)
  ar = f32[4096]{0} all-reduce(x), replica_groups={{0,1},{2,3}}, to_apply=add
  s = f32[16384]{0} all-gather-start(ar), replica_groups={{0,1,2,3}}, dimensions={0}
  y = f32[4096]{0} tanh(ar)
  g = f32[16384]{0} all-gather-done(s)
  ROOT t = (f32[16384]{0}, f32[4096]{0}) tuple(g, y)
})";

TEST(Spmd, SymmetryGivesTheSameTimelineAsEveryDevice) {
  const arch::ChipConfig v5e = IdealPreset("tpu-v5e");
  auto m = Parse(std::string("HloModule sym, replica_count=4\n") + kAdd + kSymmetricModule);
  ASSERT_NE(m, nullptr);
  const TestTimer once(3'000'000), every(3'000'000);
  TimingOptions all = WithTimer(every);
  all.exploit_symmetry = false;
  const std::vector<SimulationJob> jobs = {{m.get(), &v5e, WithTimer(once)},
                                           {m.get(), &v5e, all}};
  auto r = AllTimed(SimulateBatch(jobs));
  ASSERT_TRUE(r.ok()) << r.status().message();
  const TimingResult& one = (*r)[0];
  const TimingResult& four = (*r)[1];
  EXPECT_EQ(one.symmetry, "used");
  EXPECT_EQ(four.symmetry, "not used: disabled");
  EXPECT_EQ(one.devices.size(), 1u);
  ASSERT_EQ(four.devices.size(), 4u);
  EXPECT_EQ(one.cycles, four.cycles);
  ASSERT_EQ(one.ops.size(), four.ops.size());
  for (size_t i = 0; i < one.ops.size(); ++i) {
    EXPECT_EQ(one.ops[i].start_cycle, four.ops[i].start_cycle) << one.ops[i].instruction->name();
    EXPECT_EQ(one.ops[i].cycles, four.ops[i].cycles) << one.ops[i].instruction->name();
  }
  ASSERT_EQ(one.collectives.size(), four.collectives.size());
  for (size_t i = 0; i < one.collectives.size(); ++i) {
    EXPECT_EQ(one.collectives[i].start_cycle, four.collectives[i].start_cycle);
    EXPECT_EQ(one.collectives[i].cycles, four.collectives[i].cycles);
    EXPECT_EQ(one.collectives[i].groups, four.collectives[i].groups);
  }
  for (const DeviceTiming& d : four.devices) EXPECT_EQ(d.end_cycle, four.cycles);
  EXPECT_EQ(one.links.size(), four.links.size());
  EXPECT_EQ(one.links.at(0).bytes, four.links.at(0).bytes);
  // Each instance is timed once either way.
  EXPECT_EQ(once.calls.size(), 2u);
  EXPECT_EQ(every.calls.size(), 2u);
}

TEST(Spmd, PermuteThatLeavesADeviceOutBreaksSymmetry) {
  const arch::ChipConfig v5e = IdealPreset("tpu-v5e");
  auto m = Parse(R"(HloModule partial, replica_count=4
ENTRY e {
  p = f32[256]{0} parameter(0)
  ROOT cp = f32[256]{0} collective-permute(p), source_target_pairs={{0,1},{1,2}}
})");
  ASSERT_NE(m, nullptr);
  const TestTimer timer(2'000'000);
  auto r = SimulateModule(*m, v5e, WithTimer(timer));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->symmetry, "not used: cp leaves device 3 out");
  ASSERT_EQ(r->devices.size(), 4u);
  const int64_t network = CyclesOf(2'000'000, v5e.clock.value());
  EXPECT_EQ(r->devices[0].end_cycle, network);
  EXPECT_LT(r->devices[3].end_cycle, network);  // not a participant: no transfer to wait for
  EXPECT_EQ(r->collectives.at(0).groups, (Groups{{0, 1, 2}}));
}

TEST(Spmd, InterconnectErrorStopsTheRunNamingTheCollective) {
  const arch::ChipConfig v5e = IdealPreset("tpu-v5e");
  auto m = Parse(std::string("HloModule bad, replica_count=2\n") + kAdd + R"(
ENTRY e {
  p = f32[64]{0} parameter(0)
  ROOT ar = f32[64]{0} all-reduce(p), replica_groups={{0,1}}, to_apply=add
})");
  ASSERT_NE(m, nullptr);
  const TestTimer broken(1'000, /*fail=*/true);
  auto r = SimulateModule(*m, v5e, WithTimer(broken));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message()).find("ar: the interconnect cannot time this all-reduce"),
            std::string::npos)
      << r.status().message();
}

TEST(Spmd, GroupIdsOutOfRangeAreInputErrors) {
  const arch::ChipConfig v5e = IdealPreset("tpu-v5e");
  auto m = Parse(std::string("HloModule range, replica_count=2\n") + kAdd + R"(
ENTRY e {
  p = f32[64]{0} parameter(0)
  ROOT ar = f32[64]{0} all-reduce(p), replica_groups={{0,1}}, to_apply=add
})");
  ASSERT_NE(m, nullptr);
  const TestTimer timer(1'000);
  TimingOptions options = WithTimer(timer);
  options.spmd = hlo::SpmdConfig{1, 1};  // fewer replicas than the groups name
  auto r = SimulateModule(*m, v5e, options);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message()).find("replica_groups name replica 1"),
            std::string::npos)
      << r.status().message();
}

TEST(Spmd, WithoutAnInterconnectOneDeviceRunsAsBefore) {
  const arch::ChipConfig v5e = IdealPreset("tpu-v5e");
  auto m = Parse(std::string("HloModule alone, replica_count=2\n") + kAdd + R"(
ENTRY e {
  p = f32[1024]{0} parameter(0)
  ROOT ar = f32[1024]{0} all-reduce(p), replica_groups={{0,1}}, to_apply=add
})");
  ASSERT_NE(m, nullptr);
  auto r = SimulateModule(*m, v5e, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->device_count, 2);
  EXPECT_EQ(r->symmetry, "single device");
  EXPECT_TRUE(r->collectives.empty());
  EXPECT_NE(Op(r->ops, "ar").bound_by, BoundBy::kIci);
  // Local adds and HBM bytes only: a kernel's start-up and a few hundred cycles.
  EXPECT_LT(Op(r->ops, "ar").cycles, v5e.overhead.kernel_start.value() + 1000);
}

}  // namespace
}  // namespace tpusim::timing
