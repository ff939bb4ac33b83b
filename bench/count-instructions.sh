#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# count-instructions.sh [CALLS]: user-space instructions per call of a
# libkdbus method call (kdbus-bench-lib, client and service) and of the
# raw-ioctl synchronous call (kdbus-bench), counted by callgrind in the
# test VM; bench/count-instructions.py does the arithmetic, e.g.
#
#   vm/run -c "sh /host$PWD/bench/count-instructions.sh 1000"
#
# Counting does not depend on the host's load, which moves timed figures
# of the library by more than most changes to it (performance.md, "User-
# space instructions per call"). Needs the host's valgrind (apt-get
# install valgrind), run through chroot /host like the analysis of
# trace-segments.sh.

set -e
here=$(cd "$(dirname "$0")" && pwd)
calls=${1:-1000}

[ -x /host/usr/bin/valgrind ] || {
	echo "count-instructions: the host has no valgrind (apt-get install valgrind)" >&2
	exit 1
}
for d in proc sys dev tmp run; do mount --rbind /$d /host/$d; done
trap 'for d in run tmp dev sys proc; do umount -l /host/$d; done' EXIT
rm -f /tmp/cg.lib.* /tmp/cg.raw.*
cg="valgrind --tool=callgrind --trace-children=yes"
chroot /host $cg --callgrind-out-file=/tmp/cg.lib.%p "${here#/host}/kdbus-bench-lib" \
	--calls "$calls" >/dev/null 2>&1
chroot /host $cg --callgrind-out-file=/tmp/cg.raw.%p "${here#/host}/kdbus-bench" \
	--only kdbus_sync --sizes 8 --iterations "$calls" --rounds 1 --pin none >/dev/null 2>&1
chroot /host python3 "${here#/host}/count-instructions.py" /tmp/cg.lib.* /tmp/cg.raw.*
