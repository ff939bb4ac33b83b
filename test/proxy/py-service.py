#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# A dbus-python service with a GLib main loop for test-proxy.sh. Owns
# org.t.Py, object /org/t/Py:
#   org.t.Py.Echo(s) -> s, Types(ybnqiuxtdso) -> the same values,
#   Sum(ai) -> x, ReadFd(h) -> s (the contents), GetFd() -> h (a file
#   holding "from-python"), Emit(s) (emits org.t.Py.Sig(s)), Quit()
#   org.t.Forbidden.Nope() (the test policy denies it)
# Every org.t.Native.Sig and org.t.Cli.Sig signal is printed as
# "got MEMBER ARG". Prints "ready" once it owns the name.
#
#   py-service.py ADDRESS
import os
import sys
import tempfile

import dbus
import dbus.service
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

DBusGMainLoop(set_as_default=True)
loop = GLib.MainLoop()


class Py(dbus.service.Object):
    @dbus.service.method("org.t.Py", in_signature="s", out_signature="s")
    def Echo(self, s):
        return s

    @dbus.service.method("org.t.Py", in_signature="ybnqiuxtdso", out_signature="ybnqiuxtdso")
    def Types(self, y, b, n, q, i, u, x, t, d, s, o):
        return (y, b, n, q, i, u, x, t, d, s, o)

    @dbus.service.method("org.t.Py", in_signature="ai", out_signature="x")
    def Sum(self, a):
        return sum(a)

    @dbus.service.method("org.t.Py", in_signature="h", out_signature="s")
    def ReadFd(self, fd):
        f = os.fdopen(fd.take(), "r")
        f.seek(0)
        return f.read()

    @dbus.service.method("org.t.Py", in_signature="", out_signature="h")
    def GetFd(self):
        f = tempfile.TemporaryFile()
        f.write(b"from-python")
        f.flush()
        f.seek(0)
        return dbus.types.UnixFd(f)

    @dbus.service.method("org.t.Py", in_signature="s", out_signature="")
    def Emit(self, s):
        self.Sig(s)

    @dbus.service.signal("org.t.Py", signature="s")
    def Sig(self, s):
        pass

    @dbus.service.method("org.t.Py", in_signature="", out_signature="")
    def Quit(self):
        GLib.idle_add(loop.quit)

    @dbus.service.method("org.t.Forbidden", in_signature="", out_signature="s")
    def Nope(self):
        return "the policy let this through"


def on_signal(arg, member=None):
    print("got %s %s" % (member, arg), flush=True)


bus = dbus.bus.BusConnection(sys.argv[1])
for iface in ("org.t.Native", "org.t.Cli"):
    bus.add_signal_receiver(on_signal, signal_name="Sig", dbus_interface=iface,
                            member_keyword="member")
name = dbus.service.BusName("org.t.Py", bus, do_not_queue=True)
obj = Py(bus, "/org/t/Py")
print("ready %s %d" % (bus.get_unique_name(), os.getpid()), flush=True)
loop.run()
