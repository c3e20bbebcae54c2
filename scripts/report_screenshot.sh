#!/usr/bin/env bash
# Regenerates docs/images/run-report.png, the screenshot of the HTML report that
# `tpusim run scenarios/ --report DIR` writes, taken by headless Chromium.
#
# Usage: scripts/report_screenshot.sh [BUILD_DIR]   (default: build)
# Needs Debian's chromium (scripts/setup.sh --docs installs it); not part of CI.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-build}"
tpusim="$root/$build/bin/tpusim"
[[ -x "$tpusim" ]] || { echo "report_screenshot.sh: error: $tpusim not built" >&2; exit 1; }
command -v chromium >/dev/null ||
  { echo "report_screenshot.sh: error: chromium not found; run scripts/setup.sh --docs" >&2; exit 1; }

work="$(mktemp -d "${TMPDIR:-/tmp}/tpusim_report.XXXXXX")"
trap 'rm -rf "$work"' EXIT
# The suites' exit status is theirs to report; the screenshot is of whatever ran.
(cd "$root" && "$tpusim" run scenarios/ -j 2 --report "$work/report") || true
mkdir -p "$root/docs/images"
# --no-sandbox: Chromium refuses to run as root with its sandbox on.
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1200,3400 \
  --screenshot="$root/docs/images/run-report.png" "file://$work/report/index.html"
echo "report_screenshot.sh: wrote docs/images/run-report.png"
