"""moec's compiled MoE block as a torch.nn.Module that trains.

    from moec.torch import MoELayer
    model.layers[3].mlp = MoELayer.from_hf("config.json", layer=3, weights="model.safetensors",
                                           dtype=torch.float32)

The forward runs the compiled forward; the backward runs the compiled forward_backward
(`backward="cotangent"`) with the incoming gradient, through a torch.autograd.Function: the
input, every expert and shared weight, and (with routing_grad, the default) the router get
gradients.
"""

import json
import os
import tempfile

import torch

from . import safetensors as _safetensors
from . import ArgumentError, Program, _compile, _dtype_tag, _layer_number, _layer_weights, _run
from . import hf_layer
import moec as _moec_package


class _CompiledBlock(torch.autograd.Function):
    """y = block(x, *weights); the backward calls block_forward_backward(x, *weights, dy)."""

    @staticmethod
    def forward(ctx, layer, x, *weights):
        ctx.layer = layer
        ctx.save_for_backward(x, *weights)
        return layer._call(layer._entry, x, *weights)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, dy):
        layer = ctx.layer
        x, *weights = ctx.saved_tensors
        dy = dy.to(x.dtype).contiguous()
        outs = layer._call(layer._backward_entry, x, *weights, dy)
        grads = [None] * (1 + len(weights))
        for g, argument in zip(outs[1:], layer._gradient_args):
            grads[argument] = g
        return (None, *grads)


