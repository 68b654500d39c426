#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Attention outputs and gradients of weft (flash and math) beside PyTorch's, against a float64 reference.

  python3 bench/sdpa_accuracy.py --exe BUILD/bench/sdpa_accuracy [--dtype fp32|bf16] [--yardstick math|default]
                                 [--cases 300] [--seed 1] [--show 10]

--dtype bf16 rounds every input to bfloat16 and runs both libraries in bf16; the yardstick is then
PyTorch's own bf16 error (its CPU flash kernel where it accepts the problem, else its math
backend): FlashAttention's rule, within 2x of it. --yardstick default takes that yardstick for
fp32 too (what F.scaled_dot_product_attention runs by default on the CPU); fp32's default
yardstick is PyTorch's fp32 math backend.

Draws random problems (batch, heads with and without GQA, L != S, E and Ev up to 160, causal
upper-left and lower-right, bool and float masks, default and custom scales, inputs of standard
deviation 1 to 3 so that some rows are peaked), writes them to a safetensors file, runs the C++
program (bench/sdpa_accuracy.cpp: weft's fp32 flash and math forward and backward) on it, and
computes every max abs error against PyTorch's float64 autograd. The yardstick is PyTorch's fp32
math backend on the same inputs: the ratio printed is an error / torch math's, per out, dq, dk
and dv, for weft's flash and math and for PyTorch's own CPU flash kernel (sdpa_kernel; it
refuses Ev != E, those cases are left out of its row). Prints the worst ratios over the cases,
how many are above 2 and 1.5, and the --show worst cases of weft's flash.
PyTorch is for comparison only: nothing in weft or its tests needs it.
"""
import argparse
import math
import os
import subprocess
import sys
import tempfile

import torch
import torch.nn.functional as F
from safetensors.torch import load_file, save_file
from torch.nn.attention import SDPBackend, sdpa_kernel

NAMES = ("out", "dq", "dk", "dv")


def draw(gen, i):
    """One random problem: its options and its fp32 inputs."""
    r = lambda lo, hi: int(torch.randint(lo, hi + 1, (1,), generator=gen))
    u = lambda: float(torch.rand((), generator=gen))
    pick = lambda xs: xs[r(0, len(xs) - 1)]
    B, H = r(1, 2), r(1, 2)
    gqa = u() < 0.3
    Hq = H * r(2, 3) if gqa else H
    L, S = pick([1, 7, 33, 96, 127, 128, 129, 200, 257]), pick([1, 7, 33, 96, 127, 128, 129, 200, 257])
    E = pick([8, 16, 32, 64, 80, 128, 160])
    Ev = E if u() < 0.7 else pick([16, 64, 128])
    kind = pick(["none", "none", "upper_left", "lower_right", "bool", "float"])
    scale = None if u() < 0.6 else round(0.05 + 0.95 * u(), 3)
    std = pick([1.0, 1.0, 2.0, 3.0])
    opts = dict(B=B, Hq=Hq, H=H, L=L, S=S, E=E, Ev=Ev, kind=kind, scale=scale, gqa=gqa, std=std)
    t = {
        "q": torch.randn(B, Hq, L, E, generator=gen) * std,
        "k": torch.randn(B, H, S, E, generator=gen) * std,
        "v": torch.randn(B, H, S, Ev, generator=gen),
        "dout": torch.randn(B, Hq, L, Ev, generator=gen),
    }
    if kind == "bool":
        t["mask"] = torch.rand(B, Hq, L, S, generator=gen) < 0.7
    elif kind == "float":
        t["mask"] = (torch.rand(1, Hq, L, S, generator=gen) - 0.5) * 6
    return opts, {k: v.contiguous() for k, v in t.items()}


def torch_mask(o, t):
    """The mask PyTorch gets: lower_right causal as a bool mask (is_causal is upper-left)."""
    if o["kind"] == "lower_right":
        i = torch.arange(o["L"]).unsqueeze(1)
        j = torch.arange(o["S"]).unsqueeze(0)
        return j <= i + (o["S"] - o["L"])
    return t.get("mask")


def torch_run(o, t, dtype, backend):
    """out and the gradients by F.scaled_dot_product_attention in dtype on `backend` (None: math in float64)."""
    q, k, v = (t[n].to(dtype, copy=True).requires_grad_() for n in ("q", "k", "v"))
    mask = torch_mask(o, t)
    if mask is not None and mask.dtype != torch.bool:
        mask = mask.to(dtype)
    with sdpa_kernel([backend]):
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=o["kind"] == "upper_left",
                                             scale=o["scale"], enable_gqa=o["gqa"])
    out.backward(t["dout"].to(dtype))
    return {"out": out.detach(), "dq": q.grad, "dk": k.grad, "dv": v.grad}


def max_err(x, ref):
    """max |x - ref| over entries where the reference is finite (rows that see no key: torch gives NaN)."""
    ok = torch.isfinite(ref)
    return float((x.double() - ref)[ok].abs().max()) if ok.any() else 0.0


def ratio(err, yardstick):
    """err / yardstick; where torch math is exact (a single visible key: dS = 0), 0 if err is too, else inf."""
    return err / yardstick if yardstick > 0 else (0.0 if err == 0 else math.inf)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exe", required=True, help="the built bench/sdpa_accuracy program")
    ap.add_argument("--cases", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--show", type=int, default=10)
    ap.add_argument("--keep", help="directory to keep the inputs and weft's results in")
    ap.add_argument("--dtype", choices=("fp32", "bf16"), default="fp32")
    ap.add_argument("--yardstick", choices=("math", "default"), default=None,
                    help="torch's math backend, or its default CPU path (flash where it runs); bf16: default")
    args = ap.parse_args()
    yardstick = args.yardstick or ("default" if args.dtype == "bf16" else "math")
    torch.set_num_threads(2)
    gen = torch.Generator().manual_seed(args.seed)
    work = args.keep or tempfile.mkdtemp(prefix="sdpa_accuracy_")
    os.makedirs(work, exist_ok=True)
    cases, tensors = [], {}
    for i in range(args.cases):
        o, t = draw(gen, i)
        if args.dtype == "bf16":  # bf16 values, stored as float32 (exact)
            t = {n: x.to(torch.bfloat16).float() if x.dtype == torch.float32 else x for n, x in t.items()}
        cases.append(o)
        for n, x in t.items():
            tensors[f"{i}.{n}"] = x
    inputs, results = os.path.join(work, "inputs.safetensors"), os.path.join(work, "weft.safetensors")
    # One line per case for the C++ side: B Hq H L S E Ev kind scale (0: default) gqa dtype.
    meta = {str(i): " ".join(str(x) for x in (o["B"], o["Hq"], o["H"], o["L"], o["S"], o["E"], o["Ev"], o["kind"],
                                               o["scale"] or 0, int(o["gqa"]), args.dtype)) for i, o in enumerate(cases)}
    dtype = torch.bfloat16 if args.dtype == "bf16" else torch.float32
    save_file(tensors, inputs, metadata=meta)
    subprocess.run([args.exe, inputs, results], check=True)
    weft = load_file(results)

    rows = []
    for i, o in enumerate(cases):
        t = {n: tensors[f"{i}.{n}"] for n in ("q", "k", "v", "dout", "mask") if f"{i}.{n}" in tensors}
        ref = torch_run(o, t, torch.float64, SDPBackend.MATH)
        tm = torch_run(o, t, dtype, SDPBackend.MATH)
        try:
            tf = torch_run(o, t, dtype, SDPBackend.FLASH_ATTENTION)
        except RuntimeError:  # a problem torch's CPU flash kernel refuses
            tf = None
        row = {"case": i, "opts": o}
        for n in NAMES:
            e_tm = max_err(tm[n], ref[n])
            e_tf = max_err(tf[n], ref[n]) if tf is not None else math.nan
            # math: torch's math backend; default: torch's own kernel in this dtype (flash where it runs).
            yard = e_tf if yardstick == "default" and not math.isnan(e_tf) else e_tm
            row[n] = {"torch_math": e_tm, "torch_flash": e_tf,
                      **{b: ratio(max_err(weft[f"{i}.{b}.{n}"], ref[n]), yard) for b in ("flash", "math")}}
            # Torch's flash kernel against torch math: how far a flash implementation commonly is.
            row[n]["torch_flash_ratio"] = ratio(e_tf, e_tm)
        rows.append(row)

    print(f"{len(rows)} cases (seed {args.seed}, {args.dtype}); ratio = error / "
          + (f"torch {args.dtype}'s error (its flash kernel where it runs, else math)" if yardstick == "default"
             else f"torch {args.dtype} math's error"))
    print(f"{'':6} {'backend':11} {'worst':>8} {'p99':>8} {'median':>8} {'> 2':>6} {'> 1.5':>6} {'inf':>6}")
    for n in NAMES:
        for b in ("flash", "math", "torch_flash_ratio"):
            r = sorted(row[n][b] for row in rows if not math.isnan(row[n][b]))
            above = lambda x: sum(v > x for v in r)
            print(f"{n:6} {b[:11]:11} {r[-1]:8.2f} {r[int(0.99 * (len(r) - 1))]:8.2f} {r[len(r) // 2]:8.2f} "
                  f"{above(2):6d} {above(1.5):6d} {above(1e300):6d}")
    if yardstick == "default":  # FlashAttention's rule proper: where torch's own flash kernel runs
        ran = [row for row in rows if not math.isnan(row["dq"]["torch_flash"])]
        print(f"\nweft flash over the {len(ran)} cases torch's {args.dtype} flash kernel runs (worst, > 2): " +
              ", ".join(f"{n} {max(row[n]['flash'] for row in ran):.2f} {sum(row[n]['flash'] > 2 for row in ran)}"
                        for n in NAMES))
    worst = sorted(rows, key=lambda row: -max(row[n]["flash"] for n in ("dq", "dk", "dv")))[:args.show]
    print("\nworst flash gradient cases:")
    for row in worst:
        print(f"case {row['case']}: {row['opts']}")
        for n in NAMES:
            x = row[n]
            print(f"    {n}: flash {x['flash']:.2f} math {x['math']:.2f}  (torch math {x['torch_math']:.2e}, "
                  f"torch flash {x['torch_flash']:.2e})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
