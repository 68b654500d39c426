#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes tests/golden/nn/, torch modules' state_dicts as safetensors files, for tests/nn/module_test.cpp.

Each model is built by torch (torch.manual_seed(0), torch's default initialization; LayerNorm's
ones and zeros moved by small normal values so that every tensor is worth comparing) and saved
with safetensors.torch.save_file. The file's metadata "keys" lists the state_dict keys in torch's
order (a safetensors file stores its tensors sorted, not in that order), which the C++ test
compares with weft's named_parameters() and state_dict().

  sequential.safetensors      SEQUENTIAL in float32
  sequential_f64.safetensors  the same model in float64 (loads into weft's Sequential<double>)
  net.safetensors             Net: named submodules, an Embedding, a Dropout between layers

check_module_roundtrip.py imports the architectures to load weft's files back into torch.

Run: python3 tests/golden/make_module_golden.py   (needs torch and safetensors; the tests do not)
"""
import os

import torch
from safetensors.torch import save_file
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "nn")


def sequential():
    return nn.Sequential(nn.Linear(5, 7), nn.LayerNorm(7), nn.Linear(7, 3, bias=False))


class Net(nn.Module):
    """Named children, an Embedding and a Sequential with a Dropout (which has no parameters, so
    the names skip its index: block.0, block.2)."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(11, 4)
        self.block = nn.Sequential(nn.Linear(4, 6), nn.Dropout(0.1), nn.LayerNorm(6))
        self.head = nn.Linear(6, 2)


MODELS = {"sequential": sequential, "net": Net}


def save(model, name):
    state = {k: v.detach().contiguous() for k, v in model.state_dict().items()}
    save_file(state, os.path.join(OUT, name + ".safetensors"),
              metadata={"keys": ",".join(state), "source": "make_module_golden.py", "torch": torch.__version__})


def main():
    os.makedirs(OUT, exist_ok=True)
    for index, (name, build) in enumerate(MODELS.items()):
        torch.manual_seed(index)
        model = build()
        with torch.no_grad():
            for module in model.modules():
                if isinstance(module, nn.LayerNorm):
                    module.weight.add_(torch.randn_like(module.weight) * 0.1)
                    module.bias.add_(torch.randn_like(module.bias) * 0.1)
        save(model, name)
        if name == "sequential":
            save(model.double(), name + "_f64")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
