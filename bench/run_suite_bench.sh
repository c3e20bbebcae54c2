#!/usr/bin/env bash
# `tpusim run` throughput: generates a 50-scenario suite of small modules in a
# temporary directory (the example add and MLP modules in values, timing and
# full modes), writes its goldens, then times `tpusim run -j 2` over it; and
# 50 trivial scenarios with -j 1 to measure the per-scenario process overhead
# (spawn, load, run a 32-element add, write the result, reap).
#   usage: bench/run_suite_bench.sh [BUILD_DIR]   (default: build)
# docs/performance.md records its output.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tpusim="$(cd "${1:-$root/build}" && pwd)/bin/tpusim"
[[ -x "$tpusim" ]] || { echo "run_suite_bench.sh: $tpusim not found" >&2; exit 2; }
work="$(mktemp -d "${TMPDIR:-/tmp}/tpusim_run_bench.XXXXXX")"
trap 'rm -rf "$work"' EXIT

mkdir -p "$work/suite" "$work/trivial"
for i in $(seq 0 49); do
  case $((i % 3)) in
    0) printf 'module: %s\nmode: values\ninputs: {seed: %d}\nchecks:\n  outputs: {golden: true, exact: true}\n' \
         "$root/scenarios/hlo/add_f32.hlo" "$i" > "$work/suite/s$i.yaml" ;;
    1) printf 'module: %s\nchip: tpu-v5e\nmode: timing\nchecks:\n  cycles: {golden: true, tolerance: 1%%}\n' \
         "$root/scenarios/hlo/mlp_bf16.hlo" > "$work/suite/s$i.yaml" ;;
    2) printf 'module: %s\nchip: tpu-v5e\nmode: full\ninputs: {seed: %d}\nchecks:\n  outputs: {golden: true, rtol: 1e-2}\n  cycles: {golden: true, tolerance: 1%%}\n' \
         "$root/scenarios/hlo/mlp_bf16.hlo" "$i" > "$work/suite/s$i.yaml" ;;
  esac
  printf 'module: %s\nmode: values\n' "$root/scenarios/hlo/add_f32.hlo" > "$work/trivial/t$i.yaml"
done

# shellcheck source=bench/bench_util.sh
source "$root/bench/bench_util.sh"

"$tpusim" run "$work/suite" -j 2 --golden-dir "$work/golden" --update-golden >/dev/null 2>&1
suite=$(seconds "$tpusim" run "$work/suite" -j 2 --golden-dir "$work/golden")
trivial=$(seconds "$tpusim" run "$work/trivial" -j 1 --golden-dir "$work/golden")
exec_one=$(seconds "$tpusim" exec "$root/scenarios/hlo/add_f32.hlo")
printf '50-scenario suite, -j 2:              %6.2f s\n' "$suite"
printf '50 trivial scenarios, -j 1:           %6.2f s  (%.1f ms per scenario)\n' "$trivial" \
  "$(echo "$trivial * 1000 / 50" | bc -l)"
printf 'one tpusim exec of the same module:   %6.1f ms\n' "$(echo "$exec_one * 1000" | bc -l)"
