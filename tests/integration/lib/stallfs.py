#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# A FUSE filesystem with one in-memory file, /disk.img, whose reads and
# writes hang on demand: while the file named by --stall exists, every read
# and write waits (polling every 20 ms). Mounted with direct_io, so a loop
# device over /disk.img sends each I/O here: a block device that stalls
# without device-mapper. Used by tests/integration/security_stuck.sh.
# With delay=US, every read and write also takes US microseconds, one at a
# time (the server is single-threaded): a device of about 10^6/US IOPS whose
# latency climbs once it is offered more (tests/integration/rate_find_max.sh).
#
# usage: stallfs.py MOUNTPOINT -f -o direct_io,size=BYTES[,stall=PATH][,delay=US]
import errno
import os
import stat
import time

import fuse
from fuse import Fuse

fuse.fuse_python_api = (0, 2)


class StallFS(Fuse):
    def __init__(self, *args, **kw):
        Fuse.__init__(self, *args, **kw)
        self.size = 64 << 20
        self.stall = "/nonexistent"
        self.delay = 0
        self.data = None

    def wait(self):
        while os.path.exists(self.stall):
            time.sleep(0.02)
        if self.delay:
            time.sleep(self.delay / 1e6)

    def getattr(self, path):
        st = fuse.Stat()
        st.st_mode, st.st_nlink, st.st_size = 0, 1, 0
        if path == "/":
            st.st_mode, st.st_nlink = stat.S_IFDIR | 0o755, 2
        elif path == "/disk.img":
            st.st_mode, st.st_size = stat.S_IFREG | 0o600, self.size
        else:
            return -errno.ENOENT
        return st

    def readdir(self, path, offset):
        for name in (".", "..", "disk.img"):
            yield fuse.Direntry(name)

    def open(self, path, flags):
        return 0 if path == "/disk.img" else -errno.ENOENT

    def truncate(self, path, size):
        return 0 if size == self.size else -errno.EINVAL

    def read(self, path, size, offset):
        self.wait()
        end = min(offset + size, self.size)
        return bytes(self.data[offset:end]) if offset < end else b""

    def write(self, path, buf, offset):
        self.wait()
        if offset + len(buf) > self.size:
            return -errno.ENOSPC
        self.data[offset:offset + len(buf)] = buf
        return len(buf)

    def flush(self, path):
        return 0

    def fsync(self, path, datasync):
        return 0


def main():
    server = StallFS(dash_s_do="setsingle")
    server.parser.add_option(mountopt="size", metavar="BYTES", help="size of disk.img")
    server.parser.add_option(mountopt="stall", metavar="PATH", help="stall while PATH exists")
    server.parser.add_option(mountopt="delay", metavar="US", help="microseconds per read or write")
    server.parse(values=server, errex=1)
    server.size = int(server.size)
    server.delay = int(server.delay)
    server.data = bytearray(server.size)
    server.main()


if __name__ == "__main__":
    main()
