#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""ringpages.py DIR - seed inputs for tests/fuzz/fuzz_tracedat_cpu.c.

Writes a few files of kernel ring-buffer pages (the layout described in
daemon/source/tracedat_cpu.c), each preceded by the fuzz target's layout
byte: 512-byte pages with 8- and 4-byte commit words, 4096-byte pages,
holding data events of both length forms, padding, time extends, absolute
times and missed-event marks.
"""
import os
import struct
import sys


def page(size, commit_size, ts, events, missed=0):
    body = b""
    for kind, delta, arg in events:
        if kind == "small":
            body += struct.pack("<I", len(arg) // 4 | delta << 5) + arg
        elif kind == "long":
            pad = arg + b"\0" * (-len(arg) % 4)
            body += struct.pack("<II", 0 | delta << 5, len(arg) + 4) + pad
        elif kind == "pad":
            body += struct.pack("<II", 29 | delta << 5, arg + 4) + b"\0" * arg
        elif kind == "extend":
            body += struct.pack("<II", 30 | delta << 5, arg)
        elif kind == "stamp":
            body += struct.pack("<II", 31 | delta << 5, arg)
    commit = len(body)
    tail = b""
    if missed:
        commit |= 1 << 31
        if missed > 0:
            commit |= 1 << 30
            tail = struct.pack("<Q", missed)[:commit_size]
    hdr = struct.pack("<Q", ts) + struct.pack("<Q", commit)[:commit_size]
    out = hdr + body + tail
    return out + b"\0" * (size - len(out))


def pages(size, commit_size):
    evs = [("small", 10, b"\x01\x00\x00\x00\x02\x00\x00\x00"), ("extend", 3, 1),
           ("small", 2, b"abcd"), ("pad", 7, 8), ("long", 1, b"0123456789"),
           ("stamp", 9, 3), ("small", 0, b"wxyz")]
    return (page(size, commit_size, 1000, evs, missed=5) +
            page(size, commit_size, 2000, [("extend", 1, 1), ("small", 1, b"efgh")], -1) +
            page(size, commit_size, 3000, []) +
            page(size, commit_size, 4000, [("long", 4, b"x" * 40)], -1))


def main():
    d = sys.argv[1]
    for name, flags, size, cs in (("p512", 0, 512, 8), ("p512c4", 2, 512, 4),
                                  ("p4096", 4, 4096, 8)):
        with open(os.path.join(d, name), "wb") as f:
            f.write(bytes([flags]) + pages(size, cs))


if __name__ == "__main__":
    main()
