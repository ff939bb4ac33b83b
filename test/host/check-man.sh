#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Every man page of the project must render without a single warning:
# Documentation/man7/*.7 (the ABI, kdbus(7) and friends) and the
# Documentation/*.1 and *.3 pages and Documentation/man8/*.8 (kdbus-proxy(8)). For each page, both
#   man --warnings -l PAGE >/dev/null
#   groff -man -ww -z PAGE
# must print nothing and exit 0, and the page must have a .TH line and a
# NAME section. Prints TAP 13, one "ok N - man/<page>" per page.
#
#   test/host/check-man.sh [PAGE...]   (default: all pages of the tree)

top=$(cd "$(dirname "$0")/../.." && pwd)
doc=$top/Documentation

if [ $# -gt 0 ]; then
	pages="$*"
else
	pages=$(ls "$doc"/man7/*.7 "$doc"/man8/*.8 "$doc"/*.1 "$doc"/*.3 2>/dev/null)
fi

n=0
for p in $pages; do
	n=$((n + 1))
done

echo "TAP version 13"
echo "1..$n"
if [ "$n" = 0 ]; then
	echo "# no man pages found"
	exit 1
fi

have_tools=1
command -v man >/dev/null 2>&1 || have_tools=0
command -v groff >/dev/null 2>&1 || have_tools=0

i=0
fail=0
for p in $pages; do
	i=$((i + 1))
	name=man/$(basename "$p")
	if [ "$have_tools" = 0 ]; then
		echo "ok $i - $name # SKIP man or groff not installed (apt-get install man-db groff-base)"
		continue
	fi
	out=$(
		{
			# man(1) renders through its own pipeline (preconv, tbl,
			# groff) and reports troff warnings on stderr
			MANPAGER=cat MANWIDTH=80 LC_ALL=C.UTF-8 \
				man --warnings -l "$p" >/dev/null || echo "man exited with status $?"
			groff -man -ww -z "$p" || echo "groff exited with status $?"
			grep -q '^\.TH ' "$p" || echo "no .TH line"
			grep -q '^\.SH NAME' "$p" || echo "no NAME section"
		} 2>&1
	)
	if [ -z "$out" ]; then
		echo "ok $i - $name"
	else
		fail=1
		echo "not ok $i - $name"
		printf '%s\n' "$out" | sed 's/^/# /'
	fi
done
exit $fail
