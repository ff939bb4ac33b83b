#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# kdbusctl and the libkdbus examples against the real module, in the VM
# (busybox sh). Prints TAP. Uses tools/kdbusctl, examples/service and
# examples/client from the same tree.
#
#   vm/run --tap -c /host/<repo>/test/kernel-lib/test-kdbusctl.sh

TOP=$(cd "$(dirname "$0")/../.." && pwd)
K=$TOP/tools/kdbusctl
S=$TOP/examples/service
C=$TOP/examples/client
T=${TMPDIR:-/tmp}/kdbusctl-test.$$
mkdir -p "$T"
n=0

t() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi
}

# wait until file $1 is non-empty (at most ~10 s)
wait_file() {
	i=0
	while [ ! -s "$1" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
}

echo "TAP version 13"

"$K" --world make-bus ctltest > "$T/bus" & MB=$!
wait_file "$T/bus"
BUS=$(cat "$T/bus")
[ -e "$BUS" ]; t $? "make-bus creates and holds a bus ($BUS)"

"$K" --bus "$BUS" --pcap "$T/mon.pcap" monitor 2> "$T/mon.err" & MON=$!
wait_file "$T/mon.err"
grep -q Monitoring "$T/mon.err"; t $? "monitor --pcap starts as a monitor connection"

"$S" "$BUS" > "$T/svc.out" & SVC=$!
out=$("$K" --bus "$BUS" --timeout 10 wait org.example.Demo); rc=$?
[ $rc = 0 ] && echo "$out" | grep -q '^:1\.'; t $? "wait returns once the service owns its name ($out)"

"$K" --bus "$BUS" list > "$T/list"; rc=$?
[ $rc = 0 ] && grep -q '^org.example.Demo ' "$T/list" && grep -q '^:1\.' "$T/list"
t $? "list shows unique and well-known names"
sed 's/^/# /' "$T/list"

"$K" --bus "$BUS" --json list | grep -q '"name":"org.example.Demo"'
t $? "list --json"

"$K" --bus "$BUS" status org.example.Demo > "$T/status"; rc=$?
[ $rc = 0 ] && grep -q '^UniqueName=:1\.' "$T/status"
t $? "status NAME resolves the owner through CONN_INFO"
sed 's/^/# /' "$T/status"
id=$(sed -n 's/^ID=//p' "$T/status")
"$K" --bus "$BUS" status "$id" | grep -q "^ID=$id\$"
t $? "status ID"
"$K" --bus "$BUS" --json status org.example.Demo | grep -q '"UniqueName":":1\.'
t $? "status --json"

out=$("$K" --bus "$BUS" call org.example.Demo /org/example/Demo org.example.Demo Hello s kdbus)
[ "$out" = 's "Hello, kdbus!"' ]; t $? "call prints the reply busctl-style ($out)"
out=$("$K" --bus "$BUS" --json call org.example.Demo /org/example/Demo org.example.Demo Hello s json)
[ "$out" = '{"type":"s","data":["Hello, json!"]}' ]; t $? "call --json ($out)"
out=$("$K" --bus "$BUS" call org.example.Demo / org.freedesktop.DBus.Peer Ping); rc=$?
[ $rc = 0 ]; t $? "call Peer.Ping: the library answers it"
"$K" --bus "$BUS" call org.example.Demo /org/example/Demo org.example.Demo Nope 2> "$T/err"; rc=$?
[ $rc = 1 ] && grep -q UnknownMethod "$T/err"; t $? "unknown method: exit 1 and UnknownMethod ($rc)"
"$K" --bus "$BUS" call org.example.Nobody /x a.b C 2> "$T/err"; rc=$?
[ $rc = 3 ]; t $? "call to a name nobody owns: exit 3 ($rc: $(cat "$T/err"))"
"$K" --bus "$BUS" status org.example.Nobody 2> /dev/null; rc=$?
[ $rc = 3 ]; t $? "status of a name nobody owns: exit 3 ($rc)"
"$K" --bus "$BUS" --timeout 0.5 wait org.example.Never 2> /dev/null; rc=$?
[ $rc = 4 ]; t $? "wait with a timeout: exit 4 ($rc)"
"$K" bogus 2> /dev/null; rc=$?
[ $rc = 2 ]; t $? "unknown command: exit 2 ($rc)"
"$K" --bus "$BUS" call org.example.Demo /org/example/Demo org.example.Demo Hello u notanumber 2> /dev/null
rc=$?
[ $rc = 2 ]; t $? "arguments that do not fit the signature: exit 2 ($rc)"
"$K" --bus "$BUS" emit /org/example/Demo org.example.Demo Ping 'a{sv}' 1 key s value
t $? "emit a broadcast with a{sv}"

# monitor abbreviates long arrays: 64 KiB of bytes (as many words as an
# exec takes comfortably) and 40 integers print as one short line
"$K" --bus "$BUS" monitor "member='Big'" > "$T/big.out" 2> "$T/big.err" & BM=$!
wait_file "$T/big.err"
"$K" --bus "$BUS" emit /org/example/Demo org.example.Demo Big ayau \
	65536 $(awk 'BEGIN { for (i = 0; i < 65536; i++) print i % 256 }') \
	40 $(awk 'BEGIN { for (i = 0; i < 40; i++) print i }')
t $? "emit a signal with a 64 KiB byte array"
i=0
while ! grep -q '^  ayau' "$T/big.out" && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
kill $BM; wait $BM
line=$(grep '^  ayau' "$T/big.out")
[ "$line" = '  ayau [65536 bytes: 00 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f ... ]'\
' [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 ... (40 elements)]' ] &&
	[ "$(wc -c < "$T/big.out")" -lt 1000 ]
t $? "monitor abbreviates long arrays ($(wc -c < "$T/big.out") bytes: $line)"

out=$("$C" "$BUS" demo); rc=$?
[ $rc = 0 ] && echo "$out" | grep -q 'replied "Hello, demo!"'; t $? "example client calls the example service ($out)"
"$C" --quit "$BUS"; t $? "client --quit"
wait $SVC; t $? "the service exits cleanly"

sleep 0.5
kill $MON; wait $MON

# queued messages per bus (/sys/kernel/debug/kdbus/buses): a stopped
# service does not receive, so every signal sent to it waits in its queue;
# no connection left on the bus has a match, so nothing else is queued
BD=$(basename "$(dirname "$BUS")")
"$S" "$BUS" > "$T/svc2.out" & SVC=$!
"$K" --bus "$BUS" --timeout 10 wait org.example.Demo > /dev/null
kill -STOP $SVC
for i in 1 2 3; do
	"$K" --bus "$BUS" --destination org.example.Demo emit /org/example/Demo org.example.Demo Ping
done
"$K" status "$BD" > "$T/status"; rc=$?
sed 's/^/# /' "$T/status"
[ $rc = 0 ] && [ "$(sed -n 1p "$T/status")" = "bus /sys/fs/kdbus/$BD/bus" ] &&
	grep -qx '  queued messages 3' "$T/status"
t $? "status BUS: the three messages queued for a stopped service"
"$K" status > "$T/status"
queued=$(awk -v b="bus /sys/fs/kdbus/$BD/bus" '$0 == b { f = 1; next } /^bus / { f = 0 }
	f && /^  queued messages / { print $3 }' "$T/status")
[ "$queued" = 3 ] && grep -q '^  messages_delivered ' "$T/status"
t $? "status: the bus's own queued messages ($queued) and the module's counters"
if unshare -m sh -c "mount --make-rprivate / && mount -t tmpfs none /sys/kernel/debug && \"$K\" status $BD" > "$T/status" 2> "$T/err"; then
	grep -qx '  queued messages ? (needs debugfs: /sys/kernel/debug/kdbus/buses)' "$T/status"
	t $? "status BUS without debugfs: queued messages ? and success"
else
	n=$((n + 1)); echo "ok $n - # SKIP status without debugfs: no mount namespace ($(cat "$T/err"))"
fi
kill -CONT $SVC
"$C" --quit "$BUS" > /dev/null; wait $SVC
"$K" status "$BD" > "$T/status"
grep -qx '  queued messages 0' "$T/status"; t $? "status BUS: 0 once the service has received them"
"$K" status 9-nosuchbus 2> /dev/null; rc=$?
[ $rc = 3 ]; t $? "status of a bus that does not exist: exit 3 ($rc)"
"$K" pcap-dump "$T/mon.pcap" > "$T/dump" 2> /dev/null; rc=$?
[ $rc = 0 ]; t $? "the pcap reads back ($(grep -c '^>' "$T/dump") messages)"
grep -q 'Member=Hello' "$T/dump" && grep -q 'Member=Greeted' "$T/dump" && grep -q 'Member=Ping' "$T/dump" &&
	grep -q 'Type=method_return' "$T/dump"
t $? "the pcap holds the calls, the replies and the signals"
grep -q 'Member=NameOwnerChanged' "$T/dump"; t $? "monitor translated name notifications"
head -c 24 "$T/mon.pcap" | od -A n -t u4 | grep -q ' 231$' ; t $? "pcap link type 231"
"$K" --json pcap-dump "$T/mon.pcap" 2> /dev/null | grep -q '"member":"Hello"'; t $? "pcap-dump --json"
sed -n '1,12s/^/# /p' "$T/dump"

"$K" --bus "$BUS" make-endpoint ep1 -- sh -c 'test -e "$KDBUS_BUS_PATH"' 2> "$T/err"; rc=$?
if grep -q 'Inappropriate ioctl' "$T/err"; then
	n=$((n + 1)); echo "ok $n - # SKIP make-endpoint: kernel has no ENDPOINT_MAKE yet"
else
	t $rc "make-endpoint creates an endpoint while the command runs"
fi

kill $MB; wait $MB
[ ! -e "$BUS" ]; t $? "the bus disappears when make-bus ends"
rm -rf "$T"
echo "1..$n"
