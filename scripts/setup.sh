#!/usr/bin/env bash
# Installs everything tpusim needs to build and test, from Debian 12 packages.
# Idempotent: when every package is already installed it changes nothing.
# Runs apt-get directly as root, through sudo otherwise.
# Usage: scripts/setup.sh [--docs]
set -euo pipefail

packages=(
  build-essential cmake ninja-build g++
  clang libclang-rt-14-dev                      # the ASan+UBSan and libFuzzer builds
  libsystemc-dev verilator                      # timing kernel, RTL MXU tile
  libyaml-cpp-dev nlohmann-json3-dev libcli11-dev
  libboost-dev libboost-graph-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libxml2-utils                                 # xmllint: run_test validates JUnit reports against tests/harness/junit.xsd
  python3 python3-numpy libopenblas-dev        # reference numerics and plots; bench/gemm_bench's yardstick
  python3-pytest                                # the Python package's tests (python/tpusim, docs/python.md)
  openmpi-bin libopenmpi-dev                    # `mpirun -n K tpusim sweep` (docs/sweeps.md)
)
# --docs: also Chromium, which scripts/report_screenshot.sh drives headless to
# picture the HTML report for docs/ (CI does not need it).
if [[ "${1:-}" == "--docs" ]]; then
  packages+=(chromium)
elif [[ $# -gt 0 ]]; then
  echo "usage: scripts/setup.sh [--docs]" >&2
  exit 2
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
if ((${#missing[@]} == 0)); then
  echo "setup.sh: all ${#packages[@]} packages are installed"
  exit 0
fi

if ((EUID == 0)); then
  sudo=()
elif command -v sudo >/dev/null; then
  sudo=(sudo)
else
  echo "setup.sh: error: not root and sudo is not available; install as root: ${missing[*]}" >&2
  exit 1
fi

echo "setup.sh: installing ${missing[*]}"
"${sudo[@]}" apt-get update
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y --no-install-recommends "${packages[@]}"
