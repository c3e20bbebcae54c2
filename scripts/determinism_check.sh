#!/usr/bin/env bash
# Bit determinism across builds (issue 3): runs a fixed set of modules through
# `tpusim exec` with seeded inputs, with every given tpusim binary (CI gives
# GCC's -O2 build and clang's ASan one), the first one twice, and requires
# byte-identical output files and summary tables (which hold a checksum per
# output).
#
# Usage: scripts/determinism_check.sh CORPUS_DIR TPUSIM [TPUSIM...]
# Environment: TPUSIM_JOBS, the checks run at once (default 2).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[[ $# -ge 2 ]] || { echo "usage: $0 CORPUS_DIR TPUSIM [TPUSIM...]" >&2; exit 2; }
corpus="$1"
shift

# Modules that run in seconds even instrumented and between them exercise dot
# and convolution at every precision, transcendental math, reductions, sort,
# gather/scatter, while loops, the seeded inputs of every common type, and
# SPMD programs whose devices run on threads and meet in collectives.
modules=(
  "$root/scenarios/hlo/mlp_bf16.hlo"
  "$corpus/e2e_all_to_all_dot_np4.hlo"
  "$corpus/e2e_reduce_scatter_while.hlo"
  "$corpus/import_async_collectives_allreduce.hlo"
  "$corpus/fully_connected_reference_model.hlo"
  "$corpus/gpu_triton_gemm_fusion.hlo"
  "$corpus/hlo_import_all_ops.hlo"
  "$corpus/jax_depthwise_conv_bf16.hlo"
  "$corpus/jax_dynamic_slice_loop_bf16.hlo"
  "$corpus/jax_mha_block_bf16.hlo"
  "$corpus/jax_scan_while_stackframes.hlo"
  "$corpus/jax_topk_logits.hlo"
  "$corpus/sort_variadic_f64.hlo"
  "$corpus/tf_rng_tensorarray_while_send_conditional.hlo"
  "$corpus/torchxla_reduce_window_synctensors.hlo"
)

work="$(mktemp -d "${TMPDIR:-/tmp}/tpusim_determinism.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# run LABEL BINARY MODULE NUMERICS: outputs in $work/LABEL/, table in $work/LABEL.txt.
run() {
  local label="$1" binary="$2" module="$3" numerics="$4"
  if ! "$binary" exec "$module" --inputs seed:3 --numerics "$numerics" --out "$work/$label" \
    >"$work/$label.txt" 2>"$work/$label.err"; then
    echo "determinism_check: FAIL: $binary exec $module failed:" >&2
    cat "$work/$label.err" >&2
    exit 1
  fi
}

# check MODULE NUMERICS BINARY...: runs the module with each binary (the first
# twice) and compares every run with the first; prints its verdict and fails
# on a mismatch or a failed run.
check() {
  local module="$1" numerics="$2"
  shift 2
  local name labels=() i=0 label mismatches=0
  name="$(basename "$module" .hlo)"
  run "$name.$numerics.ref" "$1" "$module" "$numerics"
  run "$name.$numerics.again" "$1" "$module" "$numerics"
  labels=("$name.$numerics.again")
  for binary in "${@:2}"; do
    i=$((i + 1))
    run "$name.$numerics.b$i" "$binary" "$module" "$numerics"
    labels+=("$name.$numerics.b$i")
  done
  for label in "${labels[@]}"; do
    if ! cmp -s "$work/$name.$numerics.ref.txt" "$work/$label.txt" ||
      ! diff -r -q "$work/$name.$numerics.ref" "$work/$label" >/dev/null; then
      echo "determinism_check: FAIL: $name --numerics $numerics: $label differs from the first run"
      diff "$work/$name.$numerics.ref.txt" "$work/$label.txt" || true
      mismatches=$((mismatches + 1))
    fi
  done
  [[ $mismatches -eq 0 ]] || return 1
  echo "determinism_check: ok: $name --numerics $numerics ($(($# + 1)) runs identical)"
}

# TPUSIM_JOBS checks at a time (each runs its binaries one after another); the
# verdicts are printed in the order of the list.
parallel="${TPUSIM_JOBS:-2}"
pids=()
logs=()
for module in "${modules[@]}"; do
  for numerics in tpu ieee; do
    while (($(jobs -rp | wc -l) >= parallel)); do wait -n || true; done
    logs+=("$work/$(basename "$module" .hlo).$numerics.log")
    check "$module" "$numerics" "$@" >"${logs[-1]}" 2>&1 &
    pids+=($!)
  done
done
failures=0
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || failures=$((failures + 1))
  cat "${logs[$i]}"
done
[[ $failures -eq 0 ]] || { echo "determinism_check: $failures check(s) failed" >&2; exit 1; }
echo "determinism_check: all ${#modules[@]} modules bit-identical across $(($# + 1)) runs"
