#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Print the kernel version the VM tests boot and the module is built for:
# $KVER if set, else the one of $KDIR if set, else the newest version V
# that has both /boot/vmlinuz-V and /lib/modules/V/build.
set -eu
if [ -n "${KVER:-}" ]; then
	echo "$KVER"
	exit 0
fi
if [ -n "${KDIR:-}" ]; then
	# /lib/modules/V/build, else the release the tree was configured as.
	v=$(basename "$(dirname "${KDIR%/}")")
	[ -f "/boot/vmlinuz-$v" ] ||
		v=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"$/\1/p' \
			"$KDIR/include/generated/utsrelease.h" 2>/dev/null || true)
	[ -n "$v" ] && { echo "$v"; exit 0; }
fi
best=
for v in $(ls /boot 2>/dev/null | sed -n 's/^vmlinuz-//p' | sort -V); do
	[ -d "/lib/modules/$v/build" ] && best=$v
done
[ -n "$best" ] || { echo "kver: no kernel with both /boot/vmlinuz-V and /lib/modules/V/build (make deps)" >&2; exit 1; }
echo "$best"
