# SPDX-License-Identifier: Apache-2.0
"""A scripted agent for manager tests (not a test itself): it listens on
127.0.0.1:PORT (printed on stdout as "listening PORT"), speaks protocol 1.0
to one `iofleet run --agent` session and runs every test of the plan by
sending stats for each interval and a result, with what the tests ask of it:

  fake_agent.py NAME --lost K     interval K (0-based) of each test is sent
                                  lost (the agent fell behind): zero counters
                                  and "lost": true; the result still has its I/O

Each interval: one worker, its first target, 3 reads of 1000 ns (4 KiB).
Heartbeats are not needed: the hello asks for a 60 s period. Everything is
bounded: the session ends at the manager's bye or after 60 s.
"""
import base64
import json
import select
import socket
import struct
import sys
import time


def varint(x):
    out = bytearray()
    while x >= 0x80:
        out.append((x & 0x7F) | 0x80)
        x >>= 7
    out.append(x)
    return bytes(out)


def index(v):  # common/hist.h iof_hist_index
    if v < 128:
        return v
    msb = v.bit_length() - 1
    if msb > 42:
        return (42 - 6 + 2) * 64 - 1
    shift = msb - 6
    return shift * 64 + (v >> shift)


def hist(n, v=1000):
    if n == 0:
        return base64.b64encode(varint(0) + varint(0) + varint(2**64 - 1) + varint(0) + varint(0)).decode()
    raw = varint(n) + varint(n * v) + varint(v) + varint(v) + varint(1) + varint(index(v)) + varint(n)
    return base64.b64encode(raw).decode()


def target(n):
    return {"r": {"ios": n, "bytes": n * 4096, "errors": 0, "lat": hist(n)}} if n else {}


def main():
    name = sys.argv[1]
    lost = int(sys.argv[sys.argv.index("--lost") + 1]) if "--lost" in sys.argv else -1
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(1)
    print("listening", ls.getsockname()[1], flush=True)
    ls.settimeout(30)
    conn, _ = ls.accept()
    buf = b""
    plan = None
    deadline = time.monotonic() + 60

    def send(obj):
        p = json.dumps(obj, separators=(",", ":")).encode()
        conn.sendall(b"IF\x01\x00" + struct.pack(">I", len(p)) + p)

    while time.monotonic() < deadline:
        r, _, _ = select.select([conn], [], [], 1)
        if not r:
            continue
        d = conn.recv(65536)
        if not d:
            return
        buf += d
        while len(buf) >= 8:
            (n,) = struct.unpack(">I", buf[4:8])
            if len(buf) < 8 + n:
                break
            m = json.loads(buf[8:8 + n])
            buf = buf[8 + n:]
            t = m["type"]
            if t == "hello":
                send({"type": "hello", "v": [1, 0], "role": "agent", "name": name, "software": "0.1.0",
                      "heartbeat_ms": 60000,
                      "inventory": {"hostname": name, "cpus": 1, "memory_bytes": 1 << 30, "kernel": "x",
                                    "targets": []}})
                send({"type": "welcome"})
            elif t == "plan":
                plan = m["plan"]
            elif t == "prepare":
                send({"type": "prepared"})
            elif t == "clock_probe":
                send({"type": "clock_reply", "seq": m["seq"], "t0_ns": m["t0_ns"],
                      "agent_ns": str(time.monotonic_ns())})
            elif t == "start":
                run = plan["run"]
                ms = {"ms": 1, "s": 1000}
                def dur(s):
                    for u in ("ms", "s"):
                        if s.endswith(u):
                            return int(s[: -len(u)]) * ms[u]
                nint = -(-dur(run["duration"]) // dur(run["interval"]))
                ntargets = len(plan["workers"][0]["targets"])
                for k in range(nint):
                    tg = [target(0 if k == lost else 3)] + [{}] * (ntargets - 1)
                    msg = {"type": "stats", "test": m["test"], "interval": k, "workers": [tg]}
                    if k == lost:
                        msg["lost"] = True
                    send(msg)
                total = 3 * nint
                send({"type": "result", "test": m["test"], "measured_ns": dur(run["duration"]) * 1000000,
                      "cpu_ns": 0, "started_first_ns": 0, "started_last_ns": 0, "interrupted": False,
                      "workers": [[target(total)] + [{}] * (ntargets - 1)]})
            elif t == "bye":
                return


main()
