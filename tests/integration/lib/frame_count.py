# SPDX-License-Identifier: Apache-2.0
"""A loopback TCP relay that logs every protocol frame it passes, for the
heartbeat tests: listens on 127.0.0.1:LISTEN, relays each connection to
127.0.0.1:TARGET byte for byte (plain TCP: --insecure peers), and writes one
line per frame to LOG: "MS DIR TYPE", MS the milliseconds since the relay
started, DIR "out" for a frame from the connecting side (the manager, when
the manager dials the agent through it) and "back" for one from the target,
TYPE the message's "type" ("stats" for a binary stats body). Prints
"listening" once it accepts.

usage: frame_count.py LISTEN_PORT TARGET_PORT LOG"""
import asyncio
import re
import struct
import sys
import time

T0 = time.monotonic()
TYPE = re.compile(rb'"type"\s*:\s*"([a-z_]+)"')


def frame_type(payload):
    if payload[:1] == b"\x01":  # the binary stats body (proto/statsbin.h)
        return "stats"
    m = TYPE.search(payload[:64])
    return m.group(1).decode() if m else "?"


async def pipe(reader, writer, log, direction):
    buf = b""
    try:
        while data := await reader.read(65536):
            writer.write(data)
            buf += data
            # A frame: "IF", version, flags, a big-endian 32-bit length.
            while len(buf) >= 8:
                (n,) = struct.unpack(">I", buf[4:8])
                if len(buf) < 8 + n:
                    break
                log.write("%d %s %s\n" % ((time.monotonic() - T0) * 1000, direction,
                                          frame_type(buf[8:8 + n])))
                log.flush()
                buf = buf[8 + n:]
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        writer.close()


async def relay(target, log, reader, writer):
    try:
        treader, twriter = await asyncio.open_connection("127.0.0.1", target)
    except OSError:
        writer.close()
        return
    await asyncio.gather(pipe(reader, twriter, log, "out"), pipe(treader, writer, log, "back"))


async def main():
    listen, target = int(sys.argv[1]), int(sys.argv[2])
    log = open(sys.argv[3], "a")
    server = await asyncio.start_server(
        lambda r, w: relay(target, log, r, w), "127.0.0.1", listen, reuse_address=True)
    print("listening", flush=True)
    async with server:
        await server.serve_forever()


asyncio.run(main())
