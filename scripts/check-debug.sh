#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# make check-debug: the whole VM suite on the debug kernel (KASAN, UBSAN,
# kmemleak, lockdep, KCOV, fault injection; vm/debug/debug.config).
#  1. builds or reuses the debug kernel (scripts/debug-kernel.sh, cached
#     outside the tree), builds the module against it with KCOV (a separate
#     build directory: kernel/kdbus.ko stays the stock one);
#  2. one boot: test/kernel/kdbus-test, the library and tool tests of
#     test/kernel-lib, then fault injection (failslab and fail_page_alloc,
#     task-filtered to the test process and its children, at each rate of
#     KDBUS_DEBUG_FI_RATES) over KDBUS_DEBUG_FI_T; tests may fail under fault
#     injection, the kernel must report nothing; then FUZZ seconds of the
#     ioctl fuzzer; then no kdbus object may be left (live_* gauges);
#  3. vm/run fails on any kernel report, kmemleak entry (scanned with the
#     module loaded and after rmmod) or failed rmmod.
# Ends with "N passed, N failed".
#   T=...                      kdbus-test names/groups (default: all)
#   KDBUS_DEBUG_FI_RATES       percentages (default "2 10"; "" = none)
#   KDBUS_DEBUG_FI_T           tests under fault injection (default: the
#                              data path and teardown groups, see below;
#                              "all" = every test)
#   FUZZ=SECONDS               then the ioctl fuzzer (test/fuzz/) for that
#                              long in the same boot (default 0: none;
#                              .ci/run uses a few minutes)

set -uo pipefail

REPO=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd -P)
LOG=${KDBUS_DEBUG_LOG:-$REPO/build/check-debug}	# another one: a concurrent run
mkdir -p "$LOG"
LOG=$(cd "$LOG" && pwd -P)
start=$(date +%s)

KSRC=$("$REPO/scripts/debug-kernel.sh") || { echo "check-debug: the debug kernel did not build"; echo "0 passed, 1 failed"; exit 1; }
echo "check-debug: debug kernel $KSRC ($(($(date +%s) - start))s)"

# The module against the debug kernel, with KCOV, outside kernel/.
MOD=$REPO/build/debug/kernel
# Incremental, never emptied: a concurrent run (make fuzz-kernel) may be
# about to load the module from here.
mkdir -p "$MOD"
for f in "$MOD"/*.[ch]; do
	[ ! -e "$f" ] || [ -e "$REPO/kernel/${f##*/}" ] || rm -f "$f"
