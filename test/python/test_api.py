"""The moec Python API: calling a compiled program from NumPy and torch, its errors (each a Python
exception carrying the compiler's or runtime's message), zero-copy arguments and results, the
interpreter's lock released during a call, and sharded programs run in-process."""

import os
import threading
import time

import numpy as np
import pytest
import torch

import moec

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MIXTRAL = os.path.join(ROOT, "examples", "family-mixtral-small.mlir")

BLOCK = """
func.func @moe_block(%x: tensor<?x64xf32>, %router: tensor<64x8xf32>,
                     %w13: tensor<8x64x192xf32>, %w2: tensor<8x96x64xf32>) -> tensor<?x64xf32> {
  %y = moe.block %x router(%router : tensor<64x8xf32>)
         gate_up(%w13 : tensor<8x64x192xf32>) down(%w2 : tensor<8x96x64xf32>)
         top 2 order softmax_then_topk renormalize family mixtral
         : tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}
"""


@pytest.fixture(scope="module")
def program():
    return moec.compile(MIXTRAL, backward="cotangent", routing_grad=True)


def weights(seed=0, dtype=np.float32):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal(s) / np.sqrt(s[-2])).astype(dtype)
            for s in ((64, 8), (8, 64, 192), (8, 96, 64))]


def tokens(t, seed=1):
    return np.random.default_rng(seed).standard_normal((t, 64)).astype(np.float32)


def numpy_mixtral(x, router, w13, w2):
    """The Mixtral block in NumPy (float64): softmax, top 2 renormalised, SwiGLU experts."""
    x, router, w13, w2 = (a.astype(np.float64) for a in (x, router, w13, w2))
    logits = x @ router
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    ids = np.argsort(-p, axis=1, kind="stable")[:, :2]
    y = np.zeros_like(x)
    for t in range(x.shape[0]):
        w = p[t, ids[t]] / p[t, ids[t]].sum()
        for e, we in zip(ids[t], w):
            h = x[t] @ w13[e]
            g, u = h[:96], h[96:]
            y[t] += we * ((g / (1 + np.exp(-g)) * u) @ w2[e])
    return y


def test_numpy_in_numpy_out(program):
    assert program.entries == ["moe_block", "moe_block_forward_backward"]
    assert program.entry == "moe_block"
    assert program.signature() == "moe_block(f32[?,64],f32[64,8],f32[8,64,192],f32[8,96,64])->(f32[?,64])"
    assert program.gradient_args("moe_block_forward_backward") == [0, 1, 2, 3]
    x = tokens(13)
    y = program(x, *weights())
    assert isinstance(y, np.ndarray) and y.shape == (13, 64) and y.dtype == np.float32
    np.testing.assert_allclose(y, numpy_mixtral(x, *weights()), rtol=1e-4, atol=1e-5)


def test_text_and_path_compile_alike(program):
    x = tokens(5)
    from_text = moec.compile(BLOCK)
    np.testing.assert_array_equal(from_text(x, *weights()), program(x, *weights()))


def test_torch_in_torch_out_and_mixed(program):
    x = tokens(6)
    w = weights()
    y = program(torch.from_numpy(x), *[torch.from_numpy(a) for a in w])
    assert isinstance(y, torch.Tensor) and y.dtype == torch.float32
    mixed = program(torch.from_numpy(x), *w)
    assert isinstance(mixed, torch.Tensor)
    np.testing.assert_array_equal(y.numpy(), program(x, *w))


def test_forward_backward_returns_y_and_gradients(program):
    x, w = tokens(4), weights()
    dy = np.ones((4, 64), np.float32)
    y, dx, drouter, dw13, dw2 = program.call("moe_block_forward_backward", x, *w, dy)
    np.testing.assert_allclose(y, program(x, *w), rtol=1e-5, atol=1e-6)
    assert dx.shape == x.shape and drouter.shape == (64, 8) and dw13.shape == (8, 64, 192)


def test_bf16_through_torch_and_int8():
    bf16 = moec.compile(BLOCK.replace("f32", "bf16"))
    w = [torch.from_numpy(a).to(torch.bfloat16) for a in weights()]
    x = torch.from_numpy(tokens(5)).to(torch.bfloat16)
    y = bf16(x, *w)
    assert y.dtype == torch.bfloat16
    want = numpy_mixtral(x.float().numpy(), *[a.float().numpy() for a in w])
    assert np.abs(y.float().numpy() - want).max() <= 2e-2 * np.abs(want).max()
    # int8 arguments: a program that takes i8 and returns it widened.
    widen = moec.compile("""
func.func @widen(%a: tensor<4xi8>) -> tensor<4xi32> {
  %e = tensor.empty() : tensor<4xi32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]} ins(%a : tensor<4xi8>) outs(%e : tensor<4xi32>) {
  ^bb0(%v: i8, %o: i32):
    %w = arith.extsi %v : i8 to i32
    linalg.yield %w : i32
  } -> tensor<4xi32>
  return %r : tensor<4xi32>
}
""")
    np.testing.assert_array_equal(widen(np.array([-128, -1, 5, 127], np.int8)), [-128, -1, 5, 127])
    out = widen(torch.tensor([3, -4, 0, 9], dtype=torch.int8))
    assert out.dtype == torch.int32 and out.tolist() == [3, -4, 0, 9]


