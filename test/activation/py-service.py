#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# An activatable dbus-python service (GLib main loop) for
# test-activation.sh. Started by kdbus-launcher, it connects to the bus
# it was started for (DBUS_STARTER_ADDRESS, the kdbus-proxy socket) and
# takes NAME. Object /t, interface org.kdbus.Test, as test-service:
#   Echo(u n) -> (u n, u pid), Quit() replies, then exits
# log= appends "PID start STARTER_BUS_TYPE STARTER_ADDRESS".
#
#   py-service.py NAME [log=FILE]
import os
import sys

import dbus
import dbus.service
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

DBusGMainLoop(set_as_default=True)
loop = GLib.MainLoop()


class Test(dbus.service.Object):
    @dbus.service.method("org.kdbus.Test", in_signature="u", out_signature="uu")
    def Echo(self, n):
        return (n, os.getpid())

    @dbus.service.method("org.kdbus.Test", in_signature="", out_signature="")
    def Quit(self):
        GLib.idle_add(loop.quit)


for arg in sys.argv[2:]:
    if arg.startswith("log="):
        with open(arg[4:], "a") as f:
            f.write("%d start %s %s\n" % (os.getpid(),
                                          os.environ.get("DBUS_STARTER_BUS_TYPE", "-"),
                                          os.environ.get("DBUS_STARTER_ADDRESS", "-")))
bus = dbus.bus.BusConnection(os.environ["DBUS_STARTER_ADDRESS"])
obj = Test(bus, "/t")
name = dbus.service.BusName(sys.argv[1], bus, do_not_queue=True)
loop.run()
