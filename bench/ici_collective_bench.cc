// Speed and memory of the collective layer at pod scale: one collective
// (default a 1 GiB all-reduce) per topology, each timed by Interconnect (flow
// construction, routing and the max-min flow network), with the wall time
// and the process's peak resident set so far. See docs/performance.md.
//
//   ici_collective_bench [--chip NAME] [--op OP] [--bytes SIZE] TOPOLOGY...
//
// TOPOLOGY is a short form (torus:16x16x16, fattree:radix=32,levels=3). Peak
// RSS only grows within a process: run one topology per invocation to read
// each one's own peak.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "sim/arch/preset_loader.h"
#include "sim/arch/topology_config.h"
#include "sim/base/units.h"
#include "sim/ici/interconnect.h"
#include "sim/ici/topology.h"

namespace {

int Fail(const std::string& message) {
  std::fprintf(stderr, "ici_collective_bench: %s\n", message.c_str());
  return 2;
}

double PeakRssMiB() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // Linux: kilobytes
}

}  // namespace

int main(int argc, char** argv) {
  namespace ici = tpusim::ici;
  std::string chip_name = "tpu-v4";
  std::string op = "all-reduce";
  std::string bytes_text = "1GiB";
  std::vector<std::string> topologies;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "--chip" || arg == "--op" || arg == "--bytes") && i + 1 < argc) {
      (arg == "--chip" ? chip_name : arg == "--op" ? op : bytes_text) = argv[++i];
    } else if (!arg.empty() && arg[0] != '-') {
      topologies.push_back(arg);
    } else {
      return Fail("usage: ici_collective_bench [--chip NAME] [--op OP] [--bytes SIZE] TOPOLOGY...");
    }
  }
  if (topologies.empty()) return Fail("give at least one topology, e.g. torus:16x16x16");
  auto chip = tpusim::arch::LoadChipPreset(chip_name, TPUSIM_MODELS_DIR, {});
  if (!chip.ok()) return Fail(chip.status().message());
  auto bytes = tpusim::ParseBytes(bytes_text);
  if (!bytes.ok()) return Fail(bytes.status().message());
  ici::CollectiveKind kind = ici::CollectiveKind::kAllReduce;
  for (const ici::CollectiveKind k : {ici::CollectiveKind::kAllReduce, ici::CollectiveKind::kAllGather,
                                      ici::CollectiveKind::kReduceScatter, ici::CollectiveKind::kAllToAll}) {
    if (ici::CollectiveKindName(k) == op) kind = k;
  }

  std::printf("%-28s %6s %-18s %14s %10s %10s %12s\n", "topology", "chips", "algorithm",
              "simulated_us", "busbw_GB/s", "wall_s", "peak_rss_MiB");
  for (const std::string& text : topologies) {
    auto config = tpusim::arch::ParseTopologyShortForm(text);
    if (!config.ok()) return Fail(config.status().message());
    const auto begin = std::chrono::steady_clock::now();
    auto interconnect = ici::Interconnect::Create(*config, *chip);
    if (!interconnect.ok()) return Fail(interconnect.status().message());
    const int64_t chips = (*interconnect)->topology().chip_count();
    ici::Collective collective;
    collective.kind = kind;
    collective.groups.emplace_back();
    for (int64_t d = 0; d < chips; ++d) collective.groups.back().push_back(d);
    collective.bytes = bytes->value();
    auto timed = (*interconnect)->Time(collective);
    if (!timed.ok()) return Fail(timed.status().message());
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    const double us = static_cast<double>(timed->duration.value()) * 1e-6;
    const double factor = kind == ici::CollectiveKind::kAllReduce ? 2.0 : 1.0;
    const double busbw = static_cast<double>(collective.bytes) / (us * 1e-6) * 1e-9 * factor *
                         static_cast<double>(chips - 1) / static_cast<double>(chips);
    std::printf("%-28s %6lld %-18s %14.1f %10.1f %10.3f %12.1f\n", text.c_str(),
                static_cast<long long>(chips), std::string(ici::AlgorithmName(timed->algorithm)).c_str(),
                us, busbw, wall, PeakRssMiB());
    std::printf("  %s\n", timed->explanation.c_str());
  }
  return 0;
}
