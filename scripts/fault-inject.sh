#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Runs in the debug VM (scripts/check-debug.sh): a test binary under
# failslab and then fail_page_alloc at each rate, task-filtered: with
# KDBUS_TEST_FAULT_INJECT=1, kdbus-test sets /proc/self/make-it-fail in each
# test child, so only the tests' allocations fail. Tests may fail; each
# round is one TAP result, "not ok" only if the test binary (the runner)
# died of a signal or printed no plan. The kernel
# must report nothing (the host judges the kernel log).
#   fault-inject.sh "RATES" TEST-BINARY [TEST ARGS...]

rates=$1
shift
# Run a copy in tmpfs: the host's tree is a 9p mount, and a page fault on a
# 9p-backed binary whose read is failed by the injection is a SIGBUS of the
# test (the harness's own failure, not the module's). tmpfs pages are
# allocated here, before any injection.
bin=/tmp/fault-inject-$(basename "$1")
cp "$1" "$bin" || exit 1
shift
set -- "$bin" "$@"
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
		# The test's own TAP goes into comments: not counted. Each test
		# child enables the injection for itself (make-it-fail, then
		# inherited by what it forks); the runner is not failed.
		KDBUS_TEST_FAULT_INJECT=1 "$@" >/tmp/fi.out 2>&1
		rc=$?
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
