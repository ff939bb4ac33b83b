#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Runs inside the kdbus test VM, output on the second serial port (the
# host's vm/run reads it). Loads the module under test, mounts kdbusfs,
# runs the requested command between markers, unloads, then dumps the
# kernel log between markers. The host decides pass/fail from the markers
# and from the kernel log; this script only reports.
#
# $1: the run directory (host path as seen under /host), holding
#     config  - shell variables set by vm/run (KDBUS_VM_*, forwarded env)
#     cmd     - the command, a shell script

run=$1
. "$run/config"

mkdir -p /sys/kernel/debug /dev/pts /dev/shm /run /tmp
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t devpts devpts /dev/pts 2>/dev/null
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /tmp
echo "$KDBUS_VM_HUNG_TIMEOUT" >/proc/sys/kernel/hung_task_timeout_secs
# Report hung tasks every time, not only the first ten.
echo -1 >/proc/sys/kernel/hung_task_warnings 2>/dev/null
ln -sf /proc/self/fd /dev/fd 2>/dev/null
hostname kdbus-vm
# A kernel with kmemleak (the debug kernel): forget what boot left behind;
# leaks of the run are scanned for with the module loaded (symbolised
# traces) and again after rmmod, and printed with the kernel log.
kmemleak=/sys/kernel/debug/kmemleak
[ -w $kmemleak ] || kmemleak=
[ -z "$kmemleak" ] || echo clear >$kmemleak
leakscan() {
	[ -n "$kmemleak" ] || return 0
	sleep 6		# kmemleak ignores objects younger than 5s
	echo scan >$kmemleak
	echo scan >$kmemleak
	cat $kmemleak >>/tmp/kmemleak.txt
	echo clear >$kmemleak
}

setup=ok
modname=
if [ -n "$KDBUS_VM_MODULE" ]; then
	modname=$(basename "$KDBUS_VM_MODULE" .ko)
	if ! insmod "$KDBUS_VM_MODULE"; then
		echo "@@KDBUS-VM ERROR insmod $KDBUS_VM_MODULE failed@@"
		setup=failed
		modname=
	fi
fi
mounted=
if [ "$setup" = ok ] && [ "$KDBUS_VM_MOUNT" = 1 ]; then
	if mount -t kdbusfs kdbusfs /sys/fs/kdbus; then
		mounted=1
	else
		echo "@@KDBUS-VM ERROR mount -t kdbusfs kdbusfs /sys/fs/kdbus failed@@"
		setup=failed
	fi
fi

rc=125
if [ "$setup" = ok ]; then
	cd "$KDBUS_VM_WORKDIR" || cd /
	echo "@@KDBUS-VM BEGIN@@"
	timeout "$KDBUS_VM_GUEST_TIMEOUT" sh "$run/cmd" </dev/null
	rc=$?
	cd /
fi
echo "@@KDBUS-VM END rc=$rc@@"

if [ -n "$mounted" ] && ! umount /sys/fs/kdbus; then
	echo "@@KDBUS-VM ERROR umount /sys/fs/kdbus failed@@"
fi
if [ -n "$modname" ]; then
	# Give deferred work (RCU callbacks, workqueues) a moment to drop
	# its module references, as a real unload would have.
	sleep 1
	leakscan
	rmmod "$modname"
	echo "@@KDBUS-VM RMMOD rc=$?@@"
fi
leakscan
echo "@@KDBUS-VM DMESG BEGIN@@"
dmesg
[ ! -s /tmp/kmemleak.txt ] || cat /tmp/kmemleak.txt
echo "@@KDBUS-VM DMESG END@@"
echo "@@KDBUS-VM DONE@@"
