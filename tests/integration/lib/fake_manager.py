# SPDX-License-Identifier: Apache-2.0
"""A scripted manager for agent tests (not a test itself): it connects to a
plain-TCP dynamo (--insecure) on 127.0.0.1:PORT, speaks protocol 1.4, sends
the plan file PLAN and a prepare, then plays SCENARIO:

  held-stop  setup test 0, wait for ready, check the agent (PID) holds its
             target FILE open, send stop: the file must be closed within 3 s.
  busy-stop  start test 0 (in 2 s), stop and setup in the same write: the
             setup must be refused busy and the test still stopped: its
             result interrupted, within 5 s of the stop.

  fake_manager.py PORT PID PLAN FILE SCENARIO

Prints what it checks; exit 0 when the scenario held, 1 with the reason.
Everything is bounded (20 s).
"""
import json
import os
import select
import socket
import struct
import sys
import time


def main():
    port, pid, plan_path, target, scenario = sys.argv[1:6]
    plan = json.load(open(plan_path))
    conn = socket.create_connection(("127.0.0.1", int(port)), timeout=10)
    buf = b""
    deadline = time.monotonic() + 20

    def frame(obj):
        p = json.dumps(obj, separators=(",", ":")).encode()
        return b"IF\x01\x00" + struct.pack(">I", len(p)) + p

    def send(*objs):
        conn.sendall(b"".join(frame(o) for o in objs))

    def recv(want, until=None):
        """The next message of type `want` (errors before it fail)."""
        nonlocal buf
        until = until or deadline
        while time.monotonic() < until:
            while len(buf) >= 8:
                (n,) = struct.unpack(">I", buf[4:8])
                if len(buf) < 8 + n:
                    break
                payload = buf[8:8 + n]
                buf = buf[8 + n:]
                if payload[:1] == b"\x01":  # a stats message's binary body
                    continue
                m = json.loads(payload)
                if m["type"] == want:
                    return m
                if m["type"] == "error" and want != "error":
                    sys.exit("unexpected error: %s" % m.get("message"))
            r, _, _ = select.select([conn], [], [], 0.1)
            if r:
                d = conn.recv(65536)
                if not d:
                    sys.exit("agent closed the connection waiting for %s" % want)
                buf += d
        return None

    def holds():
        n = 0
        for fd in os.listdir("/proc/%s/fd" % pid):
            try:
                n += os.readlink("/proc/%s/fd/%s" % (pid, fd)) == target
            except OSError:
                pass
        return n

    send({"type": "hello", "v": [1, 4], "role": "manager", "name": "fake-mgr", "software": "0.1.0",
          "heartbeat_ms": 60000})
    if not recv("welcome"):
        sys.exit("no welcome")
    send({"type": "plan", "plan": plan}, {"type": "prepare"})
    if not recv("prepared"):
        sys.exit("no prepared")

    if scenario == "held-stop":
        send({"type": "setup", "test": 0})
        if not recv("ready"):
            sys.exit("no ready")
        if not holds():
            sys.exit("the set-up test does not hold %s open" % target)
        print("set up: %d fds on the target" % holds())
        send({"type": "stop", "reason": "test"})
        t0 = time.monotonic()
        while holds() and time.monotonic() - t0 < 3:
            time.sleep(0.02)
        if holds():
            sys.exit("%d fds still on %s 3 s after the stop" % (holds(), target))
        print("stop: target closed after %.0f ms" % ((time.monotonic() - t0) * 1000))
    elif scenario == "busy-stop":
        send({"type": "start", "test": 0, "start_at_ns": time.monotonic_ns() + 2000000000},
             {"type": "stop", "reason": "test"}, {"type": "setup", "test": 0})
        t0 = time.monotonic()
        e = recv("error")
        if not e or e.get("code") != "IOF_EBUSY":
            sys.exit("the setup was not refused busy: %s" % e)
        print("setup refused: %s" % e.get("message"))
        r = recv("result", t0 + 5)
        if not r:
            sys.exit("no result within 5 s of the stop: the stop was lost")
        if not r.get("interrupted"):
            sys.exit("the result is not interrupted: %s" % r)
        print("result interrupted after %.0f ms" % ((time.monotonic() - t0) * 1000))
    else:
        sys.exit("unknown scenario %s" % scenario)
    send({"type": "bye"})


if __name__ == "__main__":
    main()
