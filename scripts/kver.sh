#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Print the kernel version the VM tests boot and the module is built for:
# $KVER if set, else the one of $KDIR if set, else the default kernel of
# the matrix: the newest Debian 12 6.1 kernel (linux-image-amd64) that has
# both /boot/vmlinuz-V and /lib/modules/V/build, else the newest of any
# version that has both. `kver.sh --all` lists every such V, oldest first.
set -eu
if [ -n "${KVER:-}" ] && [ "${1:-}" != --all ]; then
	echo "$KVER"
	exit 0
fi
if [ -n "${KDIR:-}" ] && [ "${1:-}" != --all ]; then
	# /lib/modules/V/build, else the release the tree was configured as.
	v=$(basename "$(dirname "${KDIR%/}")")
	[ -f "/boot/vmlinuz-$v" ] ||
		v=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"$/\1/p' \
			"$KDIR/include/generated/utsrelease.h" 2>/dev/null || true)
	[ -n "$v" ] && { echo "$v"; exit 0; }
fi
all=
for v in $(ls /boot 2>/dev/null | sed -n 's/^vmlinuz-//p' | sort -V); do
	[ -d "/lib/modules/$v/build" ] && all="$all $v"
done
if [ "${1:-}" = --all ]; then
	for v in $all; do echo "$v"; done
	exit 0
fi
best=
for v in $all; do best=$v; done
for v in $all; do
	case "$v" in 6.1.*) best6_1=$v ;; esac
done
best=${best6_1:-$best}
[ -n "$best" ] || { echo "kver: no kernel with both /boot/vmlinuz-V and /lib/modules/V/build (make deps)" >&2; exit 1; }
echo "$best"
