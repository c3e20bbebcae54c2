// Speed and memory of the flow-level link model (issue 5, point 5): the
// building blocks of a 1 GiB all-reduce on 4096 chips, run through
// ici::FlowNetwork::Run (routing included).
//
//   <build>/bin/ici_flow_bench
//
// - RingStep: every chip sends 1 GiB / chips to its x+ and its x- neighbour
//   (one step of a bidirectional ring), 2 x chips flows.
// - Permutation: every chip sends 1 GiB / chips to a chip drawn by a seeded
//   random permutation: long routes, many shared links, many distinct
//   finish times (events).
// Topologies: tori from 16 to 4096 chips (4x4, 4x4x4, 8x8x4, 16x8x8,
// 16x16x16) and fat trees: radix 8 with 2, 3, 4 levels (16, 64, 256 chips),
// radix 16 with 4 levels and radix 128 with 2 levels (4096 chips each). On a
// fat tree the ring step's neighbours are chip ids c+1 and c-1.
// Counters: flows, events (rate recomputations), simulated time in us, and
// the process's peak resident set in MiB (getrusage: the peak so far, so read
// it in the order the benchmarks run, smallest first).
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/arch/chip_config.h"
#include "sim/arch/topology_config.h"
#include "sim/ici/flow_network.h"
#include "sim/ici/routing.h"
#include "sim/ici/topology.h"

namespace tpusim::ici {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

/// TPU v5p-like links: 90 GB/s one-way, 1 us per hop, 6 links per chip.
arch::IciConfig Ici() {
  return arch::IciConfig{6, BytesPerSecond(90'000'000'000), Picoseconds(1'000'000), 100, {}};
}

Topology MustBuild(const std::string& text) {
  StatusOr<arch::TopologyConfig> config = arch::ParseTopologyShortForm(text);
  if (!config.ok()) std::abort();
  StatusOr<Topology> topology = Topology::Build(*config, Ici());
  if (!topology.ok()) std::abort();
  return std::move(topology).value();
}

std::vector<Flow> RingStep(const Topology& t) {
  std::vector<Flow> flows;
  const int64_t bytes = kGiB / t.chip_count();
  for (NodeId c = 0; c < t.chip_count(); ++c) {
    for (bool positive : {true, false}) {
      Flow f;
      f.src = c;
      const NodeId n = static_cast<NodeId>(t.chip_count());
      // Grid: the x neighbour (with wraparound); otherwise the next chip id.
      f.dst = t.grid().dims.empty() ? (c + (positive ? 1 : n - 1)) % n
                                    : t.links()[static_cast<size_t>(t.GridLink(c, 0, positive))].to;
      f.bytes = bytes;
      flows.push_back(f);
    }
  }
  return flows;
}

/// A fixed permutation (Fisher-Yates with a 64-bit LCG), no fixed points
/// removed: a chip may send to itself, which costs nothing.
std::vector<Flow> Permutation(const Topology& t) {
  std::vector<NodeId> to(static_cast<size_t>(t.chip_count()));
  for (size_t i = 0; i < to.size(); ++i) to[i] = static_cast<NodeId>(i);
  uint64_t state = 42;
  for (size_t i = to.size() - 1; i > 0; --i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    std::swap(to[i], to[(state >> 33) % (i + 1)]);
  }
  std::vector<Flow> flows;
  for (NodeId c = 0; c < t.chip_count(); ++c) {
    Flow f;
    f.src = c;
    f.dst = to[static_cast<size_t>(c)];
    f.bytes = kGiB / t.chip_count();
    f.flow_key = static_cast<uint64_t>(c);
    flows.push_back(f);
  }
  return flows;
}

double PeakRssMiB() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

void RunFlows(benchmark::State& state, const std::string& topology_text, bool ring_step) {
  const Topology topology = MustBuild(topology_text);
  const std::vector<Flow> flows = ring_step ? RingStep(topology) : Permutation(topology);
  FlowNetworkResult last;
  for (auto _ : state) {
    const Router router(topology);  // fresh: route caches are part of the cost
    const FlowNetwork network(topology, router);
    StatusOr<FlowNetworkResult> result = network.Run(flows);
    if (!result.ok()) {
      state.SkipWithError(result.status().message().c_str());
      return;
    }
    last = std::move(result).value();
    benchmark::DoNotOptimize(last.end);
  }
  state.counters["chips"] = static_cast<double>(topology.chip_count());
  state.counters["flows"] = static_cast<double>(flows.size());
  state.counters["events"] = static_cast<double>(last.rate_recomputations);
  state.counters["sim_us"] = static_cast<double>(last.end.value()) / 1e6;
  state.counters["peak_rss_MiB"] = PeakRssMiB();
}

void RegisterAll() {
  const std::vector<std::string> tori = {"torus:4x4", "torus:4x4x4", "torus:8x8x4", "torus:16x8x8",
                                         "torus:16x16x16"};
  for (const std::string& t : tori) {
    benchmark::RegisterBenchmark(("RingStep/" + t).c_str(), RunFlows, t, true)
        ->Unit(benchmark::kMillisecond);
  }
  for (const std::string& t : tori) {
    benchmark::RegisterBenchmark(("Permutation/" + t).c_str(), RunFlows, t, false)
        ->Unit(benchmark::kMillisecond);
  }
  const std::vector<std::string> fat_trees = {
      "fattree:radix=8,levels=2", "fattree:radix=8,levels=3", "fattree:radix=8,levels=4",
      "fattree:radix=16,levels=4", "fattree:radix=128,levels=2"};
  for (const std::string& t : fat_trees) {
    benchmark::RegisterBenchmark(("RingStep/" + t).c_str(), RunFlows, t, true)
        ->Unit(benchmark::kMillisecond);
  }
  for (const std::string& t : fat_trees) {
    benchmark::RegisterBenchmark(("Permutation/" + t).c_str(), RunFlows, t, false)
        ->Unit(benchmark::kMillisecond);
  }
}

}  // namespace
}  // namespace tpusim::ici

int main(int argc, char** argv) {
  tpusim::ici::RegisterAll();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
