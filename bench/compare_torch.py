#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""weft beside PyTorch on the same machine, shapes and thread count.

  python3 bench/compare_torch.py [--build build/release] [--threads 2] [--reps 9] [--quick] [--only optim]

optim: AdamW over bench/optim's transformer-like list (146 float32 tensors,
99.7M parameters). Runs the weft program (build/release/bench/optim --json) for
weft's step and the same-run copy roofline, then torch.optim.AdamW with
fused=True, foreach=True and the for-loop (foreach=False), timed the same way
(warm-up, then the median of --reps steps), and prints one table with
GB/s at 28 bytes per parameter and weft's speedup over each.

Run it as `chrt -f 1 python3 bench/compare_torch.py` on a shared machine.
PyTorch is for comparison only: nothing in weft or its tests needs it.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def transformer_shapes(layers=12, d=832):
    """bench/adamw_common.hpp's transformer_shapes(12, 832)."""
    shapes = []
    for _ in range(layers):
        shapes += [(d, d)] * 4 + [(d, 4 * d), (4 * d, d)] + [(d,)] * 6
    return shapes + [(d,), (d,)]


def run_weft(build, program, threads, quick):
    exe = os.path.join(build, "bench", program)
    if not os.path.exists(exe):
        sys.exit(f"{exe} not found: build it first (scripts/bench or meson compile -C {build})")
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        path = f.name
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    cmd = [exe, "--json", path] + (["--quick"] if quick else [])
    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)
    with open(path) as f:
        data = json.load(f)
    os.unlink(path)
    return data


def time_steps(step, reps, warmup=2):
    for _ in range(warmup):
        step()
    samples = []
    for _ in range(reps):
        t0 = time.perf_counter()
        step()
        samples.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(samples)


def compare_optim(args):
    import torch

    torch.set_num_threads(args.threads)
    weft = run_weft(args.build, "optim", args.threads, args.quick)
    rows = {r["variant"]: r for r in weft["results"] if r["workload"].startswith("AdamW ")}
    weft_ms = rows["optim::AdamW.step"]["median_ms"]
    copy_ms = min(r["median_ms"] for v, r in rows.items() if v.startswith("copy"))
    n = rows["optim::AdamW.step"]["elements"]
    gbps = lambda ms: n * 28 / (ms * 1e-3) / 1e9

    results = [("weft optim::AdamW.step (1 kernel)", weft_ms), ("copy of the same bytes (weft run)", copy_ms)]
    gen = torch.Generator().manual_seed(0)
    for label, kwargs in [("torch AdamW fused=True", dict(fused=True)),
                          ("torch AdamW foreach=True", dict(foreach=True)),
                          ("torch AdamW for-loop (foreach=False)", dict(foreach=False))]:
        params = [torch.empty(s).uniform_(-1, 1, generator=gen).requires_grad_() for s in transformer_shapes()]
        for p in params:
            p.grad = torch.empty_like(p).uniform_(-1, 1, generator=gen)
        try:
            opt = torch.optim.AdamW(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, **kwargs)
            results.append((label, time_steps(opt.step, args.reps)))
        except (RuntimeError, TypeError) as e:  # fused on CPU needs torch >= 2.4
            results.append((label + f" (unavailable: {e})", float("nan")))
        del params, opt

    print(f"AdamW step, {len(transformer_shapes())} float32 tensors, {n / 1e6:.1f}M parameters, "
          f"{args.threads} threads, torch {torch.__version__}, weft SIMD {weft['isa']}")
    print(f"{'variant':44s} {'median ms':>10s} {'GB/s':>8s} {'vs copy':>8s} {'weft speedup':>13s}")
    print("-" * 87)
    for label, ms in results:
        print(f"{label:44s} {ms:10.2f} {gbps(ms):8.1f} {100 * copy_ms / ms:7.0f}% {ms / weft_ms:12.2f}x")
    print("GB/s counts 28 bytes per parameter (p, g, m, v read; p, m, v written) for every row;\n"
          "weft speedup = that row's time / weft's. Targets (issue 4): >= 1.0x fused, >= 2x foreach and for-loop.")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build", "release"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--quick", action="store_true", help="the weft program's quick mode")
    ap.add_argument("--only", choices=["optim"], default=None, help="run one comparison")
    args = ap.parse_args()
    try:
        import torch  # noqa: F401
    except ImportError:
        sys.exit("torch is not installed (pip install torch): nothing to compare against")
    if args.only in (None, "optim"):
        compare_optim(args)


if __name__ == "__main__":
    main()