@pytest.mark.parametrize("dtype", ["f32", "bf16"])
def test_prepared_weights_compute_what_the_entry_does(program, dtype):
    # Compiled with prepare_weights: the weights packed once (Program.prepare), then calls that
    # read x and the router, bit for bit what the entry computes packing per call.
    source = BLOCK if dtype == "f32" else BLOCK.replace("f32", "bf16")
    prepared_program = moec.compile(source, prepare_weights=True)
    plain = program if dtype == "f32" else moec.compile(source)
    form = prepared_program.prepared_form()
    assert form["weights"] == [2, 3] and form["kept"] == [0, 1]  # w13, w2 packed; the router read
    assert len(form["layout"]) == 16 and int(form["layout"], 16) >= 0  # what prepare makes, hashed
    w = [torch.from_numpy(a) for a in weights()]
    if dtype == "bf16":
        w = [a.to(torch.bfloat16) for a in w]
    x = torch.from_numpy(tokens(37)).to(w[0].dtype)
    packed = prepared_program.prepare(None, *w)
    assert packed.nbytes >= sum(a.numel() * a.element_size() for a in w[1:])
    assert packed.weight_arguments == [2, 3] and packed.call_arguments == [0, 1]
    want = plain(x, *w)
    got = packed(x, w[0], None, None)  # the packed weights' places are not read
    assert got.dtype == want.dtype
    assert torch.equal(got, want)
    assert torch.equal(packed(x, *w), want)
    # Prepared once: changing the weights afterwards changes nothing until prepared again.
    w[1].mul_(2)
    assert torch.equal(packed(x, w[0], None, None), want)
    assert torch.equal(prepared_program.prepare(None, *w)(x, w[0], None, None), plain(x, *w))
    # The entry itself still runs as before.
    assert torch.equal(prepared_program(x, *w), plain(x, *w))


def test_prepared_weights_refuse_what_they_cannot_take(program):
    w = weights()
    with pytest.raises(moec.ArgumentError, match="'moe_block' has no prepared form .compile with "
                                                 "prepare_weights=True"):
        program.prepare(None, *w)
    with pytest.raises(moec.ArgumentError, match="prepare_weights=True needs moec's own pipeline"):
        moec.compile(BLOCK, prepare_weights=True, pipeline="moe-to-llvm")
    prepared_program = moec.compile(BLOCK, prepare_weights=True)
    with pytest.raises(moec.ArgumentError, match="'moe_block' takes 4 inputs, got 3"):
        prepared_program.prepare(None, *w[1:])
    with pytest.raises(moec.ArgumentError, match="argument 3 of 'moe_block' expects 8x96x64xf32, got 8x64x96xf32"):
        prepared_program.prepare(None, w[0], w[1], np.ascontiguousarray(w[2].transpose(0, 2, 1)))
    packed = prepared_program.prepare(None, *w)
    with pytest.raises(moec.ArgumentError, match="argument 1 of 'moe_block' expects 64x8xf32"):
        packed(tokens(3), np.zeros((8, 64), np.float32), None, None)  # the router is read per call
    with pytest.raises(moec.ArgumentError, match="argument 1 of 'moe_block' is not given .an argument 'moe_block_prepared' reads."):
        packed(tokens(3), None, None, None)
    with pytest.raises(moec.ArgumentError, match="argument 0 of 'moe_block' expects \\?x64xf32, got 3x32xf32"):
        packed(tokens(3)[:, :32].copy(), *w)


def test_bad_calls_raise_with_the_message(program):
    w = weights()
    with pytest.raises(moec.ArgumentError, match="'moe_block' takes 4 inputs, got 3"):
        program(tokens(3), *w[:2])
    with pytest.raises(moec.ArgumentError, match="argument 1 of 'moe_block' expects 64x8xf32, got 8x64xf32"):
        program(tokens(3), w[0].T.copy(), *w[1:])
    with pytest.raises(moec.ArgumentError, match="argument 0 of 'moe_block' is float64"):
        program(tokens(3).astype(np.float64), *w)
    with pytest.raises(moec.ArgumentError, match="NumPy has no bf16"):
        program(tokens(3).astype(np.float16), *w)
    with pytest.raises(moec.ArgumentError, match="argument 2 of 'moe_block' expects 8x64x192xf32, got 8x64x192xbf16"):
        program(tokens(3), w[0], torch.from_numpy(w[1]).to(torch.bfloat16), w[2])
    with pytest.raises(moec.ArgumentError, match="argument 3 of 'moe_block' is torch.float64"):
        program(tokens(3), w[0], w[1], torch.from_numpy(w[2]).double())
    with pytest.raises(moec.ArgumentError, match="has no entry 'nope'"):
        program.call("nope", tokens(3), *w)


