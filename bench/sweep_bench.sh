#!/usr/bin/env bash
# `tpusim sweep` throughput: a 200-point collective study (the 16-chip
# gradient all-reduce of scenarios/allreduce_topology on 4 topologies x 5 link
# bandwidths x 10 hop latencies, timing mode) run at -j 1 and at -j 2, each
# into a fresh results directory; prints points per second. The time includes
# loading and checking the whole study, one child process per point, the
# fsynced appends, the final sorted rewrite and the plots.
#   usage: bench/sweep_bench.sh [BUILD_DIR]   (default: build)
# docs/performance.md records its output.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tpusim="$(cd "${1:-$root/build}" && pwd)/bin/tpusim"
[[ -x "$tpusim" ]] || { echo "sweep_bench.sh: $tpusim not found" >&2; exit 2; }
work="$(mktemp -d "${TMPDIR:-/tmp}/tpusim_sweep_bench.XXXXXX")"
trap 'rm -rf "$work"' EXIT

cat > "$work/bench.study.yaml" <<STUDY
name: sweep-bench
base: $root/scenarios/allreduce_topology/torus_4x4.yaml
grid:
  topology: [torus:4x4, torus:2x8, "fattree:radix=8,levels=2", "fattree:radix=8,levels=2,oversubscription=2"]
  chip.overrides.ici.bandwidth_per_link_per_direction: [45GB/s, 40GB/s, 36GB/s, 30GB/s, 20GB/s]
  chip.overrides.ici.hop_latency: [100ns, 200ns, 500ns, 1us, 2us, 3us, 4us, 5us, 8us, 10us]
plots:
  - {name: collective, kind: line, metric: collective_time_us, x: chip.overrides.ici.hop_latency, series: topology}
STUDY

# shellcheck source=bench/bench_util.sh
source "$root/bench/bench_util.sh"

for jobs in 1 2; do
  s=$(seconds "$tpusim" sweep "$work/bench.study.yaml" --out "$work/out$jobs" -j "$jobs")
  [[ $(wc -l < "$work/out$jobs/results.jsonl") -eq 200 ]] || { echo "sweep_bench.sh: not 200 points" >&2; exit 1; }
  printf '200-point study, -j %d: %6.2f s, %6.1f points/s\n' "$jobs" "$s" "$(echo "200 / $s" | bc -l)"
done
cmp -s "$work/out1/results.csv" "$work/out2/results.csv" ||
  { echo "sweep_bench.sh: -j 1 and -j 2 results differ" >&2; exit 1; }
