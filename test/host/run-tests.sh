#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Run each host test program given as argument; each prints its own TAP 13
# stream, passed through unchanged. A program that exits non-zero without
# reporting a failing test (a crash, a sanitizer abort, a short plan) gets
# an extra one-test stream saying so. Exits non-zero if anything failed.

failed=0
for t in "$@"; do
	name=$(basename "$t")
	out=$("$t" 2>&1)
	rc=$?
	printf '%s\n' "$out"
	if [ "$rc" -ne 0 ]; then
		failed=1
		if ! printf '%s\n' "$out" | grep -q '^not ok'; then
			printf 'TAP version 13\n1..1\nnot ok 1 - %s exited with status %d\n' \
				"$name" "$rc"
		fi
	fi
done
if [ "$failed" -ne 0 ]; then
	echo "# host tests: FAILED"
else
	echo "# host tests: all passed"
fi
exit "$failed"
