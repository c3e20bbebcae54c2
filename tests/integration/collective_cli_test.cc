// Integration tests of `tpusim collective`: the nccl-tests-like table against
// hand-computed formula values, sweeps, JSON, help, and bad input (exit 2).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/integration/integration_util.h"
#include "tests/integration/run_binary.h"

namespace tpusim::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

RunResult Tpusim(const std::vector<std::string>& args) { return RunBinary(TPUSIM_BINARY, args); }

/// `tpusim collective args...` on the links the scaling book's formulas
/// assume: their full bandwidth, no fixed time per collective (the preset's
/// calibrated ici.efficiency_percent and ici.collective_latency switched off).
RunResult Formula(std::vector<std::string> args) {
  for (const char* p : {"ici.efficiency_percent=100", "ici.collective_latency=0us"}) {
    args.push_back("-p");
    args.push_back(p);
  }
  return Tpusim(args);
}

/// A table row: size, time (us), algbw, busbw, algorithm.
struct Row {
  int64_t size = 0;
  double time_us = 0, algbw = 0, busbw = 0;
  std::string algorithm;
};

std::vector<Row> Rows(const std::string& out) {
  std::vector<Row> rows;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    Row row;
    fields >> row.size >> row.time_us >> row.algbw >> row.busbw >> row.algorithm;
    rows.push_back(row);
  }
  return rows;
}

