#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes tests/golden/vision/resnet_train.safetensors: a small CIFAR-style ResNet trained by torch
for 20 SGD steps, for tests/nn/resnet_train_test.cpp (weft's convolution, batch norm, pooling,
autograd, modules and SGD must match it step for step).

The net (kuangliu/pytorch-cifar's ResNet and names, as examples/resnet/resnet.hpp, with widths
8/16 and one block a stage): conv1 = Conv2d(3, 8, 3, padding=1, bias=False), bn1, ReLU;
layer1.0 = BasicBlock(8 -> 8); layer2.0 = BasicBlock(8 -> 16, stride 2) whose shortcut is
(Conv2d(8, 16, 1, stride=2, bias=False), BatchNorm2d(16)); adaptive_avg_pool2d to 1x1;
linear = Linear(16, 10). A BasicBlock is relu(bn2(conv2(relu(bn1(conv1(x))))) + shortcut(x)) with 3x3
convolutions (padding 1, no bias). The loss is the mean cross-entropy. Training mode throughout
(batch norm normalizes with the batch's statistics and updates its running stats).

SGD: lr 0.05, momentum 0.9, weight decay 5e-4 (on every parameter), 20 steps on one fixed batch
x [8, 3, 16, 16], targets [8] of 10 classes.

The file holds, for the float64 run:
  init.<key>       the initial state_dict (torch's init with seed 0; batch norm's weight, bias and
                   running stats moved off 1 / 0 so that each matters); num_batches_tracked left out
  x, targets       the batch
  loss             the loss of each step [20] (before its update)
  final.<key>      the state_dict after the 20 steps (parameters and running stats)
and the same run in float32 from the same initial values rounded to float32:
  f32.loss, f32.final.<key>
(a float32 test compares against these, within how far a float32 run strays from the float64 run:
the script prints those distances for torch's float32 run and for a second float32 run in
channels-last memory, whose other summation orders stand for another float32 implementation).

Run: python3 tests/golden/make_resnet_golden.py   (needs torch and safetensors; the tests do not)
"""
import os

import torch
import torch.nn.functional as F
from safetensors.torch import save_file
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
STEPS = 20
LR, MOMENTUM, WEIGHT_DECAY = 0.05, 0.9, 5e-4


class BasicBlock(nn.Module):
    def __init__(self, inplanes, planes, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.shortcut = nn.Sequential()  # empty: the identity
        if stride != 1 or inplanes != planes:
            self.shortcut = nn.Sequential(nn.Conv2d(inplanes, planes, 1, stride=stride, bias=False),
                                            nn.BatchNorm2d(planes))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))


class ResNet(nn.Module):
    def __init__(self, widths=(8, 16), classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, widths[0], 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(widths[0])
        self.layer1 = nn.Sequential(BasicBlock(widths[0], widths[0], 1))
        self.layer2 = nn.Sequential(BasicBlock(widths[0], widths[1], 2))
        self.linear = nn.Linear(widths[1], classes)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = self.layer2(self.layer1(x))
        return self.linear(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def float_state(model):
    return {k: v.detach().clone() for k, v in model.state_dict().items() if v.is_floating_point()}


def train(model, x, targets):
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM, weight_decay=WEIGHT_DECAY)
    model.train()
    losses = []
    for _ in range(STEPS):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), targets)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return torch.tensor(losses, dtype=torch.float64)


def main():
    torch.manual_seed(0)
    model = ResNet().double()
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.weight.add_(0.1 * torch.randn_like(m.weight))
                m.bias.add_(0.1 * torch.randn_like(m.bias))
                m.running_mean.add_(0.1 * torch.randn_like(m.running_mean))
                m.running_var.mul_(torch.empty_like(m.running_var).uniform_(0.8, 1.25))
    # float32-representable data and weights: the float32 run starts from the very same values
    with torch.no_grad():
        for v in model.state_dict().values():
            if v.is_floating_point():
                v.copy_(v.float().double())
    x = torch.randn(8, 3, 16, 16, dtype=torch.float64).float().double()
    targets = torch.randint(0, 10, (8,))
    init = float_state(model)
    model32, model32_cl = ResNet().float(), ResNet().float()
    model32.load_state_dict({k: v.float() for k, v in model.state_dict().items()})
    model32_cl.load_state_dict({k: v.float() for k, v in model.state_dict().items()})
    model32_cl = model32_cl.to(memory_format=torch.channels_last)

    out = {f"init.{k}": v for k, v in init.items()}
    out["x"], out["targets"] = x, targets
    out["loss"] = train(model, x, targets)
    out.update({f"final.{k}": v for k, v in float_state(model).items()})
    out["f32.loss"] = train(model32, x.float(), targets).float()
    out.update({f"f32.final.{k}": v for k, v in float_state(model32).items()})

    loss_cl = train(model32_cl, x.float().contiguous(memory_format=torch.channels_last), targets)
    final_cl = float_state(model32_cl)

    def distance(a, b):
        return ((a.double() - b).abs().max() / b.abs().max()).item()

    print("loss (float64):", " ".join(f"{v:.4f}" for v in out["loss"].tolist()))
    print("float32 runs vs the float64 run, max |difference| / max |float64| (torch, torch channels-last):")
    print(f"  loss: {distance(out['f32.loss'], out['loss']):.2e} {distance(loss_cl, out['loss']):.2e}")
    for k in init:
        print(f"  {k}: {distance(out[f'f32.final.{k}'], out[f'final.{k}']):.2e} {distance(final_cl[k], out[f'final.{k}']):.2e}")
    os.makedirs(os.path.join(HERE, "vision"), exist_ok=True)
    path = os.path.join(HERE, "vision", "resnet_train.safetensors")
    save_file({k: v.contiguous() for k, v in out.items()}, path,
              metadata={"source": "make_resnet_golden.py", "torch": torch.__version__, "keys": ",".join(init)})
    print(f"wrote {path}: {os.path.getsize(path) // 1024} KiB")


if __name__ == "__main__":
    main()
