#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# A dbus-python caller for test-activation.sh, the classic twin of
# test-caller: through ADDRESS (kdbus-proxy) sends N calls Echo(i) to NAME
# at once, optionally preceded by Quit(), waits for every answer and
# prints the same summary line:
#
#   replies=R errors=E dup=D order=ok|bad pids=P error=NAME
#
# A second answer to a call finds no pending call in libdbus and reaches
# the message filter instead: that is how D (duplicates) is counted.
#
#   py-caller.py ADDRESS NAME N [quit-first] [timeout=SEC]
import sys

import dbus
import dbus.lowlevel
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

DBusGMainLoop(set_as_default=True)
loop = GLib.MainLoop()
address, name, n_calls = sys.argv[1], sys.argv[2], int(sys.argv[3])
quit_first = "quit-first" in sys.argv[4:]
timeout = 30
for arg in sys.argv[4:]:
    if arg.startswith("timeout="):
        timeout = int(arg[8:])

st = {"replies": 0, "errors": 0, "dup": 0, "answered": 0, "next": 0, "order": True,
      "error": None}
pids = set()
answered = [0] * n_calls


def finish_if_done():
    if st["answered"] >= n_calls:
        # let a late duplicate arrive before judging
        GLib.timeout_add(500, loop.quit)


def on_reply(i, n, pid):
    answered[i] += 1
    st["answered"] += 1
    if n != i:
        st["errors"] += 1
    else:
        st["replies"] += 1
        if i != st["next"]:
            st["order"] = False
        st["next"] = i + 1
        pids.add(int(pid))
    finish_if_done()


def on_error(i, e):
    answered[i] += 1
    st["answered"] += 1
    st["errors"] += 1
    if st["error"] is None:
        st["error"] = e.get_dbus_name()
    finish_if_done()


def on_stray(conn, msg):
    # replies and errors without a pending call: a second answer
    if isinstance(msg, (dbus.lowlevel.MethodReturnMessage, dbus.lowlevel.ErrorMessage)):
        st["dup"] += 1
    return dbus.lowlevel.HANDLER_RESULT_NOT_YET_HANDLED


bus = dbus.bus.BusConnection(address)
bus.add_message_filter(on_stray)
# call_async sends to NAME itself: get_object() would first resolve the
# owner (StartServiceByName) and call the unique name, missing the windows
if quit_first:
    bus.call_async(name, "/t", "org.kdbus.Test", "Quit", "", (), lambda: None,
                   lambda e: None, timeout=timeout)
for i in range(n_calls):
    bus.call_async(name, "/t", "org.kdbus.Test", "Echo", "u", (i,),
                   lambda n, pid, i=i: on_reply(i, n, pid),
                   lambda e, i=i: on_error(i, e), timeout=timeout)
if n_calls == 0:
    GLib.timeout_add(1000, loop.quit)
GLib.timeout_add_seconds(timeout + 10, loop.quit)
loop.run()
st["dup"] += sum(a - 1 for a in answered if a > 1)
print("replies=%d errors=%d dup=%d order=%s pids=%d error=%s" %
      (st["replies"], st["errors"], st["dup"], "ok" if st["order"] else "bad", len(pids),
       st["error"] or "none"))
