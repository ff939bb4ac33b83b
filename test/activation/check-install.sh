#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Host check of `make install`: stages an installation with DESTDIR and
# PREFIX=/usr and checks that binaries, library, headers, pkg-config file,
# man pages, systemd units (system and user) and the switching guide are
# where Debian 12 looks for them. Prints TAP.
#
#   test/activation/check-install.sh
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
D=$(mktemp -d "${TMPDIR:-/tmp}/kdbus-install.XXXXXX")
trap 'rm -rf "$D"' EXIT

. "$TOP/test/tap.sh"

# each of $2... exists under DESTDIR (with test flag $1)
have() {
	local flag=$1 missing=
	shift
	for f in "$@"; do
		test "$flag" "$D$f" || missing="$missing $f"
	done
	[ -z "$missing" ] || echo "# missing:$missing"
	[ -z "$missing" ]
}

echo "TAP version 13"
env -u MAKEFLAGS -u MAKELEVEL make --no-print-directory -C "$TOP" install DESTDIR="$D" PREFIX=/usr \
	> "$D.log" 2>&1
rc=$?
[ $rc = 0 ] || sed 's/^/# /' "$D.log" | tail -20
rm -f "$D.log"
t $rc "make install DESTDIR=... PREFIX=/usr succeeds"

have -x /usr/bin/kdbusctl /usr/bin/kdbus-proxy /usr/bin/kdbus-launcher /usr/bin/kdbus-bus-holder
t $? "kdbusctl, kdbus-proxy, kdbus-launcher and kdbus-bus-holder in /usr/bin"

have -e /usr/lib/libkdbus.so /usr/lib/libkdbus.a /usr/include/kdbus/kdbus.h &&
	ls "$D"/usr/lib/libkdbus.so.* > /dev/null 2>&1
t $? "libkdbus (shared, static, versioned soname) and its header"

pc=$D/usr/lib/pkgconfig/libkdbus.pc
# pkg-config's own search path must contain the directory the .pc went
# to, and a program must build against the staged headers and library
cat > "$D/prog.c" <<'PROG'
#include <kdbus/kdbus.h>
int main(void) { struct kdbus_bus *bus = NULL; return kdbus_bus_open(&bus, NULL) < 0; }
PROG
[ -f "$pc" ] && cc -o "$D/prog" "$D/prog.c" -I"$D/usr/include" -L"$D/usr/lib" -lkdbus && pkg-config --variable pc_path pkg-config | tr ':' '\n' | grep -qx /usr/lib/pkgconfig &&
	[ "$(PKG_CONFIG_PATH=${pc%/*} PKG_CONFIG_LIBDIR= pkg-config --variable=libdir libkdbus)" = /usr/lib ] &&
	PKG_CONFIG_PATH=${pc%/*} pkg-config --cflags --libs libkdbus | grep -q -- -lkdbus
t $? "libkdbus.pc in /usr/lib/pkgconfig (on pkg-config's default path), pointing at /usr/lib"

man7=$(cd "$TOP/Documentation/man7" && ls *.7 | sed 's|^|/usr/share/man/man7/|')
have -f /usr/share/man/man1/kdbusctl.1 /usr/share/man/man3/libkdbus.3 $man7 \
	/usr/share/man/man8/kdbus-proxy.8 /usr/share/man/man8/kdbus-launcher.8 \
	/usr/share/man/man8/kdbus-bus-holder.8
t $? "man pages: kdbusctl(1), libkdbus(3), kdbus*(7), kdbus-proxy(8), kdbus-launcher(8), kdbus-bus-holder(8)"

sys="kdbus-module.service sys-fs-kdbus.mount kdbus-system-bus.service kdbus-launcher.service
	kdbus-proxy.service kdbus-proxy.socket"
user="kdbus-user-bus.service kdbus-launcher.service kdbus-proxy.service kdbus-proxy.socket"
have -f $(for u in $sys; do echo /usr/lib/systemd/system/$u; done)
t $? "system units in /usr/lib/systemd/system"
have -f $(for u in $user; do echo /usr/lib/systemd/user/$u; done)
t $? "user units in /usr/lib/systemd/user"

# every ExecStart= program of the installed units is an installed (or system) binary
bad=
for u in $(for u in $sys; do echo "$D/usr/lib/systemd/system/$u"; done) \
	$(for u in $user; do echo "$D/usr/lib/systemd/user/$u"; done); do
	[ -f "$u" ] || { bad="$bad ${u#$D}(missing)"; continue; }
	grep -q '@[A-Z]*@' "$u" && bad="$bad ${u#$D}(unexpanded)"
	for prog in $(sed -n 's/^Exec[A-Za-z]*=[-@+!]*\([^ ]*\).*/\1/p' "$u"); do
		[ -x "$D$prog" ] || [ -x "$prog" ] || bad="$bad ${u#$D}:$prog"
	done
done
[ -z "$bad" ] || echo "# bad:$bad"
[ -z "$bad" ]; t $? "the units name installed programs (no @BINDIR@ left)"

have -f /usr/share/doc/kdbus/switching.md
t $? "Documentation/switching.md in /usr/share/doc/kdbus"

echo "1..$n"
[ $failures = 0 ]
