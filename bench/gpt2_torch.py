#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""PyTorch beside bench/gpt2: the same GPT-2 (llm.c's, the forward of
tests/golden/make_gpt2_golden.py) from the same llm.c checkpoint, trained on the same
token file, with torch.optim.AdamW (lr 1e-4, weight decay 0.01 on every parameter, as
llm.c), float32, on the CPU with --threads threads. Eager by default; --compile runs the
forward (and so, through AOTAutograd, the backward) and the AdamW step under
torch.compile (Inductor's C++/OpenMP code on the CPU). The compilation runs in --warmup
steps before the first printed step, and its time is printed on a line of its own.

  python3 bench/gpt2_torch.py MODEL TOKENS [--batch 4] [--seq 64] [--steps 4] [--threads 2]
                              [--compile] [--warmup 2]

Prints one `step K: loss X (took T ms)` line per timed training step (forward, backward
and AdamW), as gpt2 and llm.c do; bench/gpt2 runs it and reads those lines.
PyTorch is for comparison only: nothing in weft or its tests needs it.
"""
import argparse
import os
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests", "golden"))
from make_gpt2_golden import NAMES, forward  # noqa: E402  (the model, written once)


def read_checkpoint(path):
    header = np.fromfile(path, dtype=np.int32, count=256)
    if header[0] != 20240326 or header[1] != 3:
        sys.exit(f"{path}: not an llm.c float32 checkpoint (version 3)")
    max_t, v, layers, heads, c, vp = (int(x) for x in header[2:8])
    flat = torch.from_numpy(np.fromfile(path, dtype=np.float32, offset=1024))
    shapes = {"wte": (vp, c), "wpe": (max_t, c), "ln1w": (layers, c), "ln1b": (layers, c),
              "qkvw": (layers, 3 * c, c), "qkvb": (layers, 3 * c), "attprojw": (layers, c, c),
              "attprojb": (layers, c), "ln2w": (layers, c), "ln2b": (layers, c),
              "fcw": (layers, 4 * c, c), "fcb": (layers, 4 * c), "fcprojw": (layers, c, 4 * c),
              "fcprojb": (layers, c), "lnfw": (c,), "lnfb": (c,)}
    params, offset = {}, 0
    for name in NAMES:
        n = int(np.prod(shapes[name]))
        params[name] = flat[offset:offset + n].view(shapes[name]).clone().requires_grad_()
        offset += n
    if offset != flat.numel():
        sys.exit(f"{path}: {flat.numel()} floats, the configuration needs {offset}")
    return params, v, layers, heads


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("tokens")
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--seq", type=int, default=64)
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--compile", action="store_true", help="torch.compile the forward (and so the backward)")
    ap.add_argument("--compile-optimizer", action="store_true", help="with --compile: the AdamW step too")
    ap.add_argument("--warmup", type=int, default=None,
                    help="steps run before the timed ones (default: 0 eager, 2 compiled)")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    params, vocab, layers, heads = read_checkpoint(a.model)
    tokens = torch.from_numpy(np.fromfile(a.tokens, dtype=np.uint16, offset=1024).astype(np.int64))
    opt = torch.optim.AdamW(params.values(), lr=1e-4, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01)
    model = forward
    step_optimizer = opt.step
    if a.compile:
        model = torch.compile(forward)
        if a.compile_optimizer:
            @torch.compile(fullgraph=False)
            def step_optimizer():
                opt.step()
    warmup = a.warmup if a.warmup is not None else (2 if a.compile else 0)
    n = a.batch * a.seq
    position = 0
    start_all = time.perf_counter()
    for step in range(-warmup, a.steps):
        if position + n + 1 > tokens.numel():
            position = 0
        x = tokens[position:position + n].view(a.batch, a.seq)
        y = tokens[position + 1:position + n + 1].view(a.batch, a.seq)
        position += n
        start = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        _, loss = model(params, x, y, vocab=vocab, layers=layers, heads=heads)
        loss.backward()
        step_optimizer()
        ms = (time.perf_counter() - start) * 1e3
        if step == -1:
            print(f"warm-up: {warmup} steps in {time.perf_counter() - start_all:.1f} s "
                  f"({'torch.compile: compilation included' if a.compile else 'eager'})", flush=True)
        if step >= 0:
            print(f"step {step}: loss {loss.item():f} (took {ms:f} ms)", flush=True)

if __name__ == "__main__":
    main()
