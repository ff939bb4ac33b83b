#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Service activation end to end, in the VM (busybox sh): kdbus-bus-holder
# makes the bus, kdbus-launcher holds the activators, test-service (native)
# and py-service.py (dbus-python) are started on demand; test-caller
# (native) and, through proxy/kdbus-proxy, dbus-send, gdbus and
# py-caller.py (Debian's programs in a chroot into the host's root, /host)
# call them. Debian's own system service files are loaded from the host
# and its polkitd is activated. Prints TAP.
#
#   vm/run --tap -c /host/<repo>/test/activation/test-activation.sh

TOP=$(cd "$(dirname "$0")/../.." && pwd)
H=$TOP/proxy/kdbus-bus-holder
L=$TOP/proxy/kdbus-launcher
S=$TOP/test/activation/test-service
C=$TOP/test/activation/test-caller
T=${TMPDIR:-/tmp}/activation-test.$$
SD=$T/services
# where kdbusctl status finds the launcher's states (XDG_RUNTIME_DIR=$T/run)
ST=$T/run/kdbus/launcher-0-user.state
mkdir -p "$SD" "$T/run/kdbus"
export XDG_DATA_DIRS=/nonexistent XDG_DATA_HOME=/nonexistent XDG_RUNTIME_DIR=/nonexistent

. "$TOP/test/tap.sh"


svc() { # name exec-line
	printf '[D-BUS Service]\nName=%s\nExec=%s\n' "$1" "$2" > "$SD/$1.service"
}

state() { # name -> state from the launcher's state file
	awk -v n="$1" '$1 == n { print $2 }' "$ST"
}