def test_sizes_only_the_inputs_decide_raise_not_exit(program):
    # x has 7 tokens and dy 5: the compiled code's run-time check fails; the interpreter lives
    # on, and the program still runs afterwards.
    w = weights()
    with pytest.raises(moec.RunError, match="run-time check failed: .*(the inputs' sizes do not agree)"):
        program.call("moe_block_forward_backward", tokens(7), *w, np.ones((5, 64), np.float32))
    assert program(tokens(2), *w).shape == (2, 64)


def test_compile_errors_carry_the_diagnostics(tmp_path):
    with pytest.raises(moec.CompileError, match=r"<string>:4:8: error: .moe.block. op top-k \(9\) must be in \[1, 8\]"):
        moec.compile(BLOCK.replace("top 2", "top 9"))
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n  return %y : tensor<4xf32>\n}\n")
    with pytest.raises(moec.CompileError, match=r"bad.mlir:2:10: error: use of undeclared SSA value"):
        moec.compile(bad)
    with pytest.raises(moec.ArgumentError, match="no-such.mlir"):
        moec.compile(str(tmp_path / "no-such.mlir"))
    with pytest.raises(moec.ArgumentError, match="backward= must be mean-square or cotangent"):
        moec.compile(BLOCK, backward="hinge")
    with pytest.raises(moec.ArgumentError, match="remat=, activation_budget= and routing_grad= apply"):
        moec.compile(BLOCK, remat="combine")
    with pytest.raises(moec.ArgumentError, match=r"activation_budget= must be a number of bytes \(got -1\)"):
        moec.compile(BLOCK, backward="mean-square", activation_budget=-1)
    for source in ("", "-"):  # neither names a program (moec reads "-" as stdin)
        with pytest.raises(moec.ArgumentError, match="source must be a program's text or a file's path"):
            moec.compile(source)
    with pytest.raises(moec.ArgumentError, match="entry= 'g' is not a public function"):
        moec.compile(BLOCK, entry="g")
    with pytest.raises(moec.ArgumentError, match=r"ep_dispatch= must be dense, compact, ring or a2a \(got 'scatter'\)"):
        moec.compile(BLOCK, mesh="expert=2", ep_dispatch="scatter")
    with pytest.raises(moec.ArgumentError, match="gmm strategy|gmm-strategy|strategy"):
        moec.compile(BLOCK, gmm_strategy="fastest")


def test_contiguous_arguments_are_not_copied(program):
    x, w = tokens(8), weights()
    args = [x] + w
    arrays, tags = zip(*[moec._to_array(a, i, "moe_block") for i, a in enumerate(args)])
    assert moec._moec.buffer_addresses(list(arrays), list(tags)) == [a.ctypes.data for a in args]
    t = [torch.from_numpy(a) for a in args] + [torch.zeros(3, 4, dtype=torch.bfloat16)]
    arrays, tags = zip(*[moec._to_array(a, i, "moe_block") for i, a in enumerate(t)])
    assert moec._moec.buffer_addresses(list(arrays), list(tags)) == [a.data_ptr() for a in t]
    # A transposed view is made contiguous (a copy), and gives the same result.
    strided = np.asfortranarray(x)
    np.testing.assert_array_equal(program(strided, *w), program(x, *w))
    # Results are the memory the compiled code wrote, not a copy of it.
    y = program(x, *w)
    assert not y.flags.owndata and type(y.base).__name__ == "PyCapsule"
    # As a tensor, the same memory: moec's conversion of a result makes no copy.
    native = program._native.call("moe_block", [x] + w, ["f32"] * 4)[0]
    assert moec._from_array(native, "f32", True).data_ptr() == native.ctypes.data


def test_the_interpreter_runs_other_threads_during_a_call():
    big = moec.compile(BLOCK.replace("64", "512").replace("192", "1536").replace("96", "768"))
    rng = np.random.default_rng(0)
    w = [(rng.standard_normal(s) / np.sqrt(s[-2])).astype(np.float32)
         for s in ((512, 8), (8, 512, 1536), (8, 768, 512))]
    x = rng.standard_normal((2048, 512)).astype(np.float32)
    big(x[:16], *w)  # warm
    count = [0]
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            count[0] += 1

    thread = threading.Thread(target=spin)
    thread.start()
    time.sleep(0.05)
    start = time.perf_counter()
    before = count[0]
    big(x, *w)
    during = count[0] - before
    seconds = time.perf_counter() - start
    stop.set()
    thread.join()
    # Holding the lock, the spinning thread could not run at all until the call returned (at most
    # one switch interval, 5 ms, before it). It ran throughout instead.
    assert seconds > 0.05, seconds
    assert during > 10000, (during, seconds)


