#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes tests/golden/ad/dense_ops.safetensors: torch.autograd's gradients of the dense ops in
float64, for tests/ad/torch_golden_test.cpp.

Each case NAME has its inputs "NAME.in0", "NAME.in1", ... (the ones that get a gradient), its
integer operands "NAME.idx" where it has one, the gradient of its output "NAME.dy" (random), and
torch's gradients "NAME.grad0", ... of sum(output * dy) with respect to each input.

Run: python3 tests/golden/make_autograd_golden.py   (needs torch and safetensors; the tests do not)
"""
import os

import torch
import torch.nn.functional as F
from safetensors.torch import save_file

HERE = os.path.dirname(os.path.abspath(__file__))
D = torch.float64


def rnd(*shape, lo=-1.0, hi=1.0):
    return (torch.rand(*shape, dtype=D) * (hi - lo) + lo)


def cases():
    """name -> (inputs, integer operand or None, function of (inputs, idx))."""
    yield "softmax", [rnd(3, 5, lo=-2, hi=2)], None, lambda x, i: torch.softmax(x[0], -1)
    yield "log_softmax", [rnd(3, 5, lo=-2, hi=2)], None, lambda x, i: torch.log_softmax(x[0], 0)
    yield "matmul", [rnd(2, 1, 3, 5), rnd(3, 5, 4)], None, lambda x, i: x[0] @ x[1]
    yield "linear", [rnd(2, 3, 5), rnd(4, 5), rnd(4)], None, lambda x, i: F.linear(x[0], x[1], x[2])
    yield "layer_norm", [rnd(4, 6), rnd(6, lo=0.5, hi=1.5), rnd(6)], None, \
        lambda x, i: F.layer_norm(x[0], (6,), x[1], x[2], 1e-5)
    yield "cross_entropy", [rnd(6, 5, lo=-2, hi=2)], torch.randint(0, 5, (6,)), \
        lambda x, i: F.cross_entropy(x[0], i).reshape(1)
    yield "sdpa_causal", [rnd(1, 2, 5, 4), rnd(1, 2, 5, 4), rnd(1, 2, 5, 3)], None, \
        lambda x, i: F.scaled_dot_product_attention(x[0], x[1], x[2], is_causal=True)
    yield "embedding", [rnd(4, 3)], torch.randint(0, 4, (2, 6)), lambda x, i: F.embedding(i, x[0])
    yield "gather", [rnd(3, 2)], torch.randint(0, 3, (4, 2)), lambda x, i: torch.gather(x[0], 0, i)
    yield "logsumexp", [rnd(3, 4)], None, lambda x, i: torch.logsumexp(x[0], 1)
    yield "var", [rnd(3, 4)], None, lambda x, i: torch.var(x[0], 0, correction=1)
    yield "std", [rnd(3, 4)], None, lambda x, i: torch.std(x[0], 1, correction=0, keepdim=True)
    yield "norm3", [rnd(3, 4)], None, lambda x, i: torch.linalg.vector_norm(x[0], 3, dim=1)
    yield "amax", [rnd(3, 4)], None, lambda x, i: torch.amax(x[0], 0)
    yield "gelu", [rnd(3, 4, lo=-3, hi=3)], None, lambda x, i: F.gelu(x[0])
    yield "gelu_tanh", [rnd(3, 4, lo=-3, hi=3)], None, lambda x, i: F.gelu(x[0], approximate="tanh")
    yield "silu_pow", [rnd(3, 4), rnd(4, lo=0.5, hi=2)], None, lambda x, i: F.silu(x[0]) * x[1] ** x[1]


def main():
    torch.manual_seed(11)
    out = {}
    for name, inputs, idx, f in cases():
        xs = [x.clone().requires_grad_(True) for x in inputs]
        y = f(xs, idx)
        dy = rnd(*y.shape)
        grads = torch.autograd.grad((y * dy).sum(), xs)
        for k, (x, g) in enumerate(zip(inputs, grads)):
            out[f"{name}.in{k}"] = x
            out[f"{name}.grad{k}"] = g
        out[f"{name}.dy"] = dy
        if idx is not None:
            out[f"{name}.idx"] = idx
    os.makedirs(os.path.join(HERE, "ad"), exist_ok=True)
    save_file({k: v.detach().contiguous() for k, v in out.items()}, os.path.join(HERE, "ad", "dense_ops.safetensors"),
              metadata={"source": "make_autograd_golden.py", "torch": torch.__version__})


if __name__ == "__main__":
    main()
