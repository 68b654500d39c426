#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes tests/golden/optim/schedulers.txt from torch.optim.lr_scheduler.

Each configuration builds an optimizer with one or two parameter groups (different base lrs),
builds its scheduler(s), and records every group's lr after construction (epoch 0) and after
each scheduler.step(); for OneCycleLR also the momentum it cycles (SGD's momentum, AdamW's
beta1). torch computes most schedulers from the last lr (the chainable form), and the C++ suite
(tests/optim/scheduler_test.cpp) matches these numbers to 1e-12 relative.

Format, one configuration after another:
  config <name> <optimizer> <steps> <lr of each group before the scheduler>
  <epoch> lr <one per group> [momentum <one per group>]

Run: python3 tests/golden/make_scheduler_golden.py   (needs torch; the tests do not)
"""
import os

import torch
from torch.optim import lr_scheduler as S

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "optim", "schedulers.txt")

OPTIMIZERS = {"sgd": torch.optim.SGD, "adamw": torch.optim.AdamW, "adagrad": torch.optim.Adagrad}


def linear_cosine(o):
    return S.SequentialLR(o, [S.LinearLR(o, start_factor=0.1, total_iters=5),
                              S.CosineAnnealingLR(o, T_max=15, eta_min=1e-4)], milestones=[5])


def step_linear_cosine(o):
    return S.SequentialLR(o, [S.StepLR(o, step_size=2, gamma=0.5), S.LinearLR(o, start_factor=0.5, total_iters=4),
                              S.CosineAnnealingLR(o, T_max=6)], milestones=[4, 9])


def one_cycle_cosine(o):
    return S.SequentialLR(o, [S.OneCycleLR(o, max_lr=0.2, total_steps=10), S.CosineAnnealingLR(o, T_max=5)],
                          milestones=[10])


# (name, optimizer, lr of each group, steps, scheduler factory, records momentum)
CONFIGS = [
    ("step_lr", "sgd", [0.1], 20, lambda o: S.StepLR(o, step_size=3, gamma=0.5), False),
    ("step_lr_groups", "sgd", [0.1, 0.02], 20, lambda o: S.StepLR(o, step_size=4, gamma=0.1), False),
    ("step_lr_every_epoch", "adamw", [0.01], 15, lambda o: S.StepLR(o, step_size=1, gamma=1.05), False),
    ("linear_lr_warmup", "sgd", [0.1], 15, lambda o: S.LinearLR(o, start_factor=0.25, total_iters=8), False),
    ("linear_lr_decay_groups", "adamw", [0.01, 0.003], 15,
     lambda o: S.LinearLR(o, start_factor=1.0, end_factor=0.1, total_iters=10), False),
    ("cosine", "sgd", [0.1], 35, lambda o: S.CosineAnnealingLR(o, T_max=10), False),
    ("cosine_eta_min_groups", "adamw", [0.01, 0.05], 30, lambda o: S.CosineAnnealingLR(o, T_max=7, eta_min=1e-3), False),
    ("cosine_t_max_1", "sgd", [0.1], 6, lambda o: S.CosineAnnealingLR(o, T_max=1, eta_min=0.01), False),
    ("one_cycle", "sgd", [0.1], 20, lambda o: S.OneCycleLR(o, max_lr=0.1, total_steps=20), True),
    ("one_cycle_linear_adamw", "adamw", [0.01], 16,
     lambda o: S.OneCycleLR(o, max_lr=0.01, total_steps=16, pct_start=0.25, anneal_strategy="linear"), True),
    ("one_cycle_three_phase_groups", "sgd", [0.1, 0.05], 30,
     lambda o: S.OneCycleLR(o, max_lr=[0.1, 0.05], total_steps=30, three_phase=True, div_factor=10.0,
                            final_div_factor=100.0), True),
    ("one_cycle_three_phase_linear_momenta", "adamw", [0.01, 0.02], 25,
     lambda o: S.OneCycleLR(o, max_lr=0.02, total_steps=25, pct_start=0.4, anneal_strategy="linear",
                            three_phase=True, base_momentum=[0.8, 0.85], max_momentum=[0.9, 0.99]), True),
    ("one_cycle_no_momentum", "adagrad", [0.1], 12,
     lambda o: S.OneCycleLR(o, max_lr=0.3, total_steps=12, cycle_momentum=False), False),
    ("sequential_linear_cosine", "adamw", [0.01], 25, linear_cosine, False),
    ("sequential_step_linear_cosine_groups", "sgd", [0.1, 0.04], 20, step_linear_cosine, False),
    ("sequential_one_cycle_cosine", "sgd", [0.1], 18, one_cycle_cosine, True),
]


def momenta(opt):
    return [g["betas"][0] if "betas" in g else g["momentum"] for g in opt.param_groups]


def fmt(values):
    return " ".join(f"{float(v):.17g}" for v in values)


def main():
    lines = [f"# weft scheduler golden, written by tests/golden/make_scheduler_golden.py with torch {torch.__version__}"]
    for name, opt_name, lrs, steps, make, with_momentum in CONFIGS:
        groups = [{"params": [torch.zeros(2, requires_grad=True)], "lr": lr} for lr in lrs]
        opt = OPTIMIZERS[opt_name](groups)
        sched = make(opt)
        lines.append(f"config {name} {opt_name} {steps} {fmt(lrs)}")
        for epoch in range(steps + 1):
            if epoch > 0:
                opt.step()  # no gradients: only keeps torch from warning about the call order
                sched.step()
            assert sched.get_last_lr() == [g["lr"] for g in opt.param_groups]
            line = f"{epoch} lr {fmt(sched.get_last_lr())}"
            if with_momentum:
                line += f" momentum {fmt(momenta(opt))}"
            lines.append(line)
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {len(CONFIGS)} configurations to {OUT}")


if __name__ == "__main__":
    main()
