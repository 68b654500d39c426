#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes tests/golden/nn/batch_norm2d_*.safetensors: a torch.nn.BatchNorm2d's state_dict before and
after training steps, for tests/nn/batch_norm_module_test.cpp.

BatchNorm2d(3) in float64 (torch.manual_seed(0)); weight and bias moved from their ones and zeros by
small normal values so that they matter. Three training forwards (the running statistics and
num_batches_tracked move; the third input is channels-last), then one eval forward.

  batch_norm2d_initial.safetensors  the state_dict before training (loads into weft's BatchNorm2d<double>)
  batch_norm2d_trained.safetensors  the state_dict after the three training forwards
  batch_norm2d_io.safetensors       input.0 .. input.2 (training), eval_input, eval_output

Each state file's metadata "keys" lists torch's state_dict keys in torch's order.

Run: python3 tests/golden/make_norm_golden.py   (needs torch and safetensors; the tests do not)
"""
import os

import torch
from safetensors.torch import save_file
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "nn")


def save_state(model, name):
    state = {k: v.detach().contiguous() for k, v in model.state_dict().items()}
    save_file(state, os.path.join(OUT, name + ".safetensors"),
              metadata={"keys": ",".join(state), "source": "make_norm_golden.py", "torch": torch.__version__})


def main():
    os.makedirs(OUT, exist_ok=True)
    torch.manual_seed(0)
    bn = nn.BatchNorm2d(3).double()
    with torch.no_grad():
        bn.weight.add_(torch.randn(3, dtype=torch.float64) * 0.2)
        bn.bias.add_(torch.randn(3, dtype=torch.float64) * 0.2)
    save_state(bn, "batch_norm2d_initial")
    io = {}
    bn.train()
    for step, shape in enumerate([(4, 3, 5, 6), (2, 3, 7, 3), (3, 3, 4, 4)]):
        x = torch.randn(*shape, dtype=torch.float64) * (1 + step) + torch.tensor([1.0, -2.0, 0.5]).view(1, 3, 1, 1)
        io[f"input.{step}"] = x.clone()
        if step == 2:
            x = x.contiguous(memory_format=torch.channels_last)
        bn(x)
    save_state(bn, "batch_norm2d_trained")
    bn.eval()
    x = torch.randn(2, 3, 3, 5, dtype=torch.float64)
    io["eval_input"] = x
    io["eval_output"] = bn(x).detach()
    save_file({k: v.contiguous() for k, v in io.items()}, os.path.join(OUT, "batch_norm2d_io.safetensors"),
              metadata={"source": "make_norm_golden.py", "torch": torch.__version__})
    print(f"wrote {OUT}/batch_norm2d_*.safetensors")


if __name__ == "__main__":
    main()
