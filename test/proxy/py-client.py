#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# A dbus-python client for test-proxy.sh: calls the services, passes
# descriptors both ways, receives signals with a GLib main loop. One line
# per check: "ok NAME" or "FAIL NAME: why".
#
#   py-client.py ADDRESS [native]   (native: also org.t.Native's signal)
import sys
import tempfile

import dbus
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

DBusGMainLoop(set_as_default=True)
bus = dbus.bus.BusConnection(sys.argv[1])
py = dbus.Interface(bus.get_object("org.t.Py", "/org/t/Py"), "org.t.Py")


def check(name, fn):
    try:
        r = fn()
        print("ok %s" % name if r is True else "FAIL %s: %r" % (name, r), flush=True)
    except Exception as e:  # noqa: BLE001 (a test: every failure is a line)
        print("FAIL %s: %s" % (name, e), flush=True)


check("python call", lambda: py.Echo("x" * 1000) == "x" * 1000 or "bad echo")
check("python array", lambda: py.Sum(list(range(1000))) == 499500 or "bad sum")


def send_fd():
    f = tempfile.TemporaryFile()
    f.write(b"from-client")
    f.flush()
    return py.ReadFd(dbus.types.UnixFd(f)) == "from-client" or "bad contents"


def recv_fd():
    fd = py.GetFd().take()
    import os
    os.lseek(fd, 0, 0)
    data = os.read(fd, 100)
    os.close(fd)
    return data == b"from-python" or data


check("fd passing client to service", send_fd)
check("fd passing service to client", recv_fd)


def signal_from(iface, emitter, arg):
    loop = GLib.MainLoop()
    got = []

    def on(s):
        got.append(str(s))
        loop.quit()
    m = bus.add_signal_receiver(on, signal_name="Sig", dbus_interface=iface)
    emitter(arg)
    GLib.timeout_add(20000, loop.quit)
    loop.run()
    m.remove()
    return got == [arg] or got


check("python receives a signal", lambda: signal_from("org.t.Py", py.Emit, "py-sig"))
if len(sys.argv) > 2 and sys.argv[2] == "native":
    nat = dbus.Interface(bus.get_object("org.t.Native", "/org/t/Native"), "org.t.Native")
    check("python calls the native service", lambda: nat.Echo("n") == "n" or "bad echo")
    check("python receives the native service's signal",
          lambda: signal_from("org.t.Native", nat.Emit, "native-sig"))
