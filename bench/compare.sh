#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The comparison of `make bench`, in the VM (busybox sh; run by
# bench/run.sh after the kdbus tables):
#
# 1. Round trip against payload size (8 B .. 1 MiB): the raw kdbus sync
#    call and a unix socket (kdbus-bench --only kdbus_sync,uds), and an
#    Echo(ay) -> ay method call between a client and a service through
#    native kdbus (libkdbus on both sides), kdbus-proxy, dbus-daemon and
#    dbus-broker (kdbus-bench-dbus1: classic D-Bus 1 programs for the
#    last three). dbus-daemon and dbus-broker are Debian's, run under
#    chroot /host (/host/tmp is not bound: the tree under test may be in
#    the host's /tmp); dbus-broker without its launcher, through
#    dbus-broker-controller. Not pinned by default: the scheduler decides,
#    as for real programs (the project's headline figures). On a loaded
#    host a wake-up on the other vCPU can cost milliseconds of host
#    scheduling under TCG; KDBUS_BENCH_CPU0=1 pins every process to CPU 0
#    to take that out.
#    Prints the D-Bus 1 rows (8 B and 8 KiB, with the ratios to
#    dbus-daemon) and the table of the sweep.
# 2. Connect to first reply, activation included, kdbus and dbus-daemon
#    (kdbus-bench-connect both, under chroot /host), and its table.
#
# The results go to the host as blocks of the output (/host is read-only):
#   @@BENCH-FILE rtt.tsv@@ ... @@BENCH-FILE-END@@   (and connect.tsv)
# which bench/run.sh writes to build/bench/ and plots.
#
#   bench/compare.sh [SECONDS-PER-CELL [CONNECT-RUNS]]

here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
htop=${top#/host}		# the tree as seen inside chroot /host
secs=${1:-1.5}
runs=${2:-8}
sizes=8,64,512,4K,8K,32K,128K,512K,1M
# the guest's /run (tmpfs) is bound to /host/run, so the sockets and files
# here have one path inside and outside chroot /host; /host/tmp is left
# alone, the tree under test may be there
T=/run/bench-compare.$$
mounted=
pids=
failed=0
cpu0= kbpin="--pin none" where="not pinned" env="qemu TCG, not pinned"
if [ "${KDBUS_BENCH_CPU0:-0}" = 1 ]; then
	cpu0="taskset -c 0" kbpin="--pin same --cpu 0" where="all on CPU 0"
	env="qemu TCG, every process on one vCPU"
fi

# chroot /host needs the guest's /proc, /sys, kdbusfs, /dev and /run:
# plain bind mounts, undone at the end
for d in proc sys sys/fs/kdbus dev run; do
	if ! grep -q " /host/$d " /proc/mounts; then
		mount --bind "/$d" "/host/$d" && mounted="/host/$d $mounted"
	fi
done
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	for p in $pids; do wait "$p" 2>/dev/null; done
	pids=
	for m in $mounted; do umount "$m" 2>/dev/null || umount -l "$m"; done
	mounted=
	rm -rf "$T"
}
trap cleanup EXIT
mkdir -p "$T"
wait_sock() {
	i=0
	while [ ! -S "$1" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	[ -S "$1" ] && return 0
	echo "compare: $2 did not come up ($1)" >&2
	[ -z "${3:-}" ] || sed 's/^/    /' "$3" >&2
	failed=1
	return 1
}
emit() {
	echo "@@BENCH-FILE $1@@"
	cat "$T/$1"
	echo "@@BENCH-FILE-END@@"
}

# --- the buses ------------------------------------------------------------
targets=
cat > "$T/dd.conf" <<X
<busconfig><type>session</type><listen>unix:path=$T/dd.sock</listen><auth>EXTERNAL</auth>
<policy context="default"><allow user="*"/><allow own="*"/><allow send_destination="*"/><allow receive_sender="*"/></policy></busconfig>
X
$cpu0 chroot /host dbus-daemon --config-file="$T/dd.conf" --nofork 2> "$T/dd.log" & pids="$pids $!"
$cpu0 chroot /host "$htop/bench/dbus-broker-controller" --address="unix:path=$T/br.sock" \
	> /dev/null 2> "$T/br.log" & pids="$pids $!"
$cpu0 "$top/proxy/kdbus-bus-holder" --user > "$T/bus" & pids="$pids $!"
i=0
while ! grep -q /bus "$T/bus" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
BUS=$(cat "$T/bus")
if [ -n "$BUS" ]; then
	targets="libkdbus=kdbus:$BUS"
else
	echo "compare: kdbus-bus-holder printed no bus" >&2
	failed=1
fi
if [ -x "$top/proxy/kdbus-proxy" ] && [ -n "$BUS" ]; then
	$cpu0 "$top/proxy/kdbus-proxy" --bus="$BUS" --address="unix:path=$T/kp.sock" 2> "$T/proxy.log" &
	pids="$pids $!"
	if wait_sock "$T/kp.sock" kdbus-proxy "$T/proxy.log"; then
		targets="$targets kdbus-proxy=unix:path=$T/kp.sock"
	fi
else
	echo "compare: no kdbus-proxy row (proxy/kdbus-proxy or kdbus-bus-holder failed)" >&2
	failed=1
fi
if wait_sock "$T/dd.sock" dbus-daemon "$T/dd.log"; then
	targets="$targets dbus-daemon=unix:path=$T/dd.sock"
fi
if wait_sock "$T/br.sock" dbus-broker "$T/br.log"; then
	targets="$targets dbus-broker=unix:path=$T/br.sock"
fi

# --- 1. round trip against payload size -----------------------------------
{
	echo "# kernel $(uname -r)"
	echo "# env $env"
	echo "# transport	payload_bytes	median_us	p10_us	p90_us	calls"
} > "$T/rtt.tsv"
# shellcheck disable=SC2086 # $targets: one word per bus
$cpu0 "$here/kdbus-bench-dbus1" --tsv --time "$secs" --rounds 3 --sizes "$sizes" $targets \
	> "$T/d1.tsv" || { echo "compare: kdbus-bench-dbus1 failed" >&2; failed=1; }
"$here/kdbus-bench" --json $kbpin --only kdbus_sync,uds --sizes "$sizes" \
	--time "$secs" --rounds 3 > "$T/raw.json" || { echo "compare: kdbus-bench failed" >&2; failed=1; }
sh "$here/plot.sh" --from-kdbus-bench "$T/raw.json" | grep -v '^#' >> "$T/rtt.tsv"
cat "$T/d1.tsv" >> "$T/rtt.tsv"

echo "== a D-Bus method call (Echo(ay) -> ay) from a client to a service, median round trip in us"
echo "   (libkdbus: two libkdbus programs on kdbus; the others: classic D-Bus 1 programs; $where)"
awk -F '\t' '($2 == 8 || $2 == 8192) && $1 != "kdbus" && $1 != "uds" && !/^#/ {
	printf "%-12s %7d B %12.1f  (%d calls, p10 %.1f, p90 %.1f)\n", $1, $2, $3, $6, $4, $5 }' "$T/rtt.tsv"
