"""moec from Python: compile a moe program or a Hugging Face model's MoE layer, and call it on
NumPy arrays or torch tensors.

    import moec
    prog = moec.compile("block.mlir", backward="cotangent")
    y = prog(x, router, w13, w2)                      # NumPy in, NumPy out
    layer = moec.from_hf("config.json", layer=3, weights="model.safetensors")
    y = layer(x)                                      # the layer's weights bound

Arguments are passed without copying when they are C-contiguous CPU arrays of the program's
element type; results own the memory the compiled code wrote them to. The interpreter's lock is
released while the code runs. docs/python.md has the whole API; moec.torch has the nn.Module.
"""

import os

import numpy as np

from . import _moec
from ._moec import ArgumentError, CheckpointError, CompileError, RunError

__all__ = [
    "compile", "from_hf", "hf_layer", "load_hf_weights", "Program", "HfLayer", "PreparedWeights",
    "ArgumentError",
    "CheckpointError", "CompileError", "RunError", "host_target",
]

try:  # torch is optional: NumPy alone is enough to call a program.
    import torch as _torch
except ImportError:  # pragma: no cover - Debian's python3-torch is installed by setup
    _torch = None

_NUMPY_TAGS = {np.dtype(np.float32): "f32", np.dtype(np.int32): "i32", np.dtype(np.int8): "i8"}
if _torch is not None:
    _TORCH_TAGS = {_torch.float32: "f32", _torch.bfloat16: "bf16", _torch.int32: "i32",
                   _torch.int8: "i8"}


def host_target():
    """This CPU as moec compiles for it: its name and the features the kernels use."""
    return _moec.host_target()


def _is_torch(value):
    return _torch is not None and isinstance(value, _torch.Tensor)


def _to_array(value, index, entry):
    """(array, element type tag) for one argument, sharing its memory when it is contiguous."""
    if _is_torch(value):
        if value.device.type != "cpu":
            raise ArgumentError(f"argument {index} of '{entry}' is on {value.device}; moec runs "
                                "on the CPU (pass tensor.cpu())")
        tag = _TORCH_TAGS.get(value.dtype)
        if tag is None:
            raise ArgumentError(f"argument {index} of '{entry}' is {value.dtype}; moec takes "
                                "torch.float32, torch.bfloat16, torch.int32 or torch.int8")
        tensor = value.detach()
        if not tensor.is_contiguous():
            tensor = tensor.contiguous()
        if tag == "bf16":  # NumPy has no bf16: its 16-bit patterns, not converted
            return tensor.view(_torch.int16).numpy(), tag
        return tensor.numpy(), tag
    array = value if isinstance(value, np.ndarray) else np.asarray(value)
    tag = _NUMPY_TAGS.get(array.dtype)
    if tag is None:
        hint = " (NumPy has no bf16: pass a torch.bfloat16 tensor)" if array.dtype in (
            np.float64, np.float16, np.uint16, np.int16) else ""
        raise ArgumentError(f"argument {index} of '{entry}' is {array.dtype}; moec takes float32, "
                            f"int32 or int8 arrays{hint}")
    if not array.flags.c_contiguous:
        array = np.ascontiguousarray(array)
    return array, tag


