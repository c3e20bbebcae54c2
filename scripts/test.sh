#!/usr/bin/env bash
# The full test run CI does, from the repository root:
#   1. build/       Release (-O2), warnings as errors; ctest
#   2. build-asan/  clang, ASan + UBSan, warnings as errors; ctest (the RTL MXU
#                   at 8x8 and 16x16 only: the 128x128 model is the Release
#                   build's, too slow instrumented). -g1: line tables are all a
#                   sanitizer report needs, and full debug info makes this build
#                   a third slower. clang, not GCC: it compiles this build in
#                   two thirds of the time, and a second compiler checks that
#                   the code is standard C++ and clean of its warnings too
#   3.              scripts/determinism_check.sh requires the two binaries, GCC
#                   at -O2 and clang at -O1 with the sanitizers, to compute
#                   byte-identical outputs
#   4. build-fuzz/  clang + libFuzzer; four fuzzers, two at a time: the HLO
#                   parser (seeded with the corpus and tests/hlo/fuzz_seeds/,
#                   with structural mutations of its own), then the .npy
#                   reader (one file per element type and the small golden
#                   outputs); beside them the
#                   scenario loader (scenarios/, tests/harness/malformed_scenarios/),
#                   then the chip preset and topology loaders (models/, every
#                   YAML file of scenarios/ and tests/ with a topology, and the
#                   YAML and short forms in README.md and docs/). Each runs a
#                   fixed number of inputs from a fixed random seed: a CI run
#                   is reproducible, so what it finds (or does not) is the same
#                   on any machine, and a finding fails the run that introduced
#                   it rather than a later, unrelated one (clang is required:
#                   scripts/setup.sh installs it)
# Fails when the corpus of HLO modules is missing: it is the acceptance test.
#
# Environment: TPUSIM_CORPUS_DIR (default ../shared/corpus relative to the
# repository root), TPUSIM_JOBS (default 2), TPUSIM_FUZZ_RUNS (inputs for the
# HLO parser fuzzer, default 15000; the faster ones run a multiple of it: .npy
# 40x, scenarios 10x, presets and topologies 2x: each lane of two takes about
# 80 s on 2 cores), TPUSIM_FUZZ_SEED (default 1; any other value explores
# elsewhere, for a longer hunt by hand).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

jobs="${TPUSIM_JOBS:-2}"
fuzz_runs="${TPUSIM_FUZZ_RUNS:-15000}"
fuzz_seed="${TPUSIM_FUZZ_SEED:-1}"
corpus="${TPUSIM_CORPUS_DIR:-$root/../shared/corpus}"

die() {
  echo "test.sh: error: $*" >&2
  exit 1
}
# Each step's banner says how long the run has taken so far (the goal is 40 min on 2 cores).
step() { echo "=== test.sh: $* (at ${SECONDS} s) ==="; }

[[ -d "$corpus" ]] || die "corpus directory '$corpus' does not exist (set TPUSIM_CORPUS_DIR)"
corpus="$(cd "$corpus" && pwd)"
compgen -G "$corpus/*.hlo" >/dev/null || die "corpus directory '$corpus' has no .hlo files"

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:strict_string_checks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

step "Release build (build/)"
cmake -S . -B build -G Ninja \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" \
  -DTPUSIM_WERROR=ON -DTPUSIM_CORPUS_DIR="$corpus"
cmake --build build -j "$jobs"
ctest --test-dir build --output-on-failure -j "$jobs"

command -v clang++ >/dev/null && command -v clang >/dev/null ||
  die "clang not found; the ASan and fuzzer builds need it (run scripts/setup.sh)"
step "ASan + UBSan build with clang (build-asan/)"
CC=clang CXX=clang++ cmake -S . -B build-asan -G Ninja \
  -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" -DTPUSIM_WERROR=ON \
  -DTPUSIM_SANITIZE=ON -DTPUSIM_BENCH=OFF -DTPUSIM_CORPUS_DIR="$corpus" \
  -DTPUSIM_RTL_ARRAY_SIZES="8;16"
cmake --build build-asan -j "$jobs"
ctest --test-dir build-asan --output-on-failure -j "$jobs"

step "bit determinism across GCC -O2 and clang -O1 with ASan + UBSan"
scripts/determinism_check.sh "$corpus" build/bin/tpusim build-asan/bin/tpusim

step "libFuzzer build (build-fuzz/); fuzz_hlo_parser (${fuzz_runs} inputs), fuzz_npy ($((fuzz_runs * 40))), fuzz_scenario_loader ($((fuzz_runs * 10))) and fuzz_hardware_loaders ($((fuzz_runs * 2))), from seed ${fuzz_seed}"
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTPUSIM_FUZZ=ON -DTPUSIM_BENCH=OFF -DTPUSIM_RTL=OFF \
  -DTPUSIM_CORPUS_DIR="$corpus"
