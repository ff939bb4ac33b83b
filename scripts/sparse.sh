#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# make sparse: rebuild the module with sparse on every file (C=2) and W=1
# and fail if sparse or the compiler prints any warning, against every
# kernel of the matrix (scripts/kver.sh --all), or only against $KVER
# when `make sparse KVER=...` names one. (The Debian kernel headers
# themselves are sparse-clean, so every warning is ours.)

set -uo pipefail

REPO=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd -P)
mkdir -p "$REPO/build"
command -v sparse >/dev/null || { echo "sparse: not installed (make deps)" >&2; exit 1; }

if [ -n "${SPARSE_KVER:-}" ]; then
	kernels=("$SPARSE_KVER")
else
	mapfile -t kernels < <(KVER= KDIR= "$REPO/scripts/kver.sh" --all)
fi
[ ${#kernels[@]} -gt 0 ] || { echo "sparse: no kernel with headers (make deps)" >&2; exit 1; }

bad=0
for k in "${kernels[@]}"; do
	log=$REPO/build/sparse-$k.log
	if ! make --no-print-directory -C "$REPO/kernel" KDIR="/lib/modules/$k/build" \
		C=2 W=1 >"$log" 2>&1; then
		cat "$log"
		echo "sparse: $k: the module build failed" >&2
		bad=1
		continue
	fi
	ours=$(grep -E '(warning|error):' "$log" || true)
	if [ -n "$ours" ]; then
		echo "sparse: $k: $(wc -l <<<"$ours") warning(s):" >&2
		echo "$ours" >&2
		bad=1
	else
		echo "sparse: $k: clean ($(grep -c '^  CHECK ' "$log") files checked)"
	fi
done
exit $bad
