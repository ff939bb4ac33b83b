#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Runs in the debug VM (scripts/check-debug.sh): a test binary under
# failslab and then fail_page_alloc at each rate, task-filtered
# (/proc/<pid>/make-it-fail, inherited by the test children) so only the
# tests' allocations fail. Tests may fail; each round is one TAP result,
# "not ok" only if the test binary died of a signal or timed out. The kernel
# must report nothing (the host judges the kernel log).
#   fault-inject.sh "RATES" TEST-BINARY [TEST ARGS...]

rates=$1
shift
dbg=/sys/kernel/debug
for f in failslab fail_page_alloc; do
	[ -d $dbg/$f ] || { echo "1..1"; echo "not ok 1 - $dbg/$f missing"; exit 1; }
done

set_knobs() {	# dir probability
	echo "$2" >"$dbg/$1/probability"
	echo 0 >"$dbg/$1/interval"
	echo -1 >"$dbg/$1/times"
	echo 0 >"$dbg/$1/space"
	echo 0 >"$dbg/$1/verbose"
	echo Y >"$dbg/$1/task-filter"
	echo N >"$dbg/$1/ignore-gfp-wait"
	[ ! -e "$dbg/$1/ignore-gfp-highmem" ] || echo N >"$dbg/$1/ignore-gfp-highmem"
	[ ! -e "$dbg/$1/min-order" ] || echo 0 >"$dbg/$1/min-order"
}

n=0
for r in $rates; do n=$((n + 2)); done
echo "1..$n"
i=0
rc_all=0
for r in $rates; do
	for f in failslab fail_page_alloc; do
		i=$((i + 1))
		set_knobs $f "$r"
		start=$(date +%s)
		# The test's own TAP goes into comments: not counted.
		# exec itself may be failed by the injection: retry a few times
		for _ in 1 2 3 4 5; do
			sh -c 'echo 1 >/proc/self/make-it-fail; exec "$@"' \
				fault-inject "$@" >/tmp/fi.out 2>&1
			rc=$?
			grep -q '^1\.\.' /tmp/fi.out && break
		done
		set_knobs $f 0
		p=$(grep -c '^ok' /tmp/fi.out)
		nf=$(grep -c '^not ok' /tmp/fi.out)
		sed 's/^/# /' /tmp/fi.out | grep -v '^# ok' | tail -n 40
		msg="$f at $r%: $p passed, $nf failed under injection, status $rc, $(($(date +%s) - start))s"
		if [ "$rc" -ge 128 ] || ! grep -q '^1\.\.' /tmp/fi.out; then
			echo "not ok $i - $msg"
			rc_all=1
		else
			echo "ok $i - $msg"
		fi
	done
done
exit $rc_all