@pytest.mark.parametrize("mesh,dispatch", [("expert=2", "compact"), ("data=2", "compact"),
                                           ("data=2,expert=2", "a2a"), ("expert=2", "ring")])
def test_sharded_programs_match_one_device(mesh, dispatch):
    one = moec.compile(BLOCK, backward="cotangent", routing_grad=True)
    # a2a needs a static token count.
    source = BLOCK.replace("?x64", "16x64") if dispatch == "a2a" else BLOCK
    if dispatch == "a2a":
        one = moec.compile(source, backward="cotangent", routing_grad=True)
    sharded = moec.compile(source, backward="cotangent", routing_grad=True, mesh=mesh,
                           ep_dispatch=dispatch)
    assert sharded.mesh() == mesh and one.mesh() == ""
    x, w = tokens(16), weights()
    np.testing.assert_allclose(sharded(x, *w), one(x, *w), rtol=1e-5, atol=1e-6)
    dy = np.random.default_rng(3).standard_normal((16, 64)).astype(np.float32)
    got = sharded.call("moe_block_forward_backward", x, *w, dy)
    want = one.call("moe_block_forward_backward", x, *w, dy)
    for g, v in zip(got, want):
        np.testing.assert_allclose(g, v, rtol=1e-4, atol=1e-5)


def test_the_callers_arrays_are_not_written(program):
    # Passed without a copy, the arguments are read only: bit-identical after a training step.
    x, w = tokens(11), weights()
    dy = np.random.default_rng(5).standard_normal((11, 64)).astype(np.float32)
    before = [a.copy() for a in [x, *w, dy]]
    results = program.call("moe_block_forward_backward", x, *w, dy)
    for a, b in zip([x, *w, dy], before):
        np.testing.assert_array_equal(a, b)
    # No two results share memory.
    for i, a in enumerate(results):
        for b in results[i + 1:]:
            assert not np.shares_memory(a, b)
    elementwise = moec.compile("""
func.func @f(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %r = arith.addf %a, %b : tensor<4xf32>
  return %r : tensor<4xf32>
}""")
    a = np.ones(4, np.float32)
    np.testing.assert_array_equal(elementwise(a, a), [2, 2, 2, 2])
    np.testing.assert_array_equal(a, [1, 1, 1, 1])


def test_the_native_layer_refuses_what_it_cannot_view(program):
    native = program._native
    w = weights()
    with pytest.raises(moec.ArgumentError, match="argument 0 of 'moe_block' is not a NumPy array"):
        native.call("moe_block", [tokens(2).tolist()] + w, ["f32"] * 4)
    with pytest.raises(moec.ArgumentError, match="argument 0 of 'moe_block' holds int32 for f32"):
        native.call("moe_block", [np.zeros((2, 64), np.int32)] + w, ["f32"] * 4)
    with pytest.raises(moec.ArgumentError, match="argument 1 of 'moe_block' is not C-contiguous"):
        native.call("moe_block", [tokens(2), np.asfortranarray(w[0])] + w[1:], ["f32"] * 4)
    raw = np.frombuffer(b"\0" + tokens(2).tobytes(), np.uint8)[1:].view(np.float32).reshape(2, 64)
    with pytest.raises(moec.ArgumentError, match="argument 0 of 'moe_block' is not aligned"):
        native.call("moe_block", [raw] + w, ["f32"] * 4)


def test_the_kernels_ask_libomp_for_their_workers():
    # PyTorch's OpenMP runtime (libgomp) is in this process and defines omp_get_max_threads too;
    # the compiled code must get libomp's answer (the runtime its loops run on), not libgomp's.
    import ctypes
    gomp = ctypes.CDLL("libgomp.so.1", mode=ctypes.RTLD_GLOBAL)
    gomp.omp_set_num_threads(7)
    program = moec.compile("""
func.func private @omp_get_max_threads() -> i32
func.func @workers() -> tensor<1xi32> {
  %n = func.call @omp_get_max_threads() : () -> i32
  %t = tensor.from_elements %n : tensor<1xi32>
  return %t : tensor<1xi32>
}""")
    libomp = ctypes.CDLL("libomp.so.5", mode=4)  # RTLD_NOLOAD: the one the JIT loaded
    assert program()[0] == libomp.omp_get_max_threads() != 7
