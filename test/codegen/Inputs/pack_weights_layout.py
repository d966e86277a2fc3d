"""moe.pack_weights against its formula (dialect/MoeOps.td), computed here
from the op's description alone:

    packed[e, t, k, c * lanes + i] = W[e, k * lanes + i, column(t, c)]

zero past the depth and past the last column; int8 quads hold W + 128 as an
unsigned byte (W with its top bit flipped), padding included. bf16 weights
are written as float32 files of values bf16 holds exactly, and bf16 results
come back as float32 (moec run's convention).

    pack_weights_layout.py make DIR    writes the inputs
    pack_weights_layout.py check DIR   compares DIR/<case>/out0.npy
"""
import sys

import numpy as np

# name: (lanes, tile_columns, block_columns, gate_up_unit, weights' shapes, dtype)
CASES = {
    "quads": (4, 16, 32, 0, [(2, 100, 40)], "int8"),
    "quads_gate_up": (4, 16, 64, 32, [(2, 100, 40), (2, 100, 40)], "int8"),
    "quads_fused": (4, 16, 32, 32, [(2, 70, 80)], "int8"),
    "panels_gate_up": (1, 32, 64, 32, [(2, 20, 40), (2, 20, 40)], "float32"),
    # Runs of 8: the FMA kind's one-vector AVX2 panels (8 gate, 8 up columns).
    "panels_split": (1, 16, 48, 16, [(2, 20, 37), (2, 20, 37)], "float32"),
    "panels_split_fused": (1, 16, 32, 16, [(2, 9, 74)], "float32"),
    # bf16 weights keep their element in the panels (the FMA kind widens
    # them as it reads them).
    "panels_bf16": (1, 32, 64, 0, [(2, 20, 40)], "bfloat16"),
    "panels_split_bf16": (1, 16, 48, 16, [(2, 20, 37), (2, 20, 37)], "bfloat16"),
}


def column_source(p, block, block_columns, unit, columns, two_weights):
    """(weight index, column) of physical column p of a block, or None."""
    if not unit:
        col = block * block_columns + p
        return (0, col) if col < columns else None
    run, at = divmod(p, unit)
    up = at >= unit // 2
    col = block * (block_columns // 2) + run * (unit // 2) + (at - unit // 2 if up else at)
    if col >= columns:
        return None
    if two_weights:
        return (1 if up else 0, col)
    return (0, col + (columns if up else 0))  # a fused w13: the up half N on


def expected(case, weights):
    lanes, tile, block_columns, unit, _, dtype = CASES[case]
    experts, depth, width = weights[0].shape
    columns = width // 2 if unit and len(weights) == 1 else width
    block_out = block_columns // 2 if unit else block_columns
    blocks = -(-columns // block_out)
    tiles = blocks * block_columns // tile
    if lanes == 1:
        rows = depth
    else:
        tile_depth = 64 if lanes == 4 else 32
        rows = -(-depth // tile_depth) * tile_depth // lanes
    out = np.zeros((experts, tiles, rows, tile * lanes), dtype=np.int64 if lanes == 4 else np.float64)
    per_block = block_columns // tile
    for e in range(experts):
        for t in range(tiles):
            block, local = divmod(t, per_block)
            for c in range(tile):
                source = column_source(local * tile + c, block, block_columns, unit, columns, len(weights) == 2)
                for k in range(rows):
                    for i in range(lanes):
                        d = k * lanes + i
                        value = 0
                        if source is not None and d < depth:
                            value = weights[source[0]][e, d, source[1]]
                        out[e, t, k, c * lanes + i] = value
    if lanes == 4:
        return ((out + 128) % 256).astype(np.uint8).view(np.int8)
    return out.astype(np.float32)


def main():
    mode, root = sys.argv[1], sys.argv[2]
    rng = np.random.default_rng(7)
    for case, (_, _, _, _, shapes, dtype) in CASES.items():
        for j, shape in enumerate(shapes):
            path = f"{root}/{case}-w{j}.npy"
            if mode == "make":
                if dtype == "int8":
                    w = rng.integers(-127, 128, size=shape).astype(np.int8)
                else:
                    w = rng.standard_normal(shape).astype(np.float32)
                if dtype == "bfloat16":
                    # Values bf16 holds exactly (the low 16 bits zero), so
                    # that moec's rounding of the float32 file changes none.
                    w = (w.view(np.uint32) & np.uint32(0xFFFF0000)).view(np.float32)
                np.save(path, w)
    if mode != "check":
        return
    bad = 0
    for case, (_, _, _, _, shapes, dtype) in CASES.items():
        wide = np.int64 if dtype == "int8" else np.float64
        weights = [np.load(f"{root}/{case}-w{j}.npy").astype(wide) for j in range(len(shapes))]
        got = np.load(f"{root}/{case}/out0.npy")
        want = expected(case, weights)
        if got.shape != want.shape or got.dtype != want.dtype or not np.array_equal(got, want):
            print(f"{case}: got {got.dtype}{got.shape}, want {want.dtype}{want.shape}; "
                  f"{np.count_nonzero(got != want) if got.shape == want.shape else 'shape differs'} differ")
            bad += 1
        else:
            print(f"{case}: {got.dtype}{list(got.shape)} as the formula gives")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
