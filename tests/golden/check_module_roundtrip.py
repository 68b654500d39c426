#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check_module_roundtrip DIR: the state_dicts weft wrote into DIR (tests/nn/module_test.cpp, into
$WEFT_IO_ROUNDTRIP_DIR/nn when that is set, as scripts/test does for check_io_roundtrip.py) load
into torch's same architectures with load_state_dict(strict=True):

  sequential.safetensors  the golden sequential.safetensors loaded by weft and saved again: every
                          tensor must equal the golden's, bit for bit (torch -> weft -> torch);
  net.safetensors         a Net with weft's own initialization: torch's bounds for Linear
                          (|w| <= 1/sqrt(in)), LayerNorm's ones and zeros, a finite Embedding.

Exits 0 when all holds, 1 otherwise (naming the fault), and 2 when torch or safetensors is not
installed (a caller reports that as skipped).
"""
import math
import pathlib
import sys

try:
    import torch
    from safetensors.torch import load_file
    from torch import nn
except ImportError as e:
    print(f"check_module_roundtrip: skipped ({e})")
    sys.exit(2)

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from make_module_golden import Net, sequential  # noqa: E402


def load_strict(model, path, failures):
    """torch's own check: strict=True raises on a missing or unexpected key or a size mismatch."""
    try:
        model.load_state_dict(load_file(str(path)), strict=True)
        return True
    except RuntimeError as e:
        failures.append(f"{path.name}: torch's load_state_dict(strict=True) refused it: {e}")
        return False


def main() -> int:
    out = pathlib.Path(sys.argv[1])
    failures = []

    golden = load_file(str(HERE / "nn" / "sequential.safetensors"))
    weft_seq = load_file(str(out / "sequential.safetensors"))
    for name, want in golden.items():
        got = weft_seq.get(name)
        if got is None or got.dtype != want.dtype or not torch.equal(got, want):
            failures.append(f"sequential.safetensors: tensor {name} differs from the golden's")
    load_strict(sequential(), out / "sequential.safetensors", failures)

    net = Net()
    if load_strict(net, out / "net.safetensors", failures):
        for name, module in net.named_modules():
            if isinstance(module, nn.Linear):
                bound = 1 / math.sqrt(module.in_features)
                for p in module.parameters():
                    if p.abs().max() > bound:
                        failures.append(f"net.safetensors: {name} has a value beyond torch's bound {bound}")
            elif isinstance(module, nn.LayerNorm):
                if not (torch.all(module.weight == 1) and torch.all(module.bias == 0)):
                    failures.append(f"net.safetensors: {name} is not ones and zeros")
        if not torch.isfinite(net.embed.weight).all():
            failures.append("net.safetensors: embed.weight holds a non-finite value")

    for f in failures:
        print("check_module_roundtrip:", f)
    print(f"check_module_roundtrip: sequential and net state_dicts, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
