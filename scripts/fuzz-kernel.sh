#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# make fuzz-kernel DURATION=SECONDS [JOBS=N] [KEEP=1]: the coverage-guided
# ioctl fuzzer (test/fuzz/kdbus-ioctl-fuzz.c) in the debug VM, the module
# built with KCOV (scripts/check-debug.sh builds both). Seeds from
# test/fuzz/kernel-corpus/; inputs that found new edges go to
# build/fuzz-kernel/corpus/ (KEEP=1: into test/fuzz/kernel-corpus/ too).
# Prints executions per second and the coverage: edges and the distinct
# kdbus.ko PCs reached, out of the module's KCOV call sites.
# A kernel report fails the run; the input each worker was executing is
# saved to build/fuzz-kernel/last-N, to be minimised:
#   scripts/fuzz-kernel.sh --minimise FILE
# replays FILE in the debug VM, removing bytes while the kernel still
# reports, and prints the reproducer (hex; build/fuzz-kernel/min).

set -uo pipefail

REPO=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd -P)
DURATION=${DURATION:-300}
JOBS=${JOBS:-2}
# KDBUS_FUZZ_OUT: another output directory (a long run beside short ones)
OUT=${KDBUS_FUZZ_OUT:-$REPO/build/fuzz-kernel}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd -P)
mini=
if [ "${1:-}" = --minimise ]; then
	[ -f "${2:-}" ] || { echo "usage: $0 --minimise FILE"; exit 2; }
	mini=$(readlink -f "$2")
	mkdir -p "$OUT"
	cp "$mini" "$OUT/crash"
else
	rm -rf "$OUT/corpus" "$OUT/vm.log" "$OUT"/last-*
	mkdir -p "$OUT/corpus"
fi

KSRC=$("$REPO/scripts/debug-kernel.sh") || exit 1
KDBUS_DEBUG_BUILD_ONLY=1 "$REPO/scripts/check-debug.sh" >/dev/null || exit 1
MOD=$REPO/build/debug/kernel/kdbus.ko
gcc -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -O2 -static -pthread \
	-I"$REPO/include/uapi" -o "$OUT/kdbus-ioctl-fuzz" \
	"$REPO/test/fuzz/kdbus-ioctl-fuzz.c" || exit 1

G=/host$REPO
sites=$(objdump -dr "$MOD" | grep -c 'R_X86_64_PLT32[[:space:]]*__sanitizer_cov_trace_pc-')
# kasan_multi_shot: KASAN reports every time (the minimiser counts on it).
APPEND="acpi=noirq kmemleak=on kasan_multi_shot"
if [ -n "$mini" ]; then
	echo "fuzz-kernel: minimising $mini ($(stat -c %s "$mini") bytes)"
	KDBUS_VM_KERNEL=$KSRC/arch/x86/boot/bzImage KDBUS_VM_APPEND="$APPEND" \
	KDBUS_VM_TIMEOUT=3600 KDBUS_VM_KEEP=1 \
		"$REPO/vm/run" --module "$MOD" -c "/host$OUT/kdbus-ioctl-fuzz -m /host$OUT/crash -o /tmp" 2>&1 |
		tee "$OUT/minimise.log" | grep -v '^@@'
	hex=$(sed -n 's/^minimise: [0-9]* bytes://p' "$OUT/minimise.log" | tr -d ' ')
	[ -n "$hex" ] || { echo "fuzz-kernel: did not reproduce"; exit 1; }
	printf %s "$hex" | xxd -r -p >"$OUT/min"
	echo "fuzz-kernel: reproducer in $OUT/min: $hex"
	exit 0
fi
# The guest sees the host read-only: new inputs are printed as hex lines.
cat >"$OUT/cmd.sh" <<EOC
mkdir -p /tmp/new
KDBUS_FUZZ_NEED_KCOV=1 /host$OUT/kdbus-ioctl-fuzz -t $DURATION -j $JOBS \
	-c $G/test/fuzz/kernel-corpus -o /tmp/new
r=\$?
for f in /tmp/new/*; do [ -f "\$f" ] && echo "@@NEW \$(od -An -v -tx1 "\$f" | tr -d ' \n')"; done
for f in /tmp/fuzz-current-*; do [ -f "\$f" ] && echo "@@LAST \$f \$(od -An -v -tx1 "\$f" | tr -d ' \n')"; done
exit \$r
EOC
KDBUS_VM_KERNEL=$KSRC/arch/x86/boot/bzImage \
KDBUS_VM_APPEND="$APPEND" \
KDBUS_VM_TIMEOUT=$((DURATION + 900)) \
	"$REPO/vm/run" --module "$MOD" -c "sh /host$OUT/cmd.sh" 2>&1 |
	tee "$OUT/vm.log" | grep -v '^@@'
rc=${PIPESTATUS[0]}
n=0
while read -r _ hex; do
	name=$(printf %s "$hex" | sha1sum | cut -c1-16)
	printf %s "$hex" | xxd -r -p >"$OUT/corpus/$name"
	n=$((n + 1))
	if [ -n "${KEEP:-}" ] && [ ! -e "$REPO/test/fuzz/kernel-corpus/$name" ]; then
		cp "$OUT/corpus/$name" "$REPO/test/fuzz/kernel-corpus/"
	fi
done < <(grep '^@@NEW ' "$OUT/vm.log")
echo "fuzz-kernel: $n new corpus entries in $OUT/corpus/${KEEP:+ (kept in test/fuzz/kernel-corpus/)}"
echo "fuzz-kernel: kdbus.ko has $sites KCOV call sites (PCs)"
if [ "$rc" != 0 ]; then
	echo "fuzz-kernel: FAILED; the inputs being executed (minimise with $0 --minimise FILE):"
	while read -r _ slot hex; do
		f=$OUT/last-${slot##*-}
		printf %s "$hex" | xxd -r -p >"$f"
		echo "  $f: $hex"
	done < <(grep '^@@LAST ' "$OUT/vm.log")
fi
exit "$rc"
