#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Measures what a file offers deduplicating and compressing storage, with
nothing of iofleet's: the share of distinct UNIT-byte blocks (by content), and
the size zstd and lz4 (their command-line tools, default levels) compress the
whole file to. Prints "unique_pct zstd_pct lz4_pct" (percent of the file).

usage: data_check.py FILE UNIT
"""
import subprocess
import sys


def compressed_size(cmd, path):
    with open(path, "rb") as f:
        out = subprocess.run(cmd, stdin=f, stdout=subprocess.PIPE, check=True).stdout
    return len(out)


def main():
    path, unit = sys.argv[1], int(sys.argv[2])
    seen = set()
    n = 0
    with open(path, "rb") as f:
        while True:
            b = f.read(unit)
            if len(b) < unit:
                break
            seen.add(b)
            n += 1
    if n == 0:
        sys.exit("data_check: %s has no whole %d-byte block" % (path, unit))
    size = n * unit
    z = compressed_size(["zstd", "-q", "-c"], path)
    l4 = compressed_size(["lz4", "-q", "-c"], path)
    print("%.2f %.2f %.2f" % (100.0 * len(seen) / n, 100.0 * z / size, 100.0 * l4 / size))


if __name__ == "__main__":
    main()
