#!/usr/bin/env bash
# Regenerates the validation scatter shown in docs/validation.md
# (docs/images/validation-scatter.svg) from `tpusim validate --report`, and
# prints the family table to paste into docs/validation.md.
#
# Usage: scripts/validation_docs.sh [TPUSIM]   (default build/bin/tpusim)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tpusim="${1:-$root/build/bin/tpusim}"
report="$(mktemp -d "${TMPDIR:-/tmp}/tpusim_validation.XXXXXX")"
trap 'rm -rf "$report"' EXIT
# Exit 1 (a family over its bound) still writes the report.
status=0
"$tpusim" validate --worst 0 --report "$report" || status=$?
[[ $status -le 1 ]] || exit "$status"
# The page holds one chart: the scatter, from its <svg> line to </svg>.
awk '/^<svg /{on=1} on{print} /^<\/svg>/{on=0}' "$report/index.html" \
  >"$root/docs/images/validation-scatter.svg"
echo "wrote docs/images/validation-scatter.svg"
