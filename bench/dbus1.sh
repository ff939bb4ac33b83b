#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The D-Bus 1 rows of `make bench`, in the VM (busybox sh; run by
# bench/run.sh): a small method call (Echo(ay), 8 B and 8 KiB) from a
# classic client to a classic service through Debian's dbus-daemon
# (started here on a private socket, in a chroot into /host) and through
# kdbus-proxy, and the same call between two native libkdbus connections.
# Prints the median round trips and the ratios the issue asks for.
#
#   bench/dbus1.sh [SECONDS-PER-CELL]

here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
B=$here/kdbus-bench-dbus1
secs=${1:-1}
T=/tmp/bench-dbus1.$$
mkdir -p "$T"
mounted=
pids=

for d in proc sys dev tmp run; do
	if ! grep -q " /host/$d " /proc/mounts; then
		mount --rbind "/$d" "/host/$d" && mounted="/host/$d $mounted"
	fi
done
wait_sock() {
	i=0
	while [ ! -S "$1" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	[ -S "$1" ]
}

echo "== a classic D-Bus 1 method call (Echo(ay) -> ay), median round trip in us"
cat > "$T/dd.conf" <<X
<busconfig><type>session</type><listen>unix:path=$T/dd.sock</listen><auth>EXTERNAL</auth>
<policy context="default"><allow user="*"/><allow own="*"/><allow send_destination="*"/><allow receive_sender="*"/></policy></busconfig>
X
chroot /host dbus-daemon --config-file="$T/dd.conf" --nofork & pids="$pids $!"
wait_sock "$T/dd.sock" && "$B" --time "$secs" --label "dbus-daemon call" "unix:path=$T/dd.sock" | tee -a "$T/res"

"$top/proxy/kdbus-bus-holder" --user > "$T/bus" & pids="$pids $!"
i=0
while ! grep -q /bus "$T/bus" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
BUS=$(cat "$T/bus")
if [ -x "$top/proxy/kdbus-proxy" ]; then
	"$top/proxy/kdbus-proxy" --bus="$BUS" --address="unix:path=$T/kp.sock" 2> "$T/proxy.log" &
	pids="$pids $!"
	wait_sock "$T/kp.sock" && "$B" --time "$secs" --label "kdbus-proxy call" "unix:path=$T/kp.sock" |
		tee -a "$T/res"
else
	echo "kdbus-proxy call: skipped (proxy/kdbus-proxy is not built)"
fi
"$B" --time "$secs" --label "native-kdbus call" --native "$BUS" | tee -a "$T/res"

# ratios: dbus-daemon time / other time (> 1: faster than dbus-daemon)
awk '{ t[$1 " " $2, $3] = $4 }
END {
	for (i = 0; i < 2; i++) {
		s = i ? 8192 : 8
		d = t["dbus-daemon call", s]
		if (d == "")
			continue
		p = t["kdbus-proxy call", s]; k = t["native-kdbus call", s]
		printf "%5d B: kdbus-proxy %s than dbus-daemon (%s); native kdbus %s\n", s,
			p == "" ? "n/a" : (p < d ? "faster" : "SLOWER"),
			p == "" ? "not built" : sprintf("%.2fx", d / p),
			k == "" ? "n/a" : sprintf("%.1fx faster than dbus-daemon (goal >= 20x: %s)", d / k,
				d / k >= 20 ? "met" : "NOT met")
	}
}' "$T/res"

for p in $pids; do kill "$p" 2>/dev/null; done
for p in $pids; do wait "$p" 2>/dev/null; done
for m in $mounted; do umount -l "$m"; done
rm -rf "$T"
