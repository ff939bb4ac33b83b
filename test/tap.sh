# SPDX-License-Identifier: GPL-2.0-or-later
#
# TAP helpers shared by the shell suites (sourced, POSIX sh): t STATUS TEXT
# prints one result and counts failures, skip TEXT a skipped test, and
# wait_for FILE PATTERN [TENTHS] waits until FILE contains PATTERN (at most
# TENTHS tenths of a second, default 100); its status says whether it does.

n=0
failures=0

t() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		failures=$((failures + 1))
	fi
}

skip() {
	n=$((n + 1))
	echo "ok $n - # SKIP $1"
}

wait_for() {
	i=0
	while ! grep -q -- "$2" "$1" 2>/dev/null && [ $i -lt "${3:-100}" ]; do
		sleep 0.1
		i=$((i + 1))
	done
	grep -q -- "$2" "$1" 2>/dev/null
}