# STATE-FN NAME STATE: wait up to 20 s for it. The launcher rewrites its
# state file once it has read the name change, which the service's reply
# to a caller may overtake.
becomes() {
	i=0
	while [ "$($1 "$2")" != "$3" ] && [ $i -lt 200 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	[ "$($1 "$2")" = "$3" ]
}

call() { # name count [args] -> summary line in $T/out
	"$C" "$BUS" "$@" > "$T/out" 2>&1
	cat "$T/out" | sed 's/^/# /'
}

start_launcher() {
	"$L" --user --bus="$BUS" --servicedir="$SD" --timeout=3000 \
		--state-file="$ST" > "$T/launcher.ready" 2>> "$T/launcher.log" &
	LPID=$!
	# ten activators: a minute on a loaded machine under TCG
	wait_for "$T/launcher.ready" ready 600
}

echo "TAP version 13"

"$H" --user > "$T/bus" & HPID=$!
wait_for "$T/bus" /bus
BUS=$(cat "$T/bus")
[ -e "$BUS" ]; t $? "kdbus-bus-holder --user makes and holds the bus ($BUS)"

svc org.t.Ok "$S $BUS org.t.Ok log=$T/ok.log"
svc org.t.Slow "$S $BUS org.t.Slow slow=1500 log=$T/slow.log"
svc org.t.NoExec "/nonexistent/program --flag"
svc org.t.Exit "/bin/sh -c 'exit 3'"
svc org.t.Killed "/bin/sh -c 'kill -9 \$\$'"
svc org.t.Hang "/bin/sleep 30"
svc org.t.Daemon "$S $BUS org.t.Daemon daemon"
svc org.t.Daemon0 "/bin/true"
printf 'garbage\n' > "$SD/broken.service"

start_launcher
t $? "kdbus-launcher starts on the bus"
[ "$(state org.t.Ok)" = idle ] && [ "$(state org.t.Hang)" = idle ]
t $? "activators are idle after start"
grep -q "broken.service: skipped" "$T/launcher.log"
t $? "an invalid service file is skipped with a warning"
[ -z "$(state broken)" ] && [ "$(grep -vc '^#' "$ST")" = 8 ]
t $? "eight names are activatable"

call org.t.Ok 1
grep -q "replies=1 errors=0 dup=0" "$T/out"; t $? "a call to an idle name starts the service and is answered"
becomes state org.t.Ok running; t $? "the name is running after the hand-over"
grep -q "start session" "$T/ok.log"; t $? "DBUS_STARTER_BUS_TYPE=session is in the service's environment"

XDG_RUNTIME_DIR=$T/run "$TOP/tools/kdbusctl" status > "$T/status" 2>&1
sed 's/^/# /' "$T/status"
grep -q "^bus $BUS" "$T/status" && grep -Eq "^  connections [0-9]+ .*, names [1-9][0-9]*, queued owners [0-9]+, activatable 8" "$T/status" &&
	grep -Eq "^  org.t.Ok +running +:1\.[0-9]+" "$T/status" && grep -Eq "^  org.t.Hang +idle +-" "$T/status" &&
	grep -Eq "^  queued messages [0-9]+$" "$T/status" && grep -q "messages_delivered" "$T/status"
t $? "kdbusctl status shows the bus, activatable names with states and owners, its queued messages, and the counters"

# the window where the service exits and gives the name back: the Quit
# reply and every Echo are answered exactly once, by the old or a new
# instance
fail=0
for i in 1 2 3 4 5; do
	call org.t.Ok 5 quit-first
	grep -q "replies=5 errors=0 dup=0" "$T/out" || fail=1
done
t $fail "calls made while the service exits and releases its name are answered once (5 rounds)"
starts=$(grep -c start "$T/ok.log")
[ "$starts" -ge 2 ]; t $? "the service was restarted by traffic after it gave the name back ($starts starts)"

# a slow start: 100 queued calls, answered in order by one instance
call org.t.Slow 100
grep -q "replies=100 errors=0 dup=0 order=ok pids=1" "$T/out"
t $? "100 calls queued during a slow start are all answered in order"

# two callers during the start window, and calls made while it takes the name
"$C" "$BUS" org.t.Slow 0 quit-first > /dev/null 2>&1   # the running instance exits
sleep 0.3
"$C" "$BUS" org.t.Slow 20 > "$T/a" 2>&1 & A=$!
sleep 0.7
"$C" "$BUS" org.t.Slow 20 > "$T/b" 2>&1 & B=$!
sleep 0.8
"$C" "$BUS" org.t.Slow 20 > "$T/c" 2>&1 & CC=$!
wait $A $B $CC
sed 's/^/# /' "$T/a" "$T/b" "$T/c"
grep -q "replies=20 errors=0 dup=0 order=ok" "$T/a" && grep -q "replies=20 errors=0 dup=0 order=ok" "$T/b" &&
	grep -q "replies=20 errors=0 dup=0 order=ok" "$T/c"
t $? "calls before, during and after the hand-over are each answered once, in order"

# failures: every waiting call gets an answer, the launcher logs the Spawn error
call org.t.NoExec 3
grep -q "replies=0 errors=3 dup=0" "$T/out"; t $? "exec failure: the 3 queued calls get an error"
grep -q "org.t.NoExec: activation failed: org.freedesktop.DBus.Error.Spawn.ExecFailed" "$T/launcher.log"
t $? "exec failure is Spawn.ExecFailed"
wait_for "$ST" "org.t.NoExec idle" 20; t $? "the name is idle again after a failure"

call org.t.Exit 2
grep -q "replies=0 errors=2 dup=0" "$T/out" &&
	grep -q "Spawn.ChildExited: Process org.t.Exit exited with status 3" "$T/launcher.log"
t $? "non-zero exit: errors, Spawn.ChildExited with the status"

call org.t.Killed 2
grep -q "replies=0 errors=2 dup=0" "$T/out" && grep -q "org.t.Killed: activation failed: org.freedesktop.DBus.Error.Spawn.ChildSignaled" "$T/launcher.log"
t $? "killed by a signal: errors, Spawn.ChildSignaled"

call org.t.Hang 2
grep -q "replies=0 errors=2 dup=0" "$T/out" && grep -q "TimedOut: Activation of org.t.Hang timed out" "$T/launcher.log"
t $? "a service that never takes its name times out (TimedOut)"

call org.t.Daemon0 1
grep -q "replies=0 errors=1 dup=0" "$T/out" && grep -q "TimedOut: Activation of org.t.Daemon0 timed out" "$T/launcher.log"
t $? "a child exiting 0 without the name is judged by the timer only"

call org.t.Daemon 3
grep -q "replies=3 errors=0 dup=0" "$T/out"; t $? "a daemonising service (parent exits 0) is activated"

# rate limit: 5 failures within 10 s hold the name failed for 60 s
for i in 1 2 3 4 5; do call org.t.Exit 1; done
wait_for "$ST" "org.t.Exit failed" 20; t $? "after 5 failures within 10 s the name is rate limited"
before=$(grep -c "org.t.Exit: started" "$T/launcher.log")
call org.t.Exit 1
after=$(grep -c "org.t.Exit: started" "$T/launcher.log")
grep -q "errors=1" "$T/out" && [ "$before" = "$after" ]
t $? "while rate limited calls are answered with an error and nothing is started"

# reload: a new name appears, a removed one disappears
svc org.t.New "$S $BUS org.t.New"
svc org.t.Slower "$S $BUS org.t.Slower slow=2000"
rm "$SD/org.t.Hang.service"
kill -HUP $LPID
wait_for "$T/launcher.log" reloaded
wait_for "$ST" "org.t.New idle" 20 && ! grep -q "org.t.Hang" "$ST"
t $? "SIGHUP adds new names and removes vanished ones"
call org.t.New 2
grep -q "replies=2 errors=0" "$T/out"; t $? "a name added by reload is activated"
"$C" "$BUS" org.t.Hang 1 timeout=2 > "$T/out" 2>&1
grep -q "replies=0 errors=1" "$T/out"; t $? "a removed name is no longer activatable"

# kdbusctl status while calls wait in the activator of a starting service
# (org.t.Slower, added by the reload, takes 2 s of the 3 s allowed to take its name)
"$C" "$BUS" org.t.Slower 10 > "$T/sq" 2>&1 & SQ=$!
wait_for "$ST" "org.t.Slower starting" 50
XDG_RUNTIME_DIR=$T/run "$TOP/tools/kdbusctl" status > "$T/status" 2>&1
wait $SQ
sed 's/^/# /' "$T/status" | grep -v "^#   [a-z_]* [0-9]*$"
queued=$(awk -v b="bus $BUS" '$0 == b { f = 1; next } /^bus / { f = 0 }
	f && /^  queued messages / { print $3 }' "$T/status")
grep -Eq "^  org.t.Slower +starting +-" "$T/status" && [ "${queued:-0}" -ge 10 ] &&
	grep -q "replies=10 errors=0 dup=0 order=ok" "$T/sq"
t $? "kdbusctl status shows the starting name and the calls queued for it (queued messages ${queued:-none})"

# the bus survives the launcher; running services keep their names
kill -9 $LPID
wait $LPID 2>/dev/null
[ -e "$BUS" ]; t $? "the bus survives killing the launcher"
call org.t.Ok 3
grep -q "replies=3 errors=0" "$T/out"; t $? "a running service still answers native callers without a launcher"
rm -f "$T/launcher.ready"
start_launcher
[ "$(state org.t.Ok)" = running ] && [ "$(state org.t.Slow)" = running ] && [ "$(state org.t.NoExec)" = idle ]
t $? "a restarted launcher finds running services running and the others idle"
call org.t.Ok 1 quit-first
call org.t.Ok 2
grep -q "replies=2 errors=0" "$T/out"; t $? "activation works after the launcher restart"

# StartServiceByName and UpdateActivationEnvironment (the proxy's driver
# calls these functions; kdbus-launcher exposes them as --start/--setenv)
"$TOP/tools/kdbusctl" --world make-bus starttest > "$T/bus2" & MB=$!
wait_for "$T/bus2" /bus
BUS2=$(cat "$T/bus2")
mkdir -p "$T/sd2"
printf '[D-BUS Service]\nName=org.t.Ok2\nExec=%s %s org.t.Ok2 log=%s\n' "$S" "$BUS2" "$T/ok2.log" > "$T/sd2/a.service"
printf '[D-BUS Service]\nName=org.t.Bad\nExec=/nonexistent/x\n' > "$T/sd2/b.service"
"$L" --user --bus="$BUS2" --servicedir="$T/sd2" --setenv=TEST_ENV=hello --start=org.t.Ok2 \
	--start=org.t.Bad --start=org.t.None > "$T/l2.out" 2>> "$T/launcher.log" & L2=$!
wait_for "$T/l2.out" "start org.t.Bad" 50
wait_for "$T/l2.out" "start org.t.Ok2" 50
sed 's/^/# /' "$T/l2.out"
grep -q "^start org.t.Ok2: 1$" "$T/l2.out"; t $? "StartServiceByName of an idle name completes with 1 once the service took it"
grep -q "^start org.t.Bad: org.freedesktop.DBus.Error.Spawn.ExecFailed: " "$T/l2.out"
t $? "StartServiceByName reports Spawn.ExecFailed"
grep -q "^start org.t.None: org.freedesktop.DBus.Error.ServiceUnknown" "$T/l2.out"
t $? "StartServiceByName of an unknown name is ServiceUnknown"
grep -q "start session hello" "$T/ok2.log"; t $? "UpdateActivationEnvironment reaches the started service"
kill $L2; wait $L2 2>/dev/null
"$L" --user --bus="$BUS2" --servicedir="$T/sd2" --start=org.t.Ok2 > "$T/l3.out" 2>> "$T/launcher.log" & L3=$!
wait_for "$T/l3.out" "start org.t.Ok2" 50
grep -q "^start org.t.Ok2: 2$" "$T/l3.out"; t $? "StartServiceByName of a running name is 2"
kill $L3 $MB; wait $L3 $MB 2>/dev/null

# --- classic callers through kdbus-proxy, and a dbus-python service ---
# Debian's programs run in a chroot into the host's root (/host) and
# reach the bus through proxy/kdbus-proxy (as in test/proxy/test-proxy.sh).
P=$TOP/proxy/kdbus-proxy
SOCK=$T/bus.sock
ADDR=unix:path=$SOCK
PST=$T/run/kdbus/launcher-p.state
PSD=$T/sdp
mounted=
PROXY_OK=0
start_proxy() {
	rm -f "$SOCK"
	"$P" --bus="$BUS" --address="$ADDR" 2>> "$T/proxy.log" & PXPID=$!
	i=0
	while [ ! -S "$SOCK" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	[ -S "$SOCK" ]
}
# the launcher for the names called through the proxy: a long timeout
# (python starts slowly under TCG), DBUS_STARTER_ADDRESS = the proxy
start_plauncher() {
	rm -f "$T/pl.ready"
	"$L" --user --bus="$BUS" --servicedir="$PSD" --timeout=150000 --address="$ADDR" \
		--state-file="$PST" > "$T/pl.ready" 2>> "$T/launcher.log" & PLPID=$!
	wait_for "$T/pl.ready" ready 600
}
pstate() { awk -v n="$1" '$1 == n { print $2 }' "$PST"; }
# x SECONDS PROGRAM ARGS: a Debian program in the chroot, with a time limit
x() { s=$1; shift; chroot /host timeout -k 5 "$s" "$@"; }
ds() { x 200 dbus-send --bus="$ADDR" --print-reply --reply-timeout=150000 "$@"; }
pycall() { # name count [quit-first] -> summary line in $T/out
	x 300 /usr/bin/python3 "$HP/test/activation/py-caller.py" "$ADDR" "$@" timeout=150 > "$T/out" 2>&1
	sed 's/^/# /' "$T/out"
}
# burst TAG K: K dbus-send callers at once, Echo(0..K-1), each answer in $T/ds.TAG.I
burst() {
	j=0
	while [ $j -lt "$2" ]; do
		ds --dest=org.t.PSlow /t org.kdbus.Test.Echo uint32:$j > "$T/ds.$1.$j" 2>&1 &
		BURST="$BURST $!"
		j=$((j + 1))
	done
}
# answered TAG K: every caller of the burst got its own Echo back once
answered() {
	j=0
	while [ $j -lt "$2" ]; do
		[ "$(grep -c "uint32 $j\$" "$T/ds.$1.$j")" = 1 ] || { sed 's/^/# /' "$T/ds.$1.$j"; return 1; }
		j=$((j + 1))
	done
}
# the service pids that answered the bursts (the second uint32 of each reply)
answer_pids() { cat "$@" | awk '/uint32/ { if (++k % 2 == 0) print $2 }' | sort -u | wc -l; }

if [ -x /host/usr/bin/dbus-send ] && [ -x /host/usr/bin/python3 ] && [ -x "$P" ] &&
	[ "${TOP#/host/}" != "$TOP" ] && chroot /host /usr/bin/python3 -c 'import dbus, gi' 2> /dev/null; then
	PROXY_OK=1
fi
if [ $PROXY_OK = 1 ]; then
	HP=${TOP#/host}
	for d in proc sys dev dev/pts tmp run; do
		if ! grep -q " /host/$d " /proc/mounts; then
			mount --rbind "/$d" "/host/$d" && mounted="/host/$d $mounted"
		fi
	done
	mkdir -p "$PSD"
	# Exec= wants an absolute path; busybox's chroot is an applet
	printf "[D-BUS Service]\nName=org.t.PyAct\nExec=/bin/sh -c 'exec chroot /host /usr/bin/python3 %s org.t.PyAct log=%s'\n" \
		"$HP/test/activation/py-service.py" "$T/py.log" > "$PSD/py.service"
	printf '[D-BUS Service]\nName=org.t.PSlow\nExec=%s %s org.t.PSlow slow=1500 log=%s\n' \
		"$S" "$BUS" "$T/pslow.log" > "$PSD/pslow.service"
	printf '[D-BUS Service]\nName=org.t.PDaemon\nExec=%s %s org.t.PDaemon daemon log=%s\n' \
		"$S" "$BUS" "$T/pdaemon.log" > "$PSD/pdaemon.service"
	start_proxy; t $? "kdbus-proxy listens on $SOCK for the bus"
	start_plauncher; t $? "a second launcher holds the names called through the proxy"

	# a dbus-python service, activated by dbus-send and by a native caller
	ds --dest=org.t.PyAct /t org.kdbus.Test.Echo uint32:7 > "$T/out" 2>&1
	sed 's/^/# /' "$T/out"
	grep -q "uint32 7$" "$T/out"; t $? "dbus-send through kdbus-proxy activates a dbus-python service and is answered"
	grep -q "start session $ADDR\$" "$T/py.log"
	t $? "the python service was started with DBUS_STARTER_ADDRESS = the proxy's address"
	"$C" "$BUS" org.t.PyAct 5 > "$T/out" 2>&1; sed 's/^/# /' "$T/out"
	grep -q "replies=5 errors=0 dup=0 order=ok pids=1" "$T/out"
	t $? "a native caller calls the running python service"
	ds --dest=org.t.PyAct /t org.kdbus.Test.Quit > /dev/null 2>&1
	wait_for "$PST" "org.t.PyAct idle" 300
	t $? "the python service quits and its name is idle again"
	"$C" "$BUS" org.t.PyAct 3 timeout=150 > "$T/out" 2>&1; sed 's/^/# /' "$T/out"
	grep -q "replies=3 errors=0 dup=0 order=ok pids=1" "$T/out" && [ "$(grep -c start "$T/py.log")" = 2 ]
	t $? "a native caller activates the dbus-python service"

	# 100 calls from a dbus-python caller, queued while the service starts
	pycall org.t.PSlow 100
	grep -q "replies=100 errors=0 dup=0 order=ok pids=1" "$T/out"
	t $? "100 proxied calls queued during a slow start are answered once each, in order"

	# the windows with proxied callers: before the start, while it starts
	# (slow=1500 ms), while it takes the name, after; one instance answers all
	"$C" "$BUS" org.t.PSlow 0 quit-first > /dev/null 2>&1
	wait_for "$PST" "org.t.PSlow idle" 100
	BURST=
	burst a 4
	sleep 0.7
	burst b 4
	x 200 gdbus call -a "$ADDR" -d org.t.PSlow -o /t -m org.kdbus.Test.Echo "uint32 42" > "$T/gd" 2>&1 & BURST="$BURST $!"
	sleep 0.8
	burst c 4
	sleep 0.3
	burst d 4
	wait $BURST
	sed 's/^/# gdbus: /' "$T/gd"
	answered a 4 && answered b 4 && answered c 4 && answered d 4 && grep -q "42," "$T/gd" &&
		[ "$(answer_pids "$T"/ds.*)" = 1 ]
	t $? "dbus-send and gdbus calls before, during and after the start and hand-over are answered once by one instance"
	[ "$(grep -c start "$T/pslow.log")" = 2 ]; t $? "that burst started the service once"

	# the service exits and gives the name back while proxied calls arrive
	fail=0
	for i in 1 2 3; do
		pycall org.t.PSlow 5 quit-first
		grep -q "replies=5 errors=0 dup=0 order=ok" "$T/out" || fail=1
	done
	t $fail "proxied calls made while the service exits and releases its name are answered once (3 rounds)"
	BURST=
	rm -f "$T"/ds.*
	ds --dest=org.t.PSlow /t org.kdbus.Test.Quit > "$T/q" 2>&1 & BURST="$BURST $!"
	burst e 6
	wait $BURST
	answered e 6; t $? "dbus-send callers racing a Quit are each answered once"

	# a service that double-forks: the started process exits 0, the grandchild takes the name
	ds --dest=org.t.PDaemon /t org.kdbus.Test.Echo uint32:3 > "$T/out" 2>&1
	dpid=$(awk '/uint32/ { k++; if (k == 2) print $2 }' "$T/out")
	grep -q "uint32 3$" "$T/out" && grep -q "^$dpid start" "$T/pdaemon.log" &&
		becomes pstate org.t.PDaemon running
	t $? "a double-forking service is activated through the proxy (answered by the grandchild $dpid)"

	# kill -9 the proxy and both launchers: the bus, native clients, their
	# names and calls between them stay; restarted, activation resumes
	"$S" "$BUS" org.t.Keep log="$T/keep.log" 2>> "$T/launcher.log" & KEEP=$!
	wait_for "$T/keep.log" start
	i=0
	while ! "$TOP/tools/kdbusctl" --bus "$BUS" list > "$T/l1" 2>&1 || ! grep -q "^org.t.Keep " "$T/l1"; do
		[ $i -lt 50 ] || break
		sleep 0.1
		i=$((i + 1))
	done
	keep_conn=$(awk '$1 == "org.t.Keep" { print $5 }' "$T/l1")
	"$C" "$BUS" org.t.PSlow 1 > /dev/null 2>&1        # running
	kill -9 $PXPID $PLPID $LPID
	wait $PXPID $PLPID $LPID 2>/dev/null
	"$C" "$BUS" org.t.Keep 3 > "$T/out" 2>&1
	"$TOP/tools/kdbusctl" --bus "$BUS" list > "$T/l2" 2>&1
	[ -e "$BUS" ] && grep -q "replies=3 errors=0 dup=0" "$T/out" && [ -n "$keep_conn" ] &&
		[ "$(awk '$1 == "org.t.Keep" { print $5 }' "$T/l2")" = "$keep_conn" ]
	t $? "after kill -9 of the proxy and the launchers native clients keep their names ($keep_conn) and call each other"
	"$C" "$BUS" org.t.PSlow 2 > "$T/out" 2>&1
	grep -q "replies=2 errors=0 dup=0 order=ok pids=1" "$T/out"
	t $? "an activated service still runs and answers without proxy and launchers"
	start_proxy; r1=$?
	start_plauncher; r2=$?
	start_launcher; r3=$?
	[ $r1 = 0 ] && [ $r2 = 0 ] && [ $r3 = 0 ]
	t $? "the proxy and both launchers restart on the same bus (proxy $r1, launchers $r2 $r3)"
	ds --dest=org.t.Keep /t org.kdbus.Test.Echo uint32:9 > "$T/out" 2>&1
	grep -q "uint32 9$" "$T/out"; t $? "the restarted proxy reaches the native client"
	ds --dest=org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus.ListActivatableNames > "$T/act" 2>&1
	grep -q '"org.t.PSlow"' "$T/act" && grep -q '"org.t.PyAct"' "$T/act" && grep -q '"org.t.Ok"' "$T/act"
	t $? "ListActivatableNames through the restarted proxy lists the names again"
	"$C" "$BUS" org.t.PSlow 0 quit-first > /dev/null 2>&1
	wait_for "$PST" "org.t.PSlow idle" 100
	before=$(grep -c start "$T/pslow.log")
	ds --dest=org.t.PSlow /t org.kdbus.Test.Echo uint32:5 > "$T/out" 2>&1
	grep -q "uint32 5$" "$T/out" && [ "$(grep -c start "$T/pslow.log")" = $((before + 1)) ]
	t $? "activation through the restarted proxy and launcher starts the service again"
	kill $KEEP; wait $KEEP 2>/dev/null
else
	for s in "dbus-python service activated by dbus-send and by a native caller" \
		"proxied calls in the start, hand-over and exit windows" \
		"a double-forking service through the proxy" \
		"kill -9 of the proxy and the launchers"; do
		echo "ok $((n = n + 1)) - # SKIP $s: needs the VM's /host with dbus-send, python3-dbus and proxy/kdbus-proxy"
	done
fi

# Debian's real system service files, read unchanged from the host. The
# launcher runs in the chroot so that their Exec= programs exist; entries
# with only SystemdService= (Exec=/bin/false) need systemd as PID 1 (not
# implemented: 6.4) and get no activator.
DEB=/usr/share/dbus-1/system-services
if [ $PROXY_OK = 1 ] && [ -d "/host$DEB" ]; then
	expect=0 sdonly=0
	for f in "/host$DEB"/*.service; do
		if grep -q '^Exec=/bin/false' "$f" && grep -q '^SystemdService=' "$f"; then
			sdonly=$((sdonly + 1))
		else
			expect=$((expect + 1))
		fi
	done
	# a proxy as kdbus-proxy.service runs it: Debian's system.conf policy
	SADDR=unix:path=$T/system.sock
	chroot /host "$HP/proxy/kdbus-proxy" --system --bus="$BUS" --address="$SADDR" \
		--config-file=/usr/share/dbus-1/system.conf 2>> "$T/proxy.log" & SPX=$!
	i=0
	while [ ! -S "$T/system.sock" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	DBUS_SYSTEM_BUS_ADDRESS=$SADDR chroot /host "$HP/proxy/kdbus-launcher" --system --bus="$BUS" \
		--servicedir="$DEB" --address="$SADDR" --timeout=150000 --state-file="$T/sysstate" \
		> "$T/sys.ready" 2> "$T/sys.log" & SPID=$!
	wait_for "$T/sys.ready" ready
	got=$(grep -vc '^#' "$T/sysstate")
	sed 's/^/# /' "$T/sysstate" "$T/sys.log"
	[ "$got" = "$expect" ]
	t $? "Debian's system service files load: $got of $expect activatable; $sdonly systemd-only (Exec=/bin/false, SystemdService=) get no activator: systemd activation is not implemented and needs systemd as PID 1"
	ds --dest=org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus.ListActivatableNames > "$T/act" 2>&1
	"$TOP/tools/kdbusctl" --bus "$BUS" list > "$T/l3" 2>&1
	fail=0
	for name in $(grep -v '^#' "$T/sysstate" | awk '{ print $1 }'); do
		grep -q "\"$name\"" "$T/act" && grep -Eq "^$name .*activator" "$T/l3" || { echo "# $name not listed"; fail=1; }
	done
	t $fail "each loaded Debian name is listed by ListActivatableNames and kdbusctl list"
	# polkitd runs without systemd: activated by a call through the
	# system.conf proxy, it answers
	if grep -q '^Exec=/usr/lib/polkit-1/polkitd' "/host$DEB/org.freedesktop.PolicyKit1.service" 2>/dev/null &&
		[ -x /host/usr/lib/polkit-1/polkitd ] && [ -S "$T/system.sock" ]; then
		x 200 dbus-send --bus="$SADDR" --print-reply --reply-timeout=150000 \
			--dest=org.freedesktop.PolicyKit1 /org/freedesktop/PolicyKit1/Authority \
			org.freedesktop.DBus.Properties.Get string:org.freedesktop.PolicyKit1.Authority \
			string:BackendName > "$T/out" 2>&1
		sed 's/^/# /' "$T/out"
		grep -q 'variant.*string' "$T/out" && [ "$(awk '$1 == "org.freedesktop.PolicyKit1" { print $2 }' "$T/sysstate")" = running ]
		t $? "Debian's org.freedesktop.PolicyKit1.service starts polkitd on demand (proxy with Debian's system.conf)"
	else
		echo "ok $((n = n + 1)) - # SKIP no polkitd on the host (or the system.conf proxy did not start): of Debian's service files only polkitd's runs in the VM"
	fi
	kill $SPID $SPX; wait $SPID $SPX 2>/dev/null
else
	echo "ok $((n = n + 1)) - # SKIP no /usr/share/dbus-1/system-services or no /host chroot"
	echo "ok $((n = n + 1)) - # SKIP no /usr/share/dbus-1/system-services or no /host chroot"
	echo "ok $((n = n + 1)) - # SKIP no /usr/share/dbus-1/system-services or no /host chroot"
fi
[ -n "$PXPID" ] && kill $PXPID $PLPID 2>/dev/null && wait $PXPID $PLPID 2>/dev/null
pkill_polkit=$(awk '$1 == "org.freedesktop.PolicyKit1" { print $3 }' "$T/sysstate" 2>/dev/null)
[ -n "$pkill_polkit" ] && [ "$pkill_polkit" != 0 ] && kill "$pkill_polkit" 2>/dev/null
for m in $mounted; do umount -l "$m"; done

kill $LPID; wait $LPID 2>/dev/null
[ ! -e "$ST" ]; t $? "the launcher removes its state file on SIGTERM"
kill $HPID; wait $HPID 2>/dev/null
sleep 0.2
[ ! -e "$BUS" ]; t $? "the bus goes away with its holder"
sed 's/^/# launcher: /' "$T/launcher.log" | tail -60
[ -f "$T/proxy.log" ] && sed 's/^/# proxy: /' "$T/proxy.log" | tail -20
rm -rf "$T"
echo "1..$n"
[ "$failures" = 0 ]
