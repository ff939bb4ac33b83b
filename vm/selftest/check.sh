#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Prove the VM harness: build the self-test modules (in the build dir, not
# here) and assert that vm/run judges each scenario as it must. Prints TAP.
#   clean module                       -> pass
#   WARN_ON at load                    -> fail (kernel log)
#   module that cannot be unloaded     -> fail (rmmod)
#   guest kernel panic                 -> fail (no end marker)
#   TAP "1 ok, 1 not ok, 1 skip" with a plan of 4
#                                      -> 1 passed, 2 failed (one missing)
#   command that runs too long         -> fail (guest-side timeout)
#   command that ignores the guest's timeout
#                                      -> fail (host-side timeout kills qemu)

set -uo pipefail

REPO=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd -P)
RUN=$REPO/vm/run
OBJ=$REPO/build/selftest
KVER=$("$REPO/scripts/kver.sh") || exit 1
KDIR=${KDIR:-/lib/modules/$KVER/build}
export KVER

mkdir -p "$OBJ"
cp "$REPO"/vm/selftest/Kbuild "$REPO"/vm/selftest/*.c "$OBJ"/
if ! make -s -C "$KDIR" M="$OBJ" modules >"$OBJ/build.log" 2>&1; then
	cat "$OBJ/build.log"
	echo "Bail out! cannot build the self-test modules"
	exit 1
fi

n=0
fails=0
check() {
	local name=$1 want=$2 out rc
	shift 2
	n=$((n + 1))
	out=$("$RUN" "$@" 2>&1)
	rc=$?
	if { [ "$want" = pass ] && [ $rc = 0 ]; } || { [ "$want" = fail ] && [ $rc != 0 ]; }; then
		if grep -qF -- "$expect_line" <<<"$out"; then
			echo "ok $n - harness/$name"
			[ -z "${VERBOSE:-}" ] || sed 's/^/#   /' <<<"$out"
			# Expected failure: its kept logs are of no interest.
			sed -n 's/^vm: logs kept in \([^ ]*\).*/\1/p' <<<"$out" |
				while read -r d; do
					case "$d" in "$REPO"/build/vm/run.*) rm -rf "$d" ;; esac
				done
			return
		fi
	fi
	fails=$((fails + 1))
	echo "not ok $n - harness/$name (wanted $want${expect_line:+ with \"$expect_line\"}, got status $rc)"
	sed 's/^/# /' <<<"$out"
}

echo "TAP version 13"
echo "1..7"
expect_line="vm: ok"
check clean-module pass --module "$OBJ/kdbus_selftest_clean.ko" --no-mount -- true
expect_line="WARNING:"
check warn-is-failure fail --module "$OBJ/kdbus_selftest_warn.ko" --no-mount -- true
expect_line="rmmod of kdbus_selftest_nounload failed"
check rmmod-failure fail --module "$OBJ/kdbus_selftest_nounload.ko" --no-mount -- true
expect_line="did not reach its end marker"
KDBUS_VM_TIMEOUT=120 check panic-is-failure fail --no-module -c 'echo c >/proc/sysrq-trigger'
expect_line="vm: 1 passed, 2 failed, 1 skipped"
check tap-counting fail --no-module --tap -c \
	'echo "TAP version 13"; echo 1..4; echo "ok 1 - a"; echo "not ok 2 - b"; echo "ok 3 - c # SKIP no"; exit 1'
expect_line="ran into the guest timeout of 40s"
KDBUS_VM_TIMEOUT=60 check guest-timeout fail --no-module -c 'sleep 600'
expect_line="timeout: the VM did not finish within 30s"
KDBUS_VM_TIMEOUT=30 check host-timeout fail --no-module -c 'trap "" TERM; sleep 600; sleep 600'
echo "# harness self-test: $((n - fails)) passed, $fails failed"
[ $fails = 0 ]