cmake --build build-fuzz -j "$jobs" \
  --target fuzz_hlo_parser fuzz_npy fuzz_scenario_loader fuzz_hardware_loaders npy_tool
seeds="$(mktemp -d "${TMPDIR:-/tmp}/tpusim_fuzz_seeds.XXXXXX")"
trap 'rm -rf "$seeds"' EXIT
mkdir "$seeds"/{hlo,npy,scenario,hardware}
cp "$corpus"/*.hlo tests/hlo/fuzz_seeds/*.hlo "$seeds/hlo"/
build-fuzz/bin/npy_tool samples "$seeds/npy"
find golden -name '*.npy' -size -8k -exec cp --backup=numbered {} "$seeds/npy"/ \;
find scenarios tests/harness/malformed_scenarios -name '*.yaml' -exec cp --backup=numbered {} "$seeds/scenario"/ \;
# Presets, then topologies: files that have one, the ```yaml blocks of docs/,
# each short form quoted in README.md and docs/, and a preset with a topology
# (the two documents fuzz_hardware_loaders splits at "---").
cp models/*.yaml models/test/*.yaml "$seeds/hardware"/
grep -rlaZ --include='*.yaml' topology scenarios tests |
  xargs -0 -I{} cp --backup=numbered {} "$seeds/hardware"/
awk -v dir="$seeds/hardware" '/^```yaml$/ { n++; out = dir "/docs_" n ".yaml"; next }
  /^```$/ { out = "" } out != "" { print > out }' docs/*.md
grep -oh '`\(torus\|mesh\|twisted\|fattree\|switch\|multislice\):[^`]*`' README.md docs/*.md |
  tr -d '`' | sort -u |
  while IFS= read -r form; do printf '%s' "$form" >"$seeds/hardware/${form//\//_}"; done
printf 'inherits: tpu-v4\nclock: 1GHz\n---\ntwisted:4x4x8\n' >"$seeds/hardware/preset_and_topology.yaml"
# Each fuzzer is single-threaded: two lanes of two run side by side, each
# fuzzer logging to build-fuzz/NAME.log, whose end (or, on a failure, more of
# it) is shown. New inputs go to the temporary seed copies; crash reproducers
# to build-fuzz/KIND-*. An input that takes over 10 s counts as a crash (a
# hang, in practice); a run that reaches 5 minutes stops there, however many
# inputs it has tried.
#
# A seed alone does not replay a run: libFuzzer rereads its corpus directory
# on a timer (-reload), and the comparisons it traces to steer mutations see
# pointers, which address randomisation moves. Without both (where the kernel
# lets setarch turn randomisation off), two runs from one seed are identical.
no_aslr=()
if setarch "$(uname -m)" -R true 2>/dev/null; then no_aslr=(setarch "$(uname -m)" -R); fi
fuzz() {
  local name="$1"
  local runs="$2"
  shift 2
  if "${no_aslr[@]}" "build-fuzz/bin/$name" -seed="$fuzz_seed" -runs="$runs" -reload=0 \
    -max_total_time=300 -timeout=10 -print_final_stats=1 "$@" >"build-fuzz/$name.log" 2>&1; then
    echo "--- $name passed; the end of build-fuzz/$name.log:"
    tail -n 12 "build-fuzz/$name.log"
  else
    echo "--- $name FAILED; the end of build-fuzz/$name.log:"
    tail -n 200 "build-fuzz/$name.log"
    return 1
  fi
}
fuzz_hlo() {
  fuzz fuzz_hlo_parser "$fuzz_runs" -dict=tests/hlo/fuzz_hlo.dict \
    -artifact_prefix="$root/build-fuzz/hlo-" "$seeds/hlo"
}
fuzz_npy() {
  fuzz fuzz_npy $((fuzz_runs * 40)) -dict=tests/value/fuzz_npy.dict \
    -artifact_prefix="$root/build-fuzz/npy-" "$seeds/npy"
}
fuzz_scenarios() {
  fuzz fuzz_scenario_loader $((fuzz_runs * 10)) -artifact_prefix="$root/build-fuzz/scenario-" \
    "$seeds/scenario"
}
fuzz_hardware() {
  fuzz fuzz_hardware_loaders $((fuzz_runs * 2)) -dict=tests/ici/fuzz_hardware.dict \
    -artifact_prefix="$root/build-fuzz/hardware-" "$seeds/hardware"
}
# Runs the fuzzers named, one after another, each whatever the one before found.
lane() {
  local failed=0
  for f in "$@"; do "$f" || failed=1; done
  return "$failed"
}
lane fuzz_hlo fuzz_npy &
first_lane=$!
lane fuzz_scenarios fuzz_hardware &
second_lane=$!
fuzz_failed=0
wait "$first_lane" || fuzz_failed=1
wait "$second_lane" || fuzz_failed=1
((fuzz_failed == 0)) || die "a fuzzer found a crash (reproducers in build-fuzz/)"

step "all passed"
