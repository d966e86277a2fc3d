#!/usr/bin/python3
"""PyTorch eager peer for moe-bench: the HF-Mixtral-style per-expert loop.

  y[t] = sum_k w[t,k] * (silu(x[t] @ W1[e]) * (x[t] @ W3[e])) @ W2[e],  e = ids[t,k]

Ids outside [0, E) (null slots >= E; negative ids, as moe.pack does) are
left out and cost nothing. x and the expert weights come from closed formulas
(see det_uniform) that bench/peers/onednn_moe.cpp shares, so the two peers
compute the same y. Prints one line on stdout:

  PEER peer=torch_eager dtype=... tokens=T topk=K experts=E hidden=H mlp_dim=M
       threads=N real_assignments=A median_ms=X tflops=Y tokens_per_s=Z

FLOPs = 6*H*M*A. Everything else goes to stderr.
"""
import argparse
import os
import statistics
import sys
import time

try:
    import numpy as np
    import torch
    import torch.nn.functional as F
except ImportError as e:  # pragma: no cover
    sys.exit(f"torch_moe: {e}; run bench/setup-peers.sh and use /usr/bin/python3")

PROG = "torch_moe"

# --- Deterministic inputs, shared with onednn_moe.cpp ------------------------
# value(tag, i) = (k - 2^23) * (scale / 2^23), k = top 24 bits of
# splitmix64(i + tag * 0x9E3779B97F4A7C15), computed in double and rounded to
# float32: uniform in [-scale, scale). Flat indices:
#   x   [T,H]      tag 1  i = t*H + h                      scale 1
#   W13 [E,H,2M]   tag 2  i = (e*H + h)*2M + j (j < M: W1)  scale W_SCALE
#   W2  [E,M,H]    tag 3  i = (e*M + m)*H + h               scale W_SCALE
TAG_X, TAG_W13, TAG_W2 = 1, 2, 3
X_SCALE = 1.0
W_SCALE = 0.0346  # uniform +-0.0346 has standard deviation ~0.02
_U64 = np.uint64


