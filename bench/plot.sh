#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# plot.sh: tables and gnuplot charts of the comparison (bench/README.md).
#
#   bench/plot.sh [--kernel=VERSION] [--title=TEXT] [--no-table] IN.tsv [OUT.png]
#   bench/plot.sh --connect [--kernel=VERSION] [--no-table] IN.tsv [OUT.png]
#   bench/plot.sh --from-kdbus-bench JSON    (TSV lines on stdout)
#
# Round trip against payload size. IN.tsv: one measurement a line,
#   transport<TAB>payload_bytes<TAB>median_us<TAB>low_us<TAB>high_us[<TAB>...]
# (make bench writes the 10th and 90th percentile as low and high, and the
# number of calls after them; further columns are ignored). Transports
# kdbus (raw sync call), libkdbus, kdbus-proxy, dbus-daemon, dbus-broker,
# uds come in that order, others after them; a line of three columns has
# no low..high. Lines starting with '#' are comments; "# kernel VERSION"
# names the kernel in the title (--kernel overrides), "# env TEXT" what
# it ran under (default "qemu TCG").
# Prints a table of the medians (µs, one column per transport; --no-table:
# not) and, given OUT.png, writes a log-log chart (gnuplot, median with
# low..high bars, one line per transport).
#
# --connect: connect-to-first-reply times. IN.tsv lines as printed by
# `kdbus-bench-connect --tsv`:
#   connect<TAB>transport<TAB>cold|warm<TAB>median_us<TAB>min_us<TAB>max_us
# Prints a table (and the ratios to dbus-daemon) and, given OUT.png,
# writes a bar chart (log scale, min..max bars).
#
# --from-kdbus-bench converts the first results block of `kdbus-bench
# --json` into round-trip lines: kdbus (the kdbus_sync cell) and uds, with
# the median, p10 and p90 (min and p90 from an older kdbus-bench), the
# iteration count, and "# kernel" from its header.
#
# Runs with busybox (the VM prints the tables); gnuplot is needed only
# for OUT.png: without it the exit status is 1.
set -eu

usage() {
	echo "usage: plot.sh [--connect] [--kernel=VERSION] [--title=TEXT] [--no-table] IN.tsv [OUT.png]" >&2
	echo "       plot.sh --from-kdbus-bench JSON" >&2
	exit 2
}

if [ "${1:-}" = --from-kdbus-bench ]; then
	[ $# = 2 ] || usage
	tr -d '\r' < "$2" | awk '
	function field(cell, name,   s) {
		s = $0
		if (!match(s, "\"" cell "\": \\{[^}]*\\}")) return ""
		s = substr(s, RSTART, RLENGTH)
		if (!match(s, "\"" name "\": [0-9.]+")) return ""
		return substr(s, RSTART + length(name) + 4, RLENGTH - length(name) - 4)
	}
	function row(label, cell,   m, lo) {
		m = field(cell, "median_us")
		if (m == "") return
		lo = field(cell, "p10_us"); if (lo == "") lo = field(cell, "min_us")
		printf "%s\t%s\t%s\t%s\t%s\t%s\n", label, size, m, lo, field(cell, "p90_us"),
			field(cell, "iterations")
	}
	/"kernel": "/ && !k { split($0, a, "\""); print "# kernel " a[4]; k = 1 }
	/"results": \[/ { inres = 1; next }
	inres && /^ *\]/ { exit }
	inres && match($0, /"payload": [0-9]+/) {
		size = substr($0, RSTART + 11, RLENGTH - 11)
		row("kdbus", "kdbus_sync")
		row("uds", "uds")
	}'
	exit 0
fi

kernel= title= table=1 connect=
while [ $# -gt 0 ]; do
	case $1 in
	--kernel=*) kernel=${1#--kernel=} ;;
	--title=*) title=${1#--title=} ;;
	--no-table) table= ;;
	--connect) connect=1 ;;
	--help|-h) sed -n '4,35s/^# \{0,1\}//p' "$0"; exit 0 ;;
	--*) echo "plot.sh: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
	shift
