#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# make check-all: the complete suite on every kernel of the matrix. The
# host tests and the parser fuzzer run once (they do not depend on the
# kernel); then, for each kernel that has an image and headers
# (scripts/kver.sh --all: Debian 12's 6.1, 6.12 and 6.12-rt after make
# deps), the module is rebuilt against that kernel and the VM suites of
# `make check` run booted with it. Prints one summary line per kernel
# ("kernel V: N passed, N failed, N skipped") and ends with the total
# "N passed, N failed". Exits non-zero iff anything failed.

set -uo pipefail

REPO=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd -P)
LOG=$REPO/build/check
mkdir -p "$LOG"

mapfile -t kernels < <(KVER= KDIR= "$REPO/scripts/kver.sh" --all)
[ ${#kernels[@]} -gt 0 ] || { echo "check-all: no kernel with image and headers (make deps)"; echo "0 passed, 1 failed"; exit 1; }

passed=0 failed=0 skipped=0
summaries=()

# counts "N passed, N failed" (and "total: N skipped") from a check.sh log
count() {
	local p f s
	read -r p f < <(sed -nE 's/^([0-9]+) passed, ([0-9]+) failed$/\1 \2/p' "$1" | tail -n1)
	s=$(sed -nE 's/^total: ([0-9]+) skipped$/\1/p' "$1" | tail -n1)
	if [ -z "${p:-}" ]; then
		p=0 f=1
	fi
	echo "$p ${f:-1} ${s:-0}"
}

CHECK_VM=0 "$REPO/scripts/check.sh" 2>&1 | tee "$LOG/all-host.log"
read -r p f s < <(count "$LOG/all-host.log")
summaries+=("host: $p passed, $f failed, $s skipped")
passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))

for k in "${kernels[@]}"; do
	echo "== kernel $k"
	start=$(date +%s)
	# W=1, and any compiler warning is a failure (kernels differ in
	# what they declare, so each must be checked)
	if ! make --no-print-directory -C "$REPO/kernel" KDIR="/lib/modules/$k/build" W=1 \
		>"$LOG/build-$k.log" 2>&1; then
		tail -n 30 "$LOG/build-$k.log"
		summaries+=("kernel $k: 0 passed, 1 failed, 0 skipped (the module does not build)")
		failed=$((failed + 1))
		continue
	fi
	if grep -E '(warning|error):' "$LOG/build-$k.log"; then
		summaries+=("kernel $k: the W=1 build warns (counted as 1 failed)")
		failed=$((failed + 1))
	fi
	KVER=$k CHECK_HOST=0 "$REPO/scripts/check.sh" 2>&1 | tee "$LOG/all-$k.log"
	read -r p f s < <(count "$LOG/all-$k.log")
	summaries+=("kernel $k: $p passed, $f failed, $s skipped ($(( $(date +%s) - start ))s)")
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
done

echo "== summary"
printf '%s\n' "${summaries[@]}"
echo "total: $skipped skipped"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
