#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# trace-segments.py TRACE: the steps of a ping-pong between two processes,
# from an ftrace text dump with the events raw_syscalls:sys_enter/sys_exit,
# sched:sched_waking/sched_wakeup/sched_switch (bench/trace-segments.sh).
#
# The two processes that made the most system calls are the client and the
# service (numbered 0 and 1 in the order of their system call counts). For
# each of them it prints the median, 25th and 75th percentile (us) of:
#   SYSCALL enter->exit       a system call that did not sleep
#   SYSCALL enter->waking     from its entry to the wake-up of the peer
#   SYSCALL enter->sleep      from its entry to the switch away (a wait)
#   SYSCALL switch-in->exit   from the switch back in to the exit
#   waking->wakeup            from the peer's sched_waking to the wake-up
#                             (on another CPU: the IPI and the idle exit)
#   woken on the waker's CPU  share of wake-ups that stayed on one CPU
# ioctls are named by the command's number (ioctl90 SEND, ioctl91 RECV,
# ioctl83 FREE); other system calls by number (0 read, 1 write, 7 poll,
# 228 clock_gettime).

import collections
import re
import statistics
import sys

LINE = re.compile(r'^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+\S+\s+([\d.]+):\s+(\w+):\s*(.*)$')


def main(path):
    events = []
    with open(path) as f:
        for line in f:
            m = LINE.match(line)
            if m:
                _, pid, cpu, ts, name, rest = m.groups()
                events.append((float(ts) * 1e6, int(pid), int(cpu), name, rest))

    calls = collections.Counter(p for _, p, _, n, _ in events if n == 'sys_enter' and p)
    pids = [p for p, _ in calls.most_common(2)]
    if len(pids) < 2:
        sys.exit('trace-segments: fewer than two processes in the trace')

    segs = collections.defaultdict(list)
    switched_in = {}
    waking = {}
    in_syscall = {}
    for t, pid, cpu, name, rest in events:
        if name == 'sched_switch':
            nxt = int(re.search(r'next_pid=(\d+)', rest).group(1))
            prv = int(re.search(r'prev_pid=(\d+)', rest).group(1))
            if nxt in pids:
                switched_in[nxt] = t
            if prv in pids and prv in in_syscall:
                key, t0 = in_syscall[prv]
                segs['%d %s enter->sleep' % (pids.index(prv), key)].append(t - t0)
        elif name == 'sched_waking':
            tgt = int(re.search(r' pid=(\d+)', rest).group(1))
            if pid in pids and pid in in_syscall:
                key, t0 = in_syscall[pid]
                segs['%d %s enter->waking' % (pids.index(pid), key)].append(t - t0)
            if pid in pids and tgt in pids:
                same = int(re.search(r'target_cpu=(\d+)', rest).group(1)) == cpu
                segs['%d woken on the waker\'s CPU' % pids.index(tgt)].append(float(same))
            waking[tgt] = t
        elif name == 'sched_wakeup':
            tgt = int(re.search(r' pid=(\d+)', rest).group(1))
            if tgt in pids and tgt in waking:
                segs['%d waking->wakeup' % pids.index(tgt)].append(t - waking.pop(tgt))
        elif name == 'sys_enter' and pid in pids:
            nr = rest.split()[1]
            key = nr
            if nr == '16':
                key = 'ioctl' + rest.split('(')[1].split(',')[1].strip()[-2:]
            in_syscall[pid] = (key, t)
        elif name == 'sys_exit' and pid in in_syscall:
            key, t0 = in_syscall.pop(pid)
            if switched_in.get(pid, -1) > t0:
                segs['%d %s switch-in->exit' % (pids.index(pid), key)].append(t - switched_in[pid])
            else:
                segs['%d %s enter->exit' % (pids.index(pid), key)].append(t - t0)

    print('processes: 0 = %d, 1 = %d' % tuple(pids))
    for key in sorted(segs):
        v = segs[key]
        if len(v) < 50:
            continue
        if key.endswith('CPU'):
            print('%-32s n=%6d share %.2f' % (key, len(v), sum(v) / len(v)))
            continue
        q = statistics.quantiles(v, n=4)
        print('%-32s n=%6d median %6.1f us  p25 %6.1f  p75 %6.1f' %
              (key, len(v), statistics.median(v), q[0], q[2]))


if __name__ == '__main__':
    if len(sys.argv) != 2:
        sys.exit('usage: trace-segments.py TRACE')
    main(sys.argv[1])
