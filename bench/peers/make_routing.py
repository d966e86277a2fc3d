#!/usr/bin/python3
"""Writes a random top-K routing for the benchmark peers.

Per token: logits ~ N(0,1) over the experts (fixed seed), ids = the K largest
logits (ties to the lower id), weights = softmax over those K logits.
Writes DIR/ids.npy (int32 [T,K]) and DIR/weights.npy (float32 [T,K]).

  make_routing.py --tokens 4096 --experts 60 --topk 8 --seed 0 --out /tmp/r8
"""
import argparse
import os
import sys

import numpy as np


def positive(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not an integer")
    if v <= 0:
        raise argparse.ArgumentTypeError(f"'{text}' must be > 0")
    return v


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tokens", type=positive, required=True)
    p.add_argument("--experts", type=positive, required=True)
    p.add_argument("--topk", type=positive, required=True)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", required=True, help="output directory (created)")
    a = p.parse_args()
    if a.topk > a.experts:
        p.error(f"--topk {a.topk} is larger than --experts {a.experts}")
    if a.seed < 0:
        p.error("--seed must be >= 0")

    rng = np.random.default_rng(a.seed)
    logits = rng.standard_normal((a.tokens, a.experts), dtype=np.float32)
    # Stable sort of the negated logits: the K largest, ties to the lower id.
    ids = np.argsort(-logits, axis=1, kind="stable")[:, :a.topk]
    chosen = np.take_along_axis(logits, ids, axis=1).astype(np.float64)
    chosen -= chosen.max(axis=1, keepdims=True)
    ew = np.exp(chosen)
    weights = (ew / ew.sum(axis=1, keepdims=True)).astype(np.float32)

    try:
        os.makedirs(a.out, exist_ok=True)
        np.save(os.path.join(a.out, "ids.npy"), ids.astype(np.int32))
        np.save(os.path.join(a.out, "weights.npy"), weights)
    except OSError as e:
        sys.exit(f"make_routing: cannot write to {a.out}: {e.strerror or e}")
    print(f"make_routing: wrote {a.out}/ids.npy, {a.out}/weights.npy "
          f"(tokens={a.tokens} experts={a.experts} topk={a.topk} seed={a.seed})",
          file=sys.stderr)


if __name__ == "__main__":
    main()
