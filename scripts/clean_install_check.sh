#!/usr/bin/env bash
# Installs the Debian package on a clean Debian 12 and runs it there, as a new
# user would: `apt-get install ./tpusim_*.deb` must pull every library the
# binary needs from Debian, and the installed tpusim must find its presets and
# validation suite from any directory and pass the example suites.
#
#   sudo scripts/clean_install_check.sh [BUILD_DIR]    (default: build)
#
# The clean Debian is a debootstrap minbase chroot in a temporary directory
# (about 40 s and 100 MB from deb.debian.org; removed at the end). Needs root
# and the network; it is a release check run by hand (docs/cli.md,
# "Installing"), not part of scripts/test.sh, whose tests extract the package
# without installing it (tests/integration/install_test.cc).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
[[ $(id -u) == 0 ]] || { echo "clean_install_check: needs root (debootstrap, chroot)" >&2; exit 2; }
command -v debootstrap >/dev/null || apt-get install -y --no-install-recommends debootstrap

work="$(mktemp -d)"
chroot_dir="$work/debian"
cleanup() {
  mountpoint -q "$chroot_dir/proc" && umount "$chroot_dir/proc"
  rm -rf "$work"
}
trap cleanup EXIT

(cd "$build" && cpack -G DEB -B "$work/package" >/dev/null)
deb="$(ls "$work"/package/tpusim_*_amd64.deb)"

debootstrap --variant=minbase bookworm "$chroot_dir" http://deb.debian.org/debian >/dev/null
cp /etc/resolv.conf "$chroot_dir/etc/"
mount -t proc proc "$chroot_dir/proc"
cp "$deb" "$chroot_dir/root/"
mkdir -p "$chroot_dir/home/user"
cp -r "$root/scenarios" "$root/golden" "$chroot_dir/home/user/"

in_chroot() { chroot "$chroot_dir" /bin/sh -c "$1"; }
in_chroot "apt-get update -q >/dev/null && apt-get install -y -q /root/$(basename "$deb") >/dev/null"
# From directories that are neither the prefix nor a checkout.
in_chroot "cd /tmp && tpusim --version && tpusim presets >/dev/null"
in_chroot "cd / && tpusim validate -j 2 >/dev/null"
in_chroot "cd /home/user && tpusim run scenarios/ -j 2 2>/dev/null >run.txt; rc=\$?; tail -1 run.txt; exit \$rc"
echo "clean_install_check: $(basename "$deb") installs and runs on a clean Debian 12"
