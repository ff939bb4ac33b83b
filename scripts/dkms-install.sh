#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# make dkms-install: register the module's sources with DKMS under
# /usr/src/kdbus-VERSION and build and install kdbus.ko for every
# installed kernel >= 6.1 that has its headers (/lib/modules/V/build),
# not only the running one. AUTOINSTALL in dkms.conf then builds it for
# kernels installed later. Prints one line per kernel; fails if any
# kernel that has headers could not be built.
#
#   scripts/dkms-install.sh VERSION

set -euo pipefail
[ $# = 1 ] || { echo "usage: $0 VERSION" >&2; exit 2; }
REPO=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd -P)
version=$1

[ "$(id -u)" = 0 ] || { echo "dkms-install: run as root" >&2; exit 1; }
command -v dkms >/dev/null ||
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends dkms

dkms remove -m kdbus -v "$version" --all >/dev/null 2>&1 || true
"$REPO/scripts/dkms-stage.sh" "/usr/src/kdbus-$version" "$version"
dkms add -m kdbus -v "$version"

# Every kernel with headers, oldest first; those below 6.1 are skipped
# (dkms.conf's BUILD_EXCLUSIVE_KERNEL says the same to AUTOINSTALL).
kernels=()
for build in /lib/modules/*/build; do
	[ -d "$build" ] || continue
	v=$(basename "$(dirname "$build")")
	case "$v" in
	[0-5].*|6.0.*|6.0) echo "dkms-install: $v: older than 6.1, skipped" ;;
	*) kernels+=("$v") ;;
	esac
done
[ ${#kernels[@]} -gt 0 ] || { echo "dkms-install: no kernel >= 6.1 has headers (/lib/modules/V/build)" >&2; exit 1; }

failed=0
for v in $(printf '%s\n' "${kernels[@]}" | sort -V); do
	if dkms build -m kdbus -v "$version" -k "$v" >/dev/null &&
	   dkms install -m kdbus -v "$version" -k "$v" --force >/dev/null; then
		echo "dkms-install: $v: installed $(modinfo -k "$v" -F filename kdbus 2>/dev/null || echo kdbus.ko)"
	else
		echo "dkms-install: $v: FAILED (see /var/lib/dkms/kdbus/$version/build/make.log)" >&2
		failed=1
	fi
done
install -D -m 0644 "$REPO/scripts/kdbus.conf" /etc/modules-load.d/kdbus.conf
exit $failed
