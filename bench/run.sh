#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# bench/run.sh [kdbus-bench options]: build the benchmarks, the module, the
# proxy and the activation test service if needed, boot the test VM once
# through vm/run (kdbus.ko loaded, kdbusfs mounted) and run everything
# there, so kdbus, the AF_UNIX socketpair, memcpy, dbus-daemon and
# dbus-broker are measured in the same (emulated) machine. The results of
# the comparison (bench/compare.sh) are written to build/bench/ (rtt.tsv,
# rtt.png, connect.tsv, connect.png; bench/README.md).
#
#   bench/run.sh                    the tables, the comparison and its charts
#   bench/run.sh --json >out.json   JSON of the unicast tables on stdout only
#                                   (harness chatter on stderr)
#   bench/run.sh --time 1           longer cells in the unicast tables
#
# Environment: KDBUS_VM_ACCEL (default tcg), KDBUS_VM_SMP (default 2) and
# the other vm/run variables; KDBUS_BENCH_NOBUILD=1 skips the builds;
# KDBUS_BENCH_COMPARE="SECONDS-PER-CELL CONNECT-RUNS" (default "1.5 8")
# sizes the comparison, KDBUS_BENCH_COMPARE=0 skips it.

set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd -P)
repo=$(dirname "$here")

if [ -z "${KDBUS_BENCH_NOBUILD:-}" ]; then
	# the module through the top-level Makefile: it picks the kernel the
	# VM boots (KVER/KDIR) and installs missing packages first
	make -s -C "$repo" kernel proxy test/activation >&2
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
# (kdbus-bench-lib), then the comparison (bench/compare.sh: the D-Bus 1
# rows, round trip against payload size through every transport, connect
# to first reply) (human-readable only: with --json only the unicast
# results are printed, as {"modes": [...]}).
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
	# the metadata goal: every item attached to every message (0x3fff is
	# _KDBUS_ATTACH_ALL; the sender's attach_flags_send allows all)
	cmd="$cmd && echo && echo $(printf %q "== call + reply, all metadata (--attach-recv 0x3fff), --pin none") && $bench --pin none --attach-recv 0x3fff --sizes 8,8K"
	cmd="true $cmd && echo && /host$here/kdbus-bench-broadcast && echo && /host$here/kdbus-bench-memfd"
	cmd="$cmd && echo && /host$here/kdbus-bench-lib --bench /host$here/kdbus-bench"
	compare=${KDBUS_BENCH_COMPARE:-1.5 8}
	[ "$compare" = 0 ] || cmd="$cmd && echo && KDBUS_BENCH_CPU0=${KDBUS_BENCH_CPU0:-0} sh /host$here/compare.sh $compare"
fi
[ -z "$json" ] || exec "$repo/vm/run" -c "$cmd"

# The guest cannot write to /host (read-only): compare.sh prints its
# result files as blocks of the output, which go to build/bench/ here
# while everything else is shown as it comes.
out=$repo/build/bench
mkdir -p "$out"
rm -f "$out"/rtt.tsv "$out"/rtt.png "$out"/connect.tsv "$out"/connect.png
# the comparison adds about 2 minutes under TCG; a loaded host can make
# the whole boot twice as slow
export KDBUS_VM_TIMEOUT=${KDBUS_VM_TIMEOUT:-1500}
set +e
# (a read loop, not awk: mawk reads its input in blocks, which would hold
# back the live output)
"$repo/vm/run" -c "$cmd" | {
	file=
	while IFS= read -r line; do
		case $line in
		@@BENCH-FILE-END@@) file= ;;
		@@BENCH-FILE\ *@@)
			file=${line#@@BENCH-FILE }
			file=${file%@@}
			case $file in *[!a-z.]*|.*) file=/dev/null ;; *) file=$out/$file ;; esac
			: > "$file" ;;
		*)
			if [ -n "$file" ]; then
				printf '%s\n' "$line" >> "$file"
			else
				printf '%s\n' "$line"
			fi ;;
		esac
	done
}
rc=${PIPESTATUS[0]}
set -e

written=
if grep -q '^[a-z]' "$out/rtt.tsv" 2>/dev/null; then
	written="$out/rtt.tsv"
	if "$here/plot.sh" --no-table "$out/rtt.tsv" "$out/rtt.png" > /dev/null; then
		written="$written $out/rtt.png"
	else
		rc=1
	fi
fi
if grep -q '^connect' "$out/connect.tsv" 2>/dev/null; then
	written="$written $out/connect.tsv"
	if "$here/plot.sh" --no-table --connect "$out/connect.tsv" "$out/connect.png" > /dev/null; then
		written="$written $out/connect.png"
	else
		rc=1
	fi
fi
[ -z "$written" ] || { echo; echo "bench: wrote$(printf ' %s' $written | sed "s| $repo/| |g")"; }
exit "$rc"
