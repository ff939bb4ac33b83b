#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Install the Debian packages that building and testing kdbus needs, but
# only those that are missing: when everything is there this runs no apt
# command at all and returns in a few milliseconds.
#
# Also makes sure at least one kernel has both its image (/boot/vmlinuz-V)
# and its build tree (/lib/modules/V/build): the VM harness boots that
# kernel with a module built against those headers.

set -euo pipefail

# The kernel matrix (README "Kernels"): Debian 12's 6.1, and the 6.12 LTS
# and 6.12 PREEMPT_RT kernels from the same archive, each with headers.
KERNEL_PKGS=(linux-image-amd64 linux-headers-amd64
	     linux-image-6.12-amd64 linux-headers-6.12-amd64
	     linux-image-6.12-rt-amd64 linux-headers-6.12-rt-amd64)
PKGS=(build-essential qemu-system-x86 "${KERNEL_PKGS[@]}"
      busybox-static kmod cpio xz-utils zstd sparse linux-source clang
      libclang-rt-14-dev man-db groff-base libexpat1-dev
      # the D-Bus world the proxy and the benchmarks are tested against
      dbus-bin dbus-daemon dbus-broker libglib2.0-bin python3-dbus python3-gi
      systemd gnuplot-nox linux-perf)

missing=()
for p in "${PKGS[@]}"; do
	st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$st" = installed ] || missing+=("$p")
done

# Newest kernel version that has both an image and a build tree.
matched_kver() {
	local v best=
	for v in $(ls /boot 2>/dev/null | sed -n 's/^vmlinuz-//p' | sort -V); do
		[ -d "/lib/modules/$v/build" ] && best=$v
	done
	echo "$best"
}

updated=
apt_install() {
	local SUDO=
	if [ "$(id -u)" != 0 ]; then
		command -v sudo >/dev/null || { echo "deps: need root or sudo to install: $*" >&2; return 1; }
		SUDO=sudo
	fi
	if [ -z "$updated" ]; then
		echo "deps: apt-get update" >&2
		$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q >&2
		updated=1
	fi
	echo "deps: apt-get install $*" >&2
	$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
		--no-install-recommends "$@" >&2
}

[ ${#missing[@]} -eq 0 ] || apt_install "${missing[@]}"

if [ -z "$(matched_kver)" ]; then
	# An image without its headers (e.g. the linux-image-amd64 metapackage
	# moved on but linux-headers-amd64 was held back, or the running
	# kernel was installed alone): first try the headers of the newest
	# image, else pull a matching image+headers pair through the
	# metapackages.
	newest=$(ls /boot 2>/dev/null | sed -n 's/^vmlinuz-//p' | sort -V | tail -n1)
	if [ -n "$newest" ] && apt_install "linux-headers-$newest"; then
		:
	else
		apt_install linux-image-amd64 linux-headers-amd64
	fi
	if [ -z "$(matched_kver)" ]; then
		echo "deps: no kernel has both /boot/vmlinuz-V and /lib/modules/V/build" >&2
		exit 1
	fi
fi
exit 0
