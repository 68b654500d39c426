#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the optimizer golden files under tests/golden/optim/ from torch.optim.

Each file is one optimizer configuration run for STEPS steps on a small list of
parameters with a fixed gradient sequence (fresh normal values, never zero):

  f64   torch.optim in float64: parameters and every state tensor after each step
        (the C++ suite matches these to ~1e-12 relative);
  f32   the largest |torch float32 - torch float64| per step and tensor kind,
        the error of a plain same-precision run (the C++ float32 tolerance is 2x this);
  bf16  torch.optim in float32 with the parameters rounded to bfloat16 after each
        step, from bfloat16-rounded initial values and gradients: what a bf16 model
        with float32 optimizer state computes (weft's mixed-precision kernel).

Lion is not in torch.optim: it is written out below from Chen et al. 2023,
"Symbolic Discovery of Optimization Algorithms", Algorithm 2.

Some configurations change the learning rate every step (a schedule), and some
skip steps (as torch.amp.GradScaler does when a gradient overflowed): the C++ suite
feeds poisoned gradients with found_inf set at those steps.

Run: python3 tests/golden/make_optim_golden.py   (needs torch; the tests do not)
"""
import os

import torch

STEPS = 20
SHAPES = [(3, 2), (5,), (1,)]
HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "optim")


class Lion(torch.optim.Optimizer):
    """Lion (Chen et al. 2023, Algorithm 2), PyTorch-style:
    c = b1 m + (1 - b1) g;  p = p (1 - lr wd) - lr sign(c);  m = b2 m + (1 - b2) g."""

    def __init__(self, params, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0, maximize=False):
        super().__init__(params, dict(lr=lr, betas=betas, weight_decay=weight_decay, maximize=maximize))

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            b1, b2 = group["betas"]
            for p in group["params"]:
                g = -p.grad if group["maximize"] else p.grad
                state = self.state[p]
                if "exp_avg" not in state:
                    state["exp_avg"] = torch.zeros_like(p)
                m = state["exp_avg"]
                p.mul_(1 - group["lr"] * group["weight_decay"])
                p.add_(torch.sign(m * b1 + g * (1 - b1)), alpha=-group["lr"])
                m.mul_(b2).add_(g, alpha=1 - b2)


OPTIMIZERS = {
    "sgd": (torch.optim.SGD, ["momentum_buffer"]),
    "adam": (torch.optim.Adam, ["exp_avg", "exp_avg_sq", "max_exp_avg_sq"]),
    "adamw": (torch.optim.AdamW, ["exp_avg", "exp_avg_sq", "max_exp_avg_sq"]),
    "adagrad": (torch.optim.Adagrad, ["sum"]),
    "rmsprop": (torch.optim.RMSprop, ["square_avg", "grad_avg", "momentum_buffer"]),
    "lion": (Lion, ["exp_avg"]),
}

# (file name, optimizer, options, lr schedule factor per step or None, skipped steps)
CONFIGS = [
    ("sgd_plain", "sgd", dict(lr=0.05), None, []),
    ("sgd_momentum", "sgd", dict(lr=0.05, momentum=0.9), None, []),
    ("sgd_dampening_wd", "sgd", dict(lr=0.05, momentum=0.8, dampening=0.3, weight_decay=0.01), None, [4, 11]),
    ("sgd_nesterov", "sgd", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.02), 0.9, []),
    ("sgd_maximize", "sgd", dict(lr=0.05, momentum=0.5, maximize=True), None, []),
    ("adam_default", "adam", dict(lr=1e-2), None, []),
    ("adam_amsgrad", "adam", dict(lr=1e-2, amsgrad=True), None, [3, 9]),
    ("adam_wd_maximize", "adam", dict(lr=1e-2, weight_decay=0.05, maximize=True, eps=1e-6), None, []),
    ("adam_schedule", "adam", dict(lr=2e-2, betas=(0.8, 0.95)), 0.85, []),
    ("adamw_default", "adamw", dict(lr=1e-2), None, []),
    ("adamw_amsgrad_wd", "adamw", dict(lr=1e-2, weight_decay=0.1, amsgrad=True), None, []),
    ("adamw_maximize", "adamw", dict(lr=1e-2, maximize=True, betas=(0.85, 0.99)), 0.9, [5, 6, 15]),
    ("adagrad_default", "adagrad", dict(lr=0.05), None, []),
    ("adagrad_decay_wd", "adagrad", dict(lr=0.05, lr_decay=0.05, weight_decay=0.01, initial_accumulator_value=0.1), None, [7]),
    ("adagrad_maximize", "adagrad", dict(lr=0.05, maximize=True, eps=1e-6), 0.9, []),
    ("rmsprop_default", "rmsprop", dict(lr=1e-2), None, []),
    ("rmsprop_centered", "rmsprop", dict(lr=1e-2, centered=True, alpha=0.9), None, []),
    ("rmsprop_momentum", "rmsprop", dict(lr=1e-2, momentum=0.9, weight_decay=0.01), None, [2, 13]),
    ("rmsprop_centered_momentum", "rmsprop", dict(lr=1e-2, centered=True, momentum=0.5, maximize=True), 0.9, []),
    ("lion_default", "lion", dict(lr=1e-3), None, []),
    ("lion_wd", "lion", dict(lr=1e-3, weight_decay=0.1, betas=(0.95, 0.98)), 0.9, [8]),
    ("lion_maximize", "lion", dict(lr=1e-3, maximize=True), None, []),
]


def run(name, opt_name, options, schedule, skips, dtype, params0, grads, round_bf16=False):
    """Runs one trajectory; returns [per step: {"param": flat, state name: flat}]."""
    cls, state_names = OPTIMIZERS[opt_name]
    params = [p.clone().to(dtype) for p in params0]
    opt = cls(params, **options)
    out = []
    for step in range(1, STEPS + 1):
        if schedule is not None:
            opt.param_groups[0]["lr"] = options["lr"] * schedule ** (step - 1)
        if step not in skips:
            for p, g in zip(params, grads[step - 1]):
                p.grad = g.clone().to(dtype)
            opt.step()
            if round_bf16:
                with torch.no_grad():
                    for p in params:
                        p.copy_(p.to(torch.bfloat16).to(dtype))
        record = {"param": torch.cat([p.detach().flatten() for p in params]).double()}
        for s in state_names:
            vals = [opt.state[p].get(s) for p in params]
            if all(v is not None and v.numel() == p.numel() for v, p in zip(vals, params)):
                record[s] = torch.cat([v.flatten() for v in vals]).double()
        out.append(record)
    return out


def fmt(values, digits):
    return " ".join(f"{float(v):.{digits}g}" for v in values)


def option_text(options):
    parts = []
    for k, v in options.items():
        if isinstance(v, tuple):
            v = ",".join(repr(float(x)) for x in v)
        elif isinstance(v, bool):
            v = int(v)
        parts.append(f"{k}={v}")
    return " ".join(parts)


def main():
    os.makedirs(OUT, exist_ok=True)
    for index, (name, opt_name, options, schedule, skips) in enumerate(CONFIGS):
        gen = torch.Generator().manual_seed(1000 + index)
        params0 = [torch.randn(s, generator=gen, dtype=torch.float64) for s in SHAPES]
        # gradients of varying scale, never zero
        grads = [[torch.randn(s, generator=gen, dtype=torch.float64) * (0.3 + 0.2 * (k % 4)) for s in SHAPES]
                 for k in range(STEPS)]
        f64 = run(name, opt_name, options, schedule, skips, torch.float64, params0, grads)
        params32 = [p.float().double() for p in params0]
        grads32 = [[g.float().double() for g in gs] for gs in grads]
        ref32 = run(name, opt_name, options, schedule, skips, torch.float64, params32, grads32)
        f32 = run(name, opt_name, options, schedule, skips, torch.float32, params32, grads32)
        bf = lambda t: t.float().to(torch.bfloat16).double()  # float64 -> float32 -> bfloat16, each RNE
        bf16 = run(name, opt_name, options, schedule, skips, torch.float32, [bf(p) for p in params0],
                   [[bf(g) for g in gs] for gs in grads], round_bf16=True)
        lines = [
            f"# weft optimizer golden, written by tests/golden/make_optim_golden.py with torch {torch.__version__}",
            f"optimizer {opt_name}",
            f"options {option_text(options)}",
            "shapes " + " ".join(",".join(str(d) for d in s) for s in SHAPES),
            f"steps {STEPS}",
            "skips " + " ".join(str(s) for s in skips),
            "states " + " ".join(k for k in f64[0] if k != "param"),
            "param0 " + fmt(torch.cat([p.flatten() for p in params0]), 17),
        ]
        for step in range(1, STEPS + 1):
            lr = options["lr"] * (schedule ** (step - 1) if schedule is not None else 1.0)
            lines.append(f"lr {step} {lr:.17g}")
            lines.append(f"grad {step} " + fmt(torch.cat([g.flatten() for g in grads[step - 1]]), 17))
            for key, vals in f64[step - 1].items():
                lines.append(f"f64 {step} {key} " + fmt(vals, 17))
            # the float32 run's own error, against float64 from the same float32-rounded inputs
            errs = [f"{key}={float((f32[step - 1][key] - ref32[step - 1][key]).abs().max()):.3g}"
                    for key in f64[step - 1]]
            lines.append(f"f32err {step} " + " ".join(errs))
            for key, vals in bf16[step - 1].items():
                lines.append(f"bf16 {step} {key} " + fmt(vals, 9))
        with open(os.path.join(OUT, name + ".txt"), "w") as f:
            f.write("\n".join(lines) + "\n")
    print(f"wrote {len(CONFIGS)} files to {OUT}")


if __name__ == "__main__":
    main()
