#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Copy what DKMS needs to build the module (kernel/ sources, the uapi
# header, dkms.conf with PACKAGE_VERSION set) into DEST, normally
# /usr/src/kdbus-VERSION. Used by `make dkms-install`.
#   scripts/dkms-stage.sh DEST VERSION

set -euo pipefail
[ $# = 2 ] || { echo "usage: $0 DEST VERSION" >&2; exit 2; }
REPO=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd -P)
dest=$1 version=$2

rm -rf "$dest"
mkdir -p "$dest/include/uapi/linux"
(cd "$REPO" && find kernel \( -name '*.[ch]' ! -name '*.mod.c' \) -o -name Kbuild \
	-o -name Makefile | cpio -pdm --quiet "$dest")
cp "$REPO/include/uapi/linux/kdbus.h" "$dest/include/uapi/linux/"
sed "s/^PACKAGE_VERSION=.*/PACKAGE_VERSION=\"$version\"/" "$REPO/dkms.conf" >"$dest/dkms.conf"
