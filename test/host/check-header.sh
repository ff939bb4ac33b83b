#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The uapi header must be a clean, self-contained uapi header: it compiles
# alone with gcc and clang (-Wall -Wextra -Werror) and as C++, includes
# nothing but <linux/ioctl.h> and <linux/types.h>, and keeps the ABI table
# layout as C++ and on 32-bit and aarch64 targets (compile-only, the
# static half of abi.c). Prints TAP 13.

top=$(cd "$(dirname "$0")/../.." && pwd)
hdr=$top/include/uapi/linux/kdbus.h
inc="-I$top/include/uapi"
warn="-Wall -Wextra -Werror"
n=0
fail=0

tap() {
	desc=$1
	shift
	n=$((n + 1))
	if out=$("$@" 2>&1); then
		echo "ok $n - $desc"
	else
		fail=1
		echo "not ok $n - $desc"
		printf '%s\n' "$out" | sed 's/^/# /'
	fi
}

compile() {
	printf '#include <linux/kdbus.h>\n' | "$@" $inc $warn -fsyntax-only -
}

# a foreign target's view of the kernel headers: compiler builtins plus the
# arch-independent uapi headers (asm/ioctl.h and asm/types.h are generic)
cross() {
	target=$1
	shift
	"$@" --target="$target" -nostdinc -isystem "$(clang -print-resource-dir)/include" \
		-I/usr/include -I/usr/include/x86_64-linux-gnu $inc $warn \
		-DABI_STATIC_ONLY -fsyntax-only "$top/test/host/abi.c"
}

includes() {
	grep -E '^[[:space:]]*#[[:space:]]*include' "$hdr" | sed -E 's/[[:space:]]+/ /g' >"$1.inc"
	printf '#include <linux/ioctl.h>\n#include <linux/stddef.h>\n#include <linux/types.h>\n' | diff - "$1.inc"
}

guard() {
	grep -q '^#ifndef _UAPI_KDBUS_H_$' "$hdr" &&
	grep -q '^#define _UAPI_KDBUS_H_$' "$hdr" &&
	head -n1 "$hdr" | grep -qF '/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */'
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "TAP version 13"
echo "1..10"
tap "header: gcc -std=gnu11" compile gcc -std=gnu11 -x c
tap "header: clang -std=gnu11" compile clang -std=gnu11 -x c
tap "header: gcc -std=c11 (anonymous unions are C11)" compile gcc -std=c11 -x c
tap "header: g++ -x c++" compile g++ -x c++
tap "header: clang++ -x c++" compile clang++ -x c++
tap "header: the ABI table layout holds as C++ (g++)" \
	g++ -x c++ -std=gnu++17 $inc $warn -DABI_STATIC_ONLY -fsyntax-only "$top/test/host/abi.c"
tap "header: the ABI table layout holds on i686 (clang)" cross i686-linux-gnu clang -std=gnu11
tap "header: the ABI table layout holds on aarch64 (clang)" cross aarch64-linux-gnu clang -std=gnu11
tap "header: includes only <linux/ioctl.h>, <linux/stddef.h> and <linux/types.h>" includes "$tmp/h"
tap "header: SPDX line and include guard _UAPI_KDBUS_H_" guard
exit $fail
