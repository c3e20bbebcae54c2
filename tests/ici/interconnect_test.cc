// Interconnect and the collective algorithms against the scaling book's cost
// model (tpu-facts.md section 5; SB = jax-ml/scaling-book sharding.md) and its
// worked examples A6, A8, A9 (section 6), plus latency, contention, failures
// and topology comparisons with hand-computed answers. W_uni is the one-way
// link bandwidth; SB's W is the bidirectional 2 x W_uni.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "sim/ici/collectives.h"
#include "sim/ici/interconnect.h"
#include "sim/ici/topology.h"

namespace tpusim::ici {
namespace {

using ::testing::HasSubstr;

constexpr double kWuni = 4.5e10;  // v5e / v4 one-way link bandwidth (SB)
constexpr double kHopUs = 1.0;    // SB's T_min "typically around 1us"

arch::IciConfig Ici(double w_uni = kWuni, double hop_us = kHopUs) {
  arch::IciConfig ici;
  ici.links = 6;
  ici.bandwidth_per_link_per_direction = BytesPerSecond(static_cast<int64_t>(w_uni));
  ici.hop_latency = Picoseconds(static_cast<int64_t>(hop_us * 1e6));
  return ici;
}

arch::TopologyConfig Grid(arch::TopologyKind kind, std::vector<int64_t> dims) {
  arch::TopologyConfig config;
  config.kind = kind;
  config.wraparound.assign(dims.size(), kind == arch::TopologyKind::kTorus);
  config.dims = std::move(dims);
  return config;
}

/// One TensorCore per chip with 1 TB/s of HBM: an on-chip copy of B bytes
/// (read + write) takes 2B ps.
constexpr int64_t kHbmBytesPerSecond = 1'000'000'000'000;

std::unique_ptr<Interconnect> Make(const arch::TopologyConfig& config,
                                   const arch::IciConfig& ici = Ici()) {
  arch::ChipConfig chip;
  chip.ici = ici;
  chip.tensorcores_per_chip = 1;
  chip.hbm.bandwidth = BytesPerSecond(kHbmBytesPerSecond);
  auto made = Interconnect::Create(config, chip);
  EXPECT_TRUE(made.ok()) << made.status().message();
  return std::move(*made);
}

/// Groups of chips that differ only along `axes` (identity device assignment).
std::vector<std::vector<int64_t>> GroupsAlong(const Topology& topology,
                                              const std::vector<size_t>& axes) {
  std::map<std::vector<int64_t>, std::vector<int64_t>> groups;
  for (NodeId chip = 0; chip < topology.chip_count(); ++chip) {
    std::vector<int64_t> key = topology.Coordinates(chip);
    for (const size_t a : axes) key[a] = -1;
    groups[key].push_back(chip);
  }
  std::vector<std::vector<int64_t>> out;
  for (auto& [key, group] : groups) out.push_back(std::move(group));
  return out;
}

Collective Over(CollectiveKind kind, std::vector<std::vector<int64_t>> groups, int64_t bytes,
                Algorithm algorithm = Algorithm::kAuto) {
  Collective c;
  c.kind = kind;
  c.groups = std::move(groups);
  c.bytes = bytes;
  c.algorithm = algorithm;
  return c;
}

std::vector<std::vector<int64_t>> AllChips(int64_t n) {
  std::vector<int64_t> group;
  for (int64_t i = 0; i < n; ++i) group.push_back(i);
  return {group};
}

double Us(Picoseconds t) { return static_cast<double>(t.value()) * 1e-6; }

CollectiveTiming TimeOf(const Interconnect& ic, const Collective& c) {
  auto timed = ic.Time(c);
  EXPECT_TRUE(timed.ok()) << timed.status().message();
  return timed.ok() ? *timed : CollectiveTiming{};
}

/// |actual / expected - 1| <= tolerance.
void ExpectWithin(double actual, double expected, double tolerance) {
  EXPECT_NEAR(actual / expected, 1.0, tolerance) << "actual " << actual << " expected " << expected;
}

constexpr int64_t kBig = int64_t{256} << 20;  // 256 MiB: bandwidth-bound everywhere below

// --- Point 1: SB's formulas in bandwidth-bound cases, within 2% ---------------

// AllGather on a wraparound axis: T = V/W (SB), here a 16-chip ring.
TEST(InterconnectFormulaTest, AllGatherOnWraparoundAxisTakesVOverW) {
  auto ic = Make(Grid(arch::TopologyKind::kTorus, {16}));
  const CollectiveTiming t = TimeOf(*ic, Over(CollectiveKind::kAllGather, AllChips(16), kBig));
  EXPECT_EQ(t.algorithm, Algorithm::kTorus);
  ExpectWithin(Us(t.duration), kBig / (2 * kWuni) * 1e6, 0.02);
  EXPECT_THAT(t.explanation, HasSubstr("bandwidth-bound"));
}

TEST(InterconnectFormulaTest, ReduceScatterOnWraparoundAxisTakesVOverW) {
  auto ic = Make(Grid(arch::TopologyKind::kTorus, {16}));
  const CollectiveTiming t = TimeOf(*ic, Over(CollectiveKind::kReduceScatter, AllChips(16), kBig));
  ExpectWithin(Us(t.duration), kBig / (2 * kWuni) * 1e6, 0.02);
}

// AllReduce = ReduceScatter + AllGather: T = 2V/W.
TEST(InterconnectFormulaTest, AllReduceTakesTwoVOverW) {
  auto ic = Make(Grid(arch::TopologyKind::kTorus, {16}));
  const CollectiveTiming t = TimeOf(*ic, Over(CollectiveKind::kAllReduce, AllChips(16), kBig));
  ExpectWithin(Us(t.duration), 2 * kBig / (2 * kWuni) * 1e6, 0.02);
}

// AllToAll on a bidirectional ring: V/(4W), V the whole array (each of the N
// participants holds V/N). A 17-chip ring: odd, so no pair is equidistant
// both ways and shortest-direction routing balances the two directions.
TEST(InterconnectFormulaTest, AllToAllOnBidirectionalRingTakesVOverFourW) {
  auto ic = Make(Grid(arch::TopologyKind::kTorus, {17}));
  const int64_t v = int64_t{17} << 24;
  const CollectiveTiming t = TimeOf(*ic, Over(CollectiveKind::kAllToAll, AllChips(17), v / 17));
  EXPECT_EQ(t.algorithm, Algorithm::kDirect);
  ExpectWithin(Us(t.duration), v / (4 * 2 * kWuni) * 1e6, 0.02);
}

// No wraparound: effectively unidirectional, T = (V/W_uni)(N-1)/N; about
// twice the time of the same axis with wraparound.
TEST(InterconnectFormulaTest, NoWraparoundCostsAUnidirectionalRing) {
  auto mesh = Make(Grid(arch::TopologyKind::kMesh, {8}));
  auto torus = Make(Grid(arch::TopologyKind::kTorus, {8}));
  const Collective ag = Over(CollectiveKind::kAllGather, AllChips(8), kBig);
  const double mesh_us = Us(TimeOf(*mesh, ag).duration);
  const double torus_us = Us(TimeOf(*torus, ag).duration);
  ExpectWithin(mesh_us, kBig / kWuni * 7.0 / 8.0 * 1e6, 0.02);
  ExpectWithin(mesh_us / torus_us, 2.0 * 7.0 / 8.0, 0.02);
}

// Over k axes: T = V/(W·k). On n x n torus planes `auto` runs two
// edge-disjoint Hamiltonian rings (every port busy), so small planes attain
// it too: V/4 per link direction.
TEST(InterconnectFormulaTest, AllGatherOverTwoAxesDividesByTwo) {
  for (const int64_t n : {4, 8, 16}) {
    auto ic = Make(Grid(arch::TopologyKind::kTorus, {n, n}));
    const CollectiveTiming t = TimeOf(*ic, Over(CollectiveKind::kAllGather, AllChips(n * n), kBig));
    EXPECT_EQ(t.algorithm, Algorithm::kHamiltonianRings) << n;
    ExpectWithin(Us(t.duration), kBig / (2 * kWuni * 2) * 1e6, 0.02);
  }
}

// The forced torus decomposition on a 4x4 plane: each of its two parts runs a
// small phase (V/(4n) per link direction) then a big one (V/4), so it costs
// (1 + 1/n) x V/(4 W_uni) — why auto prefers the rings for large data.
TEST(InterconnectFormulaTest, TorusDecompositionPaysItsFirstPhase) {
  auto ic = Make(Grid(arch::TopologyKind::kTorus, {4, 4}));
  const CollectiveTiming t = TimeOf(
      *ic, Over(CollectiveKind::kAllGather, AllChips(16), kBig, Algorithm::kTorus));
  EXPECT_EQ(t.algorithm, Algorithm::kTorus);
  ExpectWithin(Us(t.duration), 1.25 * kBig / (4 * kWuni) * 1e6, 0.01);
}

// Small data on a 4x4 plane: the rings' 8 steps of latency lose to the
// decomposition's 2 + 2, so auto keeps the torus: 4 hops = 4 us.
TEST(InterconnectFormulaTest, AutoKeepsTheTorusDecompositionWhenLatencyBound) {
  auto ic = Make(Grid(arch::TopologyKind::kTorus, {4, 4}));
  const CollectiveTiming t = TimeOf(*ic, Over(CollectiveKind::kAllGather, AllChips(16), 256));
  EXPECT_EQ(t.algorithm, Algorithm::kTorus);
  EXPECT_EQ(t.duration, Picoseconds(4'000'000));
  const CollectiveTiming rings = TimeOf(
      *ic, Over(CollectiveKind::kAllGather, AllChips(16), 256, Algorithm::kHamiltonianRings));
  EXPECT_EQ(rings.duration, Picoseconds(8'000'000));
}

// Hamiltonian rings keep all four ports of every chip busy: each of the 64
// one-way links of a 4x4 torus carries a quarter of V (half the data, half
// of it each way round a ring, minus the chip's own shard).
TEST(InterconnectFormulaTest, HamiltonianRingsLoadEveryLinkEqually) {
  auto ic = Make(Grid(arch::TopologyKind::kTorus, {4, 4}));
  const CollectiveTiming t = TimeOf(*ic, Over(CollectiveKind::kAllGather, AllChips(16), kBig,
                                              Algorithm::kHamiltonianRings));
  ASSERT_EQ(t.links.size(), 64u);
  for (const auto& link : t.links) {
    // forward: 8 of 16 shards of V/2; backward: 7 of 16
    EXPECT_GE(link.bytes, kBig / 2 * 7 / 16);
    EXPECT_LE(link.bytes, kBig / 2 * 8 / 16);
  }
  EXPECT_EQ(t.max_hops, 1);
}

// --- Worked examples (SB's predicted values), within 5% -----------------------

// A6: v5e 4x4 without wraparound, 1.7e7 bytes from (0,0) to (3,3) "via 2
// ports" at 4.5e10: 188 us (+6 hops of ~1 us).
TEST(InterconnectWorkedExampleTest, A6PointToPointAcrossAFourByFourMesh) {
  auto ic = Make(Grid(arch::TopologyKind::kMesh, {4, 4}));
  Collective send;
  send.kind = CollectiveKind::kSendRecv;
  send.pairs = {{0, 15}};
  send.bytes = 17'000'000;
  const CollectiveTiming t = TimeOf(*ic, send);
  ExpectWithin(Us(t.duration), 188.0, 0.05);
  // A point-to-point transfer has no pipelined phase to hide its latency in:
  // each half pays its 6 hops after its last byte, as SB adds them.
  ExpectWithin(Us(t.duration), 17e6 / (2 * kWuni) * 1e6 + 6 * kHopUs, 0.001);
  EXPECT_EQ(t.max_hops, 6);
}

// A8: v4p 4x4x4 with wraparound, W = 9e10 bidirectional, A = bf16[B_X, D_Y],
// B = 1024, D = 4096.
class A8Test : public ::testing::Test {
 protected:
  std::unique_ptr<Interconnect> ic_ = Make(Grid(arch::TopologyKind::kTorus, {4, 4, 4}));
  static constexpr int64_t kB = 1024, kD = 4096;
};

// AllGather_X gathers 2BD/Y bytes along one axis: 2BD/(Y·W) = 23 us.
// AllGather_XY gathers 2BD over XY planes: 2BD/(2W) = 46 us; each plane is a
// 4x4 torus, on which auto runs two Hamiltonian rings (V/4 per link
// direction: 46.6 us; the torus decomposition would take 1.25x).
TEST_F(A8Test, AllGatherX) {
  const CollectiveTiming t = TimeOf(
      *ic_, Over(CollectiveKind::kAllGather, GroupsAlong(ic_->topology(), {0}), 2 * kB * kD / 4));
  ExpectWithin(Us(t.duration), 23.3, 0.05);
}

// AllReduce_Z of 2BD/16 along Z (4 chips): reduce-scatter then all-gather,
// each max(2 hops, V/W) with the latency hidden behind the transfer (SB's
// step model): 2 x 2BD/(16·W) = 11.6 us.
TEST_F(A8Test, AllGatherXY) {
  const CollectiveTiming t = TimeOf(
      *ic_, Over(CollectiveKind::kAllGather, GroupsAlong(ic_->topology(), {0, 1}), 2 * kB * kD));
  EXPECT_EQ(t.algorithm, Algorithm::kHamiltonianRings);
  ExpectWithin(Us(t.duration), 46.0, 0.05);
}

TEST_F(A8Test, AllReduceZ) {
  const CollectiveTiming t = TimeOf(
      *ic_, Over(CollectiveKind::kAllReduce, GroupsAlong(ic_->topology(), {2}), 2 * kB * kD / 16));
  ExpectWithin(Us(t.duration), 11.6, 0.05);
}

// bf16[128] (256 bytes) gathered along an axis of 4: latency-bound, 2 hops = 2 us.
TEST_F(A8Test, TinyAllGatherIsTwoHops) {
  const CollectiveTiming t =
      TimeOf(*ic_, Over(CollectiveKind::kAllGather, GroupsAlong(ic_->topology(), {0}), 256));
  ExpectWithin(Us(t.duration), 2.0, 0.05);
  EXPECT_THAT(t.explanation, HasSubstr("latency-bound"));
}

// A9: v5e {X:8, Y:4} mesh, AllGather_Y of bf16[2048, 8192] (2^25 bytes):
// 560 us without wraparound, 377 us with it (bidirectional ring).
TEST(InterconnectWorkedExampleTest, A9AllGatherYWithAndWithoutWraparound) {
  const int64_t v = int64_t{2} * 2048 * 8192;
  auto mesh = Make(Grid(arch::TopologyKind::kMesh, {8, 4}));
  auto torus = Make(Grid(arch::TopologyKind::kTorus, {8, 4}));
  const auto groups = GroupsAlong(mesh->topology(), {1});
  ExpectWithin(Us(TimeOf(*mesh, Over(CollectiveKind::kAllGather, groups, v)).duration), 560, 0.05);
  ExpectWithin(Us(TimeOf(*torus, Over(CollectiveKind::kAllGather, groups, v)).duration), 377,
               0.05);
}

// A9, E = F = 256: bf16[256, 256] along Y (4 chips, no wraparound) is
// latency-bound at about 3 us: 3 hops, against 3V/(4 W_uni) = 2.2 us of
// transfer that hides behind them.
TEST(InterconnectWorkedExampleTest, A9SmallAllGatherIsLatencyBound) {
  auto mesh = Make(Grid(arch::TopologyKind::kMesh, {8, 4}));
  const CollectiveTiming t = TimeOf(
      *mesh, Over(CollectiveKind::kAllGather, GroupsAlong(mesh->topology(), {1}), 2 * 256 * 256));
  ExpectWithin(Us(t.duration), 3.0, 0.05);
  EXPECT_THAT(t.explanation, HasSubstr("latency-bound"));
}

// --- Point 2: latency-bound behaviour ------------------------------------------

// A tiny all-gather on a 16-chip ring costs N/2 = 8 steps of one hop each.
TEST(InterconnectLatencyTest, SmallAllGatherCostsHopsTimesHopLatency) {
  auto ic = Make(Grid(arch::TopologyKind::kTorus, {16}));
  const CollectiveTiming t = TimeOf(*ic, Over(CollectiveKind::kAllGather, AllChips(16), 64));
  EXPECT_EQ(t.duration, Picoseconds(8'000'000));
  EXPECT_THAT(t.explanation, HasSubstr("latency-bound"));
}

// SB: latency-bound while the bytes per hop (V/N per direction) are below
// W_uni x T_min (45 kB for v5e). Bisect for the smallest V whose time
// exceeds the latency floor on a 32-chip ring. A phase costs max(16 hops,
// (N/2)(V/N)/W_uni) with no fill hop on top, so the crossover is exactly
// V/N = W_uni x T_min; 1% covers the bisection's resolution and picosecond
// rounding.
TEST(InterconnectLatencyTest, CrossoverSizeMatchesScalingBook) {
  constexpr int64_t kN = 32;
  auto ic = Make(Grid(arch::TopologyKind::kTorus, {kN}));
  const Picoseconds floor = TimeOf(*ic, Over(CollectiveKind::kAllGather, AllChips(kN), kN)).duration;
  EXPECT_EQ(floor, Picoseconds(16'000'000));
  int64_t lo = kN, hi = int64_t{1} << 30;  // time(lo) == floor < time(hi)
  while (hi - lo > kN) {
    const int64_t mid = lo + (hi - lo) / 2;
    const Picoseconds t = TimeOf(*ic, Over(CollectiveKind::kAllGather, AllChips(kN), mid)).duration;
    (t > floor ? hi : lo) = mid;
  }
  ExpectWithin(static_cast<double>(hi) / kN, kWuni * kHopUs * 1e-6, 0.01);
}

// A neighbour permute of V bytes with 96% link efficiency and a 4 us
// collective latency: 4 us before any byte moves, then V / (0.96 W_uni) and
// the hop (the MARIN v5p fit's form, 4.55 us + V / 86.3 GB/s). The same
// permute without them takes V / W_uni + 1 hop.
TEST(InterconnectLatencyTest, CollectiveLatencyAndLinkEfficiencyAddToEveryCollective) {
  Collective permute;
  permute.kind = CollectiveKind::kCollectivePermute;
  permute.pairs = {{0, 1}};
  permute.bytes = 43'200'000;  // 1000 us at 0.96 x 45 GB/s
  auto ideal = Make(Grid(arch::TopologyKind::kTorus, {4}));
  EXPECT_EQ(TimeOf(*ideal, permute).duration, Picoseconds(961'000'000));
  arch::IciConfig ici = Ici();
  ici.efficiency_percent = 96;
  ici.collective_latency = Picoseconds(4'000'000);
  auto real = Make(Grid(arch::TopologyKind::kTorus, {4}), ici);
  EXPECT_EQ(TimeOf(*real, permute).duration, Picoseconds(1'005'000'000));
  EXPECT_THAT(real->Describe(), HasSubstr("43.2 GB/s/link one-way (96% of 45 GB/s)"));
  // A small one is latency-bound, the fixed time counted as latency: 4 us,
  // the hop, and 64 B at 43.2 GB/s (1481.5 ps, rounded up).
  permute.bytes = 64;
  const CollectiveTiming small = TimeOf(*real, permute);
  EXPECT_EQ(small.duration, Picoseconds(5'001'482));
  EXPECT_THAT(small.explanation, HasSubstr("latency-bound: 5.00 us of 5.00 us is fixed"));
}

// --- Point 3: contention, failures, topologies ----------------------------------

// Two permutes on an 8-ring whose routes share link 1->2: alone each takes
// V/W_uni + 2 hops; together max-min gives each half of the shared link.
TEST(InterconnectContentionTest, TwoTransfersSharingALinkTakeTwiceTheBandwidthTime) {
  auto ic = Make(Grid(arch::TopologyKind::kTorus, {8}));
  const int64_t v = 45'000'000;  // 1000 us at W_uni
  Collective a;
  a.kind = CollectiveKind::kCollectivePermute;
  a.pairs = {{0, 2}};
  a.bytes = v;
  Collective b = a;
  b.pairs = {{1, 3}};
  EXPECT_EQ(TimeOf(*ic, a).duration, Picoseconds(1'002'000'000));
  const std::vector<Collective> both = {a, b};
  auto timed = ic->TimeConcurrent(both);
  ASSERT_TRUE(timed.ok()) << timed.status().message();
  EXPECT_EQ((*timed)[0].duration, Picoseconds(2'002'000'000));
  EXPECT_EQ((*timed)[1].duration, Picoseconds(2'002'000'000));
  EXPECT_THAT((*timed)[0].explanation, HasSubstr("in 2 flows"));
}

// Collectives that start at different times: the second joins the first's
// links halfway. Permute 0->2 alone: V/W_uni + 2 hops = 1002 us. Permute
// 1->3 starts at 500 us and shares link 1->2: from then on each gets W/2,
// so the first's remaining 500 us of bytes take 1000 us: its last byte at
// 1500 us, + 2 hops = 1502 us. The second has sent 500 us' worth by then
// and needs 500 more at full rate: 2000 us + 2 hops, 1502 us after its start.
TEST(InterconnectContentionTest, ALaterTransferSlowsOneAlreadyInFlight) {
  auto ic = Make(Grid(arch::TopologyKind::kTorus, {8}));
  Collective a;
  a.kind = CollectiveKind::kCollectivePermute;
  a.pairs = {{0, 2}};
  a.bytes = 45'000'000;  // 1000 us at W_uni
  Collective b = a;
  b.pairs = {{1, 3}};
  b.start = Picoseconds(500'000'000);
  const std::vector<Collective> both = {a, b};
  auto timed = ic->TimeConcurrent(both);
  ASSERT_TRUE(timed.ok()) << timed.status().message();
  EXPECT_EQ((*timed)[0].duration, Picoseconds(1'502'000'000));
  EXPECT_EQ((*timed)[1].duration, Picoseconds(1'502'000'000));
}

// A session keeps only what is in flight, resumed at each join; it must give
// the ends one batch of all the collectives gives (to within the rounding of
// bytes left at a join: a picosecond here and there). Collectives over the
// x rings of a 4x4 torus, each joining while the previous ones still send,
// and one after the network went idle.
TEST(InterconnectSessionTest, JoinsGiveTheEndsOfOneBatch) {
  auto ic = Make(Grid(arch::TopologyKind::kTorus, {4, 4}));
  std::vector<Collective> all;
  for (const int64_t start_us : {0, 300, 700, 20'000}) {
    Collective c = Over(start_us == 300 ? CollectiveKind::kAllGather : CollectiveKind::kAllReduce,
                        GroupsAlong(ic->topology(), {0}),
                        45'000'000);
    c.start = Picoseconds(start_us * 1'000'000);
    all.push_back(c);
  }
  auto batch = ic->TimeConcurrent(std::span<const Collective>(all).first(3));
  ASSERT_TRUE(batch.ok()) << batch.status().message();
  std::unique_ptr<NetworkSession> session = ic->NewSession();
  std::vector<Picoseconds> ends(all.size());
  for (size_t i = 0; i < all.size(); ++i) {
    auto joined = session->Join(all[i]);
    ASSERT_TRUE(joined.ok()) << joined.status().message();
    for (const auto& [id, end] : joined->ends) ends[id] = end;
    if (i == 3) {
      ASSERT_EQ(joined->ends.size(), 1u);  // the others had ended
      EXPECT_EQ(joined->timing.duration, TimeOf(*ic, all[3]).duration);
    }
  }
  for (size_t i = 0; i < 3; ++i) {
    const Picoseconds expected = all[i].start + (*batch)[i].duration;
    EXPECT_NEAR(static_cast<double>(ends[i].value()), static_cast<double>(expected.value()), 10)
        << i;
    EXPECT_GT((*batch)[i].duration, TimeOf(*ic, all[i]).duration) << i;  // they shared
  }
}

// Two devices per chip: a permute between the devices of chip 0 crosses no
// link; it is an on-chip copy, read + write at the device's HBM bandwidth
// (1 TB/s here: 2 ps a byte). Between chips, the same bytes go over ICI.
TEST(InterconnectDevicesPerChipTest, PermuteWithinAChipIsAnOnChipCopy) {
  arch::TopologyConfig config = Grid(arch::TopologyKind::kTorus, {4});
  config.devices_per_chip = 2;
  auto ic = Make(config);
  EXPECT_EQ(ic->device_count(), 8);
  Collective within;
  within.kind = CollectiveKind::kCollectivePermute;
  within.pairs = {{0, 1}, {1, 0}};
  within.bytes = 1'000'000;
  const CollectiveTiming copy = TimeOf(*ic, within);
  EXPECT_EQ(copy.duration, Picoseconds(2'000'000));
  EXPECT_EQ(copy.ici_bytes, 0);
  EXPECT_THAT(copy.explanation, HasSubstr("on-chip copies only"));
  Collective across = within;
  across.pairs = {{0, 2}};  // chip 0 -> chip 1
  EXPECT_EQ(TimeOf(*ic, across).ici_bytes, 1'000'000);
  Collective self = within;
  self.pairs = {{3, 3}};  // a device to itself moves nothing
  EXPECT_EQ(TimeOf(*ic, self).duration, Picoseconds(0));
}

// Every device of whole chips (two per chip): the group is a mesh with one
// more axis, the chip's devices, which crosses no link. The chips run the
// torus algorithm on the whole V, as with one device each, and each device
// exchanges half of V with the other of its chip: after the all-gather,
// before the reduce-scatter, both around the all-reduce. An on-chip copy of
// V/2 takes V ps here.
TEST(InterconnectDevicesPerChipTest, WholeChipsRunTheTorusThenExchangeOnChip) {
  arch::TopologyConfig pairs = Grid(arch::TopologyKind::kTorus, {4});
  pairs.devices_per_chip = 2;
  auto two = Make(pairs);
  auto one = Make(Grid(arch::TopologyKind::kTorus, {4}));
  const int64_t v = 90'000'000;
  for (const CollectiveKind kind :
       {CollectiveKind::kAllGather, CollectiveKind::kReduceScatter, CollectiveKind::kAllReduce}) {
    const CollectiveTiming chips = TimeOf(*one, Over(kind, AllChips(4), v));
    const CollectiveTiming devices = TimeOf(*two, Over(kind, AllChips(8), v));
    const int64_t exchanges = kind == CollectiveKind::kAllReduce ? 2 : 1;
    EXPECT_EQ(devices.algorithm, Algorithm::kTorus);
    EXPECT_EQ(devices.ici_bytes, chips.ici_bytes);
    EXPECT_EQ(devices.duration, chips.duration + Picoseconds(exchanges * v));
  }
  // Both devices of one chip: only the exchange.
  const CollectiveTiming within = TimeOf(*two, Over(CollectiveKind::kAllReduce, {{0, 1}}, v));
  EXPECT_EQ(within.duration, Picoseconds(2 * v));
  EXPECT_EQ(within.ici_bytes, 0);
  // One device of each chip (a parity group): no exchange; the ring order
  // of a group that is not every device of its chips stays the fallback.
  EXPECT_EQ(TimeOf(*two, Over(CollectiveKind::kAllGather, {{0, 2, 4, 6}}, v)).duration,
            TimeOf(*one, Over(CollectiveKind::kAllGather, AllChips(4), v)).duration);
  EXPECT_EQ(TimeOf(*two, Over(CollectiveKind::kAllGather, {{0, 1, 2}}, v)).algorithm,
            Algorithm::kRing);
}

// Two all-reduces over the same 4-ring: every link carries both, so each
// phase's bandwidth time doubles. By hand: a phase costs max(2 hops, V/2 per
// direction / W_uni) — the hop latency hides behind the transfer (SB's step
// model, Flow::route_latency_in_floor) — so 1000 us alone, 2000 us shared.
TEST(InterconnectContentionTest, TwoAllReducesOnOneRingShareEveryLink) {
  auto ic = Make(Grid(arch::TopologyKind::kTorus, {4}));
  const int64_t v = 90'000'000;  // a phase moves V/2 per direction: 1000 us
  const Collective ar = Over(CollectiveKind::kAllReduce, AllChips(4), v);
  EXPECT_EQ(TimeOf(*ic, ar).duration, Picoseconds(int64_t{2} * 1'000'000'000));
  const std::vector<Collective> both = {ar, ar};
  auto timed = ic->TimeConcurrent(both);
  ASSERT_TRUE(timed.ok()) << timed.status().message();
  EXPECT_EQ((*timed)[0].duration, Picoseconds(int64_t{2} * 2'000'000'000));
}

// A failed link 0-1 on a 4-ring: the two flows that used it go the long way
// (3 hops) and share every other link with a one-shard flow. Per phase,
// link loads rise from V/2 to 3V/4 (all links, work-conserving max-min):
// 1500 us. By hand, the latency: the phase floor is 2 steps x the mean edge
// latency, (6 x 1 + 2 x 3 hops) / 8 flows = 1.5 us, so 3 us, hidden behind
// the transfer (the rerouted flows no longer pay their 3 hops after their
// last byte): 2 x 3V/(4 W_uni).
TEST(InterconnectFailureTest, FailedLinkReroutesAndSlowsTheAllReduce) {
  arch::TopologyConfig config = Grid(arch::TopologyKind::kTorus, {4});
  arch::LinkFault fault;
  fault.link = {0, 1};
  fault.at = Picoseconds(5'000'000'000);  // 5 ms
  config.faults = {fault};
  auto ic = Make(config);
  const int64_t v = 90'000'000;
  Collective ar = Over(CollectiveKind::kAllReduce, AllChips(4), v);
  EXPECT_EQ(TimeOf(*ic, ar).duration, Picoseconds(int64_t{2} * 1'000'000'000));  // before the fault
  ar.start = Picoseconds(6'000'000'000);
  const CollectiveTiming failed = TimeOf(*ic, ar);
  EXPECT_EQ(failed.duration, Picoseconds(int64_t{2} * 1'500'000'000));
  EXPECT_EQ(failed.max_hops, 3);
}

// A failure that cuts a 3-chip line in two: the all-reduce is an error
// that says so, not a crash or a zero time.
TEST(InterconnectFailureTest, DisconnectedParticipantsAreAnError) {
  arch::TopologyConfig config = Grid(arch::TopologyKind::kMesh, {3});
  arch::LinkFault fault;
  fault.link = {1, 2};
  config.faults = {fault};
  auto ic = Make(config);
  const auto timed = ic->Time(Over(CollectiveKind::kAllReduce, AllChips(3), 1 << 20));
  ASSERT_FALSE(timed.ok());
  EXPECT_EQ(timed.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(ic->Time(Over(CollectiveKind::kAllReduce, {{0, 1}}, 1 << 20)).ok());
}

// The same all-reduce on a 4x4 torus (4 links per chip at W_uni) and on a
// 16-chip fat tree whose single chip link carries the chip's 4 x W_uni (the
// fat tree gives a chip its links x per-link bandwidth): per-chip bandwidth
// is equal, the times are not. Torus: two Hamiltonian rings, 1 hop, each link
// direction carries V/4 per stage, 2 stages. Fat tree: one ring,
// 2 x 15V/16 over 4 W_uni, routes of 2 and 4 hops through switches.
TEST(InterconnectTopologyTest, TorusAndFatTreeOfEqualChipBandwidthDiffer) {
  arch::IciConfig ici = Ici();
  ici.links = 4;
  auto torus = Make(Grid(arch::TopologyKind::kTorus, {4, 4}), ici);
  arch::TopologyConfig tree;
  tree.kind = arch::TopologyKind::kFatTree;
  tree.fat_tree_radix = 8;  // arity 4: 16 chips in 2 levels
  tree.fat_tree_levels = 2;
  auto fat = Make(tree, ici);
  const Collective ar = Over(CollectiveKind::kAllReduce, AllChips(16), kBig);
  const CollectiveTiming on_torus = TimeOf(*torus, ar);
  const CollectiveTiming on_tree = TimeOf(*fat, ar);
  EXPECT_EQ(on_torus.algorithm, Algorithm::kHamiltonianRings);
  ExpectWithin(Us(on_torus.duration), 2.0 / 4.0 * kBig / kWuni * 1e6, 0.02);
  EXPECT_EQ(on_tree.algorithm, Algorithm::kRing);
  ExpectWithin(Us(on_tree.duration), 2 * 15.0 / 16.0 * kBig / (4 * kWuni) * 1e6, 0.02);
  EXPECT_EQ(on_torus.max_hops, 1);
  EXPECT_EQ(on_tree.max_hops, 4);
  EXPECT_THAT(on_torus.explanation, HasSubstr("longest route 1 hop"));
  EXPECT_THAT(on_tree.explanation, HasSubstr("longest route 4 hops"));
}

// --- Algorithms and errors ------------------------------------------------------

// 256 chips under 16 leaf switches: a small all-reduce is 510 ring steps of
// latency against 16 halving-doubling steps; a large one is bandwidth-bound
// either way and stays on the ring.
TEST(InterconnectAlgorithmTest, AutoPicksHalvingDoublingForSmallMessagesOnAFatTree) {
  arch::TopologyConfig tree;
  tree.kind = arch::TopologyKind::kFatTree;
  tree.fat_tree_radix = 32;
  tree.fat_tree_levels = 2;
  auto fat = Make(tree);
  const CollectiveTiming small = TimeOf(*fat, Over(CollectiveKind::kAllReduce, AllChips(256), 1024));
  EXPECT_EQ(small.algorithm, Algorithm::kHalvingDoubling);
  EXPECT_EQ(TimeOf(*fat, Over(CollectiveKind::kAllReduce, AllChips(256), kBig)).algorithm,
            Algorithm::kRing);
  const CollectiveTiming ring =
      TimeOf(*fat, Over(CollectiveKind::kAllReduce, AllChips(256), 1024, Algorithm::kRing));
  EXPECT_LT(small.duration.value() * 4, ring.duration.value());
}

// collective-broadcast runs a pipelined chain in group order: every edge of
// an 8-ring carries V once, at full link rate; the chain's 7 hops (its floor)
// hide behind the 1000 us transfer, as in SB's step model.
TEST(InterconnectAlgorithmTest, BroadcastIsAPipelinedChain) {
  auto ic = Make(Grid(arch::TopologyKind::kTorus, {8}));
  const CollectiveTiming t =
      TimeOf(*ic, Over(CollectiveKind::kCollectiveBroadcast, AllChips(8), 45'000'000));
  EXPECT_EQ(t.algorithm, Algorithm::kRing);
  EXPECT_EQ(t.duration, Picoseconds(1'000'000'000));
  EXPECT_EQ(t.ici_bytes, 7 * 45'000'000);
}

// Groups that are not whole axes (replica groups {0,2},{1,3}) run a ring.
TEST(InterconnectAlgorithmTest, GroupsAcrossAxesRunARing) {
  auto ic = Make(Grid(arch::TopologyKind::kTorus, {4}));
  const CollectiveTiming t =
      TimeOf(*ic, Over(CollectiveKind::kAllReduce, {{0, 2}, {1, 3}}, 1 << 20));
  EXPECT_EQ(t.algorithm, Algorithm::kRing);
  EXPECT_EQ(t.max_hops, 2);
}

// Every forced algorithm runs an all-reduce and moves bytes.
TEST(InterconnectAlgorithmTest, EveryAlgorithmRunsAnAllReduce) {
  auto ic = Make(Grid(arch::TopologyKind::kTorus, {4, 4}));
  for (const Algorithm a : {Algorithm::kRing, Algorithm::kBidirectionalRing, Algorithm::kTorus,
                            Algorithm::kHamiltonianRings, Algorithm::kTree,
                            Algorithm::kHalvingDoubling, Algorithm::kDirect}) {
    const CollectiveTiming t = TimeOf(*ic, Over(CollectiveKind::kAllReduce, AllChips(16), 1 << 24, a));
    EXPECT_EQ(t.algorithm, a);
    EXPECT_GT(t.duration, Picoseconds(0)) << AlgorithmName(a);
    EXPECT_GT(t.ici_bytes, 0) << AlgorithmName(a);
  }
}

// A ring states groups; a permute states pairs and no groups, so a ring
// asked to run one is an error, not a collective that moves nothing.
TEST(InterconnectAlgorithmTest, ARingCannotRunAPermute) {
  auto ic = Make(Grid(arch::TopologyKind::kTorus, {4, 4}));
  for (const CollectiveKind kind :
       {CollectiveKind::kCollectivePermute, CollectiveKind::kSendRecv}) {
    for (const Algorithm a : {Algorithm::kRing, Algorithm::kBidirectionalRing}) {
      Collective permute = Over(kind, {}, 1 << 20, a);
      permute.pairs = {{0, 1}, {1, 0}};
      const StatusOr<CollectiveTiming> t = ic->Time(permute);
      ASSERT_FALSE(t.ok()) << AlgorithmName(a);
      EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
      EXPECT_THAT(t.status().message(), HasSubstr("cannot run"));
    }
  }
}

// The up-front size estimate of a direct collective: n(n-1) transfers per
// group of n (an all-to-all on two groups of 4: 2 x 12), twice for all-reduce;
// nothing for collectives that do not run every pair directly.
TEST(InterconnectAlgorithmTest, DirectTransfersCountTheOrderedPairsOfEachGroup) {
  const std::vector<std::vector<int64_t>> two_fours = {{0, 1, 2, 3}, {4, 5, 6, 7}};
  EXPECT_EQ(DirectTransfers(Over(CollectiveKind::kAllToAll, two_fours, 64)), 24);
  EXPECT_EQ(DirectTransfers(Over(CollectiveKind::kRaggedAllToAll, AllChips(5), 64)), 20);
  EXPECT_EQ(DirectTransfers(Over(CollectiveKind::kAllReduce, two_fours, 64, Algorithm::kDirect)),
            48);
  EXPECT_EQ(DirectTransfers(Over(CollectiveKind::kAllGather, AllChips(3), 64, Algorithm::kDirect)),
            6);
  // Auto runs all-reduce on rings or trees, not directly.
  EXPECT_EQ(DirectTransfers(Over(CollectiveKind::kAllReduce, two_fours, 64)), 0);
  EXPECT_EQ(DirectTransfers(Over(CollectiveKind::kAllToAll, two_fours, 64, Algorithm::kRing)), 0);
  // One root, or a pair each: linear in n.
  EXPECT_EQ(DirectTransfers(Over(CollectiveKind::kCollectiveBroadcast, AllChips(8), 64,
                                 Algorithm::kDirect)),
            0);
  Collective permute = Over(CollectiveKind::kCollectivePermute, {}, 64);
  permute.pairs = {{0, 1}, {1, 0}};
  EXPECT_EQ(DirectTransfers(permute), 0);
  // switch:4096's all-to-all, which ran for minutes, is past the limit.
  EXPECT_EQ(DirectTransfers(Over(CollectiveKind::kAllToAll, AllChips(4096), 64)), 16'773'120);
  EXPECT_GT(DirectTransfers(Over(CollectiveKind::kAllToAll, AllChips(4096), 64)),
            kMaxDirectTransfers);
}

// A ragged-all-to-all with its traffic known moves what each pair sent: here
// chip 0 alone sends, to its neighbour, over one link at W_uni; without the
// traffic every member would send V/4 to every other.
TEST(InterconnectAlgorithmTest, ARaggedAllToAllMovesWhatEachPairSent) {
  auto ic = Make(Grid(arch::TopologyKind::kTorus, {4}));
  Collective ragged = Over(CollectiveKind::kRaggedAllToAll, AllChips(4), kBig);
  ragged.sent_bytes = {std::vector<int64_t>(16, 0)};
  ragged.sent_bytes[0][0 * 4 + 1] = kBig;
  const CollectiveTiming t = TimeOf(*ic, ragged);
  EXPECT_EQ(t.algorithm, Algorithm::kDirect);
  EXPECT_EQ(t.ici_bytes, kBig);
  ASSERT_EQ(t.links.size(), 1u);
  ExpectWithin(Us(t.duration), kBig / kWuni * 1e6, 0.02);
  const CollectiveTiming even =
      TimeOf(*ic, Over(CollectiveKind::kRaggedAllToAll, AllChips(4), kBig));
  EXPECT_GT(even.ici_bytes, kBig);
  // One matrix per group, n x n, none negative.
  ragged.sent_bytes[0].pop_back();
  EXPECT_FALSE(ic->Time(ragged).ok());
  ragged.sent_bytes[0].push_back(-1);
  EXPECT_FALSE(ic->Time(ragged).ok());
  Collective all_to_all = Over(CollectiveKind::kAllToAll, AllChips(4), kBig);
  all_to_all.sent_bytes = {std::vector<int64_t>(16, 0)};
  EXPECT_FALSE(ic->Time(all_to_all).ok());
}

TEST(InterconnectAlgorithmTest, ImpossibleRequestsAreErrors) {
  auto ic = Make(Grid(arch::TopologyKind::kTorus, {4}));
  EXPECT_FALSE(ic->Time(Over(CollectiveKind::kAllToAll, AllChips(4), 64, Algorithm::kRing)).ok());
  EXPECT_FALSE(
      ic->Time(Over(CollectiveKind::kAllReduce, {{0, 1, 2}}, 64, Algorithm::kHalvingDoubling)).ok());
  EXPECT_FALSE(ic->Time(Over(CollectiveKind::kAllReduce, {{0, 2}}, 64, Algorithm::kTorus)).ok());
  // a single axis is not a torus plane
  EXPECT_FALSE(
      ic->Time(Over(CollectiveKind::kAllReduce, AllChips(4), 64, Algorithm::kHamiltonianRings)).ok());
  EXPECT_FALSE(ic->Time(Over(CollectiveKind::kAllReduce, {{0, 9}}, 64)).ok());  // no device 9
  EXPECT_FALSE(ParseAlgorithm("spiral").ok());
  EXPECT_EQ(*ParseAlgorithm("halving-doubling"), Algorithm::kHalvingDoubling);
  EXPECT_EQ(*ParseAlgorithm("hamiltonian-rings"), Algorithm::kHamiltonianRings);
}

// Every kind parses back from its name, and an unknown name lists them all.
TEST(InterconnectCollectiveKindTest, NamesParseBackToTheirKinds) {
  for (const CollectiveKind kind : kCollectiveKinds) {
    const StatusOr<CollectiveKind> parsed = ParseCollectiveKind(CollectiveKindName(kind));
    ASSERT_TRUE(parsed.ok()) << CollectiveKindName(kind);
    EXPECT_EQ(*parsed, kind);
  }
  const StatusOr<CollectiveKind> unknown = ParseCollectiveKind("all-sum");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().message(),
            "unknown collective 'all-sum' (expected all-reduce, all-gather, reduce-scatter, "
            "all-to-all, ragged-all-to-all, collective-permute, collective-broadcast, send-recv)");
}

}  // namespace
}  // namespace tpusim::ici
