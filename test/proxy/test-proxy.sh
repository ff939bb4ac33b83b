#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# kdbus-proxy end to end, in the VM (busybox sh): Debian's unmodified
# D-Bus programs (dbus-send, dbus-monitor, gdbus, busctl, python3-dbus)
# run in a chroot into the host's root (/host) and talk through
# proxy/kdbus-proxy to classic and native (libkdbus) peers. Prints TAP.
#
#   vm/run --tap -c /host/<repo>/test/proxy/test-proxy.sh
#   vm/run --tap -c 'KDBUS_PROXY_TEST_DAEMON=dbus-daemon /host/<repo>/test/proxy/test-proxy.sh'
#
# With KDBUS_PROXY_TEST_DAEMON=dbus-daemon the same tests run against
# Debian's dbus-daemon on a private socket (to validate the tests); the
# kdbus-only ones (native mixes, proxy restart) are then skipped.
# KDBUS_PROXY=PATH tests another kdbus-proxy binary than proxy/kdbus-proxy.
# Outside the VM (no /host) the programs run without the chroot.

TOP=$(cd "$(dirname "$0")/../.." && pwd)
P=$TOP/test/proxy
MODE=${KDBUS_PROXY_TEST_DAEMON:-kdbus-proxy}
PROXY=${KDBUS_PROXY:-$TOP/proxy/kdbus-proxy}
T=${TMPDIR:-/tmp}/proxy-test.$$
SOCK=$T/bus.sock
ADDR=unix:path=$SOCK
mkdir -p "$T"
pids=
mounted=

. "$TOP/test/tap.sh"