done
[ $# = 1 ] || [ $# = 2 ] || usage
in=$1 out=${2:-}
[ -r "$in" ] || { echo "plot.sh: cannot read $in" >&2; exit 1; }

[ -n "$kernel" ] || kernel=$(tr -d '\r' < "$in" | awk '$1 == "#" && $2 == "kernel" { print $3; exit }')
[ -n "$kernel" ] || kernel=unknown
# "# env TEXT": what the numbers were measured under
env=$(tr -d '\r' < "$in" | awk '$1 == "#" && $2 == "env" { sub(/^# env /, ""); print; exit }')
[ -n "$env" ] || env="qemu TCG"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# the names in the legend
legend() {
	case $1 in
	kdbus) echo "kdbus: raw sync call" ;;
	libkdbus) echo "kdbus: libkdbus client and service" ;;
	kdbus-proxy) echo "kdbus-proxy: classic client and service" ;;
	dbus-daemon) echo "dbus-daemon" ;;
	dbus-broker) echo "dbus-broker" ;;
	uds) echo "unix socket: write + read" ;;
	*) echo "$1" ;;
	esac
}
connect_legend() {
	case $1 in
	kdbus) echo "kdbus: libkdbus client, kdbus-launcher activates" ;;
	dbus-daemon) echo "dbus-daemon: classic client, dbus-daemon activates" ;;
	*) echo "$1" ;;
	esac
}
# one colour per transport, the same in every chart
color() {
	case $1 in
	kdbus) echo "#6a0dad" ;;
	libkdbus) echo "#009e73" ;;
	kdbus-proxy) echo "#0072b2" ;;
	dbus-daemon) echo "#d55e00" ;;
	dbus-broker) echo "#a07000" ;;
	uds) echo "#505050" ;;
	*) echo "#cc79a7" ;;
	esac
}

if [ -n "$connect" ]; then
	[ -n "$title" ] || title="Connect to first reply, activation included (kernel $kernel, $env)"
	awk -F '\t' '{ sub(/\r$/, "") } $1 == "connect" && NF >= 6 && ($3 == "cold" || $3 == "warm") &&
		$4 > 0 { print $2 "\t" $3 "\t" $4 "\t" $5 "\t" $6 }' "$in" > "$tmp/data"
	[ -s "$tmp/data" ] || { echo "plot.sh: no connect lines in $in" >&2; exit 1; }
	if [ -n "$table" ]; then
		echo "$title"
		awk -F '\t' '
		{ if (!($1 in seen)) { seen[$1] = 1; order[n++] = $1 }
		  v[$1, $2] = sprintf("%.0f (%.0f..%.0f)", $3, $4, $5); m[$1, $2] = $3 }
		END {
			printf "%-12s %-28s %-28s\n", "transport", "cold: connect + activation", "warm: service running"
			for (i = 0; i < n; i++)
				printf "%-12s %-28s %-28s\n", order[i], v[order[i], "cold"], v[order[i], "warm"]
			printf "(µs from connecting until the first reply: median (min..max))\n"
			d = "dbus-daemon"
			for (i = 0; i < n; i++) {
				t = order[i]
				if (t == d || m[t, "cold"] == "" || m[d, "cold"] == "")
					continue
				printf "%s: cold %.2fx, warm %.2fx faster than dbus-daemon\n", t,
					m[d, "cold"] / m[t, "cold"], m[d, "warm"] / m[t, "warm"]
			}
		}' "$tmp/data"
	fi
	[ -n "$out" ] || exit 0
	command -v gnuplot > /dev/null || { echo "plot.sh: gnuplot not found, no $out" >&2; exit 1; }
	plots= i=0
	for t in $(cut -f1 "$tmp/data" | awk '!seen[$0]++'); do
		for phase in cold warm; do
			awk -F '\t' -v t="$t" -v p="$phase" '$1 == t && $2 == p {
				print (p == "cold" ? "\"cold: connect + activation\"" : "\"warm: service running\""),
					$3, $4, $5 }' "$tmp/data"
		done > "$tmp/$i.dat"
		plots="$plots${plots:+, }'$tmp/$i.dat' using 2:3:4:xtic(1) title '$(connect_legend "$t")' lc rgb '$(color "$t")'"
		i=$((i + 1))
	done
	gnuplot <<GP
set terminal pngcairo size 1000,600 noenhanced font ",11"
set output '$out'
set title '$title'
set style data histogram
set style histogram errorbars gap 2 lw 1.5
set style fill solid 0.7 border -1
set logscale y
set format y '%.0f'
set ylabel 'time to first reply (µs), median with min..max'
set xlabel 'a new client connects and calls Echo on the activatable name'
set grid ytics mytics
set key top right
set yrange [*:*]
plot $plots
GP
	echo "plot: $out"
	exit 0
