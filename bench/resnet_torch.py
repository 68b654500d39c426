#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""PyTorch beside bench/resnet: ResNet-18 for CIFAR-10 as kuangliu/pytorch-cifar defines it (the
architecture and parameter names of examples/resnet/resnet.hpp), float32 on the CPU with --threads
threads. Trains --steps SGD steps (lr 0.1, momentum 0.9, weight decay 5e-4) on random images
[--batch, 3, 32, 32] and random labels in training mode, then times --infer-steps eval-mode
forward passes at --infer-batch under torch.no_grad(). Eager by default; --compile runs the model
under torch.compile (Inductor's C++/OpenMP code on the CPU; the training step's backward through
AOTAutograd). The compilation runs in the warm-up steps before the first printed line of each
part, and its time is printed on a `warm-up:` line.

  python3 bench/resnet_torch.py [--batch 64] [--steps 3] [--infer-batch 1] [--infer-steps 20]
                                [--threads 2] [--compile] [--channels-last]

Prints `step K: loss X (took T ms)` per timed training step (forward, backward, SGD step) and
`infer K: (took T ms)` per timed forward pass; bench/resnet runs it and reads those lines.
PyTorch is for comparison only: nothing in weft or its tests needs it.
"""
import argparse
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests", "golden"))
from make_resnet_golden import BasicBlock  # noqa: E402  (the block, written once)


class ResNet(nn.Module):
    """Stem 3x3 conv + BN + ReLU (no max pool), stages of BasicBlocks, global average pool, linear."""

    def __init__(self, widths=(64, 128, 256, 512), blocks=(2, 2, 2, 2), strides=(1, 2, 2, 2), num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, widths[0], 3, stride=1, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(widths[0])
        in_planes = widths[0]
        for k, (w, n, s) in enumerate(zip(widths, blocks, strides)):
            layers = []
            for b in range(n):
                layers.append(BasicBlock(in_planes, w, s if b == 0 else 1))
                in_planes = w
            setattr(self, f"layer{k + 1}", nn.Sequential(*layers))
        self.stages = len(widths)
        self.linear = nn.Linear(widths[-1], num_classes)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        for k in range(self.stages):
            out = getattr(self, f"layer{k + 1}")(out)
        out = F.adaptive_avg_pool2d(out, 1).flatten(1)
        return self.linear(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--infer-batch", type=int, default=1)
    ap.add_argument("--infer-steps", type=int, default=20)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--compile", action="store_true", help="torch.compile the model (forward and backward)")
    ap.add_argument("--channels-last", action="store_true", help="inputs and weights in torch.channels_last")
    ap.add_argument("--warmup", type=int, default=None,
                    help="steps run before each part's timed ones (default: 1 eager, 3 compiled)")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    fmt = torch.channels_last if a.channels_last else torch.contiguous_format
    model = ResNet().to(memory_format=fmt)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
    run = torch.compile(model) if a.compile else model
    warmup = a.warmup if a.warmup is not None else (3 if a.compile else 1)
    kind = "torch.compile: compilation included" if a.compile else "eager"

    model.train()
    start_all = time.perf_counter()
    for step in range(-warmup, a.steps):
        x = torch.randn(a.batch, 3, 32, 32).to(memory_format=fmt)
        y = torch.randint(0, 10, (a.batch,))
        start = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(run(x), y)
        loss.backward()
        opt.step()
        ms = (time.perf_counter() - start) * 1e3
        if step == -1:
            print(f"warm-up: train {warmup} steps in {time.perf_counter() - start_all:.1f} s ({kind})", flush=True)
        if step >= 0:
            print(f"step {step}: loss {loss.item():f} (took {ms:f} ms)", flush=True)

    model.eval()
    start_all = time.perf_counter()
    with torch.no_grad():
        for step in range(-warmup, a.infer_steps):
            x = torch.randn(a.infer_batch, 3, 32, 32).to(memory_format=fmt)
            start = time.perf_counter()
            logits = run(x)
            ms = (time.perf_counter() - start) * 1e3
            assert torch.isfinite(logits).all()
            if step == -1:
                print(f"warm-up: infer {warmup} passes in {time.perf_counter() - start_all:.1f} s ({kind})", flush=True)
            if step >= 0:
                print(f"infer {step}: (took {ms:f} ms)", flush=True)


if __name__ == "__main__":
    main()
