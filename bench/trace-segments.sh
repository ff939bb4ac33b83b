#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# trace-segments.sh [kdbus-bench options]: run one kdbus-bench cell in the
# test VM under ftrace (system calls, wake-ups, context switches) and print
# the steps of its round trip (bench/trace-segments.py), e.g.
#
#   vm/run -c "sh /host$PWD/bench/trace-segments.sh --pin split --sizes 8 --only kdbus_sync"
#
# Tracing costs about a microsecond per event: compare the two transports
# traced the same way, not traced with untraced figures. The analysis runs
# the host tree's python3 through chroot /host (the guest is busybox).

set -e
here=$(cd "$(dirname "$0")" && pwd)
T=/sys/kernel/tracing
EVENTS="raw_syscalls/sys_enter raw_syscalls/sys_exit sched/sched_waking sched/sched_wakeup sched/sched_switch"

[ -e $T/trace ] || mount -t tracefs nodev $T
echo 0 > $T/tracing_on
echo > $T/trace
echo 16384 > $T/buffer_size_kb
for e in $EVENTS; do echo 1 > $T/events/$e/enable; done
echo 1 > $T/tracing_on
"$here/kdbus-bench" --iterations 1500 --rounds 1 "$@"
echo 0 > $T/tracing_on
for e in $EVENTS; do echo 0 > $T/events/$e/enable; done

# the host tree sees the trace through its /tmp
cat $T/trace > /tmp/trace-segments.txt
mount --bind /tmp /host/tmp
chroot /host python3 "${here#/host}/trace-segments.py" /tmp/trace-segments.txt || r=$?
umount /host/tmp
exit ${r:-0}
