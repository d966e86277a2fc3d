#!/usr/bin/python3
"""PyTorch eager peer for moe-bench: the HF-Mixtral-style per-expert loop.

  y[t] = sum_k w[t,k] * (silu(x[t] @ W1[e]) * (x[t] @ W3[e])) @ W2[e],  e = ids[t,k]

Ids outside [0, E) (null slots >= E; negative ids, as moe.pack does) are
left out and cost nothing. x and the expert weights come from closed formulas
(see det_uniform) that bench/peers/onednn_moe.cpp shares, so the two peers
compute the same y.

--pass forward (the default) times that block under torch.no_grad().
--pass forward_backward is the peer of `moe-bench --bench-pass forward_backward`
(docs: loss = mean(y^2), gradients w.r.t. x, w1, w3 and w2, routing fixed): the
same eager block under PyTorch autograd, x and each expert's w1[e], w3[e],
w2[e] leaves that require grad (one leaf per expert, as HF's per-expert
nn.Linear weights are), the routing weights not. One timed iteration is one
training step without the optimizer: set every .grad to None (what
zero_grad(set_to_none=True) does), the forward recording the graph,
loss = (y.float()**2).mean(), loss.backward(), which allocates and fills
x.grad and the weights' grads. Nothing of a step is left out of the time.

Prints one line on stdout:

  PEER peer=torch_eager pass=P dtype=... tokens=T topk=K experts=E hidden=H
       mlp_dim=M threads=N real_assignments=A median_ms=X tflops=Y tokens_per_s=Z

FLOPs = 6*H*M*A for forward, 3x that (18*H*M*A) for forward_backward.
Everything else goes to stderr.
"""
import argparse
import contextlib
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


