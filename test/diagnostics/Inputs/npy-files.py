#!/usr/bin/env python3
"""Not a test: writes the .npy files of inputs.mlir into the directory argv[1].

Random values (fixed seed) where the run reads them, and the malformed
variants the tests refuse; written by hand since the tests do not assume
NumPy.
"""
import os
import random
import struct
import sys

out = sys.argv[1]
rng = random.Random(7)


def write(name, descr, shape, fortran=False, data=None):
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (
        descr, fortran, "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")")
    header = header.ljust(117) + "\n"
    count = 1
    for d in shape:
        count *= d
    size = int(descr[2:])
    if data is None:
        if descr == "<f4":
            data = struct.pack("<%df" % count, *[rng.uniform(-1, 1) for _ in range(count)])
        else:
            data = bytes(count * size)
    with open(os.path.join(out, name), "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + data)


write("x5.npy", "<f4", (5, 32))
write("logits5.npy", "<f4", (5, 4))
write("w13.npy", "<f4", (4, 32, 64))
write("w2.npy", "<f4", (4, 32, 32))
write("w2-flat.npy", "<f4", (4096,))
write("w2-fortran.npy", "<f4", (4, 32, 32), fortran=True)
write("w2-big-endian.npy", ">f4", (4, 32, 32))
write("w2-f16.npy", "<f2", (4, 32, 32))
with open(os.path.join(out, "truncated.npy"), "wb") as f:
    f.write(b"\x93NUMPY\x01\x00\xff\x00{'descr'")
