#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# make check: the host tests (test/host), then the kernel tests in the VM
# (vm/run --tap, T= selects tests or groups). Ends with the line
# "N passed, N failed" over both; SKIPs are counted apart, and failures of
# the run itself (kernel warning, crash, timeout, rmmod, a test binary
# that dies) count as failed. Exits non-zero iff anything failed.
#
# KVER selects the kernel the VM boots (the module must be built for it:
# `make check KVER=...` does that). CHECK_HOST=0 skips the host tests and
# the fuzzer, CHECK_VM=0 the VM runs (scripts/check-all.sh uses both).

set -uo pipefail

REPO=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd -P)
LOG=$REPO/build/check
mkdir -p "$LOG"
passed=0 failed=0 skipped=0

# One host suite: `make -C DIR check` prints TAP; its counts are added.
host_suite() {
	local dir=$1 name=$2 rc p f s m

	[ -f "$REPO/$dir/Makefile" ] || return 0
	echo "== $name ($dir)"
	make --no-print-directory -C "$REPO/$dir" check 2>&1 | tee "$LOG/$name.log"
	rc=${PIPESTATUS[0]}
	read -r p f s m < <("$REPO/scripts/tap-count.sh" <"$LOG/$name.log")
	f=$((f + m))
	if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
		echo "$name: make -C $dir check failed (status $rc) without a failing test"
		f=1
	fi
	echo "$name: $p passed, $f failed, $s skipped"
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
}

if [ "${CHECK_HOST:-1}" != 0 ]; then
	host_suite test/host host
	# the activation launcher's service-file parsing
	host_suite test/activation activation-host
fi

# The message parser's fuzzer, for a bounded time (a full run only: T=
# selects VM tests). A crash, leak or round-trip mismatch is one failure.
if [ "${CHECK_HOST:-1}" != 0 ] && [ -z "${T:-}" ] && [ -f "$REPO/test/fuzz/Makefile" ]; then
	echo "== fuzzing the libkdbus message parser (${FUZZ_TIME:=20} s)"
	if make --no-print-directory -C "$REPO/test/fuzz" check \
		FUZZ_TIME="$FUZZ_TIME" >"$LOG/fuzz.log" 2>&1; then
		grep -E '^stat::number_of_executed_units' "$LOG/fuzz.log" || true
		echo "ok - fuzz/message-parser"
		passed=$((passed + 1))
	else
		tail -n 30 "$LOG/fuzz.log"
		echo "not ok - fuzz/message-parser"
		failed=$((failed + 1))
	fi
fi

# Add the counts of one vm/run --tap log ("vm: N passed, N failed, N
# skipped"); a run that never printed them counts as one failure.
vm_tally() {
	local line p f s

	line=$(grep -E '^vm: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped' "$1" | tail -n1)
	if [ -n "$line" ]; then
		read -r p f s < <(sed -E 's/^vm: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped.*/\1 \2 \3/' <<<"$line")
	else
		echo "vm: $2 did not complete"
		p=0 f=1 s=0
	fi
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
}

if [ "${CHECK_VM:-1}" != 0 ]; then
KVER=$("$REPO/scripts/kver.sh") || exit 1
export KVER
# T="lib" names the second boot only, not a kernel test
kt=$(sed -E 's/(^| )lib( |$)/ /g; s/^ +| +$//g' <<<"${T:-}")
if [ -z "${T:-}" ] || [ -n "$kt" ]; then
	echo "== VM tests on $KVER (test/kernel/kdbus-test${kt:+ $kt})"
	T=$kt "$REPO/vm/run" --tap 2>&1 | tee "$LOG/vm.log"
	vm_tally "$LOG/vm.log" "the VM run"
fi

# libkdbus and kdbusctl against the real module (a second boot; a full
# run, or T= naming "lib")
if [ -f "$REPO/test/kernel-lib/test-lib.c" ] && { [ -z "${T:-}" ] || [[ " $T " == *" lib "* ]]; }; then
	echo "== library, tool, proxy and activation tests in the VM on $KVER"
	# every user-space suite that runs against the real module, one
	# TAP stream after the other in the same boot
	cmd="/host$REPO/test/kernel-lib/test-lib; r=\$?; /host$REPO/test/kernel-lib/test-kdbusctl.sh || r=1"
	for suite in test/proxy/test-proxy.sh test/activation/test-activation.sh; do
		[ ! -x "$REPO/$suite" ] || cmd="$cmd; /host$REPO/$suite || r=1"
	done
	"$REPO/vm/run" --tap -c "$cmd; exit \$r" 2>&1 | tee "$LOG/vm-lib.log"
	vm_tally "$LOG/vm-lib.log" "the library VM run"
fi
fi

echo "total: $skipped skipped"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
