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

# One boot for all. The unicast table is run in the three pin modes, the
# headline first: --pin none (the scheduler decides, as for real
# programs), then split (client and service on two CPUs) and same (both
# on one CPU), unless the caller chose a mode. Then the broadcast cost and
# the bulk (VEC vs memfd) throughput tables, the libkdbus-vs-raw call
# (kdbus-bench-lib), then the D-Bus 1 rows (bench/dbus1.sh: a classic
# call through dbus-daemon and kdbus-proxy) (human-readable only: with
# --json only the unicast results are printed, as {"modes": [...]}).
# The guest's sh runs the command text: quote every argument for it
# (printf %q is bash's; with no arguments it would add one empty word).
q=
[ $# -eq 0 ] || q=$(printf ' %q' "$@")
bench="/host$here/kdbus-bench --env $(printf %q "$env")$q"
modes="none split same"
case " $* " in *" --pin "*) modes=given ;; esac
json=
case " $* " in *" --json "*) json=1 ;; esac

cmd=
sep=
for m in $modes; do
	pin="--pin $m"
	[ "$m" != given ] || pin=
	if [ -n "$json" ]; then
		cmd="$cmd${sep:+ && echo ,} && $bench $pin"
	else
		[ -z "$sep" ] || cmd="$cmd && echo"
		title="== call + reply, --pin $m"
		[ "$m" != none ] || title="$title (headline: the scheduler decides, as for real programs)"
		[ "$m" != given ] || title="== call + reply"
		cmd="$cmd && echo $(printf %q "$title") && $bench $pin"
	fi
	sep=1
done
if [ -n "$json" ]; then
	cmd="echo '{\"modes\": [' $cmd && echo ']}'"
else
	cmd="true $cmd && echo && /host$here/kdbus-bench-broadcast && echo && /host$here/kdbus-bench-memfd"
	cmd="$cmd && echo && /host$here/kdbus-bench-lib --bench /host$here/kdbus-bench"
	# the D-Bus 1 rows: dbus-daemon call, kdbus-proxy call, native call
	cmd="$cmd && echo && sh /host$here/dbus1.sh"
fi
exec "$repo/vm/run" -c "$cmd"
