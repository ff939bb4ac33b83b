#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# demo.sh: the kdbus story, run inside the test VM by `make demo`
# (vm/run -c 'sh /host/.../examples/demo.sh'). A bus is created, a service
# takes a well-known name, a client calls it, a signal reaches exactly the
# subscribers whose match accepts it, a 100 MiB sealed memfd crosses
# without a copy, and a monitor shows the traffic. Every step checks its
# evidence; the script exits 1 at the first step that does not hold.

set -u
EX=$(cd "$(dirname "$0")" && pwd)
CTL=$EX/../tools/kdbusctl
T=/tmp/kdbus-demo
ROOT=/sys/fs/kdbus
step=0
pids=

mkdir -p "$T"

cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	for p in $pids; do wait "$p" 2>/dev/null; done
	pids=
}
fail() {
	echo
	echo "demo: FAILED in step $step: $*"
	cleanup
	exit 1
}
heading() {
	step=$((step + 1))
	echo
	echo "== $step. $* =="
}
# wait_for FILE [PATTERN]: up to 30 s for FILE to exist (and contain PATTERN)
wait_for() {
	i=0
	while [ $i -lt 300 ]; do
		if [ -e "$1" ] && { [ $# -lt 2 ] || grep -q "$2" "$1"; }; then
			return 0
		fi
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}
indent() { sed 's/^/    /'; }
# kdbusctl on the demo bus
ctl() { "$CTL" --bus="$BUS" "$@"; }

for p in kdbusctl:$CTL service:$EX/service demo-calls:$EX/demo-calls \
	 demo-signal:$EX/demo-signal demo-memfd:$EX/demo-memfd; do
	[ -x "${p#*:}" ] || { echo "demo: ${p#*:} is not built (run make)"; exit 1; }
done
[ -e "$ROOT/control" ] || { echo "demo: kdbusfs is not mounted at $ROOT"; exit 1; }

echo "kdbus demo: D-Bus in the kernel ($(uname -sr), kdbusfs at $ROOT)"

# --- 1 -------------------------------------------------------------------
heading "A bus is created"
echo "kdbusfs starts with one node, 'control'. Creating a bus through it makes a"
echo "directory <uid>-<name> whose 'bus' node is the endpoint programs connect to."
echo "  before: $(ls $ROOT | tr '\n' ' ')"
"$CTL" make-bus demo >"$T/bus.path" 2>"$T/bus.err" &
pids="$pids $!"
wait_for "$T/bus.path" "/bus" || fail "kdbusctl make-bus demo: $(cat "$T/bus.err")"
BUS=$(cat "$T/bus.path")
export KDBUS_BUS_PATH="$BUS"
echo "  \$ kdbusctl make-bus demo      (kept open in the background: the bus lives as long as its creator's fd)"
echo "  after:  $(ls $ROOT | tr '\n' ' ')"
echo "  $(dirname "$BUS"):"
ls -l "$(dirname "$BUS")" | grep -v '^total' | indent
[ -e "$BUS" ] || fail "$BUS did not appear"

# The monitor watches from here to the end (shown in the last step). Its
# rules leave out the 100 MiB message of step 5: printed element by element,
# its bytes would be 400 MB of text.
RULES="type='method_call' type='method_return' type='error' type='signal',interface='org.example.Demo' type='signal',sender='org.freedesktop.DBus',member='NameOwnerChanged',arg0='org.example.Demo'"
# shellcheck disable=SC2086 # the rules are word-split on purpose (no spaces inside)
"$CTL" --bus="$BUS" monitor $RULES >"$T/monitor.txt" 2>"$T/monitor.err" &
pids="$pids $!"; mon_pid=$!
# shellcheck disable=SC2086
"$CTL" --bus="$BUS" --pcap="$T/monitor.pcap" monitor $RULES 2>"$T/pcap.err" &
pids="$pids $!"; pcap_pid=$!
wait_for "$T/monitor.err" "Monitoring" || fail "kdbusctl monitor did not start: $(cat "$T/monitor.err")"
wait_for "$T/pcap.err" "Monitoring" || fail "kdbusctl monitor --pcap did not start: $(cat "$T/pcap.err")"

# --- 2 -------------------------------------------------------------------
heading "A service takes a well-known name"
echo "examples/service connects (HELLO), gets a unique name :1.N from the kernel and"
echo "asks for org.example.Demo. The kernel's name registry records the owner;"
echo "kdbusctl list asks the kernel (KDBUS_CMD_LIST) who is on the bus."
"$EX/service" >"$T/service.out" 2>&1 &
pids="$pids $!"; svc_pid=$!
ctl --timeout=30 wait org.example.Demo >"$T/owner" || fail "org.example.Demo never got an owner: $(cat "$T/service.out")"
wait_for "$T/service.out" "owns" || fail "the service did not report its name"
indent <"$T/service.out"
echo "  \$ kdbusctl list"
ctl list >"$T/list.txt" || fail "kdbusctl list failed"
indent <"$T/list.txt"
owner=$(cat "$T/owner")
grep -q "^org.example.Demo .* $owner " "$T/list.txt" ||
	fail "kdbusctl list does not show org.example.Demo owned by $owner"
echo "  -> org.example.Demo is owned by $owner, the service's connection."

# --- 3 -------------------------------------------------------------------
heading "A client calls the service"
echo "Each call is one KDBUS_CMD_SEND that waits for the reply (a synchronous call):"
echo "the kernel copies the message once, straight into the service's pool, and the"
echo "reply once into the client's. No daemon in between."
"$EX/demo-calls" 5 >"$T/calls.txt" 2>&1 || { indent <"$T/calls.txt"; fail "the calls failed"; }
indent <"$T/calls.txt"
[ "$(grep -c 'replied "Hello, call' "$T/calls.txt")" = 5 ] || fail "expected 5 replies"

# --- 4 -------------------------------------------------------------------
heading "A signal reaches two subscribers, not the third"
echo "Three subscribers add match rules. The kernel turns each rule into a Bloom mask"
echo "and checks every broadcast's Bloom filter against it before queueing anything."
"$EX/demo-signal" alice "type='signal',interface='org.example.Demo',member='Alert',arg0='disk-full'" \
	"$T/alice.ready" >"$T/alice.out" 2>&1 &
a_pid=$!; pids="$pids $a_pid"
"$EX/demo-signal" bob "type='signal',interface='org.example.Demo',member='Alert',arg0='disk-full'" \
	"$T/bob.ready" >"$T/bob.out" 2>&1 &
b_pid=$!; pids="$pids $b_pid"
"$EX/demo-signal" carol "type='signal',interface='org.example.Demo',member='Alert',arg0='network-down'" \
	"$T/carol.ready" >"$T/carol.out" 2>&1 &
c_pid=$!; pids="$pids $c_pid"
for s in alice bob carol; do
	wait_for "$T/$s.ready" || fail "subscriber $s did not start: $(cat "$T/$s.out")"
done
echo "  \$ kdbusctl emit /org/example/Demo org.example.Demo Alert s disk-full"
ctl emit /org/example/Demo org.example.Demo Alert s disk-full || fail "kdbusctl emit failed"
# End tells the subscribers that everything before it has been delivered.
"$CTL" --bus="$BUS" -q emit /org/example/Demo org.example.Demo End || fail "kdbusctl emit End failed"
rc=0
for p in $a_pid $b_pid $c_pid; do wait "$p" || rc=1; done
cat "$T/alice.out" "$T/bob.out" "$T/carol.out"
[ $rc = 0 ] || fail "a subscriber failed"
got=$(cat "$T/alice.out" "$T/bob.out" "$T/carol.out" | grep -c RECEIVED)
grep -q "RECEIVED.*delivered 1 Alert" "$T/alice.out" &&
	grep -q "RECEIVED.*delivered 1 Alert" "$T/bob.out" &&
	grep -q "nothing; the kernel delivered 0 Alert" "$T/carol.out" ||
	fail "expected alice and bob to receive the Alert and carol to get nothing"
echo "  -> $got of 3 subscribers received it; the kernel never queued it for carol."

# --- 5 -------------------------------------------------------------------
heading "100 MiB cross the bus without a copy"
echo "Big payloads travel as sealed memfds: the sender seals the memory so it can no"
echo "longer change, and the kernel passes the file itself; the receiver maps it."
"$EX/demo-memfd" 100 >"$T/memfd.txt" 2>&1
rc=$?
indent <"$T/memfd.txt"
[ $rc = 0 ] || fail "demo-memfd failed (status $rc)"
grep -q "checksum [0-9a-f]* matches" "$T/memfd.txt" || fail "the checksum did not match"
s_ino=$(sed -n 's/.*(inode \([0-9]*\)).*/\1/p' "$T/memfd.txt")
r_ino=$(sed -n 's/.*, inode \([0-9]*\), .*/\1/p' "$T/memfd.txt")
[ -n "$s_ino" ] && [ "$s_ino" = "$r_ino" ] ||
	fail "the receiver's memfd (inode $r_ino) is not the sender's (inode $s_ino)"
echo "  -> same inode $s_ino on both sides: the receiver holds the sender's memfd, and"
echo "     100 MiB could not have been copied into a 1 MiB pool."

# --- 6 -------------------------------------------------------------------
heading "The monitor saw it all"
echo "kdbusctl monitor (a KDBUS_HELLO_MONITOR connection, started after step 1) gets a"
echo "copy of every message on the bus. One line per message; its rules keep the"
echo "calls, replies, org.example.Demo signals and ownership changes of the name (not"
echo "the 100 MiB message of step 5: printed as text its bytes would be 400 MB):"
"$EX/client" --quit >/dev/null 2>&1 || fail "the service did not quit"
wait "$svc_pid" || fail "the service exited with an error"
sleep 1
kill -TERM "$mon_pid" "$pcap_pid"
wait "$mon_pid" || fail "kdbusctl monitor failed: $(cat "$T/monitor.err")"
wait "$pcap_pid" || fail "kdbusctl monitor --pcap failed: $(cat "$T/pcap.err")"
# "> Type=.. Serial=.." / "  Sender=.. Member=.." / "  SIG values" -> one line
awk '
	/^> Type=/ { if (line) print line; split($2, t, "="); type = t[2]; line = ""; next }
	/^  Sender=/ || /^   *Sender=/ {
		snd = dst = mem = ""
		for (i = 1; i <= NF; i++) {
			split($i, kv, "=")
			if (kv[1] == "Sender") snd = kv[2]
			if (kv[1] == "Destination") dst = kv[2]
			if (kv[1] == "Member") mem = kv[2]
		}
		line = sprintf("%-13s %-6s -> %-20s %-17s", type, snd, dst == "" ? "(broadcast)" : dst, mem)
		next
	}
	line != "" { b = $0; sub(/^ +/, "", b); if (length(b) > 40) b = substr(b, 1, 37) "..."; line = line " " b }
	END { if (line) print line }
' "$T/monitor.txt" >"$T/monitor.short"
n=$(wc -l <"$T/monitor.short")
if [ "$n" -gt 30 ]; then
	head -n 20 "$T/monitor.short" | indent
	echo "    ... $((n - 24)) more ..."
	tail -n 4 "$T/monitor.short" | indent
else
	indent <"$T/monitor.short"
fi
calls=$(grep -c '^method_call .*Hello' "$T/monitor.short")
alerts=$(grep -c '^signal .*Alert' "$T/monitor.short")
echo "  -> $n messages: $calls Hello calls, $(grep -c '^method_return' "$T/monitor.short") replies, $alerts Alert signal"
[ "$calls" -ge 5 ] && [ "$alerts" = 1 ] || fail "the monitor missed traffic (Hello calls: $calls, Alerts: $alerts)"
ctl pcap-dump "$T/monitor.pcap" >/dev/null 2>"$T/pcap-dump.err" || fail "pcap-dump: $(cat "$T/pcap-dump.err")"
echo "  The same traffic written as a pcap (link type 231, opens in Wireshark) and read"
echo "  back: \$ kdbusctl pcap-dump monitor.pcap -> $(cat "$T/pcap-dump.err")"

# --- 7 -------------------------------------------------------------------
heading "Unmodified D-Bus programs call a native service through kdbus-proxy"
PROXY=$EX/../proxy/kdbus-proxy
if [ ! -x "$PROXY" ] || [ ! -x /host/usr/bin/dbus-send ] || [ ! -x /host/usr/bin/gdbus ]; then
	echo "  (skipped: needs proxy/kdbus-proxy built and Debian's dbus-send and gdbus on the host)"
	skipped_step=$step
else
	echo "kdbus-proxy speaks the classic D-Bus 1 socket protocol on one side and kdbus on"
	echo "the other. Debian's own dbus-send and gdbus (run in a chroot into the host's"
	echo "root) connect to its socket and call examples/service, a native libkdbus"
	echo "service that has never heard of sockets:"
	"$EX/service" "$BUS" >"$T/service7.out" 2>&1 &
	pids="$pids $!"
	ctl --timeout=30 wait org.example.Demo >/dev/null || fail "the service did not take its name"
	"$PROXY" --bus="$BUS" --address="unix:path=$T/proxy.sock" 2>"$T/proxy.log" &
	pids="$pids $!"
	i=0
	while [ ! -S "$T/proxy.sock" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	[ -S "$T/proxy.sock" ] || fail "kdbus-proxy did not listen: $(cat "$T/proxy.log")"
	chmounts=
	for d in proc sys dev tmp run; do
		grep -q " /host/$d " /proc/mounts || { mount --rbind "/$d" "/host/$d" && chmounts="/host/$d $chmounts"; }
	done
	A=unix:path=$T/proxy.sock
	echo "  \$ dbus-send --bus=$A --print-reply --dest=org.example.Demo /org/example/Demo org.example.Demo.Hello string:dbus-send"
	chroot /host timeout 60 dbus-send --bus="$A" --print-reply --dest=org.example.Demo /org/example/Demo \
		org.example.Demo.Hello string:dbus-send >"$T/ds.out" 2>&1
	indent <"$T/ds.out"
	grep -q 'string "Hello, dbus-send!"' "$T/ds.out" || fail "dbus-send got no answer through the proxy"
	echo "  \$ gdbus call -a $A -d org.example.Demo -o /org/example/Demo -m org.example.Demo.Hello gdbus"
	chroot /host timeout 60 gdbus call -a "$A" -d org.example.Demo -o /org/example/Demo \
		-m org.example.Demo.Hello gdbus >"$T/gd.out" 2>&1
	indent <"$T/gd.out"
	grep -q "('Hello, gdbus!',)" "$T/gd.out" || fail "gdbus got no answer through the proxy"
	echo "  \$ kdbusctl list   (the classic clients were kdbus connections of the proxy)"
	ctl list | indent
	for m in $chmounts; do umount -l "$m"; done
	echo "  -> the same native service answered a classic libdbus program and a GDBus one."
fi

cleanup
echo
echo "Closing the creator's fd removes the bus: $ROOT now holds: $(ls $ROOT | tr '\n' ' ')"
echo
if [ -n "${skipped_step:-}" ]; then
	echo "demo: $((step - 1)) steps passed, step $skipped_step skipped."
else
	echo "demo: all $step steps passed."
fi