done
cp -p "$REPO"/kernel/*.[ch] "$REPO/kernel/Kbuild" "$MOD/"
ln -sfn ../../include "$REPO/build/debug/include"
if ! make -C "$KSRC" M="$MOD" KDBUS_KCOV=1 modules >"$LOG/module.log" 2>&1; then
	tail -n 30 "$LOG/module.log"
	echo "check-debug: the module did not build against the debug kernel"
	echo "0 passed, 1 failed"
	exit 1
fi

[ -z "${KDBUS_DEBUG_BUILD_ONLY:-}" ] || exit 0

G=/host$REPO
rates=${KDBUS_DEBUG_FI_RATES-2 10}
# Four rounds of the whole suite would take ~40 minutes under KASAN on TCG.
fi_t=${KDBUS_DEBUG_FI_T:-hello message memfd names match broadcast sync reply teardown race}
[ "$fi_t" != all ] || fi_t=
fuzz=${FUZZ:-0}
if [ "$fuzz" -gt 0 ]; then
	gcc -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -O2 -static -pthread \
		-I"$REPO/include/uapi" -o "$REPO/build/debug/kdbus-ioctl-fuzz" \
		"$REPO/test/fuzz/kdbus-ioctl-fuzz.c" || { echo "0 passed, 1 failed"; exit 1; }
fi
{
	echo "r=0"
	echo 'step() { echo "# check-debug: $1 took $(($(date +%s) - t0))s"; t0=$(date +%s); }'
	echo "t0=\$(date +%s)"
	echo "$G/test/kernel/kdbus-test ${T:-} || r=1"
	echo "step kdbus-test"
	if [ -z "${T:-}" ] && [ -x "$REPO/test/kernel-lib/test-lib" ]; then
		echo "$G/test/kernel-lib/test-lib || r=1"
		echo "$G/test/kernel-lib/test-kdbusctl.sh || r=1"
		echo "step 'library and tool tests'"
	fi
	if [ -n "$rates" ]; then
		echo "sh $G/scripts/fault-inject.sh \"$rates\" $G/test/kernel/kdbus-test $fi_t || r=1"
		echo "step 'fault injection'"
	fi
	if [ "$fuzz" -gt 0 ]; then
		# The ioctl fuzzer, one TAP result; its report goes to comments.
		cat <<EOS
echo "1..1"
mkdir -p /tmp/fuzz-new
KDBUS_FUZZ_NEED_KCOV=1 $G/build/debug/kdbus-ioctl-fuzz -t $fuzz -j 2 \\
	-c $G/test/fuzz/kernel-corpus -o /tmp/fuzz-new >/tmp/fuzz.out 2>&1
fr=\$?
sed 's/^/# /' /tmp/fuzz.out | grep -E 'seeds|done|total|fail|kcov'
if [ \$fr = 0 ]; then
	echo "ok 1 - fuzz: \$(sed -n 's/^fuzz: total: //p' /tmp/fuzz.out)"
else
	echo "not ok 1 - fuzz: status \$fr"; r=1
fi
step 'ioctl fuzzer'
EOS
	fi
	# Every test has ended: no kdbus object may be left but the mount's
	# domain and control nodes (the module's live_* gauges; deferred
	# frees, and orphaned test helpers still exiting, get 60 s).
	cat <<'EOS'
echo "1..1"
s=/sys/kernel/debug/kdbus/stats
left=
i=0
while [ $i -lt 60 ]; do
	left=$(awk '$1 ~ /^live_/ && $2 != ($1 == "live_nodes" ? 2 : 0)' $s)
	[ -n "$left" ] || break
	sleep 1
	i=$((i + 1))
done
if [ ! -r $s ]; then
	echo "not ok 1 - $s missing"; r=1
elif [ -n "$left" ]; then
	echo "$left" | sed 's/^/# left: /'
	echo "not ok 1 - kdbus objects left after every test ended"; r=1
else
	echo "ok 1 - no kdbus object left after every test ended"
fi
EOS
	echo "exit \$r"
} >"$LOG/cmd.sh"

echo "== the VM suite on the debug kernel (fault injection at: ${rates:-none})"
# KASAN's quarantine (1/32 of the guest's 2 GiB) counts as slab: the
# soak's slab tolerance (kmemleak and the live object gauges are exact).
KDBUS_TEST_SLAB_TOL_KB=${KDBUS_TEST_SLAB_TOL_KB:-65536} \
KDBUS_VM_KERNEL=$KSRC/arch/x86/boot/bzImage \
KDBUS_VM_APPEND="acpi=noirq kmemleak=on" \
KDBUS_VM_TIMEOUT=${KDBUS_VM_TIMEOUT:-3600} \
	"$REPO/vm/run" --tap --module "$MOD/kdbus.ko" -c "sh /host$LOG/cmd.sh" 2>&1 |
	tee "$LOG/vm.log"
line=$(grep -E '^vm: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped' "$LOG/vm.log" | tail -n1)
if [ -n "$line" ]; then
	read -r p f s < <(sed -E 's/^vm: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped.*/\1 \2 \3/' <<<"$line")
else
	echo "vm: the VM run did not complete"
	p=0 f=1 s=0
fi
echo "check-debug: $(($(date +%s) - start))s in total"
echo "total: $s skipped"
echo "$p passed, $f failed"
[ "$f" = 0 ]