def grad_check(a, x, W1, W3, W2, rw, ids_np, y32, toks):
    """The gradients autograd left after the last step against the same
    derivatives written out by hand in float64, from torch's own y (which
    has its own check): dL/dy = 2*y/(T*H); per assignment of
    expert e with routing weight w: do = w*dy, a = silu(g)*u with g = x@W1[e],
    u = x@W3[e]; dW2 += a^T do; da = do @ W2^T; dg = da*u*silu'(g),
    du = da*silu(g); dW1 += x^T dg; dW3 += x^T du; dx += dg@W1^T + du@W3^T.
    Checks x.grad on the sampled tokens toks and dW1, dW3, dW2 of the expert
    with the most rows. A step that kept the previous step's grads or
    differentiated another loss fails it. Returns True when all are within
    tolerance."""
    T, H = y32.shape
    E = len(W1)
    f64 = lambda t: t.detach().float().numpy().astype(np.float64)
    X, RW = f64(x), f64(rw)  # routing weights as torch used them (bf16-rounded)
    dY = 2.0 * y32.astype(np.float64) / (T * H)
    # bf16: the backward rounds dy, do, da, dg, du and the grads to bf16 (about
    # 0.005 of max|ref| typically, 0.02 seen on a 3-row expert); a step that
    # keeps old grads or differentiates another loss is off by >= 1.
    tol = 1e-4 if a.dtype == "f32" else 5e-2

    def expert(e, rows, slots):  # (dx rows, dW1, dW3, dW2) of expert e's assignments
        We1, We3, We2 = f64(W1[e]), f64(W3[e]), f64(W2[e])
        xs = X[rows]
        g, u = xs @ We1, xs @ We3
        sg = 1.0 / (1.0 + np.exp(-g))
        do = RW[rows, slots, None] * dY[rows]
        da = do @ We2.T
        dg, du = da * u * sg * (1.0 + g * (1.0 - sg)), da * g * sg
        return dg @ We1.T + du @ We3.T, xs.T @ dg, xs.T @ du, (g * sg * u).T @ do

    def compare(label, got, ref):
        if got is None:  # no gradient reached it: it is all zeros
            got = np.zeros_like(ref)
        got = got.astype(np.float64)
        err = float(np.abs(got - ref).max()) / max(float(np.abs(ref).max()), 1e-30)
        ok = err <= tol and np.isfinite(got).all()
        print(f"{PROG}: check: {label}: max|grad-ref|/max|ref| = {err:.3g} "
              f"(tolerance {tol:g}): {'ok' if ok else 'FAILED'}", file=sys.stderr)
        return ok

    grad = lambda t: None if t.grad is None else f64(t.grad)
    real = (ids_np >= 0) & (ids_np < E)
    if not real.any():
        print(f"{PROG}: check: no real assignments, no gradients to check", file=sys.stderr)
        return True
    # x.grad on the sampled tokens: every expert each of them went to.
    sel = np.zeros(T, dtype=bool)
    sel[toks] = True
    dx = np.zeros((T, H))
    for e in range(E):
        rows, slots = np.nonzero((ids_np == e) & sel[:, None])
        if rows.size:
            np.add.at(dx, rows, expert(e, rows, slots)[0])
    gx = grad(x)
    ok = compare(f"x.grad ({len(toks)} tokens)", None if gx is None else gx[toks], dx[toks])
    # The weights' grads of the busiest expert (lowest id on ties).
    e = int(np.bincount(ids_np[real], minlength=E).argmax())
    rows, slots = np.nonzero(ids_np == e)
    _, dW1, dW3, dW2 = expert(e, rows, slots)
    for name, w, ref in (("w1", W1, dW1), ("w3", W3, dW3), ("w2", W2, dW2)):
        ok = compare(f"{name}[{e}].grad ({rows.size} rows)", grad(w[e]), ref) and ok
    return ok


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
    p.add_argument("--pass", dest="bench_pass", choices=["forward", "forward_backward"],
                   default="forward",
                   help="forward: the block under no_grad (default); forward_backward: "
                        "the block, loss = mean(y^2) and its backward under autograd")
    p.add_argument("--check", action="store_true",
                   help="compare y with a float64 reference (on <= 32 sampled tokens); "
                        "with forward_backward also x.grad (on those tokens) and the "
                        "weights' grads of the busiest expert")
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
    train = a.bench_pass == "forward_backward"
    # Per-expert views of the same storage; under forward_backward each is a
    # leaf of its own, so backward gives each expert its own gradient tensors.
    W1, W3, W2 = (list(w.unbind(0)) for w in (w1, w3, w2))
    leaves = [x] + W1 + W3 + W2
    if train:
        for t in leaves:
            t.requires_grad_()
    print(f"{PROG}: inputs generated in {time.perf_counter() - t0:.1f} s "
          f"(T={T} K={K} E={E} H={H} M={M} dtype={a.dtype} threads={a.threads} "
          f"pass={a.bench_pass})", file=sys.stderr)

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
            h = F.silu(xe @ W1[e]) * (xe @ W3[e])
            out = (h @ W2[e]) * rw[tok, slot, None]
            y.index_add_(0, tok, out)
        return y

    def train_step():
        for t in leaves:
            t.grad = None
        y = forward()
        loss = (y.float() ** 2).mean()
        if loss.requires_grad:  # False only when every slot is null: all grads 0
            loss.backward()
        return y

    step = train_step if train else forward
    times = []
    with contextlib.nullcontext() if train else torch.no_grad():
        for _ in range(a.warmup):
            y = step()
        for i in range(a.iters):
            s = time.perf_counter()
            y = step()
            times.append(time.perf_counter() - s)
            print(f"{PROG}: iter {i}: {times[-1] * 1e3:.3f} ms", file=sys.stderr)
    med = statistics.median(times)

    y32 = y.detach().float().numpy()
    if a.check:
        stride = max(1, -(-T // 32))
        toks = list(range(0, T, stride))
        xs = x.detach().float().numpy().astype(np.float64)[toks]
        ref = np.zeros((len(toks), H))
        sub = ids_np[toks]
        for e in range(E):  # one expert's weights in float64 at a time
            rows, slots = np.nonzero(sub == e)
            if rows.size == 0:
                continue
            We1, We3, We2 = (w[e].detach().float().numpy().astype(np.float64)
                             for w in (w1, w3, w2))
            g, u = xs[rows] @ We1, xs[rows] @ We3
            out = (g / (1 + np.exp(-g)) * u) @ We2
            np.add.at(ref, rows, w_np[toks][rows, slots, None].astype(np.float64) * out)
        scale = max(float(np.abs(ref).max()), 1e-30)
        err = float(np.abs(y32[toks].astype(np.float64) - ref).max()) / scale
        tol = 1e-4 if a.dtype == "f32" else 3e-2
        ok = err <= tol and np.isfinite(y32).all()
        print(f"{PROG}: check: {len(toks)} tokens, max|y-ref|/max|ref| = {err:.3g} "
              f"(tolerance {tol:g}): {'ok' if ok else 'FAILED'}", file=sys.stderr)
        if train:
            ok = grad_check(a, x, W1, W3, W2, rw, ids_np, y32, toks) and ok
        if not ok:
            sys.exit(1)
    if a.dump_y:
        try:
            with open(a.dump_y, "wb") as f:  # np.save(path) would append .npy
                np.save(f, y32)
        except OSError as e:
            fail(f"--dump-y {a.dump_y}: {e.strerror or e}")

    flops = 6.0 * H * M * real * (3 if train else 1)
    print(f"PEER peer=torch_eager pass={a.bench_pass} dtype={a.dtype} tokens={T} topk={K} "
          f"experts={E} "
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
