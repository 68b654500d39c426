#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes tests/golden/vision/pool_random.safetensors: torch.nn.functional's max_pool2d (with
indices), avg_pool2d, adaptive_avg_pool2d and interpolate (nearest, bilinear) on random
configurations plus the edge cases of their rules, forward and backward in float64, for
tests/nn/pool_golden_test.cpp.

Case i stores:
  c{i}.args     float64 [13]: kind (0 max_pool2d, 1 avg_pool2d, 2 adaptive_avg_pool2d,
                3 interpolate nearest, 4 interpolate bilinear), a, b (kernel, output size, or the
                size / scale factors of interpolate), stride h, w, padding h, w, dilation h, w,
                ceil_mode, count_include_pad, align_corners, by_scale (interpolate's a, b are scale
                factors)
  c{i}.x        the input [N, C, H, W]
  c{i}.y        torch's output
  c{i}.dy       a random gradient of the output
  c{i}.dx       the gradient of sum(y * dy) with respect to x (absent where torch's backward
                would write outside the plane: a dilated window holding no input, its index past it)
  c{i}.indices  max_pool2d's argmax indices (int64)

Edge cases on purpose: ceil_mode dropping a last window that starts in the right padding,
dilated windows that hold no input (torch's -inf and index), count_include_pad both ways,
interpolate by a scale whose inverse is not the size ratio, a dim of unchanged size with a scale
(torch copies it), nearest at exactly twice the size with a scale of 2.1, align_corners to one
output.

Run: python3 tests/golden/make_pool_golden.py   (needs torch and safetensors; the tests do not)
"""
import os
import random

import torch
import torch.nn.functional as F
from safetensors.torch import save_file

HERE = os.path.dirname(os.path.abspath(__file__))
D = torch.float64


def edge_cases():
    """(kind, shape, options) of the rules a random draw rarely reaches."""
    yield 0, (1, 2, 5, 6), dict(k=(3, 3), s=(2, 2), p=(1, 1), d=(1, 1), ceil=True)  # last window dropped
    yield 0, (1, 2, 1, 5), dict(k=(2, 2), s=(1, 2), p=(1, 1), d=(2, 1), ceil=False)  # windows without input
    # no input either, but torch's index lands inside the plane (the next row): the gradient goes there
    yield 0, (1, 1, 4, 1), dict(k=(1, 2), s=(2, 1), p=(0, 1), d=(1, 2), ceil=False)
    yield 0, (2, 3, 7, 7), dict(k=(3, 2), s=(2, 3), p=(1, 1), d=(2, 2), ceil=True)
    yield 1, (1, 2, 5, 5), dict(k=(3, 3), s=(2, 2), p=(1, 1), ceil=True, cip=False)
    yield 1, (1, 2, 5, 5), dict(k=(3, 3), s=(2, 2), p=(1, 1), ceil=True, cip=True)
    yield 1, (2, 1, 6, 4), dict(k=(4, 2), s=(3, 1), p=(2, 1), ceil=True, cip=False)
    yield 2, (1, 3, 7, 5), dict(o=(3, 4))
    yield 2, (2, 2, 3, 3), dict(o=(5, 7))  # more outputs than inputs
    yield 3, (1, 2, 4, 5), dict(scale=(1.3, 2.1), ac=False)  # W: 5 -> 10 = 2 W by a scale of 2.1
    yield 3, (1, 2, 5, 7), dict(scale=(1.1, 0.6), ac=False)  # H: 5 -> 5 with a scale of 1.1
    yield 4, (1, 2, 5, 7), dict(scale=(1.1, 1.7), ac=False)
    yield 4, (1, 2, 4, 6), dict(size=(1, 9), ac=True)  # align_corners to one output row
    yield 4, (2, 2, 6, 5), dict(scale=(0.6, 2.5), ac=True)


def random_case(rng):
    kind = rng.randrange(5)
    shape = (rng.randint(1, 2), rng.randint(1, 4), rng.randint(1, 12), rng.randint(1, 12))
    if kind in (0, 1):
        k = (rng.randint(1, 4), rng.randint(1, 4))
        return kind, shape, dict(k=k, s=(rng.randint(1, 3), rng.randint(1, 3)),
                                 p=(rng.randint(0, k[0] // 2), rng.randint(0, k[1] // 2)),
                                 d=(rng.randint(1, 2), rng.randint(1, 2)) if kind == 0 else (1, 1),
                                 ceil=rng.random() < 0.5, cip=rng.random() < 0.5)
    if kind == 2:
        return kind, shape, dict(o=(rng.randint(1, 8), rng.randint(1, 8)))
    ac = kind == 4 and rng.random() < 0.5
    if rng.random() < 0.5:
        return kind, shape, dict(size=(rng.randint(1, 14), rng.randint(1, 14)), ac=ac)
    scales = [0.5, 0.7, 1.0, 1.3, 2.0, 2.1, 2.5, 3.0]
    return kind, shape, dict(scale=(rng.choice(scales), rng.choice(scales)), ac=ac)


def call(kind, o, x):
    """torch's output (and max_pool2d's indices) for case options o."""
    if kind == 0:
        return F.max_pool2d(x, o["k"], o["s"], o["p"], o["d"], o["ceil"], return_indices=True)
    if kind == 1:
        return F.avg_pool2d(x, o["k"], o["s"], o["p"], o["ceil"], o["cip"]), None
    if kind == 2:
        return F.adaptive_avg_pool2d(x, o["o"]), None
    mode = "nearest" if kind == 3 else "bilinear"
    ac = o["ac"] if kind == 4 else None
    if "size" in o:
        return F.interpolate(x, size=o["size"], mode=mode, align_corners=ac), None
    return F.interpolate(x, scale_factor=o["scale"], mode=mode, align_corners=ac), None


def args(kind, o):
    a, b = o.get("k") or o.get("o") or o.get("size") or o.get("scale")
    s, p, d = o.get("s", (1, 1)), o.get("p", (0, 0)), o.get("d", (1, 1))
    return torch.tensor([kind, a, b, s[0], s[1], p[0], p[1], d[0], d[1], o.get("ceil", False), o.get("cip", True),
                         o.get("ac", False), "scale" in o], dtype=D)


def main():
    torch.manual_seed(0)
    rng = random.Random(0)
    todo = list(edge_cases())
    while len(todo) < 60:
        todo.append(random_case(rng))
    tensors = {}
    i = 0
    for kind, shape, o in todo:
        x = (torch.rand(*shape, dtype=D) * 4 - 2).requires_grad_()
        try:
            y, indices = call(kind, o, x)
        except RuntimeError:  # an output size under 1: not a case
            continue
        dy = torch.rand(y.shape, dtype=D) * 2 - 1
        name = f"c{i}"
        tensors.update({f"{name}.args": args(kind, o), f"{name}.x": x.detach(), f"{name}.y": y.detach(),
                        f"{name}.dy": dy})
        if indices is not None:
            tensors[f"{name}.indices"] = indices
        if indices is None or int(indices.max()) < shape[2] * shape[3]:
            (dx,) = torch.autograd.grad(y, x, dy)
            tensors[f"{name}.dx"] = dx
        i += 1
    path = os.path.join(HERE, "vision", "pool_random.safetensors")
    save_file({k: v.contiguous() for k, v in tensors.items()}, path,
              metadata={"source": "make_pool_golden.py", "torch": torch.__version__, "cases": str(i)})
    print(f"wrote {i} cases to {path}")


if __name__ == "__main__":
    main()
