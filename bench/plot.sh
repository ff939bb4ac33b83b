#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# plot.sh: round trip against payload size, one line per transport.
#
#   bench/plot.sh [--kernel=VERSION] [--title=TEXT] IN.tsv OUT.png
#   bench/plot.sh --from-kdbus-bench JSON    (TSV lines on stdout)
#
# IN.tsv: one measurement a line,
#   transport<TAB>payload_bytes<TAB>median_us<TAB>min_us<TAB>max_us
# transport one of kdbus, kdbus-proxy, dbus-daemon, dbus-broker, uds (others
# are plotted too, after these); a line of only the first three columns
# has no min..max. Lines starting with '#' are comments;
# "# kernel VERSION" names the kernel in the title (--kernel overrides).
# Writes OUT.png (gnuplot, log-log, median with min..max bars) and prints a
# text table of the medians (µs; min..max) on stdout. Without gnuplot only
# the table is printed and the exit status is 1.
#
# --from-kdbus-bench converts the first results block of `kdbus-bench
# --json` into TSV lines: kdbus (the kdbus_sync cell) and uds, median only
# (kdbus-bench reports min and p90, no max), and "# kernel" from its header.
set -eu

if [ "${1:-}" = --from-kdbus-bench ]; then
	[ $# = 2 ] || { echo "usage: plot.sh --from-kdbus-bench JSON" >&2; exit 2; }
	tr -d '\r' < "$2" | awk '
	function median(cell,   s) {
		s = $0
		if (!match(s, "\"" cell "\": \\{[^}]*\\}")) return ""
		s = substr(s, RSTART, RLENGTH)
		if (!match(s, /"median_us": [0-9.]+/)) return ""
		return substr(s, RSTART + 13, RLENGTH - 13)
	}
	/"kernel": "/ && !k { split($0, a, "\""); print "# kernel " a[4]; k = 1 }
	/"results": \[/ { inres = 1; next }
	inres && /^ *\]/ { exit }
	inres && match($0, /"payload": [0-9]+/) {
		size = substr($0, RSTART + 11, RLENGTH - 11)
		m = median("kdbus_sync"); if (m != "") printf "kdbus\t%s\t%s\n", size, m
		m = median("uds"); if (m != "") printf "uds\t%s\t%s\n", size, m
	}'
	exit 0
fi

kernel= title=
while [ $# -gt 0 ]; do
	case $1 in
	--kernel=*) kernel=${1#--kernel=} ;;
	--title=*) title=${1#--title=} ;;
	--help|-h) sed -n '4,23s/^# \{0,1\}//p' "$0"; exit 0 ;;
	--*) echo "plot.sh: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
	shift
done
[ $# = 2 ] || { echo "usage: plot.sh [--kernel=VERSION] [--title=TEXT] IN.tsv OUT.png" >&2; exit 2; }
in=$1 out=$2
[ -r "$in" ] || { echo "plot.sh: cannot read $in" >&2; exit 1; }

[ -n "$kernel" ] || kernel=$(tr -d '\r' < "$in" | awk '$1 == "#" && $2 == "kernel" { print $3; exit }')
[ -n "$kernel" ] || kernel=unknown
[ -n "$title" ] || title="Round trip against payload size (kernel $kernel, qemu TCG)"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# validated data lines, sorted by transport (preferred order) then size
awk -F '\t' -v dir="$tmp" '
BEGIN { split("kdbus kdbus-proxy dbus-daemon dbus-broker uds", o, " ")
	for (i in o) rank[o[i]] = i }
{ sub(/\r$/, "") }
/^#/ || NF == 0 { next }
NF == 3 { $4 = $3; $5 = $3; NF = 5 }
NF != 5 || $2 !~ /^[0-9]+$/ || $2 == 0 || $1 !~ /^[A-Za-z0-9_.-]+$/ ||
$3 !~ /^[0-9.eE+-]+$/ || $4 !~ /^[0-9.eE+-]+$/ || $5 !~ /^[0-9.eE+-]+$/ || $3 <= 0 {
	printf "plot.sh: line %d ignored: %s\n", NR, $0 > "/dev/stderr"; next }
{ r = ($1 in rank) ? rank[$1] : 9; printf "%d\t%s\t%s\t%s\t%s\t%s\n", r, $1, $2, $3, $4, $5 }
' "$in" | sort -t '	' -k1,1n -k2,2 -k3,3n | cut -f2- > "$tmp/data"
[ -s "$tmp/data" ] || { echo "plot.sh: no data in $in" >&2; exit 1; }

transports=$(cut -f1 "$tmp/data" | awk '!seen[$0]++')

# text table: one row per size, one column per transport
human() { awk -v b="$1" 'BEGIN { if (b >= 1048576 && b % 1048576 == 0) printf "%d MiB", b / 1048576
	else if (b >= 1024 && b % 1024 == 0) printf "%d KiB", b / 1024; else printf "%d B", b }'; }
echo "$title"
echo "round trip in µs: median (min..max)"
{
	printf 'payload'
	for t in $transports; do printf '\t%s' "$t"; done
	printf '\n'
	for s in $(cut -f2 "$tmp/data" | sort -n | uniq); do
		printf '%s' "$(human "$s")"
		for t in $transports; do
			awk -F '\t' -v t="$t" -v s="$s" '$1 == t && $2 == s {
				printf "\t%.1f (%.1f..%.1f)", $3, $4, $5; f = 1 }
				END { if (!f) printf "\t-" }' "$tmp/data"
		done
		printf '\n'
	done
} | column -t -s '	'

command -v gnuplot > /dev/null || { echo "plot.sh: gnuplot not found, no $out" >&2; exit 1; }

# one data block per transport (gnuplot index), labels from the first column
plots= i=0
for t in $transports; do
	awk -F '\t' -v t="$t" '$1 == t { print $2, $3, $4, $5 }' "$tmp/data" > "$tmp/$i.dat"
	plots="$plots${plots:+, }'$tmp/$i.dat' using 1:2:3:4 with yerrorlines title '$t' lw 2 pt 7 ps 0.8"
	i=$((i + 1))
done
gnuplot <<GP
set terminal pngcairo size 1000,650 noenhanced font ",11"
set output '$out'
set title '$title'
set logscale xy
set xlabel 'payload (bytes, each way)'
set ylabel 'round trip (µs), median with min..max'
set xtics ("8 B" 8, "64 B" 64, "512 B" 512, "4 KiB" 4096, "32 KiB" 32768, "256 KiB" 262144, "1 MiB" 1048576)
set grid xtics ytics mytics
set key top left
set xrange [4:2097152]
plot $plots
GP
echo "plot: $out"
