#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# make sparse: rebuild the module with sparse on every file (C=2) and
# fail if sparse (or the compiler) prints any warning. (The Debian kernel
# headers themselves are sparse-clean, so every warning is ours.)

set -uo pipefail

REPO=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd -P)
LOG=$REPO/build/sparse.log
mkdir -p "$REPO/build"
command -v sparse >/dev/null || { echo "sparse: not installed (make deps)" >&2; exit 1; }

make --no-print-directory -C "$REPO/kernel" C=2 >"$LOG" 2>&1
rc=$?
cat "$LOG"
if [ $rc != 0 ]; then
	echo "sparse: the module build failed" >&2
	exit 1
fi
ours=$(grep -E '(warning|error):' "$LOG" || true)
if [ -n "$ours" ]; then
	echo "sparse: $(wc -l <<<"$ours") warning(s):" >&2
	echo "$ours" >&2
	exit 1
fi
echo "sparse: clean"
