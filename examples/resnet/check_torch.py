#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check_torch.py RESNET: examples/resnet's model against PyTorch's, through files, both ways.

PyTorch's ResNet-18 for CIFAR-10 (kuangliu/pytorch-cifar's, as bench/resnet_torch.py defines it)
with random weights and BatchNorm statistics moved off their initial values (so that each
matters) writes its state_dict (safetensors: every key, the int64 num_batches_tracked included),
4 random images as float32 [4, 32, 32, 3] (the program reads them in place as a channels-last
view) and its eval-mode logits. `RESNET check` must load that state_dict strictly and give the
same logits within float32 rounding (it says how close), and the state_dict it writes back must
load into torch's model strictly, every tensor equal to torch's.

Exits 0 when all holds, 1 otherwise, 2 when torch, safetensors or numpy is not installed (a caller
reports that as skipped).
"""
import pathlib
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import torch
    from safetensors.torch import load_file, save_file
except ImportError as e:
    print(f"check_torch: skipped ({e})")
    sys.exit(2)

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
from resnet_torch import ResNet  # noqa: E402  (the model, written once)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: check_torch.py PATH/TO/resnet")
    torch.manual_seed(0)
    model = ResNet().eval()
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.weight.normal_(1, 0.1)
                m.bias.normal_(0, 0.1)
                m.running_mean.normal_(0, 0.1)
                m.running_var.uniform_(0.5, 1.5)
                m.num_batches_tracked.fill_(7)
    images = torch.randn(4, 32, 32, 3)
    with torch.no_grad():
        logits = model(images.permute(0, 3, 1, 2))
    state = {k: v.contiguous() for k, v in model.state_dict().items()}
    with tempfile.TemporaryDirectory() as tmp:
        d = pathlib.Path(tmp)
        save_file(state, str(d / "weights.safetensors"))
        np.save(d / "images.npy", images.numpy())
        np.save(d / "logits.npy", logits.numpy())
        run = subprocess.run([sys.argv[1], "check", "--weights", str(d / "weights.safetensors"), "--images",
                              str(d / "images.npy"), "--logits", str(d / "logits.npy"), "--state-out",
                              str(d / "weft.safetensors")], capture_output=True, text=True)
        print(run.stdout + run.stderr, end="")
        if run.returncode != 0:
            print(f"check_torch: `resnet check` failed (exit {run.returncode})")
            return 1
        back = load_file(str(d / "weft.safetensors"))
    if set(back) != set(state):
        print(f"check_torch: weft's state_dict keys differ from torch's: {sorted(set(back) ^ set(state))}")
        return 1
    try:
        ResNet().load_state_dict(back, strict=True)
    except RuntimeError as e:
        print(f"check_torch: torch's load_state_dict(strict=True) refused weft's state_dict: {e}")
        return 1
    unequal = [k for k in state if back[k].dtype != state[k].dtype or not torch.equal(back[k], state[k])]
    if unequal:
        print(f"check_torch: weft's state_dict differs from the one it loaded at {unequal}")
        return 1
    print(f"check_torch: {len(state)} tensors loaded by weft and back by torch (strict), logits agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