def _from_array(array, tag, as_torch):
    if as_torch:
        tensor = _torch.from_numpy(array)
        return tensor.view(_torch.bfloat16) if tag == "bf16" else tensor
    if tag == "bf16":  # to NumPy as float32 (exact: bf16 is float32's upper half)
        return (array.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
    return array


def _convert_all(args, entry, allow_none):
    """(arrays, tags) for a whole argument list; None stays None where allowed (an argument the
    call does not read)."""
    arrays, tags = [], []
    for i, value in enumerate(args):
        if value is None and allow_none:
            arrays.append(None)
            tags.append("f32")
            continue
        array, tag = _to_array(value, i, entry)
        arrays.append(array)
        tags.append(tag)
    return arrays, tags


def _results(program, entry, out, as_torch):
    results = tuple(_from_array(a, t, as_torch) for a, t in zip(out, program._result_tags(entry)))
    return results[0] if len(results) == 1 else results


def _run(program, entry, args, as_torch=None, converted=()):
    """Calls `entry` of a Program on `args` (after `converted`, arguments already made
    (array, tag) pairs): the results as torch tensors when `as_torch` (default: when any
    argument is a tensor), else NumPy arrays; one result as itself, several as a tuple."""
    arrays, tags = [a for a, _ in converted], [t for _, t in converted]
    for i, value in enumerate(args, start=len(arrays)):
        array, tag = _to_array(value, i, entry)
        arrays.append(array)
        tags.append(tag)
    out = program._native.call(entry, arrays, tags)
    if as_torch is None:
        as_torch = any(_is_torch(a) for a in args)
    return _results(program, entry, out, as_torch)


class PreparedWeights:
    """An entry's weights prepared once (Program.prepare): packed into its kernels' layout (or
    quantized, for an int8 program), held here. Call it on the entry's whole argument list:
    the weights' places are not read again (None will do there)."""

    def __init__(self, program, entry, native, form):
        self._program = program
        self._native = native
        self.entry = entry
        self.weight_arguments = list(form["weights"])  # what was read once
        self.call_arguments = list(form["kept"])  # what each call reads

    @property
    def nbytes(self):
        """The prepared copy's size in bytes."""
        return self._native.bytes

    def __call__(self, *args):
        return self.call_converted(_convert_all(args, self.entry, allow_none=True),
                                   any(_is_torch(a) for a in args))

    def call_converted(self, converted, as_torch):
        """The call on arguments already made (arrays, tags) lists (None: not read)."""
        arrays, tags = converted
        out = self._program._native.call_prepared(self._native, arrays, tags)
        return _results(self._program, self.entry, out, as_torch)

    def __repr__(self):
        return (f"<moec.PreparedWeights of {self.entry}: arguments {self.weight_arguments}, "
                f"{self.nbytes / 2**20:.1f} MiB>")


class Program:
    """A compiled moe program: call it (its default entry) or `call(entry, ...)`.

    Every public function taking and returning tensors is an entry; with a backward, each block
    function `f` also has `f_forward_backward`. Arguments are NumPy arrays or torch tensors (any
    mix); the results are torch tensors when any argument was one, else NumPy arrays (a bf16
    result as float32).
    """

    def __init__(self, native):
        self._native = native
        self._tags = {}  # entry -> its results' element types, asked of the native side once

    def _result_tags(self, entry):
        tags = self._tags.get(entry)
        if tags is None:
            tags = self._tags[entry] = [t for t, _ in self._native.results(entry)]
        return tags

    @property
    def entries(self):
        """The entries' names, in the program's order."""
        return list(self._native.entries)

    @property
    def entry(self):
        """The default entry: `entry=` of compile, else the function the source defines."""
        return self._native.default_entry

    @property
    def text(self):
        """The program as compiled, before lowering (after partitioning and the backward)."""
        return self._native.text

    def signature(self, entry=None):
        """"moe_block(f32[?,64],...)->(f32[?,64])": the full tensors, also on a mesh."""
        return self._native.signature(entry or self.entry)

    def inputs(self, entry=None):
        """[(element type, shape)] of the entry's arguments (-1: dynamic)."""
        return [(t, list(s)) for t, s in self._native.inputs(entry or self.entry)]

    def results(self, entry=None):
        return [(t, list(s)) for t, s in self._native.results(entry or self.entry)]

    def gradient_args(self, entry=None):
        """For a forward_backward entry: the argument numbers its gradients are for, in order."""
        return list(self._native.gradient_args(entry or self.entry))

    def mesh(self, entry=None):
        """"data=2,expert=2" for an entry partitioned for a mesh, "" for one device."""
        return self._native.mesh(entry or self.entry)

    def memory_plan(self, entry=None):
        return self._native.memory_plan(entry or self.entry)

    def __call__(self, *args):
        return self.call(self.entry, *args)

    def call(self, entry, *args):
        """Runs `entry` on `args`: one result as itself, several as a tuple."""
        return _run(self, entry, args)

    def prepared_form(self, entry=None):
        """{"prepare", "prepared", "weights", "kept"} of an entry compiled with
        prepare_weights=True: its halves and the argument numbers each takes; None when the
        entry has none (one that trains, one partitioned for a mesh, or one whose kernels read
        no packed layout)."""
        return self._native.prepared_form(entry or self.entry)

    def prepare(self, *args, entry=None):
        """The entry's weights prepared once, from its whole argument list (only the weights are
        read: None will do in the other places). Returns a PreparedWeights, which is called per
        batch instead of the entry. Needs prepare_weights=True at compile time."""
        entry = entry or self.entry
        return self._prepare_converted(entry, _convert_all(args, entry, allow_none=True))

    def _prepare_converted(self, entry, converted):
        form = self._native.prepared_form(entry)
        if form is None:
            raise ArgumentError(f"'{entry}' has no prepared form (compile with "
                                "prepare_weights=True; a function that trains, one partitioned "
                                "for a mesh, or one whose kernels read no packed layout has "
                                "none)")
        arrays, tags = converted
        return PreparedWeights(self, entry, self._native.prepare(entry, arrays, tags), form)

    def median_call_seconds(self, *args, entry=None, iterations=20):
        """The median time of `iterations` calls made from C++ on these arguments (converted
        once): the C++ call a Python call's overhead is measured against."""
        entry = entry or self.entry
        arrays, tags = zip(*[_to_array(v, i, entry) for i, v in enumerate(args)]) if args else ((), ())
        return self._native.median_call_seconds(entry, list(arrays), list(tags), iterations)

    def __repr__(self):
        return f"<moec.Program {', '.join(self.entries)}>"


def _source_and_kind(source):
    """(text or path, is_path): a path-like or a string naming a file is read as a file; a
    string holding a program (a newline or a brace) is the program."""
    if isinstance(source, os.PathLike):
        return os.fspath(source), True
    if not isinstance(source, str):
        raise ArgumentError(f"source must be a program's text or a path, not {type(source).__name__}")
    if "\n" in source or "{" in source:
        return source, False
    if source in ("", "-"):  # moec reads "-" as stdin; here neither names a program
        raise ArgumentError(f"source must be a program's text or a file's path (got {source!r})")
    return source, True


def _compile(source="", is_path=False, hf_config="", hf_layer=0, hf_dtype="bf16", *, entry=None,
             backward=None, routing_grad=False, remat="none", activation_budget=None,
             pipeline=None, mesh=None, ep_dispatch="compact", capacity_factor=0.0,
             capacity_round=1, gmm_strategy="microkernel", gmm_tiling=None, tuning_table=None,
             target_cpu=None, collective_timeout_ms=60000, prepare_weights=False):
    if isinstance(mesh, dict):
        mesh = ",".join(f"{axis}={size}" for axis, size in mesh.items())
    if prepare_weights and pipeline:
        raise ArgumentError("prepare_weights=True needs moec's own pipeline (moe-to-llvm): "
                            "not with pipeline=")
    from_env = tuning_table is None and bool(os.environ.get("MOEC_TUNING_TABLE"))
    if tuning_table is None:
        tuning_table = os.environ.get("MOEC_TUNING_TABLE", "")
    native = _moec.compile(
        source, is_path, hf_config, int(hf_layer), hf_dtype, entry or "", backward or "",
        bool(routing_grad), remat, None if activation_budget is None else int(activation_budget),
        pipeline or "", mesh or "", ep_dispatch, float(capacity_factor), int(capacity_round),
        gmm_strategy, gmm_tiling or "", tuning_table, from_env, target_cpu or "",
        int(collective_timeout_ms), bool(prepare_weights))
    return Program(native)


def compile(source, *, entry=None, backward=None, routing_grad=False, remat="none",
            activation_budget=None, pipeline=None, mesh=None, ep_dispatch="compact",
            capacity_factor=0.0, capacity_round=1, gmm_strategy="microkernel", gmm_tiling=None,
            tuning_table=None, target_cpu=None, collective_timeout_ms=60000,
            prepare_weights=False):
    """Compiles a moe program (its text, or a path to a .mlir file) for this CPU.

    entry: the default entry (else the function the source defines).
    backward: "cotangent" (f_forward_backward takes dL/dy last, returns y and the gradients) or
        "mean-square" (returns mean(y^2) and the gradients); routing_grad, remat and
        activation_budget as moec's --routing-grad, --remat, --activation-budget.
    pipeline: a pass pipeline instead of moe-to-llvm (moec --pass-pipeline).
    mesh: "data=2,expert=2" or {"expert": 2}: partition for the mesh and run every shard in
        this process (the calls take and return the full tensors); ep_dispatch,
        capacity_factor, capacity_round as moec's options.
    gmm_strategy, gmm_tiling, tuning_table: moec's --gmm-strategy, --gmm-tiling,
        --tuning-table (default $MOEC_TUNING_TABLE).
    target_cpu: an LLVM CPU name this host can stand in for (default: this host).
    prepare_weights: also compile each entry's prepared form (moe-prepare-weights), so that
        Program.prepare packs the weights once and its calls pack nothing (moec's
        --prepare-weights; off by default here: a call that passes the weights each time has
        no use for it, and it compiles the block twice).

    Raises CompileError with the compiler's diagnostics, ArgumentError for a bad option.
    """
    text, is_path = _source_and_kind(source)
    return _compile(text, is_path, entry=entry, backward=backward, routing_grad=routing_grad,
                    remat=remat, activation_budget=activation_budget, pipeline=pipeline,
                    mesh=mesh, ep_dispatch=ep_dispatch, capacity_factor=capacity_factor,
                    capacity_round=capacity_round, gmm_strategy=gmm_strategy,
                    gmm_tiling=gmm_tiling, tuning_table=tuning_table, target_cpu=target_cpu,
                    collective_timeout_ms=collective_timeout_ms, prepare_weights=prepare_weights)


def _dtype_tag(dtype):
    if dtype in ("f32", "float32") or (_torch is not None and dtype is _torch.float32) or \
            dtype is np.float32:
        return "f32"
    if dtype in ("bf16", "bfloat16") or (_torch is not None and dtype is _torch.bfloat16):
        return "bf16"
    raise ArgumentError(f"dtype= must be f32 or bf16 (got {dtype!r})")


def _layer_number(layer):
    return -1 if layer is None else int(layer)  # -1: the first MoE layer (C++ kFirstMoeLayer)


def hf_layer(config, layer=None, dtype="bf16"):
    """What config.json says of layer `layer`'s (default: the first MoE layer's) MoE block: the family, its sizes, and the block's
    arguments [(name, shape, element type)] (x first, then the weights in the block's layouts)."""
    return _moec.hf_layer(os.fspath(config), _layer_number(layer), _dtype_tag(dtype))


def load_hf_weights(config, layer, weights, dtype="bf16"):
    """The weights of layer `layer` (None: the first MoE layer) from a safetensors checkpoint
    (a file, its index, or their directory), in the block's layouts: {name: array} in argument
    order (bf16 as torch tensors)."""
    tag = _dtype_tag(dtype)
    info = hf_layer(config, layer, tag)
    arrays = _moec.load_hf_weights(os.fspath(config), _layer_number(layer), os.fspath(weights),
                                   tag)
    names = [name for name, _, _ in info["arguments"][1:]]
    return {n: _from_array(a, t, as_torch=(tag == "bf16"))
            for n, a, (_, _, t) in zip(names, arrays, info["arguments"][1:])}


def _random_weights(info, seed):
    """Weights of the right shapes, seeded: N(0, 1/fan_in) for matrices, N(0, 0.01) for biases
    and gates' vectors, the selection bias zero (no expert preferred)."""
    rng = np.random.default_rng(seed)
    weights = {}
    for name, shape, tag in info["arguments"][1:]:
        if name == "selection_bias":
            w = np.zeros(shape, np.float32)
        elif len(shape) >= 2:
            w = (rng.standard_normal(shape) / np.sqrt(shape[-2])).astype(np.float32)
        else:
            w = (0.1 * rng.standard_normal(shape)).astype(np.float32)
        if tag == "bf16":
            if _torch is None:
                raise ArgumentError("bf16 weights need torch (python3-torch)")
            weights[name] = _torch.from_numpy(w).to(_torch.bfloat16)
        else:
            weights[name] = w
    return weights


class HfLayer:
    """A Hugging Face model's MoE layer, compiled, with its weights bound: call it on x [T, H].

    With a prepared form (from_hf's default), the weights are packed into the kernels' layout
    once, here, and each call packs nothing (`prepared` is the PreparedWeights, else None).
    `weights` then holds the raw weights beside the packed copy, for reading: a change to one
    that was packed is not seen by the calls (make a new layer)."""

    def __init__(self, program, info, weights):
        self.program = program
        self.info = info
        self.weights = weights  # {name: array or tensor}, in argument order
        # Converted once: a call converts only x. x's place (0) is None until then.
        arrays, tags = _convert_all([None] + list(weights.values()), program.entry, allow_none=True)
        self.prepared = None
        form = program.prepared_form()
        if form is not None:
            self.prepared = program._prepare_converted(program.entry, (arrays, tags))
            # Calls read the packed copy: the packed weights' places are None (not read;
            # `weights` keeps them, for reading, not for the calls).
            for i in set(form["weights"]) - set(form["kept"]):
                arrays[i] = None
        self._arrays, self._tags = arrays, tags

    def __call__(self, x):
        entry = self.program.entry
        array, tag = _to_array(x, 0, entry)
        converted = ([array] + self._arrays[1:], [tag] + self._tags[1:])
        if self.prepared is not None:
            return self.prepared.call_converted(converted, _is_torch(x))
        return _run(self.program, entry, (), _is_torch(x), converted=list(zip(*converted)))

    def __repr__(self):
        i = self.info
        return (f"<moec.HfLayer {i['model_type']} layer {i['layer']}: H={i['hidden_size']} "
                f"M={i['intermediate_size']} E={i['experts']} K={i['top_k']}>")


def from_hf(config, layer=None, weights=None, dtype="bf16", seed=0, prepare_weights=True,
            **options):
    """Builds and compiles layer `layer`'s (None: the first MoE layer's) MoE block of the model config.json describes, with its
    weights from the safetensors checkpoint `weights` (random ones of the right shapes, seeded,
    when None). dtype: "bf16" (default) or "f32" activations and weights. prepare_weights: pack
    the weights into the kernels' layout once, here, so that calls pack nothing (the layer
    then holds the packed copy beside `weights`). Other options as compile's (backward,
    mesh, ...). Returns an HfLayer: call it on x [T, H]."""
    tag = _dtype_tag(dtype)
    info = hf_layer(config, layer, tag)
    program = _compile(hf_config=os.fspath(config), hf_layer=_layer_number(layer), hf_dtype=tag,
                       prepare_weights=prepare_weights, **options)
    return HfLayer(program, info, _layer_weights(config, layer, weights, tag, info, seed))


def _layer_weights(config, layer, weights, tag, info, seed):
    """The checkpoint's weights of the layer, or random ones of its shapes when None."""
    if weights is None:
        return _random_weights(info, seed)
    return load_hf_weights(config, layer, weights, tag)
