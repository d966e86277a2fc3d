"""Swap a PyTorch model's MoE layer for moec's compiled one, train both, compare the loss curves.

The model is a small token classifier with one Mixtral-style sparse MoE block, written the way
Hugging Face's modeling_mixtral writes it (a gate Linear, experts of w1/w2/w3 Linears, softmax,
top 2, renormalised). A copy of the model gets moec.torch.MoELayer.from_module(...) in place of
its block: the same weights, in moec's layouts, trained through the compiled forward and
backward. Both train from the same start on the same batches; the curves should agree to
rounding.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/train_swap.py [--steps N] [--bf16]
"""

import argparse
import copy
import time

import torch
import torch.nn.functional as F

from moec.torch import MoELayer


class MixtralSparseMoeBlock(torch.nn.Module):
    """Mixtral's MoE block in eager PyTorch: the layer moec replaces."""

    def __init__(self, hidden, mlp, experts, top_k):
        super().__init__()
        self.top_k = top_k
        self.gate = torch.nn.Linear(hidden, experts, bias=False)
        self.experts = torch.nn.ModuleList()
        for _ in range(experts):
            e = torch.nn.Module()
            e.w1 = torch.nn.Linear(hidden, mlp, bias=False)
            e.w3 = torch.nn.Linear(hidden, mlp, bias=False)
            e.w2 = torch.nn.Linear(mlp, hidden, bias=False)
            self.experts.append(e)

    def forward(self, x):
        shape = x.shape
        x = x.reshape(-1, shape[-1])
        probs = F.softmax(self.gate(x).float(), dim=-1)
        weights, ids = torch.topk(probs, self.top_k, dim=-1)
        weights = (weights / weights.sum(dim=-1, keepdim=True)).to(x.dtype)
        y = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            token, slot = torch.where(ids == e)
            if token.numel() == 0:
                continue
            h = x[token]
            out = expert.w2(F.silu(expert.w1(h)) * expert.w3(h))
            y.index_add_(0, token, out * weights[token, slot, None])
        return y.reshape(shape)


class TinyClassifier(torch.nn.Module):
    def __init__(self, vocab, hidden, moe):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, hidden)
        self.norm = torch.nn.LayerNorm(hidden)
        self.moe = moe
        self.head = torch.nn.Linear(hidden, vocab)

    def forward(self, tokens):
        h = self.norm(self.embed(tokens))
        return self.head(h + self.moe(h))


def config(hidden, mlp, experts, top_k):
    """The config.json a Mixtral checkpoint of these sizes has (one layer, the MoE one)."""
    return {"model_type": "mixtral", "hidden_size": hidden, "intermediate_size": mlp,
            "num_local_experts": experts, "num_experts_per_tok": top_k, "num_hidden_layers": 1,
            "hidden_act": "silu"}


def train(model, batches, lr):
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    losses = []
    for tokens, targets in batches:
        opt.zero_grad()
        loss = F.cross_entropy(model(tokens).reshape(-1, model.head.out_features).float(),
                               targets.reshape(-1))
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--mlp", type=int, default=128)
    parser.add_argument("--experts", type=int, default=8)
    parser.add_argument("--top-k", type=int, default=2)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--seq", type=int, default=32)
    parser.add_argument("--bf16", action="store_true", help="train in bf16 (default f32)")
    args = parser.parse_args(argv)

    torch.manual_seed(0)
    dtype = torch.bfloat16 if args.bf16 else torch.float32
    vocab = 97
    eager = TinyClassifier(vocab, args.hidden,
                           MixtralSparseMoeBlock(args.hidden, args.mlp, args.experts, args.top_k))
    eager = eager.to(dtype)
    # The same model with its MoE block swapped for the compiled one (same weights).
    swapped = copy.deepcopy(eager)
    swapped.moe = MoELayer.from_module(config(args.hidden, args.mlp, args.experts, args.top_k),
                                       0, eager.moe, dtype=dtype)
    # A task with structure to learn: the next token is a fixed function of the current one.
    gen = torch.Generator().manual_seed(1)
    table = torch.randperm(vocab, generator=gen)
    batches = []
    for _ in range(args.steps):
        tokens = torch.randint(0, vocab, (args.batch, args.seq), generator=gen)
        batches.append((tokens, table[tokens]))

    start = time.perf_counter()
    eager_losses = train(eager, batches, lr=3e-3)
    eager_seconds = time.perf_counter() - start
    start = time.perf_counter()
    moec_losses = train(swapped, batches, lr=3e-3)
    moec_seconds = time.perf_counter() - start

    print(f"{'step':>4}  {'eager loss':>10}  {'moec loss':>10}")
    for i, (a, b) in enumerate(zip(eager_losses, moec_losses)):
        print(f"{i:4d}  {a:10.5f}  {b:10.5f}")
    worst = max(abs(a - b) / abs(a) for a, b in zip(eager_losses, moec_losses))
    print(f"largest relative difference of the curves: {worst:.2e}")
    print(f"training time: eager {eager_seconds:.2f} s, moec {moec_seconds:.2f} s "
          f"({args.steps} steps of {args.batch * args.seq} tokens)")
    return eager_losses, moec_losses


if __name__ == "__main__":
    main()