fi

[ -n "$title" ] || title="Round trip against payload size (kernel $kernel, $env)"

# validated data lines, sorted by transport (preferred order) then size
awk -F '\t' '
BEGIN { split("kdbus libkdbus kdbus-proxy dbus-daemon dbus-broker uds", o, " ")
	for (i in o) rank[o[i]] = i }
{ sub(/\r$/, "") }
/^#/ || NF == 0 { next }
NF == 3 { $4 = $3; $5 = $3 }
NF < 5 || $2 !~ /^[0-9]+$/ || $2 == 0 || $1 !~ /^[A-Za-z0-9_.-]+$/ ||
$3 !~ /^[0-9.eE+-]+$/ || $4 !~ /^[0-9.eE+-]+$/ || $5 !~ /^[0-9.eE+-]+$/ || $3 <= 0 {
	printf "plot.sh: line %d ignored: %s\n", NR, $0 > "/dev/stderr"; next }
{ r = ($1 in rank) ? rank[$1] : 9; printf "%d\t%s\t%s\t%s\t%s\t%s\n", r, $1, $2, $3, $4, $5 }
' "$in" | sort -t '	' -k1,1n -k2,2 -k3,3n | cut -f2- > "$tmp/data"
[ -s "$tmp/data" ] || { echo "plot.sh: no data in $in" >&2; exit 1; }

transports=$(cut -f1 "$tmp/data" | awk '!seen[$0]++')

# text table: one row per size, one column per transport (medians)
if [ -n "$table" ]; then
	echo "$title"
	echo "median round trip in µs (10th..90th percentile in the TSV)"
	awk -F '\t' -v list="$(echo $transports)" '
	function human(b) {
		if (b >= 1048576 && b % 1048576 == 0) return sprintf("%d MiB", b / 1048576)
		if (b >= 1024 && b % 1024 == 0) return sprintf("%d KiB", b / 1024)
		return sprintf("%d B", b)
	}
	{ m[$1, $2] = $3; if (!($2 in seen)) { seen[$2] = 1; sizes[ns++] = $2 + 0 } }
	END {
		nt = split(list, t, " ")
		for (i = 0; i < ns; i++)	# insertion sort: few sizes
			for (j = i; j > 0 && sizes[j - 1] > sizes[j]; j--) {
				x = sizes[j]; sizes[j] = sizes[j - 1]; sizes[j - 1] = x
			}
		printf "%-8s", "payload"
		for (j = 1; j <= nt; j++) printf " %12s", t[j]
		printf "\n"
		for (i = 0; i < ns; i++) {
			printf "%-8s", human(sizes[i])
			for (j = 1; j <= nt; j++) {
				v = m[t[j], sizes[i]]
				if (v == "") printf " %12s", "-"
				else printf " %12.1f", v
			}
			printf "\n"
		}
	}' "$tmp/data"
fi
[ -n "$out" ] || exit 0
command -v gnuplot > /dev/null || { echo "plot.sh: gnuplot not found, no $out" >&2; exit 1; }

# one data file per transport, legend from the table above
plots= i=0
for t in $transports; do
	awk -F '\t' -v t="$t" '$1 == t { print $2, $3, $4, $5 }' "$tmp/data" > "$tmp/$i.dat"
	plots="$plots${plots:+, }'$tmp/$i.dat' using 1:2:3:4 with yerrorlines title '$(legend "$t")' lc rgb '$(color "$t")' lw 2 pt 7 ps 0.8"
	i=$((i + 1))
done
gnuplot <<GP
set terminal pngcairo size 1000,650 noenhanced font ",11"
set output '$out'
set title '$title'
set logscale xy
set format y '%.0f'
set xlabel 'payload (bytes each way, log scale)'
set ylabel 'round trip (µs, log scale): median, bars 10th..90th percentile'
set xtics ("8 B" 8, "64 B" 64, "512 B" 512, "4 KiB" 4096, "32 KiB" 32768, "256 KiB" 262144, "1 MiB" 1048576)
set grid xtics ytics mytics
set key top left
set xrange [4:2097152]
plot $plots
GP
echo "plot: $out"
