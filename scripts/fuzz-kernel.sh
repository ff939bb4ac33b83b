#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# make fuzz-kernel DURATION=SECONDS [JOBS=N]: the coverage-guided ioctl
# fuzzer (test/fuzz/kdbus-ioctl-fuzz.c) in the debug VM, the module built
# with KCOV (scripts/check-debug.sh builds both). Seeds from
# test/fuzz/kernel-corpus/; inputs that found new edges are copied back
# there. A kernel report fails the run; the input each worker was executing
# is printed (hex) so it can be replayed (kdbus-ioctl-fuzz -r FILE).

set -uo pipefail

REPO=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd -P)
DURATION=${DURATION:-300}
JOBS=${JOBS:-2}
OUT=$REPO/build/fuzz-kernel
rm -rf "$OUT"
mkdir -p "$OUT/new"
chmod 777 "$OUT/new"

KSRC=$("$REPO/scripts/debug-kernel.sh") || exit 1
KDBUS_DEBUG_BUILD_ONLY=1 "$REPO/scripts/check-debug.sh" >/dev/null || exit 1
MOD=$REPO/build/debug/kernel/kdbus.ko
gcc -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -O2 -static \
	-I"$REPO/include/uapi" -o "$OUT/kdbus-ioctl-fuzz" \
	"$REPO/test/fuzz/kdbus-ioctl-fuzz.c" || exit 1

G=/host$REPO
# The guest sees the host read-only: new inputs are printed as hex lines.
cat >"$OUT/cmd.sh" <<EOC
mkdir -p /tmp/new
KDBUS_FUZZ_NEED_KCOV=1 $G/build/fuzz-kernel/kdbus-ioctl-fuzz -t $DURATION -j $JOBS \
	-c $G/test/fuzz/kernel-corpus -o /tmp/new
r=\$?
for f in /tmp/new/*; do [ -f "\$f" ] && echo "@@NEW \$(od -An -v -tx1 "\$f" | tr -d ' \n')"; done
for f in /tmp/fuzz-current-*; do [ -f "\$f" ] && echo "@@LAST \$f \$(od -An -v -tx1 "\$f" | tr -d ' \n')"; done
exit \$r
EOC
KDBUS_VM_KERNEL=$KSRC/arch/x86/boot/bzImage \
KDBUS_VM_APPEND="acpi=noirq kmemleak=on" \
KDBUS_VM_TIMEOUT=$((DURATION + 600)) \
	"$REPO/vm/run" --module "$MOD" -c "sh $G/build/fuzz-kernel/cmd.sh" 2>&1 |
	tee "$OUT/vm.log" | grep -v '^@@'
rc=${PIPESTATUS[0]}
n=0
while read -r _ hex; do
	f=$REPO/test/fuzz/kernel-corpus/$(printf %s "$hex" | sha1sum | cut -c1-16)
	[ -e "$f" ] || { printf %s "$hex" | xxd -r -p >"$f"; n=$((n + 1)); }
done < <(grep '^@@NEW ' "$OUT/vm.log")
echo "fuzz-kernel: $n new corpus entries in test/fuzz/kernel-corpus/"
if [ "$rc" != 0 ]; then
	echo "fuzz-kernel: FAILED; the inputs being executed:"
	grep '^@@LAST ' "$OUT/vm.log"
fi
exit "$rc"
