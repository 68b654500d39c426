#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""weft's flash attention beside PyTorch's CPU SDPA on the shapes of bench/sdpa.cpp.

Runs torch.nn.functional.scaled_dot_product_attention (the CPU flash kernel, forced with
sdpa_kernel(FLASH_ATTENTION)) on fp32 (1, 8, L, L, E) for E = 64, 128, causal and not, with the
same thread count, then runs the weft benchmark (--json) and prints both side by side.
Medians over --reps runs after a warm-up; backward = median(forward + backward) - median(forward).

    chrt -f 1 python3 bench/compare_torch.py --weft build/sdpa/bench/sdpa --threads 2
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def torch_times(L, E, causal, reps, threads):
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    torch.set_num_threads(threads)
    g = torch.Generator().manual_seed(0)
    q, k, v, dout = (torch.rand((1, 8, L, E), generator=g) * 2 - 1 for _ in range(4))
    qg, kg, vg = (t.clone().requires_grad_() for t in (q, k, v))

    def forward():
        with torch.no_grad():
            F.scaled_dot_product_attention(q, k, v, is_causal=causal)

    def both():
        out = F.scaled_dot_product_attention(qg, kg, vg, is_causal=causal)
        out.backward(dout)

    fwd, fb = [], []
    with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
        forward(), both()
        for _ in range(reps):
            time.sleep(0.01)
            t0 = time.perf_counter()
            forward()
            fwd.append(1e3 * (time.perf_counter() - t0))
            time.sleep(0.01)
            t0 = time.perf_counter()
            both()
            fb.append(1e3 * (time.perf_counter() - t0))
    f = statistics.median(fwd)
    return f, statistics.median(fb) - f


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--weft", default="build/sdpa/bench/sdpa", help="the weft sdpa benchmark program")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--L", type=int, default=2048)
    args = ap.parse_args()
    try:
        import torch
    except ImportError:
        print("torch is not installed: pip install torch (CPU wheel)")
        return 0

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "weft.json")
        env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
        quick = ["--quick"] if args.L == 1024 else []
        subprocess.run([args.weft, "--reps", str(args.reps), "--json", path] + quick, env=env, check=True,
                       stdout=subprocess.DEVNULL)
        with open(path) as f:
            weft = {(r["workload"], r["variant"]): r["median_ms"] for r in json.load(f)["results"]}

    print(f"torch {torch.__version__}, {args.threads} threads, fp32, N=1 H=8, medians of {args.reps}")
    print(f"{'shape':<24} {'weft fwd':>9} {'torch fwd':>9} {'speedup':>8}   {'weft bwd':>9} {'torch bwd':>9} {'speedup':>8}")
    print("-" * 84)
    for E in (64, 128):
        for causal in (False, True):
            name = f"L=S={args.L} E={E}" + (" causal" if causal else "")
            tf, tb = torch_times(args.L, E, causal, args.reps, args.threads)
            wf, wb = weft[(name, "flash forward")], weft[(name, "flash backward")]
            print(f"{name:<24} {wf:9.2f} {tf:9.2f} {tf / wf:7.2f}x   {wb:9.2f} {tb:9.2f} {tb / wb:7.2f}x")
    print("ms per call; speedup = torch time / weft time (>= 1.0x: weft is faster)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
