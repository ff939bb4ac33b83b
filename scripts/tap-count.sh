#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Count TAP results on stdin. Prints "PASSED FAILED SKIPPED MISSING":
# "ok" lines (without a SKIP directive) pass, "not ok" lines fail unless
# marked TODO, SKIP/TODO count as skipped, and MISSING is how many tests
# the plans ("1..N", summed over several TAP streams) announced but never
# reported. Only unindented lines count (no subtests).
exec awk '
/^ok( |$)/ {
	if ($0 ~ /#[ \t]*[Ss][Kk][Ii][Pp]/) s++; else p++
	next
}
/^not ok( |$)/ {
	if ($0 ~ /#[ \t]*[Tt][Oo][Dd][Oo]/) s++; else f++
	next
}
/^1\.\.[0-9]+/ { sub(/^1\.\./, ""); plan += $0 + 0 }
END {
	m = plan - (p + f + s)
	if (m < 0) m = 0
	printf "%d %d %d %d\n", p, f, s, m
}'