# ratios: dbus-daemon time / other time (> 1: faster than dbus-daemon)
awk -F '\t' '!/^#/ { t[$1, $2] = $3 }
function cmp(name, s,   d, x) {
	d = t["dbus-daemon", s]; x = t[name, s]
	if (x == "") return name " n/a"
	return sprintf("%s %s than dbus-daemon (%.2fx)", name, x < d ? "faster" : "SLOWER", d / x)
}
END {
	for (i = 0; i < 2; i++) {
		s = i ? 8192 : 8
		d = t["dbus-daemon", s]
		if (d == "")
			continue
		k = t["libkdbus", s]
		printf "%5d B: %s; %s; native kdbus (libkdbus) %s\n", s, cmp("kdbus-proxy", s),
			cmp("dbus-broker", s),
			k == "" ? "n/a" : sprintf("%.1fx faster than dbus-daemon (goal >= 20x: %s)", d / k,
				d / k >= 20 ? "met" : "NOT met")
	}
}' "$T/rtt.tsv"
echo
echo "== round trip against payload size"
echo "   (kdbus: raw sync call, kdbus-bench; uds: AF_UNIX socketpair write + read; $where)"
sh "$here/plot.sh" "$T/rtt.tsv"
emit rtt.tsv

# --- 2. connect to first reply, activation included -------------------------
for p in $pids; do kill "$p" 2>/dev/null; done
for p in $pids; do wait "$p" 2>/dev/null; done
pids=
echo
echo "== connect to first reply, service activation included ($runs runs each, interleaved, $where)"
{
	echo "# kernel $(uname -r)"
	echo "# env $env"
	echo "# connect	transport	cold|warm	median_us	min_us	max_us"
	TMPDIR=$T $cpu0 chroot /host "$htop/bench/kdbus-bench-connect" --tsv --runs="$runs" both
} > "$T/connect.tsv" || { echo "compare: kdbus-bench-connect failed" >&2; failed=1; }
sh "$here/plot.sh" --connect "$T/connect.tsv"
emit connect.tsv
exit $failed
