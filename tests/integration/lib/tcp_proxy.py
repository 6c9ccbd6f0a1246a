# SPDX-License-Identifier: Apache-2.0
"""A loopback TCP relay for the integration tests: listens on 127.0.0.1:LISTEN
and relays each connection to 127.0.0.1:TARGET, byte for byte. Killing it cuts
every relayed connection at once (both ends see EOF): a lost link between two
processes that both stay up. Prints "listening" once it accepts.

usage: tcp_proxy.py LISTEN_PORT TARGET_PORT"""
import asyncio
import sys


async def pipe(reader, writer):
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        writer.close()


async def relay(target, reader, writer):
    try:
        treader, twriter = await asyncio.open_connection("127.0.0.1", target)
    except OSError:
        writer.close()
        return
    await asyncio.gather(pipe(reader, twriter), pipe(treader, writer))


async def main():
    listen, target = int(sys.argv[1]), int(sys.argv[2])
    server = await asyncio.start_server(
        lambda r, w: relay(target, r, w), "127.0.0.1", listen, reuse_address=True)
    print("listening", flush=True)
    async with server:
        await server.serve_forever()


asyncio.run(main())