class MoELayer(torch.nn.Module):
    """A compiled MoE block holding its weights as parameters.

    program: a moec.Program compiled with backward="cotangent" whose default entry is the block
        (x, weights...) -> y; weights: {name: tensor} in the entry's argument order after x.
    forward(x): x of any shape [..., H] (flattened to tokens and back).
    Weights whose argument gets no gradient are buffers, not parameters: DeepSeek-V3's selection
    bias (its balancing rule updates it), and the router when compiled without routing_grad.
    The backward is once differentiable (no gradients of gradients).
    With a program compiled with prepare_weights=True (from_hf's prepare_weights=), a forward
    that records no gradient (torch.no_grad(), inference) runs on the weights packed into the
    kernels' layout once: packed at the first such forward, and again after a weight changed
    (an optimizer step, load_state_dict), after train()/eval(), or invalidate_prepared(); the
    packed copy is held beside the weights. A write through `.data` (or a NumPy view) is not
    seen: call invalidate_prepared() after one.
    """

    def __init__(self, program, weights):
        super().__init__()
        if not isinstance(program, Program):
            raise ArgumentError("program must be a moec.Program (moec.compile(...))")
        self._program = program
        self._entry = program.entry
        self._backward_entry = self._entry + "_forward_backward"
        if self._backward_entry not in program.entries:
            raise ArgumentError(f"the program has no '{self._backward_entry}': compile it with "
                                "backward=\"cotangent\"")
        if program.inputs(self._backward_entry)[-1][1] != program.results(self._entry)[0][1]:
            raise ArgumentError(f"'{self._backward_entry}' does not take dL/dy: compile with "
                                "backward=\"cotangent\", not mean-square")
        inputs = program.inputs(self._entry)
        if not isinstance(weights, dict):
            raise ArgumentError(f"weights must be a dict {{name: tensor}} in the order of "
                                f"'{self._entry}''s arguments after x, not {type(weights).__name__}")
        if len(weights) != len(inputs) - 1:
            raise ArgumentError(f"'{self._entry}' takes {len(inputs) - 1} weights after x; "
                                f"{len(weights)} given")
        self._gradient_args = program.gradient_args(self._backward_entry)
        self.weight_names = list(weights)
        trained = set(self._gradient_args)
        for i, (name, value) in enumerate(weights.items(), start=1):
            tensor = value if isinstance(value, torch.Tensor) else torch.from_numpy(value)
            tensor = tensor.detach().clone().contiguous()
            if i in trained:
                self.register_parameter(name, torch.nn.Parameter(tensor))
            else:
                self.register_buffer(name, tensor)
        self.hidden_size = inputs[0][1][-1]
        self._prepared = None  # (key, moec.PreparedWeights, the tensors packed): _prepared_weights

    @classmethod
    def from_hf(cls, config, layer=None, weights=None, dtype=torch.bfloat16, routing_grad=True,
                seed=0, **options):
        """Layer `layer`'s MoE block of the model config.json describes, its weights from the
        checkpoint `weights` (random of the right shapes when None). dtype: torch.bfloat16 or
        torch.float32. routing_grad: the router gets a gradient. Other options as
        moec.compile's (mesh, remat, prepare_weights for inference forwards, ...)."""
        tag = _dtype_tag(dtype)
        info = hf_layer(config, layer, tag)
        program = _compile(hf_config=str(config), hf_layer=_layer_number(layer), hf_dtype=tag,
                           backward="cotangent", routing_grad=routing_grad, **options)
        module = cls(program, _layer_weights(config, layer, weights, tag, info, seed))
        module.info = info
        return module

    @classmethod
    def from_module(cls, config, layer, module, dtype=None, **options):
        """The compiled twin of `module`, a model's MoE block in its family's Hugging Face form
        (its state_dict named as in the checkpoint under the layer's prefix, e.g. Mixtral's
        "gate.weight", "experts.0.w1.weight"): what a model swaps its MoE layer for. config: the
        config.json's path or its dict. dtype: the module's (default) or torch.float32/bfloat16.
        The weights are copied, in the block's layouts; the module is left as it was."""
        # The block's weights are floating point; a module's integer buffers (counters) are
        # not among them.
        # float64 weights become float32 (moec computes in f32 or bf16).
        state = {k: v.float() if v.dtype == torch.float64 else v
                 for k, v in module.state_dict().items()
                 if v.is_floating_point() or v.dtype == torch.int8}
        if dtype is None:
            floats = [v.dtype for v in state.values() if v.is_floating_point()]
            dtype = torch.bfloat16 if floats and floats[0] == torch.bfloat16 else torch.float32
        with tempfile.TemporaryDirectory() as d:
            if isinstance(config, dict):
                path = os.path.join(d, "config.json")
                with open(path, "w") as f:
                    json.dump(config, f)
                config = path
            prefix = hf_layer(config, layer, _dtype_tag(dtype))["prefix"]
            weights = _safetensors.save_file({prefix + k: v for k, v in state.items()},
                                             os.path.join(d, "model.safetensors"))
            return cls.from_hf(config, layer=layer, weights=weights, dtype=dtype, **options)

    @classmethod
    def from_source(cls, source, weights, routing_grad=True, **options):
        """A block written in the dialect (text or .mlir path); weights as for __init__."""
        program = _moec_package.compile(source, backward="cotangent", routing_grad=routing_grad,
                                        **options)
        return cls(program, weights)

    @property
    def program(self):
        return self._program

    def _weights(self):
        return [getattr(self, name) for name in self.weight_names]

    def _call(self, entry, *args):
        return _run(self._program, entry, args, as_torch=True)

    def invalidate_prepared(self):
        """Drops the packed weights: the next no-grad forward packs them again. For writes the
        layer cannot see (through `.data`, or a NumPy view of a weight)."""
        self._prepared = None

    def train(self, mode=True):
        # model.eval() and model.train() pack again at the next no-grad forward.
        self._prepared = None
        return super().train(mode)

    def _prepared_weights(self, weights):
        """The weights packed once (a program compiled with prepare_weights), packed again when
        one changed since: its version (bumped by every in-place write through autograd's view
        of it; an inference tensor has none) or its storage. The tensors are held with the
        packed copy, so that a storage freed and reused at the same address cannot pass for
        the one packed."""
        key = tuple((None if w.is_inference() else w._version, w.data_ptr()) for w in weights)
        if self._prepared is None or self._prepared[0] != key:
            self._prepared = None  # the old copy goes before the new one is made
            packed = self._program.prepare(None, *weights, entry=self._entry)
            self._prepared = (key, packed, [w.detach() for w in weights])
        return self._prepared[1]

    def forward(self, x):
        shape = x.shape
        if shape[-1] != self.hidden_size:
            raise ArgumentError(f"x's last dimension is {shape[-1]}; the layer's hidden size is "
                                f"{self.hidden_size}")
        tokens = x.reshape(-1, self.hidden_size)
        weights = self._weights()
        if not torch.is_grad_enabled() and self._program.prepared_form(self._entry) is not None:
            packed = self._prepared_weights(weights)
            # The packed weights' places are not read (None); the router, biases and the like are.
            kept = set(packed.call_arguments)
            y = packed(tokens, *[w if i + 1 in kept else None for i, w in enumerate(weights)])
            return y.reshape(shape)
        y = _CompiledBlock.apply(self, tokens, *weights)
        return y.reshape(shape)

    def extra_repr(self):
        return f"entry={self._entry}, weights={', '.join(self.weight_names)}"
