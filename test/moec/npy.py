#!/usr/bin/env python3
"""Writes and prints .npy files without NumPy, for the moec lit tests.

  npy.py write FILE DTYPE SHAPE V0 V1 ...   (DTYPE f4, f8, i4, i8 or i1; SHAPE like 2x3)
  npy.py zeros FILE DTYPE SHAPE             (every value 0)
  npy.py print FILE                         (dtype, shape, then the values; NaNs signed)
  npy.py compare A B TOL                    (same shape; every |a - b| <= TOL * (1 + |b|),
                                             else exit 1; prints the largest difference)
  npy.py compare-all DIR_A DIR_B TOL        (compare for every out*.npy: the same files in
                                             both, at least one)
  npy.py compare-scaled A B TOL             (every |a - b| <= TOL * max |b|: for values far
                                             below 1, such as bf16 gradients, a step apart)
  npy.py compare-all-scaled DIR_A DIR_B TOL (compare-scaled for every out*.npy)
"""
import glob
import math
import os
import struct
import sys

FORMATS = {"f4": "f", "f8": "d", "i4": "i", "i8": "q", "i1": "b"}


def write(path, dtype, shape, values):
    dims = [int(d) for d in shape.split("x")] if shape else []
    shape_text = "(" + ", ".join(str(d) for d in dims) + ("," if len(dims) == 1 else "") + ")"
    header = "{'descr': '<%s', 'fortran_order': False, 'shape': %s, }" % (dtype, shape_text)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    fmt = FORMATS[dtype]
    parse = float if fmt in "fd" else int
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%d%s" % (len(values), fmt), *[parse(v) for v in values]))


def read(path):
    data = open(path, "rb").read()
    assert data[:6] == b"\x93NUMPY", "not an npy file"
    length = struct.unpack("<H", data[8:10])[0]
    header = eval(data[10:10 + length].decode())
    count = 1
    for d in header["shape"]:
        count *= d
    fmt = FORMATS[header["descr"][1:]]
    return header["shape"], struct.unpack("<%d%s" % (count, fmt), data[10 + length:])


def read_pair(a, b):
    """The values of a and b, or None (said) when their shapes differ."""
    shape_a, va = read(a)
    shape_b, vb = read(b)
    if shape_a != shape_b:
        print("shapes differ:", shape_a, shape_b)
        return None
    return va, vb


def compare(a, b, tol):
    pair = read_pair(a, b)
    if pair is None:
        return 1
    va, vb = pair
    worst = max((abs(x - y) / (1 + abs(y)) for x, y in zip(va, vb)), default=0.0)
    print("max relative difference %.3g over %d values" % (worst, len(va)))
    return 0 if worst <= float(tol) else 1


def compare_scaled(a, b, tol):
    pair = read_pair(a, b)
    if pair is None:
        return 1
    va, vb = pair
    scale = max((abs(y) for y in vb), default=0.0)
    worst = max((abs(x - y) for x, y in zip(va, vb)), default=0.0)
    ratio = worst / scale if scale > 0 else (0.0 if worst == 0 else math.inf)
    print("max difference %.3g of the largest |b| %.3g (%.3g) over %d values" % (worst, scale, ratio, len(va)))
    return 0 if ratio <= float(tol) else 1


def compare_all(dir_a, dir_b, tol, one=compare):
    names_a = sorted(os.path.basename(p) for p in glob.glob(os.path.join(dir_a, "out*.npy")))
    names_b = sorted(os.path.basename(p) for p in glob.glob(os.path.join(dir_b, "out*.npy")))
    if names_a != names_b or not names_a:
        print("different outputs:", names_a, names_b)
        return 1
    failed = 0
    for name in names_a:
        print(name + ": ", end="")
        failed |= one(os.path.join(dir_a, name), os.path.join(dir_b, name), tol)
    return failed


def show(path):
    data = open(path, "rb").read()
    assert data[:6] == b"\x93NUMPY", "not an npy file"
    length = struct.unpack("<H", data[8:10])[0]
    header = eval(data[10:10 + length].decode())
    dtype = header["descr"][1:]
    count = 1
    for d in header["shape"]:
        count *= d
    values = struct.unpack("<%d%s" % (count, FORMATS[dtype]), data[10 + length:])
    print("dtype", dtype, "shape", "x".join(str(d) for d in header["shape"]))
    # A NaN's sign too (Python's %g drops it): bf16 rounding keeps it.
    print(" ".join(("-nan" if math.copysign(1, v) < 0 else "nan") if isinstance(v, float) and math.isnan(v)
                   else "%g" % v for v in values))


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:])
    elif sys.argv[1] == "zeros":
        count = 1
        for d in sys.argv[4].split("x"):
            count *= int(d)
        write(sys.argv[2], sys.argv[3], sys.argv[4], ["0"] * count)
    elif sys.argv[1] == "compare-all":
        sys.exit(compare_all(sys.argv[2], sys.argv[3], sys.argv[4]))
    elif sys.argv[1] == "compare-all-scaled":
        sys.exit(compare_all(sys.argv[2], sys.argv[3], sys.argv[4], compare_scaled))
    elif sys.argv[1] == "compare-scaled":
        sys.exit(compare_scaled(sys.argv[2], sys.argv[3], sys.argv[4]))
    elif sys.argv[1] == "compare":
        sys.exit(compare(sys.argv[2], sys.argv[3], sys.argv[4]))
    else:
        show(sys.argv[2])
