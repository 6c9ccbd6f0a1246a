#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Slow and event-stream connections against the live view (security_http.sh).

usage: http_flood.py PORT SECONDS OUT.json --slow N --streams N [--first-addr K]

From the loopback addresses 127.0.0.K, 127.0.0.K+1, ... (one per connection,
wrapping after 127.0.0.60), for SECONDS:
- N slow clients each send the start of a request and then one more header
  line a second, never the blank line that ends the headers; when the server
  closes one it opens a new one half a second later (a slowloris);
- N event-stream clients each ask for /events and, when answered 200, keep
  reading the stream. They start 20 ms apart, and the slow clients once every
  stream has its answer (a stream still sending its request when a slow
  client arrives over a cap could be closed to admit it).
Prints "ready" on stdout once every connection has been opened once, then
writes OUT.json: the lifetimes of the slow connections the server closed, the
ages of those still open at the end, and each stream's status (200, 503,
"closed" when the connection ended without a status line).
"""
import json
import socket
import sys
import threading
import time


def src_addr(i, first):
    return "127.0.0.%d" % (first + i % (61 - first))


def connect(port, src):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((src, 0))
    s.settimeout(3)
    s.connect(("127.0.0.1", port))
    return s


class Flood:
    def __init__(self, port, seconds):
        self.port = port
        self.end = time.monotonic() + seconds
        self.lock = threading.Lock()
        self.closed_lifetimes = []  # slow connections the server closed
        self.open_since = {}  # slow client -> when its current connection opened
        self.open_ages = []  # slow connections still open at the end
        self.refused = 0  # connects refused or reset before a byte was sent
        self.streams = []
        self.started = 0
        self.all_started = threading.Event()

    def mark_started(self, total):
        with self.lock:
            self.started += 1
            if self.started == total:
                self.all_started.set()

    def slow(self, i, src, total):
        first = True
        while time.monotonic() < self.end:
            t0 = time.monotonic()
            try:
                s = connect(self.port, src)
                s.sendall(b"GET /metrics HTTP/1.1\r\nHost: iofleet\r\n")
            except OSError:
                with self.lock:
                    self.refused += 1
                if first:
                    first = False
                    self.mark_started(total)
                time.sleep(0.5)
                continue
            with self.lock:
                self.open_since[i] = t0
            if first:
                first = False
                self.mark_started(total)
            s.settimeout(1)
            gone = False
            while time.monotonic() < self.end:
                try:
                    if s.recv(4096) == b"":
                        gone = True
                        break
                except socket.timeout:
                    try:
                        s.sendall(b"X-Slow: 1\r\n")
                    except OSError:
                        gone = True
                        break
                except OSError:
                    gone = True
                    break
            with self.lock:
                del self.open_since[i]
                if gone:
                    self.closed_lifetimes.append(round(time.monotonic() - t0, 3))
                else:
                    self.open_ages.append(round(time.monotonic() - t0, 3))
            s.close()
            if gone:
                time.sleep(0.5)

    def stream(self, i, src, total):
        status = "closed"
        t0 = time.monotonic()
        s = None
        try:
            s = connect(self.port, src)
            s.sendall(b"GET /events HTTP/1.1\r\nHost: iofleet\r\nAccept: text/event-stream\r\n\r\n")
            line = s.makefile("rb").readline()
            if line.startswith(b"HTTP/1.1 "):
                status = int(line.split()[1])
        except OSError:
            pass
        with self.lock:
            self.streams.append({"src": src, "status": status,
                                 "answered_s": round(time.monotonic() - t0, 3)})
        self.mark_started(total)
        if status == 200:
            s.settimeout(1)
            while time.monotonic() < self.end:
                try:
                    if s.recv(65536) == b"":
                        break
                except socket.timeout:
                    pass
                except OSError:
                    break
        if s:
            s.close()


def main():
    port, seconds, out = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
    opts = dict(zip(sys.argv[4::2], sys.argv[5::2]))
    nslow, nstreams = int(opts.get("--slow", 0)), int(opts.get("--streams", 0))
    first = int(opts.get("--first-addr", 2))
    f = Flood(port, seconds)
    total = nslow + nstreams
    threads = []
    for i in range(nstreams):
        threads.append(threading.Thread(target=f.stream, args=(i, src_addr(i, first), total),
                                        daemon=True))
        threads[-1].start()
        time.sleep(0.02)
    while time.monotonic() < f.end and len(f.streams) < nstreams:
        time.sleep(0.01)
    for i in range(nslow):
        threads.append(threading.Thread(target=f.slow, args=(i, src_addr(i, first), total),
                                        daemon=True))
        threads[-1].start()
    f.all_started.wait(seconds)
    print("ready", flush=True)
    for t in threads:
        t.join(max(0.0, f.end - time.monotonic()) + 5)
    now = time.monotonic()
    with f.lock:
        # A thread still running (it did not see the end in time) counts as open.
        ages = f.open_ages + [round(now - t, 3) for t in f.open_since.values()]
        res = {"closed_lifetimes": sorted(f.closed_lifetimes), "open_ages": sorted(ages),
               "refused": f.refused, "streams": f.streams}
    with open(out, "w") as fh:
        json.dump(res, fh)


if __name__ == "__main__":
    main()