// v5e: 45 GB/s one-way per link, 1 us per hop. An all-reduce of V = 256 MiB
// on a 16-chip ring with wraparound: two phases (reduce-scatter, all-gather),
// each max(8 hops, V/2 per direction at 45 GB/s) — the hops hide behind the
// transfer (SB's step model): 2 x 2982.62 us.
TEST(CollectiveCliTest, AllReduceOnARingMatchesTheFormula) {
  const RunResult r = Formula({"collective", "--op", "all-reduce", "--bytes", "256MiB", "--chip",
                              "tpu-v5e", "--topology", "torus:16"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const std::vector<Row> rows = Rows(r.out);
  ASSERT_EQ(rows.size(), 1u) << r.out;
  const double v = 256.0 * 1024 * 1024;
  const double expected_us = 2 * (v / 2 / 45e9 * 1e6);
  EXPECT_EQ(rows[0].size, int64_t{256} << 20);
  EXPECT_NEAR(rows[0].time_us, expected_us, 0.02);
  EXPECT_NEAR(rows[0].algbw, v / (expected_us * 1e-6) * 1e-9, 0.01);
  EXPECT_NEAR(rows[0].busbw, rows[0].algbw * 2 * 15 / 16, 0.02);  // both printed to 0.01
  EXPECT_EQ(rows[0].algorithm, "torus");
  EXPECT_THAT(r.out, HasSubstr("bandwidth-bound"));
  EXPECT_THAT(r.out, HasSubstr("torus 16"));
}

// --algorithm ring forces a unidirectional ring over a 4-chip torus: each
// chip sends 3V/4 to its neighbour: 3V/(4 x 45 GB/s), its 3 hops hidden.
// An error found when a short form's network is built names the option and
// what it said, as one of a YAML file names its line.
TEST(CollectiveCliTest, AShortFormsBuildErrorNamesTheOption) {
  const RunResult r = Tpusim({"collective", "--op", "all-reduce", "--bytes", "1MiB", "--chip",
                              "tpu-v5e", "--topology", "torus:2x2,link_bandwidth=1B/s"});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("tpusim collective: error: --topology: "
                               "'torus:2x2,link_bandwidth=1B/s': topology.link_bandwidth: 1B/s at "
                               "the chip's 96% ICI efficiency leaves 0B/s"));
}

TEST(CollectiveCliTest, ForcedRingAllGather) {
  const RunResult r = Formula({"collective", "--op", "all-gather", "--bytes", "45000000", "--chip",
                              "tpu-v5e", "--topology", "torus:4", "--algorithm", "ring"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const std::vector<Row> rows = Rows(r.out);
  ASSERT_EQ(rows.size(), 1u) << r.out;
  EXPECT_NEAR(rows[0].time_us, 750.0, 0.01);
  EXPECT_NEAR(rows[0].busbw, rows[0].algbw * 3 / 4, 0.02);
  EXPECT_EQ(rows[0].algorithm, "ring");
}

// --algorithm hamiltonian-rings on a 4x4 torus: two edge-disjoint
// Hamiltonian rings, each a bidirectional ring on V/2, load every link with
// V/4: 22.5 MB at 45 GB/s = 500 us (the 8 hops hide behind it).
TEST(CollectiveCliTest, ForcedHamiltonianRingsAllGather) {
  const RunResult r = Formula({"collective", "--op", "all-gather", "--bytes", "90000000", "--chip",
                              "tpu-v5e", "--topology", "torus:4x4", "--algorithm",
                              "hamiltonian-rings"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const std::vector<Row> rows = Rows(r.out);
  ASSERT_EQ(rows.size(), 1u) << r.out;
  EXPECT_NEAR(rows[0].time_us, 500.0, 0.01);
  EXPECT_EQ(rows[0].algorithm, "hamiltonian-rings");
}

// Small sizes are latency-bound at N/2 hops of 1 us on a 16-ring; the sweep
// has one row per power of two.
TEST(CollectiveCliTest, SweepShowsTheLatencyFloor) {
  const RunResult r = Formula({"collective", "--op", "all-gather", "--sweep", "1KiB:8KiB", "--chip",
                              "tpu-v5e", "--topology", "torus:16"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const std::vector<Row> rows = Rows(r.out);
  ASSERT_EQ(rows.size(), 4u) << r.out;
  EXPECT_EQ(rows[0].size, 1024);
  EXPECT_EQ(rows[3].size, 8192);
  for (const Row& row : rows) EXPECT_NEAR(row.time_us, 8.0, 1e-6) << row.size;
  EXPECT_THAT(r.out, HasSubstr("latency-bound"));
}

// --groups: the rows of a 4x4 torus, each a wraparound axis of 4: an
// all-gather moves 2 shards of V/4 per direction, V/2 at 45 GB/s (its 2 hops
// hidden).
TEST(CollectiveCliTest, GroupsAlongAnAxis) {
  const RunResult r =
      Formula({"collective", "--op", "all-gather", "--bytes", "90000000", "--chip", "tpu-v5e",
              "--topology", "torus:4x4", "--groups", "0,1,2,3;4,5,6,7;8,9,10,11;12,13,14,15"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const std::vector<Row> rows = Rows(r.out);
  ASSERT_EQ(rows.size(), 1u) << r.out;
  EXPECT_NEAR(rows[0].time_us, 1000.0, 0.01);
  EXPECT_EQ(rows[0].algorithm, "torus");
  EXPECT_THAT(r.out, HasSubstr("4 groups of 4 devices"));
}

// The v5e preset as it is: the all-reduce of AllReduceOnARingMatchesTheFormula
// on links that carry 96% of 45 GB/s, 4.4 us after the last device arrives
// (docs/validation.md, "Collectives"; docs/presets.md, A12).
TEST(CollectiveCliTest, ThePresetsLinkEfficiencyAndCollectiveLatencyAddToTheFormula) {
  const RunResult r = Tpusim({"collective", "--op", "all-reduce", "--bytes", "256MiB", "--chip",
                              "tpu-v5e", "--topology", "torus:16"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const std::vector<Row> rows = Rows(r.out);
  ASSERT_EQ(rows.size(), 1u) << r.out;
  const double v = 256.0 * 1024 * 1024;
  EXPECT_NEAR(rows[0].time_us, 4.4 + 2 * (v / 2 / 43.2e9 * 1e6), 0.02);
  EXPECT_THAT(r.out, HasSubstr("43.2 GB/s/link one-way (96% of 45 GB/s)"));
}

TEST(CollectiveCliTest, JsonHasTheRows) {
  ScratchDir dir;
  const std::string json = (dir.path() / "c.json").string();
  const RunResult r = Tpusim({"collective", "--op", "all-to-all", "--bytes", "1MiB", "--chip",
                              "tpu-v5p", "--topology", "torus:4x4x4", "--json", json});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const std::string text = ReadText(json);
  EXPECT_THAT(text, HasSubstr("\"algorithm\": \"direct\""));
  EXPECT_THAT(text, HasSubstr("\"group_size\": 64"));
}

// The layout of nccl-tests' all_reduce_perf (its common.cu's printf
// formats), as a run on 8 GPUs prints it: the reference the parser below is
// written against.
constexpr char kNcclTestsSample[] =
    "# nThread 1 nGpus 8 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: "
    "20 agg iters: 1 validation: 1 graph: 0\n"
    "#\n"
    "# Using devices\n"
    "#  Rank  0 Group  0 Pid  41217 on   gpu-node device  0 [0x07] NVIDIA A100-SXM4-80GB\n"
    "#\n"
    "#                                                              out-of-place                  "
    "     in-place          \n"
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time "
    "  algbw   busbw #wrong\n"
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)"
    "  (GB/s)  (GB/s)       \n"
    "           8             2     float     sum      -1    38.42    0.00    0.00      0    37.91"
    "    0.00    0.00      0\n"
    "   134217728      33554432     float     sum      -1   1146.3  117.09  204.90      0   1144.8"
    "  117.24  205.17      0\n"
    "# Out of bounds values : 0 OK\n"
    "# Avg bus bandwidth    : 102.518 \n"
    "#\n";

/// One data row as nccl-tests parsers read it: whitespace-separated fields,
/// the root column possibly blank.
struct NcclRow {
  int64_t bytes = 0, count = 0;
  std::string type, redop;
  double time[2] = {0, 0}, algbw[2] = {0, 0}, busbw[2] = {0, 0};
  std::string wrong[2];
};

/// Parses nccl-tests output the way its users' scripts do; `avg` gets the
/// footer's average bus bandwidth. Fails the test on a line it cannot read.
std::vector<NcclRow> ParseNcclTests(const std::string& text, double& avg) {
  std::vector<NcclRow> rows;
  std::istringstream lines(text);
  std::string line;
  avg = -1;
  while (std::getline(lines, line)) {
    const std::string footer = "# Avg bus bandwidth    : ";
    if (line.rfind(footer, 0) == 0) avg = std::stod(line.substr(footer.size()));
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f;
    std::istringstream words(line);
    for (std::string w; words >> w;) f.push_back(w);
    EXPECT_TRUE(f.size() == 12 || f.size() == 13) << line;
    if (f.size() != 12 && f.size() != 13) continue;
    const size_t t = f.size() == 13 ? 5 : 4;  // the first time column, after the root
    NcclRow row;
    row.bytes = std::stoll(f[0]);
    row.count = std::stoll(f[1]);
    row.type = f[2];
    row.redop = f[3];
    for (size_t p = 0; p < 2; ++p) {
      row.time[p] = std::stod(f[t + 4 * p]);
      row.algbw[p] = std::stod(f[t + 4 * p + 1]);
      row.busbw[p] = std::stod(f[t + 4 * p + 2]);
      row.wrong[p] = f[t + 4 * p + 3];
    }
    rows.push_back(row);
  }
  return rows;
}

TEST(CollectiveCliTest, NcclTestsFormatReadsLikeNcclTests) {
  double sample_avg = 0;
  const std::vector<NcclRow> sample = ParseNcclTests(kNcclTestsSample, sample_avg);
  ASSERT_EQ(sample.size(), 2u);
  EXPECT_EQ(sample[1].count, 33554432);
  EXPECT_DOUBLE_EQ(sample_avg, 102.518);

  const RunResult r =
      Tpusim({"collective", "--op", "all-reduce", "--chip", "tpu-v5e", "--topology", "torus:4x4",
              "-g", "8", "-b", "8", "-e", "128MiB", "-f", "4", "--format", "nccl-tests"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_THAT(r.out, ::testing::StartsWith("# nThread 1 nGpus 8 minBytes 8 maxBytes 134217728 "
                                           "step: 4(factor)"));
  EXPECT_THAT(r.out, HasSubstr("#  Rank  7 Group  0"));
  EXPECT_THAT(r.out, HasSubstr("# Out of bounds values : 0 OK\n"));
  double avg = 0;
  const std::vector<NcclRow> rows = ParseNcclTests(r.out, avg);
  ASSERT_EQ(rows.size(), 13u);  // 8 B, 32 B, ..., 128 MiB
  double busbw_sum = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].bytes, int64_t{8} << (2 * i));
    EXPECT_EQ(rows[i].count, rows[i].bytes / 4);  // float
    EXPECT_EQ(rows[i].type, "float");
    EXPECT_EQ(rows[i].redop, "sum");
    // Nothing is checked (nccl-tests' -c 0), and both placements move the same bytes.
    EXPECT_EQ(rows[i].wrong[0], "N/A");
    EXPECT_EQ(rows[i].time[0], rows[i].time[1]);
    EXPECT_GT(rows[i].time[0], 0);
    // busbw = algbw x 2(n-1)/n for all-reduce on 8 ranks, to the printed 2 decimals.
    EXPECT_NEAR(rows[i].busbw[0], rows[i].algbw[0] * 1.75, 0.005 * 1.75 + 0.005 + 1e-9);
    busbw_sum += 2 * rows[i].busbw[0];
  }
  EXPECT_NEAR(avg, busbw_sum / 26, 0.01);
  // The table's numbers, in nccl-tests' clothes: the largest size's busbw.
  const RunResult table =
      Tpusim({"collective", "--op", "all-reduce", "--chip", "tpu-v5e", "--topology", "torus:4x4",
              "--groups", "0,1,2,3,4,5,6,7", "--bytes", "128MiB"});
  ASSERT_EQ(table.exit_code, 0) << Describe(table);
  char busbw[16];
  std::snprintf(busbw, sizeof busbw, "%.2f", rows.back().busbw[0]);
  EXPECT_THAT(table.out, HasSubstr(busbw));

  // all-gather counts elements per rank, and prints no reduction.
  const RunResult gather =
      Tpusim({"collective", "--op", "all-gather", "--chip", "tpu-v5e", "--topology", "torus:4x4",
              "-g", "4", "-b", "1MiB", "-d", "bfloat16", "--format", "nccl-tests"});
  ASSERT_EQ(gather.exit_code, 0) << Describe(gather);
  const std::vector<NcclRow> gathered = ParseNcclTests(gather.out, avg);
  ASSERT_EQ(gathered.size(), 1u);
  EXPECT_EQ(gathered[0].count, (1 << 20) / 2 / 4);
  EXPECT_EQ(gathered[0].redop, "none");
  EXPECT_EQ(gathered[0].type, "bfloat16");
}

TEST(CollectiveCliTest, HelpDescribesColumnsAndOptions) {
  const RunResult r = Tpusim({"collective", "--help"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_THAT(r.out, HasSubstr("--sweep"));
  EXPECT_THAT(r.out, HasSubstr("busbw"));
  EXPECT_THAT(r.out, HasSubstr("2(n-1)/n"));
}

// Two devices per chip (TPU7x, the chip's own count when the topology does
// not state one): the default group is every device, and a group of both
// devices of every chip runs the torus on the chips, then exchanges on chip
// (docs/interconnect.md, "Devices and chips").
TEST(CollectiveCliTest, TheDefaultGroupIsEveryDeviceOfEveryChip) {
  const RunResult r = Tpusim({"collective", "--op", "all-gather", "--bytes", "16MiB", "--chip",
                              "tpu-v7x", "--topology", "torus:2x2x1,wraparound=tpu"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_THAT(r.out, HasSubstr("4 chips, 2 devices per chip"));
  EXPECT_THAT(r.out, HasSubstr("1 group of 8 devices"));
  EXPECT_THAT(r.out, HasSubstr("  torus  "));
  const RunResult ranks = Tpusim({"collective", "--op", "all-gather", "--bytes", "16MiB", "--chip",
                                  "tpu-v7x", "--topology", "torus:2x2x1", "-g", "8"});
  EXPECT_EQ(ranks.exit_code, 0) << Describe(ranks);
  const RunResult one =
      Tpusim({"collective", "--op", "all-gather", "--bytes", "16MiB", "--chip", "tpu-v7x",
              "--topology", "torus:2x2x1,devices_per_chip=1", "-g", "8"});
  EXPECT_EQ(one.exit_code, 2) << Describe(one);
  EXPECT_THAT(one.err, HasSubstr("-g 8: the topology has 4 devices"));
}

TEST(CollectiveCliTest, BadInputExitsTwo) {
  const std::vector<std::string> base = {"collective", "--chip", "tpu-v5e", "--topology", "torus:4"};
  const std::vector<std::vector<std::string>> bad = {
      {"--op", "all-sum", "--bytes", "1MiB"},
      {"--op", "all-reduce"},                                   // neither --bytes nor --sweep
      {"--op", "all-reduce", "--bytes", "1MiB", "-b", "8"},     // two ways to give sizes
      {"--op", "all-reduce", "-b", "1MiB", "-e", "8"},          // -b over -e
      {"--op", "all-reduce", "-b", "8", "-e", "1MiB", "-f", "1"},  // no growth
      {"--op", "all-reduce", "-b", "8", "-d", "float7"},        // unknown type
      {"--op", "all-reduce", "-b", "8", "-g", "5"},             // more ranks than chips
      {"--op", "all-reduce", "-b", "8", "-g", "2", "--groups", "0,1"},
      {"--op", "all-reduce", "-b", "8", "--format", "csv"},
      {"--op", "all-reduce", "--bytes", "1MiB", "--sweep", "1KiB:2KiB"},
      {"--op", "all-reduce", "--bytes", "lots"},
      {"--op", "all-reduce", "--sweep", "2KiB:1KiB"},
      {"--op", "all-reduce", "--bytes", "1MiB", "--algorithm", "spiral"},
      {"--op", "all-sum", "--bytes", "1MiB"},
      {"--op", "all-to-all", "--bytes", "1MiB", "--algorithm", "ring"},
      {"--op", "all-reduce", "--bytes", "1MiB", "--groups", "0,1;2,x"},
      {"--op", "all-reduce", "--bytes", "1MiB", "--groups", "0,7"},
  };
  for (const std::vector<std::string>& extra : bad) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    const RunResult r = Tpusim(args);
    EXPECT_EQ(r.exit_code, 2) << Describe(r);
    EXPECT_THAT(r.err, HasSubstr("error")) << Describe(r);
  }
  const RunResult topology = Tpusim({"collective", "--op", "all-reduce", "--bytes", "1MiB", "--chip",
                                     "tpu-v5e", "--topology", "torus:0x4"});
  EXPECT_EQ(topology.exit_code, 2) << Describe(topology);
  const RunResult chip = Tpusim({"collective", "--op", "all-reduce", "--bytes", "1MiB", "--chip",
                                 "tpu-v99", "--topology", "torus:4"});
  EXPECT_EQ(chip.exit_code, 2) << Describe(chip);
}

/// `tpusim collective --op all-reduce --chip tpu-v5e --topology torus:4x4` plus `extra`.
RunResult AllReduceOn4x4(const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"collective", "--op",       "all-reduce", "--chip",
                                   "tpu-v5e",    "--topology", "torus:4x4"};
  args.insert(args.end(), extra.begin(), extra.end());
  return Tpusim(args);
}

// The help promises every power of two from LO to HI: a LO that is not one
// starts at the next (3:1000 once timed 3, 6, 12, ... 768).
TEST(CollectiveCliTest, SweepTimesThePowersOfTwoBetweenItsEnds) {
  const RunResult r = AllReduceOn4x4({"--sweep", "3:1000"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  std::vector<int64_t> sizes;
  for (const Row& row : Rows(r.out)) sizes.push_back(row.size);
  EXPECT_EQ(sizes, (std::vector<int64_t>{4, 8, 16, 32, 64, 128, 256, 512})) << r.out;
  const RunResult none = AllReduceOn4x4({"--sweep", "5:7"});
  EXPECT_EQ(none.exit_code, 2) << Describe(none);
  EXPECT_THAT(none.err, HasSubstr("--sweep '5:7': no power of two between LO and HI"));
}

// all-to-all runs every pair directly: switch:4096 is 16,773,120 transfers,
// which ran for minutes without a word. Refused up front (within the time
// a small run takes), naming the count and --allow-large; 512 chips still run.
TEST(CollectiveCliTest, DirectCollectivesOfTooManyTransfersAreRefusedUpFront) {
  for (const std::string op : {"all-to-all", "ragged-all-to-all"}) {
    for (const std::string topology : {"switch:4096", "torus:64x64"}) {
      const RunResult r = Tpusim({"collective", "--op", op, "--bytes", "64MiB", "--chip",
                                  "tpu-v5e", "--topology", topology});
      EXPECT_EQ(r.exit_code, 2) << Describe(r);
      EXPECT_THAT(r.err, HasSubstr("tpusim collective: error: " + op +
                                   " on 4096 chips in 1 group sends between every pair "
                                   "directly: 16773120 transfers, more than the 524288"))
          << Describe(r);
      EXPECT_THAT(r.err, HasSubstr("pass --allow-large")) << Describe(r);
    }
  }
  const RunResult direct = Tpusim({"collective", "--op", "all-reduce", "--bytes", "64MiB",
                                   "--chip", "tpu-v5e", "--topology", "switch:1024",
                                   "--algorithm", "direct"});
  EXPECT_EQ(direct.exit_code, 2) << Describe(direct);
  EXPECT_THAT(direct.err, HasSubstr("2095104 transfers")) << Describe(direct);
  const RunResult ring = Tpusim({"collective", "--op", "all-reduce", "--bytes", "64MiB", "--chip",
                                 "tpu-v5e", "--topology", "switch:4096"});
  EXPECT_EQ(ring.exit_code, 0) << Describe(ring);
  const RunResult small = Tpusim({"collective", "--op", "all-to-all", "--bytes", "64MiB",
                                  "--chip", "tpu-v5e", "--topology", "switch:512"});
  EXPECT_EQ(small.exit_code, 0) << Describe(small);
  EXPECT_EQ(small.err, "") << Describe(small);
}

// Any algorithm on a big network once ran for half a minute or more without
// a word (fattree:radix=32,levels=4's all-reduce: 26 s to 41 s). The
// device-step estimate refuses it in the time a small run takes; a 4096-chip
// fat tree, the docs' largest example, still runs.
TEST(CollectiveCliTest, CollectivesOfTooManyDeviceStepsAreRefusedUpFront) {
  const std::vector<std::string> big = {"collective", "--op", "all-reduce", "--bytes", "64MiB",
                                        "--chip", "tpu-v5e", "--topology",
                                        "fattree:radix=32,levels=4"};
  const auto start = std::chrono::steady_clock::now();
  const RunResult refused = Tpusim(big);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_EQ(refused.exit_code, 2) << Describe(refused);
  EXPECT_THAT(refused.err, HasSubstr("tpusim collective: error: fattree:radix=32,levels=4: 65536 "
                                     "chips, about 1048576 device-steps (devices x log2 of their "
                                     "group), about 34 s; pass --allow-large to run"))
      << Describe(refused);
  // --allow-large passes the estimate: the forced torus algorithm then fails
  // on the fat tree, before any flow is timed.
  std::vector<std::string> allowed = big;
  for (const std::string extra : {"--allow-large", "--algorithm", "torus"}) {
    allowed.push_back(extra);
  }
  const RunResult past = Tpusim(allowed);
  EXPECT_EQ(past.exit_code, 2) << Describe(past);
  EXPECT_THAT(past.err, Not(HasSubstr("--allow-large"))) << Describe(past);
  EXPECT_THAT(past.err, HasSubstr("torus")) << Describe(past);
  const RunResult normal = Tpusim({"collective", "--op", "all-reduce", "--bytes", "64MiB",
                                   "--chip", "tpu-v5e", "--topology", "fattree:radix=32,levels=3"});
  EXPECT_EQ(normal.exit_code, 0) << Describe(normal);
  EXPECT_EQ(normal.err, "") << Describe(normal);
}

TEST(CollectiveCliTest, SizesOver1024TiBAreRefusedNotWrappedOrLoopedOn) {
  // 2^62 once reported 0.00 us ("no data moves"); a sweep to it doubled past
  // INT64_MAX and never ended.
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{"--bytes", "4611686018427387904"},
        {"--sweep", "1:4611686018427387904"},
        {"--sweep", "1GiB:9223372036854775807"}}) {
    const RunResult r = AllReduceOn4x4(extra);
    EXPECT_EQ(r.exit_code, 2) << Describe(r);
    EXPECT_THAT(r.err, HasSubstr("': at most 1024TiB (1125899906842624 bytes)")) << Describe(r);
  }
  const RunResult largest = AllReduceOn4x4({"--sweep", "512TiB:1125899906842624", "-p",
                                            "ici.efficiency_percent=100", "-p",
                                            "ici.collective_latency=0us"});
  EXPECT_EQ(largest.exit_code, 0) << Describe(largest);
  EXPECT_THAT(largest.out, HasSubstr(" 1125899906842624 12509998964.92 ")) << Describe(largest);
}

TEST(CollectiveCliTest, ADeviceInTwoGroupsOrTwiceInOneIsAnError) {
  const RunResult twice = AllReduceOn4x4({"--bytes", "1MiB", "--groups", "0,1,1;2,3"});
  EXPECT_EQ(twice.exit_code, 2) << Describe(twice);
  EXPECT_THAT(twice.err, HasSubstr("--groups '0,1,1;2,3': device 1 appears twice in group 0"));
  const RunResult overlap = AllReduceOn4x4({"--bytes", "1MiB", "--groups", "0,1;2,1"});
  EXPECT_EQ(overlap.exit_code, 2) << Describe(overlap);
  EXPECT_THAT(overlap.err, HasSubstr("--groups '0,1;2,1': device 1 is in groups 0 and 1"));
}

// Groups of unequal sizes were timed and described as "2 groups of 2".
TEST(CollectiveCliTest, GroupsOfUnequalSizesAreAnError) {
  const RunResult r = AllReduceOn4x4({"--bytes", "1MiB", "--groups", "0,1;2"});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("tpusim collective: error: --groups '0,1;2': group 0 has 2 devices "
                               "but group 1 has 1; every group needs the same number"));
  const RunResult later = AllReduceOn4x4({"--bytes", "1MiB", "--groups", "0,1;2,3;4,5,6"});
  EXPECT_EQ(later.exit_code, 2) << Describe(later);
  EXPECT_THAT(later.err, HasSubstr("group 0 has 2 devices but group 2 has 3"));
}

TEST(CollectiveCliTest, TpuWraparoundTakesTheChipsRuleAsExecDoes) {
  const RunResult r = Tpusim({"collective", "--op", "all-reduce", "--bytes", "1MiB", "--chip",
                             "tpu-v4", "--topology", "torus:16x8,wraparound=tpu"});
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_THAT(r.err, Not(HasSubstr("ApplyTpuWraparound"))) << Describe(r);
}

// What only the built network can refuse is still located in the file, for
// `collective` as for `exec` (one LoadTopologyOption, one Topology::Build).
TEST(CollectiveCliTest, TopologyFileBuildErrorsNameFileLineColumn) {
  const ScratchDir dir;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"kind: mesh\ndims: [4, 4]\nfaults:\n  - {link: [0, 5]}\n",
       ":4:12: error: topology.faults[0].link: no link joins nodes 0 and 5"},
      {"kind: mesh\ndims: [4, 4]\nfaults:\n  - {chip: 99}\n",
       ":4:12: error: topology.faults[0].chip: chip 99 does not exist (0..15)"},
      {"kind: graph\nchips: 3\nedges: [[0, 1], [1, 2], [1, 0]]\n",
       ":3:25: error: topology.edges[2]: [1, 0] is listed twice"},
      {"kind: graph\nchips: 4\nedges: [[0, 1], [2, 3]]\n",
       ":3:8: error: topology.edges: graph is disconnected"},
      {"kind: mesh\ndims: [4, 4]\ndevice_assignment: [0, 1, 2]\n",
       ":3:20: error: topology.device_assignment: has 3 entries for 16 chips"},
      {"kind: mesh\ndims: [4, 4]\nslow_devices: [{device: 16, factor: 2}]\n",
       ":3:25: error: topology.slow_devices[0].device: device 16 does not exist (0..15)"},
      {"kind: switch\nchips: 16777217\n", ":2:8: error: topology.chips: the switch has 16777217"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string file = dir / ("t" + std::to_string(i) + ".yaml");
    WriteText(file, cases[i].first);
    for (const std::string command : {"collective", "exec"}) {
      std::vector<std::string> args = {command, "--chip", "tpu-v5e", "--topology", file};
      if (command == "exec") {
        args.push_back(std::string(TPUSIM_SOURCE_DIR) + "/scenarios/hlo/add_f32.hlo");
      } else {
        args.insert(args.end(), {"--op", "all-reduce", "--bytes", "1KiB"});
      }
      const RunResult r = Tpusim(args);
      EXPECT_EQ(r.exit_code, 2) << Describe(r);
      EXPECT_THAT(r.err, HasSubstr(file + cases[i].second)) << Describe(r);
    }
  }
}

}  // namespace
}  // namespace tpusim::test
