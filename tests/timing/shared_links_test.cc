// Collectives in flight at the same time share the interconnect's links in
// the SPMD runtime (SharedNetwork over ici::Interconnect::TimeConcurrent), and
// several devices on one chip share that chip's links (devices_per_chip).
// Each TEST runs in its own process (one SystemC run each). Round numbers:
// the chip's clock is overridden to 1 GHz (1 cycle = 1000 ps) and every link
// carries W = 10 GB/s one way with 1 us per hop, so a flow of 5 MB on a link
// of its own takes 500 us = 500'000 cycles, and phase floors (a few us of hop
// latency) hide behind the transfers.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sim/arch/topology_config.h"
#include "sim/ici/interconnect.h"
#include "sim/timing/timing.h"
#include "tests/timing/timing_test_util.h"

namespace tpusim::timing {
namespace {

constexpr char kRoundLinks[] = ",link_bandwidth=10GB/s,hop_latency=1us";

std::unique_ptr<ici::Interconnect> Network(const std::string& short_form,
                                           const arch::ChipConfig& chip) {
  StatusOr<arch::TopologyConfig> config = arch::ParseTopologyShortForm(short_form + kRoundLinks);
  EXPECT_TRUE(config.ok()) << config.status().message();
  if (!config.ok()) return nullptr;
  EXPECT_TRUE(arch::ResolveChipDefaults(*config, chip).ok());
  auto made = ici::Interconnect::Create(*config, chip);
  EXPECT_TRUE(made.ok()) << made.status().message();
  return made.ok() ? std::move(*made) : nullptr;
}

TimingOptions On(const ici::Interconnect& network) {
  TimingOptions options;
  options.interconnect = &network;
  return options;
}

const CollectiveRecord& Named(const TimingResult& r, const std::string& name) {
  for (const CollectiveRecord& c : r.collectives) {
    if (c.instruction->name() == name) return c;
  }
  ADD_FAILURE() << "no collective " << name;
  static const CollectiveRecord none;
  return none;
}

/// Two async all-gathers of different instructions, both started at cycle 0
/// (a *-start takes no time on the timeline), every device's shard 5 MB
/// (every device must be in a group of each), timed on the ring torus:4.
/// `module` keeps the timed module, which the records point into.
StatusOr<TimingResult> TwoAllGathersOnTheRing(const std::string& first, const std::string& second,
                                              std::unique_ptr<hlo::HloModule>& module) {
  const arch::ChipConfig v5e = IdealPreset("tpu-v5e", {"clock=1GHz"});
  auto ring = Network("torus:4", v5e);
  auto m = Parse(std::string("HloModule two, replica_count=4\nENTRY e {\n") +
                 "  p = f32[1250000]{0} parameter(0)\n"
                 "  a = f32[2500000]{0} all-gather-start(p), replica_groups={" + first +
                 "}, dimensions={0}\n"
                 "  b = f32[2500000]{0} all-gather-start(p), replica_groups={" + second +
                 "}, dimensions={0}\n"
                 "  da = f32[2500000]{0} all-gather-done(a)\n"
                 "  db = f32[2500000]{0} all-gather-done(b)\n"
                 "  ROOT t = (f32[2500000]{0}, f32[2500000]{0}) tuple(da, db)\n}\n");
  if (ring == nullptr || m == nullptr) return InvalidArgument("no network or module");
  module = std::move(m);
  return SimulateModule(*module, v5e, On(*ring));
}

// On the ring torus:4 (x+ links L01 L12 L23 L30, x- links back), each group
// is a two-member ring sending its 5 MB shard to the other member. a's
// groups {0,1},{2,3} are neighbours: 0->1 on L01, 2->3 on L23, 1->0 and
// 3->2 on x- links; alone 500 us. b's groups {0,2},{1,3} are half-way round
// (ties go the positive way): 0->1->2, 2->3->0, 1->2->3, 3->0->1, two flows
// on each x+ link; alone 1000 us. Together L01 and L23 carry three flows
// each: max-min gives every x+ flow W/3 (both x+ links with a's flows are
// the bottleneck of every b flow), so each 5 MB x+ flow takes 1500 us, and
// a's x- flows, alone on theirs, end at 500 us. Both end at 1500 us.
TEST(SharedLinks, TwoAllGathersOfDifferentGroupsShareTheRingsLinks) {
  std::unique_ptr<hlo::HloModule> module;
  auto r = TwoAllGathersOnTheRing("{0,1},{2,3}", "{0,2},{1,3}", module);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->collectives.size(), 2u);
  const CollectiveRecord& near = Named(*r, "a");
  const CollectiveRecord& far = Named(*r, "b");
  EXPECT_EQ(near.start_cycle, 0);
  EXPECT_EQ(far.start_cycle, 0);
  EXPECT_EQ(near.algorithm, ici::Algorithm::kRing);
  EXPECT_EQ(far.algorithm, ici::Algorithm::kRing);
  EXPECT_EQ(near.cycles, 1'500'000);
  EXPECT_EQ(near.contention_cycles, 1'000'000);  // alone: 500 us
  EXPECT_EQ(far.cycles, 1'500'000);
  EXPECT_EQ(far.contention_cycles, 500'000);  // alone: 1000 us
  EXPECT_EQ(r->cycles, 1'500'000);
}

// Cycles and contention of each of the two all-gathers.
void ExpectBoth(const StatusOr<TimingResult>& r, int64_t cycles, int64_t contention) {
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->collectives.size(), 2u);
  for (const CollectiveRecord& c : r->collectives) {
    EXPECT_EQ(c.cycles, cycles) << c.instruction->name();
    EXPECT_EQ(c.contention_cycles, contention) << c.instruction->name();
  }
  EXPECT_EQ(r->cycles, cycles);
}

// The same two-member rings twice, from two instructions: each x+ link
// carries two flows of each, so each takes twice its 1000 us alone.
TEST(SharedLinks, TwoAllGathersOnTheSameLinksTakeTwiceAsLong) {
  std::unique_ptr<hlo::HloModule> module;
  ExpectBoth(TwoAllGathersOnTheRing("{0,2},{1,3}", "{0,2},{1,3}", module), 2'000'000, 1'000'000);
}

// a's pairs {0,1},{2,3} use L01, L23 and the x- links 1->0, 3->2; b's pairs
// {1,2},{3,0} use L12, L30 and x- 2->1, 0->3: no link in common, so running
// together costs nothing: 500 us each, as alone.
TEST(SharedLinks, TwoAllGathersOnDisjointLinksTakeTheirTimeAlone) {
  std::unique_ptr<hlo::HloModule> module;
  ExpectBoth(TwoAllGathersOnTheRing("{0,1},{2,3}", "{1,2},{3,0}", module), 500'000, 0);
}

// An all-gather on pairs {0,1},{2,3} starts at 0 (5 MB per flow, one flow
// per link: alone 500 us); after an exponential of c cycles every device
// starts an async all-reduce of 10 MB on the same pairs (a two-member ring:
// a reduce-scatter phase and an all-gather phase of 5 MB per flow, alone
// 1000 us) over the same links. By hand, in us: from c both get W/2, so the
// all-gather, with 500 - c left at full rate, ends at c + 2(500 - c) =
// 1000 - c; by then the all-reduce's first phase has sent 500 - c of its 500,
// and the rest at full rate takes c: the phase ends at 1000, the second
// (alone) at 1500. Both lose 500 - c. The all-gather's done was reached at c
// and told 500: its wake-up moved to 1000 - c. Every collective includes
// every device, so symmetry holds: one device simulated gives the timeline
// of all four.
TEST(SharedLinks, AsyncAllReduceStartedWhileAnAllGatherIsInFlightSlowsBoth) {
  const arch::ChipConfig v5e = IdealPreset("tpu-v5e", {"clock=1GHz"});
  auto ring = Network("torus:4", v5e);
  ASSERT_NE(ring, nullptr);
  auto m = Parse(std::string("HloModule overlap, replica_count=4\n") + kAdd + R"(
ENTRY e {
  p = f32[1250000]{0} parameter(0)
  q = f32[2500000]{0} parameter(1)
  a = f32[2500000]{0} all-gather-start(p), replica_groups={{0,1},{2,3}}, dimensions={0}
  x = f32[2500000]{0} exponential(q)
  s = f32[2500000]{0} all-reduce-start(x), replica_groups={{0,1},{2,3}}, to_apply=add
  da = f32[2500000]{0} all-gather-done(a)
  d = f32[2500000]{0} all-reduce-done(s)
  ROOT t = (f32[2500000]{0}, f32[2500000]{0}) tuple(da, d)
})");
  ASSERT_NE(m, nullptr);
  TimingOptions every = On(*ring);
  every.exploit_symmetry = false;
  const std::vector<SimulationJob> jobs = {{m.get(), &v5e, On(*ring)}, {m.get(), &v5e, every}};
  auto results = AllTimed(SimulateBatch(jobs));
  ASSERT_TRUE(results.ok()) << results.status().message();
  const TimingResult& r = (*results)[0];
  EXPECT_EQ(r.symmetry, "used");
  ASSERT_EQ(r.collectives.size(), 2u);
  const CollectiveRecord& gather = Named(r, "a");
  const CollectiveRecord& reduce = Named(r, "s");
  const int64_t c = reduce.start_cycle;  // the exponential's cycles
  ASSERT_GT(c, 0);
  ASSERT_LT(c, 500'000);
  EXPECT_EQ(gather.start_cycle, 0);
  EXPECT_EQ(gather.cycles, 1'000'000 - c);
  EXPECT_EQ(gather.contention_cycles, 500'000 - c);
  EXPECT_EQ(reduce.cycles, 1'500'000 - c);
  EXPECT_EQ(reduce.contention_cycles, 500'000 - c);
  const OpRecord& gather_done = Op(r.ops, "da");
  EXPECT_EQ(gather_done.start_cycle, c);
  EXPECT_EQ(gather_done.start_cycle + gather_done.cycles, 1'000'000 - c);
  EXPECT_EQ(gather_done.bound_by, BoundBy::kIci);
  EXPECT_EQ(r.cycles, 1'500'000);
  // Every device simulated: the same timeline.
  const TimingResult& all = (*results)[1];
  ASSERT_EQ(all.devices.size(), 4u);
  for (const DeviceTiming& device : all.devices) EXPECT_EQ(device.end_cycle, 1'500'000);
  ASSERT_EQ(all.collectives.size(), r.collectives.size());
  for (size_t i = 0; i < r.collectives.size(); ++i) {
    EXPECT_EQ(all.collectives[i].start_cycle, r.collectives[i].start_cycle);
    EXPECT_EQ(all.collectives[i].cycles, r.collectives[i].cycles);
  }
}

// TPU7x: 2 TensorCores per chip, each its own device. On a 2x2x1 slice
// (no wraparound), where devices_per_chip is the chip's 2 unless the
// topology says otherwise, device i runs on chip i / 2, so
// groups {0,2,4,6} and {1,3,5,7} each span all four chips. One group of a
// 20 MB all-gather alone (4 devices on 4 chips of one device each): the
// torus algorithm splits V in two halves that take the axes in opposite
// orders, each a V/8 line phase then a V/4 one, on disjoint links at once:
// 3V/(8W) = 750 us. With two devices a chip, the other group's TensorCores
// leave from the same chips over the same links: 1500 us, twice the bytes.
constexpr char kSevenX[] = "torus:2x2x1,wraparound=tpu";

std::string GatherOver(int64_t devices, const std::string& groups) {
  return "HloModule g, replica_count=" + std::to_string(devices) +
         "\nENTRY e {\n"
         "  p = f32[1250000]{0} parameter(0)\n"
         "  ROOT g = f32[5000000]{0} all-gather(p), replica_groups={" +
         groups + "}, dimensions={0}\n}\n";
}

TEST(SharedLinks, TwoTensorCoresPerChipShareTheChipsLinks) {
  const arch::ChipConfig v7x = IdealPreset("tpu-v7x", {"clock=1GHz"});
  auto shared = Network(kSevenX, v7x);
  auto own = Network("torus:2x2x1,wraparound=tpu,devices_per_chip=1", v7x);
  ASSERT_NE(shared, nullptr);
  ASSERT_NE(own, nullptr);
  EXPECT_EQ(shared->devices_per_chip(), 2);
  EXPECT_EQ(shared->device_count(), 8);
  auto one = Parse(GatherOver(4, "{0,1,2,3}"));
  auto both = Parse(GatherOver(8, "{0,2,4,6},{1,3,5,7}"));
  ASSERT_NE(one, nullptr);
  ASSERT_NE(both, nullptr);
  const std::vector<SimulationJob> jobs = {{one.get(), &v7x, On(*own)},
                                           {both.get(), &v7x, On(*shared)}};
  auto r = AllTimed(SimulateBatch(jobs));
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ((*r)[0].collectives.size(), 1u);
  ASSERT_EQ((*r)[1].collectives.size(), 1u);
  const CollectiveRecord& alone = (*r)[0].collectives[0];
  const CollectiveRecord& pair = (*r)[1].collectives[0];
  EXPECT_EQ(alone.algorithm, ici::Algorithm::kTorus);
  EXPECT_EQ(pair.algorithm, ici::Algorithm::kTorus);
  EXPECT_EQ(alone.cycles, 750'000);
  EXPECT_EQ(pair.cycles, 1'500'000);
  EXPECT_GT(alone.ici_bytes, 0);
  EXPECT_EQ(pair.ici_bytes, 2 * alone.ici_bytes);
  EXPECT_EQ((*r)[1].device_count, 8);
}

// Devices 0 and 1 are the two TensorCores of chip 0: a permute between them
// crosses no link. It is an on-chip copy (ASSUMPTION, docs/interconnect.md):
// read and write 5 MB at one TensorCore's share of HBM, 7380 GB/s / 2.
TEST(SharedLinks, PermuteBetweenTheDevicesOfOneChipIsAnOnChipCopy) {
  const arch::ChipConfig v7x = IdealPreset("tpu-v7x", {"clock=1GHz"});
  auto slice = Network(kSevenX, v7x);
  ASSERT_NE(slice, nullptr);
  auto m = Parse(R"(HloModule permute, replica_count=8
ENTRY e {
  p = f32[1250000]{0} parameter(0)
  ROOT q = f32[1250000]{0} collective-permute(p), source_target_pairs={{0,1},{1,0}}
})");
  ASSERT_NE(m, nullptr);
  auto r = SimulateModule(*m, v7x, On(*slice));
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->collectives.size(), 1u);
  const CollectiveRecord& c = r->collectives[0];
  EXPECT_EQ(c.ici_bytes, 0);
  EXPECT_TRUE(c.links.empty());
  const double device_hbm = 7380e9 / 2;  // B/s
  const auto copy_ps = static_cast<int64_t>(std::ceil(2 * 5e6 * 1e12 / device_hbm));
  EXPECT_EQ(c.cycles, (copy_ps + 999) / 1000);
  EXPECT_NE(c.explanation.find("on-chip"), std::string::npos) << c.explanation;
}

TEST(SharedLinks, DevicesMustFillWholeChipsThatTheTopologyHas) {
  const arch::ChipConfig v7x = IdealPreset("tpu-v7x", {"clock=1GHz"});
  auto slice = Network(kSevenX, v7x);
  ASSERT_NE(slice, nullptr);
  auto odd = Parse("HloModule odd, replica_count=5\nENTRY e {\n  ROOT p = f32[8]{0} parameter(0)\n}\n");
  ASSERT_NE(odd, nullptr);
  auto r = SimulateModule(*odd, v7x, On(*slice));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "test.hlo: error: 5 devices do not fill whole chips of 2 devices (the topology's "
            "devices_per_chip)");
  auto many = Parse("HloModule many, replica_count=10\nENTRY e {\n  ROOT p = f32[8]{0} parameter(0)\n}\n");
  ASSERT_NE(many, nullptr);
  r = SimulateModule(*many, v7x, On(*slice));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "test.hlo: error: the module's 10 devices need 5 chips; the topology has 4");
}

// In a batch, such a job gets its error and the others are still timed in
// the one SystemC run.
TEST(SharedLinks, ABatchTimesTheJobsBesideAMisfit) {
  const arch::ChipConfig v7x = IdealPreset("tpu-v7x", {"clock=1GHz"});
  auto slice = Network(kSevenX, v7x);
  ASSERT_NE(slice, nullptr);
  auto many =
      Parse("HloModule many, replica_count=10\nENTRY e {\n  ROOT p = f32[8]{0} parameter(0)\n}\n");
  auto fits =
      Parse("HloModule fits, replica_count=8\nENTRY e {\n  ROOT p = f32[8]{0} parameter(0)\n}\n");
  ASSERT_NE(many, nullptr);
  ASSERT_NE(fits, nullptr);
  const std::vector<SimulationJob> jobs = {{many.get(), &v7x, On(*slice)},
                                           {fits.get(), &v7x, On(*slice)}};
  const std::vector<StatusOr<TimingResult>> r = SimulateBatch(jobs);
  ASSERT_EQ(r.size(), 2u);
  ASSERT_FALSE(r[0].ok());
  EXPECT_EQ(r[0].status().message(),
            "test.hlo: error: the module's 10 devices need 5 chips; the topology has 4");
  ASSERT_TRUE(r[1].ok()) << r[1].status().message();
  EXPECT_EQ(r[1]->device_count, 8);
}

// Jobs sharing one network (SimulationJob::shared_network): each job is a
// two-device all-gather of a 5 MB shard, placed on two of the ring's four
// devices. Placed on {0,2} and {1,3}, each job's flows go half-way round
// (0->1->2, 2->3->0; 1->2->3, 3->0->1), one flow of each job on every x+
// link: alone 500 us, together 1000 us each, whichever job's all-gather
// joined first. Placed on {0,1} and {2,3} they share no link (x+ L01 and
// x- 1->0; x+ L23 and x- 3->2): 500 us each, as alone. The same job with
// a network of its own, in the same run, takes its 500 us.
constexpr char kPairGather[] = R"(HloModule pair, replica_count=2
ENTRY e {
  p = f32[1250000]{0} parameter(0)
  ROOT a = f32[2500000]{0} all-gather(p), replica_groups={{0,1}}, dimensions={0}
})";

TimingOptions Placed(const ici::Interconnect& network, std::vector<int64_t> placement) {
  TimingOptions options = On(network);
  options.placement = std::move(placement);
  return options;
}

TEST(SharedLinks, JobsSharingANetworkSlowEachOtherWhereTheirRoutesMeet) {
  const arch::ChipConfig v5e = IdealPreset("tpu-v5e", {"clock=1GHz"});
  auto ring = Network("torus:4", v5e);
  auto m = Parse(kPairGather);
  ASSERT_NE(ring, nullptr);
  ASSERT_NE(m, nullptr);
  const std::vector<SimulationJob> jobs = {{m.get(), &v5e, Placed(*ring, {0, 2}), 0},
                                           {m.get(), &v5e, Placed(*ring, {1, 3}), 0},
                                           {m.get(), &v5e, Placed(*ring, {0, 1}), 1},
                                           {m.get(), &v5e, Placed(*ring, {2, 3}), 1},
                                           {m.get(), &v5e, Placed(*ring, {0, 2})}};
  auto r = AllTimed(SimulateBatch(jobs));
  ASSERT_TRUE(r.ok()) << r.status().message();
  const std::vector<std::pair<int64_t, int64_t>> cycles_and_contention = {
      {1'000'000, 500'000}, {1'000'000, 500'000}, {500'000, 0}, {500'000, 0}, {500'000, 0}};
  for (size_t j = 0; j < jobs.size(); ++j) {
    SCOPED_TRACE("job " + std::to_string(j));
    ASSERT_EQ((*r)[j].collectives.size(), 1u);
    const CollectiveRecord& gather = (*r)[j].collectives[0];
    EXPECT_EQ(gather.cycles, cycles_and_contention[j].first);
    EXPECT_EQ(gather.contention_cycles, cycles_and_contention[j].second);
    EXPECT_EQ(gather.groups, (std::vector<std::vector<int64_t>>{{0, 1}}));  // the job's numbers
  }
  // The busiest link is that of a flow of each job: busy all of job 0's run.
  ASSERT_FALSE((*r)[0].links.empty());
  for (const LinkUse& link : (*r)[0].links) EXPECT_EQ(link.bytes, 5'000'000) << link.name;
}

// What a group of jobs cannot share, each refused in the job that breaks
// it while the others run: a network device another job took, another
// interconnect in the same group, and placements that do not fit.
TEST(SharedLinks, ASharedNetworkRefusesOverlapsAndMisfits) {
  const arch::ChipConfig v5e = IdealPreset("tpu-v5e", {"clock=1GHz"});
  auto ring = Network("torus:4", v5e);
  auto other = Network("torus:4", v5e);
  auto m = Parse(kPairGather);
  ASSERT_NE(ring, nullptr);
  ASSERT_NE(other, nullptr);
  ASSERT_NE(m, nullptr);
  const std::vector<SimulationJob> jobs = {
      {m.get(), &v5e, Placed(*ring, {0, 2}), 0},  {m.get(), &v5e, Placed(*ring, {2, 3}), 0},
      {m.get(), &v5e, Placed(*other, {1, 3}), 0}, {m.get(), &v5e, Placed(*ring, {1, 1})},
      {m.get(), &v5e, Placed(*ring, {3, 4})},     {m.get(), &v5e, Placed(*ring, {1})},
      {m.get(), &v5e, Placed(*ring, {1, 3}), 0}};
  const std::vector<StatusOr<TimingResult>> r = SimulateBatch(jobs);
  ASSERT_EQ(r.size(), jobs.size());
  const std::vector<std::string> errors = {
      "",
      "test.hlo: error: device 0 runs on the network's device 2, which job 0 sharing the network "
      "runs on already",
      "job 2 shares network 0 with jobs on another interconnect or chip clock",
      "test.hlo: error: the placement puts two devices on network device 1",
      "test.hlo: error: the placement puts device 1 on network device 4; the network's devices "
      "are numbered from 0 to 3",
      "test.hlo: error: the placement names 1 network devices for the module's 2",
      ""};
  for (size_t j = 0; j < jobs.size(); ++j) {
    SCOPED_TRACE("job " + std::to_string(j));
    if (errors[j].empty()) {
      ASSERT_TRUE(r[j].ok()) << r[j].status().message();
      ASSERT_EQ(r[j]->collectives.size(), 1u);
      EXPECT_EQ(r[j]->collectives[0].cycles, 1'000'000);  // jobs 0 and 6 share the x+ links
    } else {
      ASSERT_FALSE(r[j].ok());
      EXPECT_EQ(r[j].status().message(), errors[j]);
    }
  }
}

}  // namespace
}  // namespace tpusim::timing
