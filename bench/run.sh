#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# bench/run.sh [kdbus-bench options]: build the benchmark and the module if
# needed, boot the test VM through vm/run (kdbus.ko loaded, kdbusfs mounted)
# and run bench/kdbus-bench there, so kdbus, the AF_UNIX socketpair and
# memcpy are measured in the same (emulated) machine.
#
#   bench/run.sh                    the table
#   bench/run.sh --json >out.json   JSON on stdout (harness chatter on stderr)
#   bench/run.sh --time 1           longer cells
#
# Environment: KDBUS_VM_ACCEL (default tcg), KDBUS_VM_SMP (default 2) and
# the other vm/run variables; KDBUS_BENCH_NOBUILD=1 skips the builds.

set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd -P)
repo=$(dirname "$here")

if [ -z "${KDBUS_BENCH_NOBUILD:-}" ]; then
	# the module through the top-level Makefile: it picks the kernel the
	# VM boots (KVER/KDIR) and installs missing packages first
	make -s -C "$repo" kernel >&2
	make -s -C "$here" >&2
fi
[ -x "$here/kdbus-bench" ] || { echo "bench: $here/kdbus-bench not built" >&2; exit 2; }
[ -f "$repo/kernel/kdbus.ko" ] || { echo "bench: $repo/kernel/kdbus.ko not built" >&2; exit 2; }

accel=${KDBUS_VM_ACCEL:-tcg}
smp=${KDBUS_VM_SMP:-2}
case "$accel" in
tcg) env="qemu-system-x86_64 TCG (emulated CPU), $smp vCPUs" ;;
*) env="qemu-system-x86_64 $accel, $smp vCPUs" ;;
esac

# one boot for all: the unicast table (with the caller's options), then
# the broadcast cost and the bulk (VEC vs memfd) throughput table
# (human-readable only; skipped with --json)
case " $* " in
*" --json "*) exec "$repo/vm/run" -- "/host$here/kdbus-bench" --env "$env" "$@" ;;
esac
# The guest's sh runs the command text: quote every argument for it
# (printf %q is bash's; with no arguments it would add one empty word).
q=
[ $# -eq 0 ] || q=$(printf ' %q' "$@")
exec "$repo/vm/run" -c "/host$here/kdbus-bench --env $(printf %q "$env")$q && /host$here/kdbus-bench-broadcast && /host$here/kdbus-bench-memfd"
