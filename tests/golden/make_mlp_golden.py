#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes tests/golden/nn/mlp_train.safetensors: an MLP trained by torch for 10 AdamW steps in
float64, for tests/nn/mlp_train_test.cpp (weft's autograd, modules and optimizer must match it
step for step).

The model is fc1 = Linear(6, 16), ln = LayerNorm(16), GELU (erf), fc2 = Linear(16, 4), and the
loss the mean cross-entropy of its logits. Each step takes its own batch x_k [8, 6], targets
t_k [8]. The file holds the initial parameters ("init.<name>"), the batches ("x.<k>",
"targets.<k>"), the loss before each step ("loss" [10]) and the parameters after the last
("final.<name>").

Run: python3 tests/golden/make_mlp_golden.py   (needs torch and safetensors; the tests do not)
"""
import os

import torch
from safetensors.torch import save_file
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
STEPS = 10


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 16)
        self.ln = nn.LayerNorm(16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        return self.fc2(nn.functional.gelu(self.ln(self.fc1(x))))


def main():
    torch.manual_seed(7)
    model = Mlp().double()
    with torch.no_grad():  # LayerNorm away from its ones and zeros: every parameter matters
        model.ln.weight.add_(0.1 * torch.randn(16, dtype=torch.float64))
        model.ln.bias.add_(0.1 * torch.randn(16, dtype=torch.float64))
    out = {f"init.{k}": v.detach().clone() for k, v in model.state_dict().items()}
    opt = torch.optim.AdamW(model.parameters(), lr=0.02, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.05)
    losses = []
    for k in range(STEPS):
        x = torch.randn(8, 6, dtype=torch.float64)
        t = torch.randint(0, 4, (8,))
        out[f"x.{k}"], out[f"targets.{k}"] = x, t
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), t)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    out["loss"] = torch.tensor(losses, dtype=torch.float64)
    out.update({f"final.{k}": v.detach().clone() for k, v in model.state_dict().items()})
    save_file({k: v.contiguous() for k, v in out.items()}, os.path.join(HERE, "nn", "mlp_train.safetensors"),
              metadata={"source": "make_mlp_golden.py", "torch": torch.__version__})


if __name__ == "__main__":
    main()
