#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# make checkpatch: run the kernel's checkpatch.pl --strict over the module
# sources and the uapi header; fails on any error, warning or check.
# checkpatch.pl (with spelling.txt and const_structs.checkpatch beside it)
# comes from Debian's linux-source tarball, extracted once into
# build/checkpatch/. Extra flags: CHECKPATCH_FLAGS.

set -euo pipefail

REPO=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd -P)
CACHE=$REPO/build/checkpatch
CP=$CACHE/scripts/checkpatch.pl

if [ ! -x "$CP" ]; then
	tarball=$(ls /usr/src/linux-source-*.tar.xz 2>/dev/null | sort -V | tail -n1)
	[ -n "$tarball" ] || { echo "checkpatch: no /usr/src/linux-source-*.tar.xz (make deps)" >&2; exit 1; }
	echo "checkpatch: extracting checkpatch.pl from $tarball (once)" >&2
	mkdir -p "$REPO/build"
	tmp=$(mktemp -d "$REPO/build/checkpatch.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	tar -xJf "$tarball" -C "$tmp" --wildcards --strip-components=1 \
		'*/scripts/checkpatch.pl' '*/scripts/spelling.txt' \
		'*/scripts/const_structs.checkpatch'
	rm -rf "$CACHE"
	mv "$tmp" "$CACHE"
	trap - EXIT
fi

# The compat layer is the one place that must test kernel versions
# (feature probes are preferred, but not every API break has a symbol to
# probe): there, and only there, LINUX_VERSION_CODE comparisons pass.
files=() compat=()
while IFS= read -r f; do
	case "$f" in
	kernel/compat*) compat+=("$f") ;;
	*) files+=("$f") ;;
	esac
done < <(
	cd "$REPO" && find kernel -name '*.[ch]' ! -name '*.mod.c' | sort
	[ -f "$REPO/include/uapi/linux/kdbus.h" ] && echo include/uapi/linux/kdbus.h)
[ $((${#files[@]} + ${#compat[@]})) -gt 0 ] || { echo "checkpatch: nothing to check" >&2; exit 0; }

cd "$REPO"
rc=0
run_cp() {
	# shellcheck disable=SC2086 # CHECKPATCH_FLAGS is a list of flags
	"$CP" --strict --no-tree --no-summary --show-types --color=never \
		${CHECKPATCH_FLAGS:-} "$@" || rc=1
}
[ ${#files[@]} -eq 0 ] || run_cp -f "${files[@]}"
[ ${#compat[@]} -eq 0 ] ||
	run_cp --ignore LINUX_VERSION_CODE,CONSTANT_COMPARISON -f "${compat[@]}"
if [ $rc = 0 ]; then
	echo "checkpatch: $((${#files[@]} + ${#compat[@]})) files clean"
else
	echo "checkpatch: problems found (above)" >&2
fi
exit $rc