def det_uniform(tag, start, count, scale):
    i = np.arange(start, start + count, dtype=np.uint64)
    z = i + _U64((tag * 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF)
    z ^= z >> _U64(30)
    z *= _U64(0xBF58476D1CE4E5B9)
    z ^= z >> _U64(27)
    z *= _U64(0x94D049BB133111EB)
    z ^= z >> _U64(31)
    k = (z >> _U64(40)).astype(np.int64) - (1 << 23)
    return (k.astype(np.float64) * (scale / 8388608.0)).astype(np.float32)


def fail(msg, code=1):
    print(f"{PROG}: error: {msg}", file=sys.stderr)
    sys.exit(code)


def positive(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not an integer")
    if v <= 0:
        raise argparse.ArgumentTypeError(f"'{text}' must be > 0")
    return v


def nonnegative(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not an integer")
    if v < 0:
        raise argparse.ArgumentTypeError(f"'{text}' must be >= 0")
    return v


def load_npy(path):
    try:
        return np.load(path, allow_pickle=False)
    except FileNotFoundError:
        fail(f"{path}: no such file")
    except (OSError, ValueError, EOFError) as e:
        fail(f"{path}: cannot read as .npy: {e}")


def load_routing(d):
    if not os.path.isdir(d):
        fail(f"--routing {d}: not a directory")
    ids_path, w_path = os.path.join(d, "ids.npy"), os.path.join(d, "weights.npy")
    ids, w = load_npy(ids_path), load_npy(w_path)
    if ids.dtype.kind not in "iu":
        fail(f"{ids_path}: dtype {ids.dtype} is not an integer type (want int32)")
    if w.dtype.kind != "f":
        fail(f"{w_path}: dtype {w.dtype} is not a float type (want float32)")
    if ids.ndim != 2 or ids.shape[0] == 0 or ids.shape[1] == 0:
        fail(f"{ids_path}: shape {ids.shape} is not a non-empty [T,K]")
    if w.shape != ids.shape:
        fail(f"{w_path}: shape {w.shape} does not match {ids_path} {ids.shape}")
    if ids.dtype.kind == "u" and ids.size and ids.max() > np.iinfo(np.int64).max:
        fail(f"{ids_path}: id out of range")
    return ids.astype(np.int64), w.astype(np.float32)


def blas_note():
    """Which libblas.so.3 torch's f32 matmul goes to (Debian's torch calls the
    system BLAS through the libblas.so.3 alternative), for stderr."""
    try:
        with open("/proc/self/maps") as f:
            libs = {line.split()[-1] for line in f if "blas" in line.split()[-1]}
    except OSError:
        return None
    libs = sorted(l for l in libs if "libblas.so" in l or "openblas" in l or "blis" in l)
    if not libs:
        return None
    note = "f32 matmul BLAS: " + ", ".join(libs)
    if any("/blas/libblas.so" in l for l in libs):
        note += (" (Debian's reference BLAS: single-threaded and slow; installing "
                 "libopenblas0 switches the libblas.so.3 alternative)")
    return note


def main():
    p = argparse.ArgumentParser(
        prog=PROG, description="PyTorch eager MoE peer (HF-Mixtral per-expert loop).")
    p.add_argument("--routing", required=True, metavar="DIR",
                   help="directory with ids.npy (int32 [T,K]) and weights.npy (float32 [T,K])")
    p.add_argument("--hidden", type=positive, required=True, metavar="H")
    p.add_argument("--mlp-dim", type=positive, required=True, metavar="M")
    p.add_argument("--experts", type=positive, required=True, metavar="E")
    p.add_argument("--dtype", choices=["f32", "bf16"], default="f32")
    p.add_argument("--iters", type=positive, default=5)
    p.add_argument("--warmup", type=nonnegative, default=1)
    p.add_argument("--threads", type=positive, default=None,
                   help="intra-op threads (default: OMP_NUM_THREADS if set, else 2)")
    p.add_argument("--check", action="store_true",
                   help="compare y with a float64 reference (on <= 32 sampled tokens)")
    p.add_argument("--dump-y", metavar="FILE.npy", help="write y as float32 .npy")
    a = p.parse_args()

    if a.threads is None:
        env = os.environ.get("OMP_NUM_THREADS", "")
        a.threads = int(env) if env.isdigit() and int(env) > 0 else 2
    H, M, E = a.hidden, a.mlp_dim, a.experts
    ids_np, w_np = load_routing(a.routing)
    if a.dump_y:  # fail now rather than after the run
        try:
            open(a.dump_y, "ab").close()
        except OSError as e:
            fail(f"--dump-y {a.dump_y}: {e.strerror or e}")
    T, K = ids_np.shape
    real = int(((ids_np >= 0) & (ids_np < E)).sum())

    torch.set_num_threads(a.threads)
    dt = torch.float32 if a.dtype == "f32" else torch.bfloat16

    t0 = time.perf_counter()
    x = torch.from_numpy(det_uniform(TAG_X, 0, T * H, X_SCALE).reshape(T, H)).to(dt)
    w1 = torch.empty(E, H, M, dtype=dt)
    w3 = torch.empty(E, H, M, dtype=dt)
    w2 = torch.empty(E, M, H, dtype=dt)
    for e in range(E):
        blk = torch.from_numpy(
            det_uniform(TAG_W13, e * H * 2 * M, H * 2 * M, W_SCALE).reshape(H, 2 * M))
        w1[e].copy_(blk[:, :M])
        w3[e].copy_(blk[:, M:])
        w2[e].copy_(torch.from_numpy(
            det_uniform(TAG_W2, e * M * H, M * H, W_SCALE).reshape(M, H)))
    ids = torch.from_numpy(ids_np)
    rw = torch.from_numpy(w_np).to(dt)  # HF casts the routing weights to x's dtype
    print(f"{PROG}: inputs generated in {time.perf_counter() - t0:.1f} s "
          f"(T={T} K={K} E={E} H={H} M={M} dtype={a.dtype} threads={a.threads})",
          file=sys.stderr)

    if a.dtype == "f32":
        note = blas_note()
        if note:
            print(f"{PROG}: {note}", file=sys.stderr)

    def forward():
        y = torch.zeros_like(x)
        for e in range(E):
            tok, slot = torch.where(ids == e)
            if tok.numel() == 0:
                continue
            xe = x[tok]
            h = F.silu(xe @ w1[e]) * (xe @ w3[e])
            out = (h @ w2[e]) * rw[tok, slot, None]
            y.index_add_(0, tok, out)
        return y

    times = []
    with torch.no_grad():
        for _ in range(a.warmup):
            y = forward()
        for i in range(a.iters):
            s = time.perf_counter()
            y = forward()
            times.append(time.perf_counter() - s)
            print(f"{PROG}: iter {i}: {times[-1] * 1e3:.3f} ms", file=sys.stderr)
    med = statistics.median(times)

    y32 = y.float().numpy()
    if a.check:
        stride = max(1, -(-T // 32))
        toks = list(range(0, T, stride))
        xs = x.float().numpy().astype(np.float64)[toks]
        ref = np.zeros((len(toks), H))
        sub = ids_np[toks]
        for e in range(E):  # one expert's weights in float64 at a time
            rows, slots = np.nonzero(sub == e)
            if rows.size == 0:
                continue
            W1, W3, W2 = (w[e].float().numpy().astype(np.float64) for w in (w1, w3, w2))
            g, u = xs[rows] @ W1, xs[rows] @ W3
            out = (g / (1 + np.exp(-g)) * u) @ W2
            np.add.at(ref, rows, w_np[toks][rows, slots, None].astype(np.float64) * out)
        scale = max(float(np.abs(ref).max()), 1e-30)
        err = float(np.abs(y32[toks].astype(np.float64) - ref).max()) / scale
        tol = 1e-4 if a.dtype == "f32" else 3e-2
        ok = err <= tol and np.isfinite(y32).all()
        print(f"{PROG}: check: {len(toks)} tokens, max|y-ref|/max|ref| = {err:.3g} "
              f"(tolerance {tol:g}): {'ok' if ok else 'FAILED'}", file=sys.stderr)
        if not ok:
            sys.exit(1)
    if a.dump_y:
        try:
            with open(a.dump_y, "wb") as f:  # np.save(path) would append .npy
                np.save(f, y32)
        except OSError as e:
            fail(f"--dump-y {a.dump_y}: {e.strerror or e}")

    flops = 6.0 * H * M * real
    print(f"PEER peer=torch_eager dtype={a.dtype} tokens={T} topk={K} experts={E} "
          f"hidden={H} mlp_dim={M} threads={a.threads} real_assignments={real} "
          f"median_ms={med * 1e3:.3f} tflops={flops / med / 1e12:.4f} "
          f"tokens_per_s={T / med:.1f}")


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(130)
    except MemoryError:
        fail("out of memory (shapes too large for this machine?)")