wait_sock() {
	i=0
	while [ ! -S "$SOCK" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	[ -S "$SOCK" ]
}

show() { sed 's/^/# /' "$@"; }

# Debian's programs: in the chroot when in the VM; HP is the repo path
# they see. x runs one with a time limit (coreutils' timeout), bg in the
# background without one.
if [ -x /host/usr/bin/dbus-send ] && [ "${TOP#/host/}" != "$TOP" ]; then
	HP=${TOP#/host}
	for d in proc sys dev dev/pts tmp run; do
		if ! grep -q " /host/$d " /proc/mounts; then
			mount --rbind "/$d" "/host/$d" && mounted="/host/$d $mounted"
		fi
	done
	x() { s=$1; shift; chroot /host timeout -k 5 "$s" "$@"; }
	bg() { chroot /host "$@"; }
else
	HP=$TOP
	x() { s=$1; shift; timeout -k 5 "$s" "$@"; }
	bg() { "$@"; }
fi
W=$HP/test/proxy/wire-client

cleanup() {
	# a bg job's pid is the VM's subshell; the program is its child
	for p in $pids; do kill $(cat /proc/$p/task/*/children 2>/dev/null) "$p" 2>/dev/null; done
	sleep 0.5
	for p in $pids; do kill -9 "$p" 2>/dev/null; done
	for p in $pids; do wait "$p" 2>/dev/null; done
	for m in $mounted; do umount -l "$m"; done
	rm -rf "$T"
}

echo "TAP version 13"
ulimit -n 8192 2>/dev/null

# the XML policy: everything allowed except the interface org.t.Forbidden
cat > "$T/policy.conf" <<EOF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow receive_sender="*"/>
    <allow eavesdrop="true"/>
    <deny send_interface="org.t.Forbidden"/>
  </policy>
</busconfig>
EOF

# an activatable service that takes 3 s to take its name; the launcher
# runs it outside the chroot, dbus-daemon inside
mkdir -p "$T/services"
if [ "$MODE" = dbus-daemon ]; then WX=${TOP#/host}/test/proxy/wire-client; else WX=$TOP/test/proxy/wire-client; fi
printf '[D-BUS Service]\nName=org.t.Slow\nExec=/bin/sh -c "sleep 3; exec %s %s serve org.t.Slow"\n' \
	"$WX" "$ADDR" > "$T/services/org.t.Slow.service"

start_bus() {
	if [ "$MODE" = dbus-daemon ]; then
		cat > "$T/daemon.conf" <<EOF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>$ADDR</listen>
  <auth>EXTERNAL</auth>
  <limit name="max_completed_connections">4000</limit>
  <limit name="max_incomplete_connections">4000</limit>
  <limit name="max_connections_per_user">4000</limit>
  <limit name="max_message_size">134217728</limit>
  <limit name="max_incoming_bytes">1000000000</limit>
  <limit name="max_outgoing_bytes">1000000000</limit>
  <limit name="auth_timeout">60000</limit>
  <servicedir>$T/services</servicedir>
  <include>$T/policy.conf</include>
</busconfig>
EOF
		bg dbus-daemon --config-file="$T/daemon.conf" --nofork 2>> "$T/bus.log" &
	else
		# small output limit and stall timeout: the client that never
		# reads (below) is throttled and dropped within the test's time
		"$PROXY" --bus="$BUS" --address="$ADDR" --max-queued-bytes=4194304 \
			--stall-timeout=5 --config-file="$T/policy.conf" 2>> "$T/bus.log" &
	fi
	DPID=$!
	pids="$pids $DPID"
	wait_sock
}

if [ "$MODE" = dbus-daemon ]; then
	NATIVE=
	echo "# against dbus-daemon (KDBUS_PROXY_TEST_DAEMON=dbus-daemon)"
else
	if [ ! -x "$PROXY" ]; then
		t 1 "$PROXY is not built (make -C proxy): nothing can be tested"
		echo "1..$n"
		cleanup
		exit 1
	fi
	NATIVE=1
	"$TOP/proxy/kdbus-bus-holder" --user > "$T/bus" & HPID=$!
	pids="$pids $HPID"
	wait_for "$T/bus" /bus
	BUS=$(cat "$T/bus")
	K="$TOP/tools/kdbusctl --bus $BUS"
fi

start_bus
rc=$?
t $rc "$MODE listens on $SOCK"
if [ $rc != 0 ]; then
	# nothing else can work: say why and stop (the plan shows one test)
	show "$T/bus.log"
	cleanup
	echo "1..$n"
	exit 1
fi

# --- SASL and Hello ---
x 60 "$W" "$ADDR" sasl-ir > "$T/out" 2>&1; rc=$?; show "$T/out"
t $rc "SASL with an initial response (AUTH EXTERNAL <uid>), Hello, then NameAcquired"
x 60 "$W" "$ADDR" sasl-noir > "$T/out" 2>&1; rc=$?; show "$T/out"
t $rc "SASL without an initial response (AUTH EXTERNAL, DATA), Hello, then NameAcquired"
x 60 "$W" "$ADDR" sasl-pipeline > "$T/out" 2>&1; rc=$?; show "$T/out"
t $rc "SASL pipelined with BEGIN and Hello in one write"
x 60 "$W" "$ADDR" sasl-fds > "$T/out" 2>&1; rc=$?; show "$T/out"
t $rc "NEGOTIATE_UNIX_FD is agreed (pipelined)"

# --- names ---
x 60 "$W" "$ADDR" names > "$T/names" 2>&1; show "$T/names"
[ "$(grep -c '^ok Re' "$T/names")" = 8 ]
t $? "RequestName (1 2 3 4) and ReleaseName (1 2 3) return codes"
grep -q '^ok ListQueuedOwners' "$T/names"; t $? "ListQueuedOwners lists owner then queue"
grep -q '^order old: NameLost NameOwnerChanged$' "$T/names" &&
	grep -q '^order new: NameOwnerChanged NameAcquired$' "$T/names"
t $? "an owner change: NameLost then NameOwnerChanged to the old, NameOwnerChanged then NameAcquired to the new"

# --- monitors (BecomeMonitor), then the services ---
bg dbus-monitor --address "$ADDR" > "$T/mon" 2>&1 & MON=$!
pids="$pids $MON"
bg busctl --address="$ADDR" --no-pager monitor > "$T/bmon" 2>&1 & BMON=$!
pids="$pids $BMON"
wait_for "$T/mon" NameLost 300
t $? "dbus-monitor becomes a monitor (BecomeMonitor)"
# dbus-monitor with rules: only the driver traffic they select (dbus-daemon's behaviour)
bg dbus-monitor --address "$ADDR" "destination='org.freedesktop.DBus',member='GetId'" \
	"type='method_return',sender='org.freedesktop.DBus'" > "$T/rmon" 2>&1 & RMON=$!
pids="$pids $RMON"
wait_for "$T/rmon" NameLost 300
wait_for "$T/bmon" "Monitoring" 300 || wait_for "$T/bmon" "NameLost" 10
t $? "busctl monitor becomes a monitor"

bg python3 "$HP/test/proxy/py-service.py" "$ADDR" > "$T/py" 2>&1 & PY=$!
pids="$pids $PY"
wait_for "$T/py" ready 1800
t $? "a dbus-python service (GLib main loop) owns org.t.Py"
PYPID=$(awk '/^ready/ { print $3 }' "$T/py")
bg "$W" "$ADDR" serve org.t.Wire > "$T/wire" 2>&1 & WS=$!
pids="$pids $WS"
wait_for "$T/wire" serving 300
bg gdbus monitor -a "$ADDR" -d org.t.Py > "$T/gmon" 2>&1 & GMON=$!
pids="$pids $GMON"
wait_for "$T/gmon" "org.t.Py" 300

ds() { x 60 dbus-send --bus="$ADDR" "$@"; }

# --- dbus-send ---
ds --print-reply --dest=org.t.Py /org/t/Py org.t.Py.Echo string:hello > "$T/out" 2>&1
grep -q 'string "hello"' "$T/out"; t $? "dbus-send --print-reply calls the python service"
ds --print-reply --dest=org.t.Py /org/t/Py org.t.Py.Types byte:200 boolean:true int16:-2 \
	uint16:65535 int32:-4 uint32:4000000000 int64:-6000000000 uint64:18000000000000000000 \
	double:8.5 string:nine objpath:/ten > "$T/out" 2>&1
show "$T/out"
sed 1d "$T/out" | sed 's/^ *//' > "$T/types"
printf '%s\n' 'byte 200' 'boolean true' 'int16 -2' 'uint16 65535' 'int32 -4' 'uint32 4000000000' \
	'int64 -6000000000' 'uint64 18000000000000000000' 'double 8.5' 'string "nine"' \
	'object path "/ten"' > "$T/types.want"
cmp -s "$T/types" "$T/types.want"; t $? "dbus-send --print-reply: every basic type dbus-send can send comes back"
ds --type=signal /org/t/Cli org.t.Cli.Sig string:from-dbus-send
wait_for "$T/py" "got Sig from-dbus-send" 300; t $? "a dbus-send signal reaches the python service"
wait_for "$T/mon" "member=Echo" 50 && wait_for "$T/mon" "member=Sig" 50 &&
	wait_for "$T/mon" 'string "from-dbus-send"' 50
t $? "dbus-monitor sees the call and the signal"
ds --print-reply --dest=org.t.Py /org/t/Py org.t.Forbidden.Nope > "$T/out" 2>&1; rc=$?
show "$T/out"
[ $rc != 0 ] && grep -q "org.freedesktop.DBus.Error.AccessDenied" "$T/out"
t $? "the XML policy (--config-file) denies org.t.Forbidden with AccessDenied"

# --- gdbus ---
x 60 gdbus call -a "$ADDR" -d org.t.Py -o /org/t/Py -m org.t.Py.Echo gdbus > "$T/out" 2>&1
grep -q "('gdbus',)" "$T/out"; t $? "gdbus call ($(cat "$T/out"))"
# (gdbus emit -a sends as a peer, without Hello: use it as a session bus)
x 60 env DBUS_SESSION_BUS_ADDRESS="$ADDR" gdbus emit --session -o /org/t/Cli -s org.t.Cli.Sig from-gdbus
wait_for "$T/py" "got Sig from-gdbus" 300; t $? "gdbus emit reaches the python service"
ds --print-reply --dest=org.t.Py /org/t/Py org.t.Py.Emit string:for-gdbus-monitor > /dev/null 2>&1
wait_for "$T/gmon" "org.t.Py.Sig ('for-gdbus-monitor',)" 300; t $? "gdbus monitor sees the python service's signal"
x 60 gdbus introspect -a "$ADDR" -d org.t.Py -o /org/t/Py > "$T/out" 2>&1
grep -q "interface org.t.Py" "$T/out" && grep -q "Echo(" "$T/out"; t $? "gdbus introspect the python service"
x 60 gdbus introspect -a "$ADDR" -d org.freedesktop.DBus -o /org/freedesktop/DBus > "$T/out" 2>&1
grep -q "interface org.freedesktop.DBus " "$T/out" && grep -q "RequestName(" "$T/out" &&
	grep -q "interface org.freedesktop.DBus.Introspectable" "$T/out"
t $? "gdbus introspect the driver"

# --- busctl ---
bc() { x 60 busctl --address="$ADDR" --no-pager "$@"; }
bc --no-legend list > "$T/out" 2>&1
grep -q "^org.t.Py " "$T/out" && grep -q "^org.freedesktop.DBus " "$T/out"; t $? "busctl list"
show "$T/out"
bc call org.t.Py /org/t/Py org.t.Py Echo s busctl > "$T/out" 2>&1
grep -q '^s "busctl"' "$T/out"; t $? "busctl call ($(cat "$T/out"))"
bc introspect org.t.Py /org/t/Py > "$T/out" 2>&1
grep -q "^\.Echo *method" "$T/out" && grep -q "^org.t.Py *interface" "$T/out"; t $? "busctl introspect"
wait_for "$T/bmon" "Member=Echo" 100; t $? "busctl monitor sees the calls"

# --- the driver ---
dr() { ds --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus "$@"; }
dr org.freedesktop.DBus.GetConnectionUnixProcessID string:org.t.Py > "$T/out" 2>&1
grep -q "uint32 $PYPID\$" "$T/out"; t $? "GetConnectionUnixProcessID is the service's pid ($PYPID)"
dr org.freedesktop.DBus.GetConnectionUnixUser string:org.t.Py > "$T/out" 2>&1
grep -q "uint32 0\$" "$T/out"; t $? "GetConnectionUnixUser is 0"
dr org.freedesktop.DBus.GetConnectionCredentials string:org.t.Py > "$T/out" 2>&1
grep -A1 '"ProcessID"' "$T/out" | grep -q "uint32 $PYPID\$" &&
	grep -A1 '"UnixUserID"' "$T/out" | grep -q "uint32 0\$"
t $? "GetConnectionCredentials has ProcessID and UnixUserID"
dr org.freedesktop.DBus.GetId > "$T/out" 2>&1
grep -Eq 'string "[0-9a-f]{32}"' "$T/out"; t $? "GetId is 32 hex digits"
dr org.freedesktop.DBus.Properties.Get string:org.freedesktop.DBus string:Features > "$T/out" 2>&1
grep -q "variant *array \[" "$T/out"; t $? "the driver's Features property"
dr org.freedesktop.DBus.Properties.Get string:org.freedesktop.DBus string:Interfaces > "$T/out" 2>&1
grep -q "variant *array \[" "$T/out"; t $? "the driver's Interfaces property"
show "$T/out"
dr org.freedesktop.DBus.Properties.GetAll string:org.freedesktop.DBus > "$T/out" 2>&1
grep -q '"Features"' "$T/out" && grep -q '"Interfaces"' "$T/out"; t $? "Properties.GetAll on the driver"
dr org.freedesktop.DBus.Introspectable.Introspect > "$T/out" 2>&1
grep -q '<interface name="org.freedesktop.DBus">' "$T/out" &&
	grep -q '<interface name="org.freedesktop.DBus.Properties">' "$T/out"
t $? "Introspectable.Introspect on the driver"

# --- monitors and the driver's traffic ---
ds --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus.ListNames > /dev/null 2>&1
ds --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus.GetId > /dev/null 2>&1
wait_for "$T/mon" "member=Hello" 100 && wait_for "$T/mon" "member=ListNames" 100 &&
	wait_for "$T/mon" "method return .*sender=org.freedesktop.DBus" 100
t $? "dbus-monitor without rules sees the driver's calls (Hello, ListNames) and replies"
wait_for "$T/rmon" "member=GetId" 100 && wait_for "$T/rmon" "method return .*sender=org.freedesktop.DBus" 100
t $? "dbus-monitor with rules sees the driver call and the driver replies its rules select"
! grep -q "member=ListNames" "$T/rmon" && ! grep -q "member=Hello" "$T/rmon"
t $? "dbus-monitor with rules does not see the driver calls its rules do not select"
kill "$RMON" 2>/dev/null

# --- eavesdropping (AddMatch with eavesdrop='true', the pre-BecomeMonitor way) ---
ER="eavesdrop='true',type='method_call',interface='org.t.Wire'"
bg "$W" "$ADDR" eavesdrop 15 "$ER" > "$T/eaves" 2>&1 & EV1=$!
bg "$W" "$ADDR" eavesdrop 15 "$ER" 65534 > "$T/eaves2" 2>&1 & EV2=$!
bg "$W" "$ADDR" eavesdrop 15 "type='method_call',interface='org.t.Wire'" > "$T/eaves3" 2>&1 & EV3=$!
wait_for "$T/eaves" ready 300 && wait_for "$T/eaves2" ready 300 && wait_for "$T/eaves3" ready 300
ds --print-reply --dest=org.t.Wire /org/t/Wire org.t.Wire.Echo array:byte:9 > /dev/null 2>&1
wait_for "$T/eaves" "call Echo" 100; rc=$?
wait $EV1 $EV2 $EV3
show "$T/eaves" "$T/eaves2" "$T/eaves3"
t $rc "eavesdrop='true' (root): a call between two other clients is seen"
! grep -q "call Echo" "$T/eaves3"; t $? "the same rule without eavesdrop='true' does not see it"
if [ "$MODE" = dbus-daemon ]; then
	skip "eavesdrop='true' of an unprivileged client: dbus-daemon refuses the rule (AccessDenied), the proxy accepts it without effect"
else
	# accepted (kdbus-proxy(8); dbus-daemon refuses it with AccessDenied)
	grep -q "^ready :[0-9.]*$" "$T/eaves2" && ! grep -q "call Echo" "$T/eaves2"
	t $? "eavesdrop='true' of an unprivileged client (uid 65534) is accepted and acts as if eavesdrop were absent"
fi

# --- both byte orders on one bus ---
bg "$W" "$ADDR" serve org.t.WireBE be > "$T/wirebe" 2>&1 & WBE=$!
pids="$pids $WBE"
wait_for "$T/wirebe" serving 300
x 60 "$W" "$ADDR" bigendian org.t.Wire > "$T/out" 2>&1; rc=$?; show "$T/out"
t $rc "a big-endian client: the driver and a little-endian service answer its calls"
x 60 "$W" "$ADDR" bigendian org.t.WireBE > "$T/out" 2>&1; rc=$?; show "$T/out"
t $rc "a big-endian client calls a big-endian service"
ds --print-reply --dest=org.t.WireBE /org/t/Wire org.t.Wire.Echo array:byte:1,2,254 > "$T/out" 2>&1
show "$T/out"
grep -q "01 02 fe" "$T/out"; t $? "a little-endian client (dbus-send) gets a big-endian service's reply"

# --- credentials: SO_PEERGROUPS, SO_PEERSEC ---
x 60 "$W" "$ADDR" creds 4242,4343 > "$T/creds" 2>&1; show "$T/creds"
grep -q "^UnixGroupIDs:.* 4242" "$T/creds" && grep -q "^UnixGroupIDs:.* 4343" "$T/creds"
t $? "GetConnectionCredentials has the client's supplementary groups (SO_PEERGROUPS)"
label=$(sed -n 's/^peer label: //p' "$T/creds")
case $label in
"")	t 1 "the client reports SO_PEERSEC's label or why there is none" ;;
"(none"*)
	skip "LinuxSecurityLabel (SO_PEERSEC): unix sockets carry no security label in this VM, $label (LSMs: $(cat /sys/kernel/security/lsm 2>/dev/null || echo unknown))" ;;
*)	grep -qx "LinuxSecurityLabel: $label" "$T/creds"
	t $? "GetConnectionCredentials has the client's security label ($label, SO_PEERSEC)" ;;
esac

# --- StartServiceByName: answered asynchronously ---
if [ -n "$NATIVE" ]; then
	"$TOP/proxy/kdbus-launcher" --user --bus="$BUS" --servicedir="$T/services" --address="$ADDR" \
		--state-file="$T/launcher.state" > "$T/launcher.ready" 2>> "$T/launcher.log" & LPID=$!
	pids="$pids $LPID"
	wait_for "$T/launcher.ready" ready 300
fi
sbn() { ds --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
	org.freedesktop.DBus.StartServiceByName string:"$1" uint32:0; }
( sbn org.t.Slow > "$T/sbn" 2>&1; echo "exit $?" >> "$T/sbn" ) & SBN=$!
# the ping reached the activator (kdbus), or give dbus-send a second
if [ -n "$NATIVE" ]; then wait_for "$T/launcher.log" "org.t.Slow: started" 100; else sleep 1; fi
ds --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus.GetId > "$T/out" 2>&1
grep -Eq 'string "[0-9a-f]{32}"' "$T/out" && ! grep -q "^exit" "$T/sbn"
t $? "while a service starts (3 s), another client's call is answered before the StartServiceByName reply"
wait $SBN
show "$T/sbn"
grep -q "uint32 1$" "$T/sbn"; t $? "StartServiceByName replies 1 once the service took its name"
sbn org.t.Slow > "$T/out" 2>&1
grep -q "uint32 2$" "$T/out"; t $? "StartServiceByName of a running service replies 2"
sbn org.t.NoSuchService > "$T/out" 2>&1; show "$T/out"
grep -q "org.freedesktop.DBus.Error.ServiceUnknown" "$T/out" &&
	grep -q "The name org.t.NoSuchService was not provided by any .service files" "$T/out"
t $? "StartServiceByName of a name without a service file: ServiceUnknown"
sbn org.t.Wire > "$T/out" 2>&1
grep -q "org.freedesktop.DBus.Error.ServiceUnknown" "$T/out"
t $? "StartServiceByName of a running name without a service file: ServiceUnknown"

# --- the authentication timeout (a second bus instance with 1 s) ---
AADDR=unix:path=$T/auth.sock
if [ "$MODE" = dbus-daemon ]; then
	sed -e "s|<listen>.*</listen>|<listen>$AADDR</listen>|" \
		-e 's|<limit name="auth_timeout">60000</limit>|<limit name="auth_timeout">1000</limit>|' \
		-e '/servicedir/d' "$T/daemon.conf" > "$T/auth.conf"
	bg dbus-daemon --config-file="$T/auth.conf" --nofork 2>> "$T/auth.log" & APID=$!
else
	"$PROXY" --bus="$BUS" --address="$AADDR" --auth-timeout=1 2>> "$T/auth.log" & APID=$!
fi
pids="$pids $APID"
i=0; while [ ! -S "$T/auth.sock" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
bg "$W" "$AADDR" serve org.t.AuthOK > "$T/authok" 2>&1 & AOK=$!
pids="$pids $AOK"
wait_for "$T/authok" serving 300
x 60 "$W" "$AADDR" idle 20 > "$T/out" 2>&1; rc=$?; show "$T/out"
t $rc "authentication timeout 1 s: a client that sends nothing is dropped"
x 60 dbus-send --bus="$AADDR" --print-reply --dest=org.t.AuthOK /org/t/Wire org.t.Wire.Echo array:byte:7 > "$T/out" 2>&1
grep -q " 07" "$T/out"; t $? "authentication timeout 1 s: an authenticated client idle for longer is still served"
show "$T/auth.log" | tail -5
kill "$APID" "$AOK" 2>/dev/null

# --- python client: calls, fd passing both ways, signals ---
if [ -n "$NATIVE" ]; then
	"$P/native-service" "$BUS" > "$T/nat" 2>&1 & NAT=$!
	pids="$pids $NAT"
	wait_for "$T/nat" ready 100
fi
x 600 python3 "$HP/test/proxy/py-client.py" "$ADDR" ${NATIVE:+native} > "$T/pyc" 2>&1
show "$T/pyc"
for c in "python call" "python array" "fd passing client to service" "fd passing service to client" \
	"python receives a signal"; do
	grep -q "^ok $c\$" "$T/pyc"; t $? "dbus-python client: $c"
done

# the monitors would print the 100 MiB body and the flood below as text
# (hundreds of MB in the guest's tmpfs): stop them here
# (bg's $! is the subshell in the VM: the monitor is its child)
for p in $MON $BMON $GMON; do
	kill $(cat /proc/$p/task/*/children 2>/dev/null) "$p" 2>/dev/null
done
wait "$MON" "$BMON" "$GMON" 2>/dev/null

# --- a slow reader is not a stalled one ---
# 16 MiB to a service reading 256 KiB per 100 ms: its output stays over
# the proxy's 4 MiB limit for about 6 s, longer than --stall-timeout=5,
# but it reads all the while, so it must not be dropped
bg "$W" "$ADDR" serve org.t.WireSlow slow > "$T/wireslow" 2>&1 & WSL=$!
pids="$pids $WSL"
wait_for "$T/wireslow" serving 300
x 300 "$W" "$ADDR" large 16 org.t.WireSlow > "$T/out" 2>&1; rc=$?; show "$T/out"
t $rc "a service that reads a 16 MiB body slowly (longer than the stall timeout) gets it and answers"

# --- large bodies ---
# the proxy's peak memory from here on (a monitor would hold its own copy)
[ -n "$NATIVE" ] && sleep 0.5 && echo 5 > "/proc/$DPID/clear_refs"
x 600 "$W" "$ADDR" large 100 > "$T/out" 2>&1; rc=$?; show "$T/out"
t $rc "a 100 MiB body from a classic client to a classic service (its sum matches)"
# the body went client -> proxy -> bus -> proxy -> service as one memfd,
# read into it and written out of its mapping: the proxy's peak memory
# stays below 1.5 x the body + 32 MiB (copying it took ~4 x)
vm_kb() { sed -n "s/^$1:[[:space:]]*\([0-9]*\) kB/\1/p" "/proc/$DPID/status"; }
memfds() { ls -l "/proc/$DPID/fd" 2>/dev/null | grep -c kdbus-proxy-body; }
if [ -n "$NATIVE" ]; then
	hwm=$(vm_kb VmHWM)
	echo "# kdbus-proxy peak memory after the 100 MiB body: $hwm kB"
	[ "${hwm:-999999999}" -lt $((102400 * 3 / 2 + 32768)) ]
	t $? "kdbus-proxy holds a 100 MiB body once at most (VmHWM $hwm kB < 186368 kB)"
	# a client that announces 100 MiB, sends 1 MiB and disconnects
	rss0=$(vm_kb VmRSS)
	bg "$W" "$ADDR" partial 100 1 > "$T/partial" 2>&1 & PP=$!
	wait_for "$T/partial" sent 300
	sleep 0.5
	during=$(memfds)
	wait $PP
	i=0
	while [ "$(memfds)" != 0 ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	after=$(memfds)
	rss1=$(vm_kb VmRSS)
	show "$T/partial"
	echo "# body memfds while it sent: $during, after: $after; VmRSS $rss0 kB before, $rss1 kB after"
	[ "$during" = 1 ] && [ "$after" = 0 ] && [ "$rss1" -lt $((rss0 + 8192)) ]
	t $? "a client that announces 100 MiB and leaves after 1 MiB is dropped, its memfd freed"
	ds --print-reply --dest=org.t.Py /org/t/Py org.t.Py.Echo string:partial > "$T/out" 2>&1
	grep -q 'string "partial"' "$T/out"; t $? "others are undisturbed by the client that left mid-body"
else
	skip "kdbus-proxy's memory (not dbus-daemon's)"
	skip "kdbus-proxy's memfds (not dbus-daemon's)"
	skip "kdbus-proxy's memfds (not dbus-daemon's)"
fi

# --- a client that never reads ---
bg "$W" "$ADDR" noread 25 > "$T/noread" 2>&1 & NR=$!
wait_for "$T/noread" ready 300
x 120 "$W" "$ADDR" flood 400 64 > "$T/out" 2>&1; rc=$?; show "$T/out"
t $rc "a sender of 25 MiB of signals is not blocked by a subscriber that never reads"
ds --print-reply --dest=org.t.Py /org/t/Py org.t.Py.Echo string:meanwhile > "$T/out" 2>&1
grep -q 'string "meanwhile"' "$T/out"; t $? "others keep working while that client does not read"
wait $NR
show "$T/noread"
if [ "$MODE" = dbus-daemon ]; then
	skip "dbus-daemon keeps a client that never reads (it drops messages to it instead)"
else
	grep -q '^dropped' "$T/noread"; t $? "the client that never reads is dropped"
fi

# --- garbage ---
for g in sasl trunc oversized malformed fds; do
	x 60 "$W" "$ADDR" garbage $g > "$T/out" 2>&1; rc=$?; show "$T/out"
	case $g in
	sasl) what="bad SASL" ;;
	trunc) what="a truncated message" ;;
	oversized) what="an oversized message (body length 2 GiB)" ;;
	malformed) what="a malformed header" ;;
	fds) what="an fd without NEGOTIATE_UNIX_FD" ;;
	esac
	t $rc "a client sending $what is disconnected"
done
kill -0 "$DPID" && ds --print-reply --dest=org.t.Py /org/t/Py org.t.Py.Echo string:after > "$T/out" 2>&1 &&
	grep -q 'string "after"' "$T/out"
t $? "after the garbage the bus and the other clients are undisturbed"

# --- many clients ---
x 600 "$W" "$ADDR" many 1000 > "$T/out" 2>&1; rc=$?; show "$T/out"
t $rc "1,000 clients connected at once"

# --- the fuzzer ---
x 120 "$HP/test/proxy/fuzz-client" "$ADDR" "${FUZZ_SECONDS:-20}" > "$T/out" 2>&1; rc=$?; show "$T/out"
t $rc "the client fuzzer ran ${FUZZ_SECONDS:-20} s (random streams, mutated messages)"
kill -0 "$DPID"; t $? "$MODE survived the fuzzer"
ds --print-reply --dest=org.t.Py /org/t/Py org.t.Py.Echo string:fuzzed > "$T/out" 2>&1 &&
	grep -q 'string "fuzzed"' "$T/out" &&
	x 60 "$W" "$ADDR" sasl-ir >> "$T/out" 2>&1
rc=$?; [ $rc = 0 ] || show "$T/out"
t $rc "after the fuzzer a well-behaved client works and the service still answers"

# --- native and classic together (kdbus only) ---
if [ -z "$NATIVE" ]; then
	for s in "dbus-send calls a native libkdbus service" "gdbus calls a native service" \
		"kdbusctl calls the dbus-python service" "python calls the native service" \
		"signals native -> classic" "signals classic -> native" "kdbusctl emit -> python" \
		"NameOwnerChanged of a native name seen by dbus-monitor" \
		"NameOwnerChanged of a classic name seen by kdbusctl monitor" \
		"kdbus-proxy exits 0 on SIGTERM" "the bus and native clients survive the proxy" \
		"a restarted proxy serves classic clients again"; do
		skip "$s: kdbus only (not with dbus-daemon)"
	done
else
	ds --print-reply --dest=org.t.Native /org/t/Native org.t.Native.Echo string:nat > "$T/out" 2>&1
	grep -q 'string "nat"' "$T/out"; t $? "dbus-send calls a native libkdbus service"
	x 60 gdbus call -a "$ADDR" -d org.t.Native -o /org/t/Native -m org.t.Native.Echo g > "$T/out" 2>&1
	grep -q "('g',)" "$T/out"; t $? "gdbus calls a native service"
	$K call org.t.Py /org/t/Py org.t.Py Echo s kd > "$T/out" 2>&1
	grep -q '^s "kd"' "$T/out"; t $? "kdbusctl calls the dbus-python service ($(cat "$T/out"))"
	grep -q "^ok python calls the native service\$" "$T/pyc"; t $? "python calls the native service"
	grep -q "^ok python receives the native service's signal\$" "$T/pyc"
	t $? "signals native -> classic (python receives org.t.Native.Sig)"
	wait_for "$T/nat" "got Sig py-sig" 50; t $? "signals classic -> native (the native service receives org.t.Py.Sig)"
	$K emit /org/t/Native org.t.Native Sig s from-kdbusctl
	wait_for "$T/py" "got Sig from-kdbusctl" 100; t $? "kdbusctl emit -> python"
	$K monitor "member='NameOwnerChanged'" > "$T/kmon" 2>&1 & KMON=$!
	pids="$pids $KMON"
	wait_for "$T/kmon" Monitoring 300
	bg dbus-monitor --address "$ADDR" "type='signal',member='NameOwnerChanged'" > "$T/nmon" 2>&1 &
	pids="$pids $!"
	# it is ready once it sees a name change (a client coming and going);
	# a loaded machine may need many seconds to start it
	i=0
	while ! grep -q NameOwnerChanged "$T/nmon" && [ $i -lt 60 ]; do
		x 10 "$W" "$ADDR" sasl-ir > /dev/null 2>&1
		sleep 0.5
		i=$((i + 1))
	done
	"$P/native-service" "$BUS" org.t.Native2 > "$T/nat2" 2>&1 & N2=$!
	pids="$pids $N2"
	bg "$W" "$ADDR" serve org.t.Classic2 > "$T/c2" 2>&1 & C2=$!
	pids="$pids $C2"
	wait_for "$T/nat2" ready 300
	wait_for "$T/c2" serving 300
	wait_for "$T/nmon" 'string "org.t.Native2"' 300; rc=$?
	[ $rc = 0 ] || show "$T/nmon"
	t $rc "NameOwnerChanged of a native name seen by dbus-monitor"
	wait_for "$T/kmon" "org.t.Classic2" 300 && grep -q NameOwnerChanged "$T/kmon"
	t $? "NameOwnerChanged of a classic name seen by kdbusctl monitor"
	# SIGTERM, then at most 10 s for it to exit (a zombie: state Z)
	kill "$DPID"
	i=0
	while [ $i -lt 100 ] && [ -e "/proc/$DPID" ] &&
		[ "$(sed 's/.*) //; s/ .*//' "/proc/$DPID/stat" 2>/dev/null)" != Z ]; do
		sleep 0.1
		i=$((i + 1))
	done
	if [ $i -ge 100 ]; then
		kill -9 "$DPID"
		wait "$DPID"
		t 1 "kdbus-proxy exits 0 on SIGTERM (still running after 10 s, killed)"
	else
		wait "$DPID"; rc=$?
		t $rc "kdbus-proxy exits 0 on SIGTERM ($rc)"
	fi
	[ -e "$BUS" ] && $K call org.t.Native /org/t/Native org.t.Native Echo s still > "$T/out" 2>&1 &&
		grep -q '^s "still"' "$T/out"
	t $? "the bus and native clients survive the proxy"
	rm -f "$SOCK"
	start_bus
	ds --print-reply --dest=org.t.Native /org/t/Native org.t.Native.Echo string:again > "$T/out" 2>&1
	grep -q 'string "again"' "$T/out"; t $? "a restarted proxy serves classic clients again"
fi

show "$T/bus.log" | tail -40
cleanup
echo "1..$n"
[ "$failures" = 0 ]
