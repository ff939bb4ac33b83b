#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""count-instructions.py FILE...: user-space instructions per call from the
callgrind outputs of bench/count-instructions.sh (cg.lib.PID, cg.raw.PID).

Per process: the inclusive instructions of the function that makes the calls
(client: kdbus_bus_call_method / kdbus_call_sync) or runs the service
(kdbus_bus_process / kdbus_service), divided by the number of calls the
client made (warm-up included), so start-up and the final sort are left out.
"""
import re
import subprocess
import sys

ROLES = {
    "lib": (("client", "kdbus_bus_call_method"), ("service", "kdbus_bus_process")),
    "raw": (("client", "kdbus_call_sync"), ("service", "kdbus_service")),
}


def annotate(path, *args):
    return subprocess.run(["callgrind_annotate", *args, path], capture_output=True,
                          text=True, check=True).stdout


def inclusive(text, fn):
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+) \(.*\)\s+\S*:" + re.escape(fn) + r" \[", line)
        if m:
            return int(m.group(1).replace(",", ""))
    return None


def calls_into(text, fn):
    """how often @fn was called (sum of its callers' counts)"""
    total, block = 0, []
    for line in text.splitlines():
        if re.search(r"\*\s+\S*:" + re.escape(fn) + r" \[", line):
            for b in block:
                m = re.search(r"\(([\d,]+)x\)", b)
                if m:
                    total += int(m.group(1).replace(",", ""))
            return total
        block = block + [line] if line.strip() else []
    return 0


def main(paths):
    found = {}
    for path in paths:
        kind = "lib" if ".lib." in path else "raw"
        incl = annotate(path, "--inclusive=yes")
        tree = annotate(path, "--tree=caller")
        for role, fn in ROLES[kind]:
            n = inclusive(incl, fn)
            if n is not None:
                found[(kind, role)] = (n, calls_into(tree, fn) if role == "client" else None)
    ok = True
    for kind in ("raw", "lib"):
        client = found.get((kind, "client"))
        service = found.get((kind, "service"))
        if not client or not service or not client[1]:
            print(f"{kind}: no callgrind data")
            ok = False
            continue
        calls = client[1]
        print(f"{kind:4} {calls:6d} calls  client {client[0] / calls:8.0f}"
              f"  service {service[0] / calls:8.0f}  instructions per call")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
