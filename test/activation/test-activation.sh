#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Service activation end to end with native callers, in the VM (busybox
# sh): kdbus-bus-holder makes the bus, kdbus-launcher holds the
# activators, test-service is started on demand and test-caller calls it.
# Prints TAP.
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
n=0
failures=0
export XDG_DATA_DIRS=/nonexistent XDG_DATA_HOME=/nonexistent XDG_RUNTIME_DIR=/nonexistent

t() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		failures=$((failures + 1))
	fi
}

# wait until file $1 contains $2 (at most $3 tenths of a second, default 100)
wait_for() {
	i=0
	while ! grep -q -- "$2" "$1" 2>/dev/null && [ $i -lt "${3:-100}" ]; do
		sleep 0.1
		i=$((i + 1))
	done
	grep -q -- "$2" "$1" 2>/dev/null
}

svc() { # name exec-line
	printf '[D-BUS Service]\nName=%s\nExec=%s\n' "$1" "$2" > "$SD/$1.service"
}

state() { # name -> state from the launcher's state file
	awk -v n="$1" '$1 == n { print $2 }' "$ST"
}

call() { # name count [args] -> summary line in $T/out
	"$C" "$BUS" "$@" > "$T/out" 2>&1
	cat "$T/out" | sed 's/^/# /'
}

start_launcher() {
	"$L" --user --bus="$BUS" --servicedir="$SD" --timeout=3000 \
		--state-file="$ST" > "$T/launcher.ready" 2>> "$T/launcher.log" &
	LPID=$!
	wait_for "$T/launcher.ready" ready
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
[ "$(state org.t.Ok)" = running ]; t $? "the name is running after the hand-over"
grep -q "start session" "$T/ok.log"; t $? "DBUS_STARTER_BUS_TYPE=session is in the service's environment"

XDG_RUNTIME_DIR=$T/run "$TOP/tools/kdbusctl" status > "$T/status" 2>&1
sed 's/^/# /' "$T/status"
grep -q "^bus $BUS" "$T/status" && grep -q "activatable 8" "$T/status" &&
	grep -Eq "^  org.t.Ok +running +:1\.[0-9]+" "$T/status" && grep -Eq "^  org.t.Hang +idle +-" "$T/status" &&
	grep -q "messages_delivered" "$T/status"
t $? "kdbusctl status shows the bus, activatable names with states and owners, and the counters"

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
rm "$SD/org.t.Hang.service"
kill -HUP $LPID
wait_for "$T/launcher.log" reloaded
wait_for "$ST" "org.t.New idle" 20 && ! grep -q "org.t.Hang" "$ST"
t $? "SIGHUP adds new names and removes vanished ones"
call org.t.New 2
grep -q "replies=2 errors=0" "$T/out"; t $? "a name added by reload is activated"
"$C" "$BUS" org.t.Hang 1 timeout=2 > "$T/out" 2>&1
grep -q "replies=0 errors=1" "$T/out"; t $? "a removed name is no longer activatable"

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

# Debian's real system service files load (the launcher needs systemd for
# those with Exec=/bin/false, so they get no activator)
DEB=/host/usr/share/dbus-1/system-services
if [ -d "$DEB" ]; then
	expect=0
	for f in "$DEB"/*.service; do
		# Exec=/bin/false with SystemdService= means systemd activation only
		grep -q '^Exec=/bin/false' "$f" && grep -q '^SystemdService=' "$f" ||
			expect=$((expect + 1))
	done
	"$L" --system --bus="$BUS" --servicedir="$DEB" --state-file="$T/sysstate" \
		> "$T/sys.ready" 2> "$T/sys.log" & SPID=$!
	wait_for "$T/sys.ready" ready
	got=$(grep -vc '^#' "$T/sysstate")
	sed 's/^/# /' "$T/sysstate"
	kill $SPID; wait $SPID 2>/dev/null
	[ "$got" = "$expect" ]; t $? "Debian's system service files load ($got of $expect not systemd-only)"
else
	echo "ok $((n = n + 1)) - # SKIP no /usr/share/dbus-1/system-services on the host"
fi

kill $LPID; wait $LPID 2>/dev/null
[ ! -e "$ST" ]; t $? "the launcher removes its state file on SIGTERM"
kill $HPID; wait $HPID 2>/dev/null
sleep 0.2
[ ! -e "$BUS" ]; t $? "the bus goes away with its holder"
sed 's/^/# launcher: /' "$T/launcher.log" | tail -60
rm -rf "$T"
echo "1..$n"
[ "$failures" = 0 ]
