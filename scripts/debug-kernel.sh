#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Build (or reuse) the debug kernel: Debian's linux-source-6.12, tinyconfig
# plus vm/debug/debug.config (KASAN, UBSAN, kmemleak, lockdep, KCOV, fault
# injection, ...), everything built in. The build is cached outside the tree,
# keyed by the fragment and the source version:
#   ${KDBUS_DEBUG_CACHE:-/var/cache/kdbus-debug-kernel}/<hash>/
# Prints the build directory (a kernel tree usable as KDIR; its
# arch/x86/boot/bzImage is what vm/run boots) on stdout; logs go to stderr.
#
# 6.12 rather than 6.1: newer KASAN/UBSAN/lockdep/kmemleak checks, and it is
# one of the kernels the module supports (Debian 12 ships it in its archive).
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
FRAG=$REPO/vm/debug/debug.config
SRCPKG=${KDBUS_DEBUG_SRCPKG:-linux-source-6.12}
CACHE=${KDBUS_DEBUG_CACHE:-/var/cache/kdbus-debug-kernel}

log() { echo "debug-kernel: $*" >&2; }

if ! dpkg-query -W -f='${db:Status-Status}' "$SRCPKG" 2>/dev/null | grep -qx installed; then
	log "installing $SRCPKG"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$SRCPKG" flex bison \
		libelf-dev libssl-dev bc >&2
fi
for p in flex bison libelf-dev; do
	dpkg-query -W -f='${db:Status-Status}' $p 2>/dev/null | grep -qx installed ||
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q $p >&2
done
ver=$(dpkg-query -W -f='${Version}' "$SRCPKG")
tarball=$(dpkg -L "$SRCPKG" | grep -E '/usr/src/linux-source-[0-9.]+\.tar\.xz$' | head -n1)
[ -f "$tarball" ] || { log "no source tarball in $SRCPKG"; exit 1; }

key=$( { echo "$SRCPKG $ver"; cat "$FRAG"; } | sha256sum | cut -c1-16)
DIR=$CACHE/$key
if [ -f "$DIR/.done" ]; then
	log "cached: $DIR"
	echo "$DIR/src"
	exit 0
fi

mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
flock 9
if [ -f "$DIR/.done" ]; then echo "$DIR/src"; exit 0; fi
start=$(date +%s)
if [ -f "$DIR/.configured" ]; then
	# An interrupted build resumes (make is incremental).
	log "resuming the build in $DIR"
	cd "$DIR/src"
else
rm -rf "$DIR"
mkdir -p "$DIR/src"
log "unpacking $tarball ($ver) into $DIR"
tar -xJf "$tarball" -C "$DIR/src" --strip-components=1
cd "$DIR/src"
make -s ARCH=x86_64 tinyconfig >&2
scripts/kconfig/merge_config.sh -m .config "$FRAG" >&2
make -s ARCH=x86_64 olddefconfig >&2
# Every line of the fragment must have survived (a dependency missing in
# Kconfig silently drops an option).
missing=0
while IFS= read -r line; do
	case "$line" in
	"# CONFIG_"*" is not set") opt=${line#\# }; opt=${opt%% *}
		! grep -q "^$opt=[ym]" .config || { log "set: $opt"; missing=1; } ;;
	CONFIG_*) grep -qxF "$line" .config || { log "not set: $line"; missing=1; } ;;
	esac
done <"$FRAG"
[ $missing = 0 ] || { log "the fragment does not apply; see $DIR/src/.config"; exit 1; }
touch "$DIR/.configured"
fi
log "building (nice -n 19, -j$(nproc)); about 12-20 minutes"
nice -n 19 make ARCH=x86_64 -j"$(nproc)" bzImage modules_prepare >>"$DIR/build.log" 2>&1 ||
	{ tail -n 40 "$DIR/build.log" >&2; exit 1; }
# Module.symvers for external modules (nothing is =m; it is just the exports).
nice -n 19 make ARCH=x86_64 -j"$(nproc)" modules >>"$DIR/build.log" 2>&1 ||
	{ tail -n 40 "$DIR/build.log" >&2; exit 1; }
echo "$SRCPKG $ver $(($(date +%s) - start))s" >"$DIR/.done"
log "built in $(($(date +%s) - start))s: $DIR/src/arch/x86/boot/bzImage"
echo "$DIR/src"
