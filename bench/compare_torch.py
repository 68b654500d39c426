#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""weft beside PyTorch on the same machine, shapes and thread count.

  chrt -f 1 python3 bench/compare_torch.py [optim|sdpa|matmul|dense_fusion ...] [--build build/release] [--threads 2] [--reps N]

optim: AdamW over bench/optim's transformer-like list (146 float32 tensors,
  99.7M parameters). Runs the weft program (BUILD/bench/optim --json) for weft's
  step and the same-run copy roofline, then torch.optim.AdamW with fused=True,
  foreach=True and the for-loop (foreach=False), timed the same way (warm-up,
  then the median of --reps steps), and prints GB/s at 28 bytes per parameter
  and weft's speedup over each. --quick runs the weft program's quick mode.
sdpa: torch.nn.functional.scaled_dot_product_attention (the CPU flash kernel,
  forced with sdpa_kernel(FLASH_ATTENTION)) on fp32 (1, 8, L, L, E) for E = 64,
  128, causal and not, beside BUILD/bench/sdpa --json; medians over --reps runs
  after a warm-up; backward = median(forward + backward) - median(forward).

matmul: torch.matmul on bf16 (N, N) x (N, N) tensors for N = 512, 2048, 4096
  (oneDNN: AMX tiles on CPUs that have them), beside BUILD/bench/matmul_bf16
  --json (weft's bf16 matmul: AMX-BF16 where the build and the OS allow it);
  medians over --reps runs after a warm-up.

dense_fusion: the fused forms of BUILD/bench/dense_fusion --json beside PyTorch eager on the
  same shapes: gelu(x @ w + b) (three ops, and addmm + gelu: the bias fused into the GEMM)
  for fp32 4096x1024x4096 (w as stored and transposed) and 1024x768x3072 (w^T), and
  torch.cat of three pointwise producers (x*0.5 + tanh(x), sigmoid(y)*y, exp(z) - 1) along
  dim 0 and dim -1; medians of --reps runs after a warm-up.

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
          "weft speedup = that row's time / weft's. Targets: >= 1.0x fused, >= 2x foreach and for-loop.")


def torch_times(L, E, causal, reps, threads, dtype):
    """Medians (ms) of torch's CPU flash kernels, forward and backward, called as the aten ops
    that F.scaled_dot_product_attention and its autograd node run (no autograd bookkeeping timed)."""
    import torch

    torch.set_num_threads(threads)
    g = torch.Generator().manual_seed(0)
    q, k, v, dout = ((torch.rand((1, 8, L, E), generator=g) * 2 - 1).to(dtype) for _ in range(4))
    flash = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu
    flash_backward = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward
    out, lse = flash(q, k, v, 0.0, causal)
    flash_backward(dout, q, k, v, out, lse, 0.0, causal)
    fwd, bwd = [], []
    for _ in range(reps):
        time.sleep(0.01)
        t0 = time.perf_counter()
        flash(q, k, v, 0.0, causal)
        fwd.append(1e3 * (time.perf_counter() - t0))
        time.sleep(0.01)
        t0 = time.perf_counter()
        flash_backward(dout, q, k, v, out, lse, 0.0, causal)
        bwd.append(1e3 * (time.perf_counter() - t0))
    return statistics.median(fwd), statistics.median(bwd)


def compare_sdpa(args):
    import torch

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "weft.json")
        env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
        quick = ["--quick"] if args.L == 1024 else []
        program = os.path.join(args.build, "bench", "sdpa")
        subprocess.run([program, "--reps", str(args.reps), "--json", path] + quick, env=env, check=True,
                       stdout=subprocess.DEVNULL)
        with open(path) as f:
            weft = {(r["workload"], r["variant"]): r["median_ms"] for r in json.load(f)["results"]}

    print(f"torch {torch.__version__}, {args.threads} threads, N=1 H=8, medians of {args.reps}; "
          f"torch's CPU flash kernels (aten ops), weft's bench/sdpa")
    print(f"{'shape':<30} {'weft fwd':>9} {'torch fwd':>9} {'speedup':>8}   {'weft bwd':>9} {'torch bwd':>9} {'speedup':>8}")
    print("-" * 90)
    for prefix, dtype in (("", torch.float32), ("bf16 ", torch.bfloat16)):
        for E in (64, 128):
            for causal in (False, True):
                name = f"{prefix}L=S={args.L} E={E}" + (" causal" if causal else "")
                tf, tb = torch_times(args.L, E, causal, args.reps, args.threads, dtype)
                wf, wb = weft[(name, "flash forward")], weft[(name, "flash backward")]
                print(f"{name:<30} {wf:9.2f} {tf:9.2f} {tf / wf:7.2f}x   {wb:9.2f} {tb:9.2f} {tb / wb:7.2f}x")
    print("ms per call; speedup = torch time / weft time (>= 1.0x: weft is faster)")


def compare_matmul(args):
    import torch

    torch.set_num_threads(args.threads)
    data = run_weft(args.build, "matmul_bf16", args.threads, False)
    weft = {r["workload"]: r["median_ms"] for r in data["results"] if r["variant"] == "weft matmul bf16"}
    print(f"torch {torch.__version__}, {args.threads} threads, bf16 matmul, medians of {args.reps}")
    print(f"{'shape':<16} {'weft ms':>9} {'torch ms':>9} {'speedup':>8}")
    print("-" * 46)
    for n in (512, 2048, 4096):
        name = f"bf16 {n}^3"
        if name not in weft:
            continue
        a = torch.rand(n, n, dtype=torch.bfloat16) * 2 - 1
        b = torch.rand(n, n, dtype=torch.bfloat16) * 2 - 1
        t = time_steps(lambda: torch.matmul(a, b), args.reps)
        print(f"{name:<16} {weft[name]:9.2f} {t:9.2f} {t / weft[name]:7.2f}x")
    print("speedup = torch time / weft time (>= 1.0x: weft is faster); the two run one after the other")


def compare_dense_fusion(args):
    import torch

    torch.set_num_threads(args.threads)
    data = run_weft(args.build, "dense_fusion", args.threads, args.quick)
    weft = {(r["workload"], r["variant"]): r["median_ms"] for r in data["results"]}
    print(f"torch {torch.__version__}, {args.threads} threads, fp32, medians of {args.reps}")
    print(f"{'workload':<36} {'weft fused':>10} {'torch':>9} {'speedup':>8}  torch variant")
    print("-" * 92)
    F = torch.nn.functional
    for n, k, m, transposed, name in ((4096, 1024, 4096, False, "gemm 4096x1024x4096"),
                                      (4096, 1024, 4096, True, "gemm 4096x1024x4096, w^T"),
                                      (1024, 768, 3072, True, "gemm 1024x768x3072, w^T (GPT-2 fc)")):
        w_ms = weft.get((name, "fused: gelu(matmul + b)"))
        if w_ms is None:
            continue
        x = torch.rand(n, k) * 2 - 1
        w = (torch.rand(m, k) * 2 - 1).t() if transposed else torch.rand(k, m) * 2 - 1
        b = torch.rand(m) * 8 - 4
        for label, fn in (("gelu(x @ w + b)", lambda: F.gelu(x @ w + b)),
                          ("gelu(addmm(b, x, w))", lambda: F.gelu(torch.addmm(b, x, w)))):
            t = time_steps(fn, args.reps)
            print(f"{name:<36} {w_ms:10.2f} {t:9.2f} {t / w_ms:7.2f}x  {label}")
    for dim, shape in ((0, (2048, 1024)), (-1, (1024, 2048))):
        name = f"cat dim {dim} tanh,sigmoid,exp [3 x {shape[0]}x{shape[1]}]"
        w_ms = weft.get((name, "weft cat(dim, p1, p2, p3)"))
        if w_ms is None:
            continue
        x, y = torch.rand(shape) * 8 - 4, torch.rand(shape) * 8 - 4
        z = torch.rand(shape) * 4 - 2
        fn = lambda: torch.cat([x * 0.5 + torch.tanh(x), torch.sigmoid(y) * y, torch.exp(z) - 1], dim)  # noqa: E731
        t = time_steps(fn, args.reps)
        print(f"{name:<36} {w_ms:10.2f} {t:9.2f} {t / w_ms:7.2f}x  torch.cat of 3 producers")
    print("ms per call; speedup = torch time / weft time (>= 1.0x: weft is faster); the two run one after the other")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", nargs="*", help="comparisons to run: optim, sdpa, matmul, dense_fusion (default: all)")
    ap.add_argument("--build", default=os.path.join(ROOT, "build", "release"), help="the weft build directory")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--quick", action="store_true", help="optim, dense_fusion: the weft program's quick mode")
    ap.add_argument("--L", type=int, default=2048, help="sdpa: sequence length (1024 runs the weft program's quick mode)")
    args = ap.parse_args()
    try:
        import torch  # noqa: F401
    except ImportError:
        print("torch is not installed: pip install torch (CPU wheel)")
        return 0
    comparisons = {"optim": compare_optim, "sdpa": compare_sdpa, "matmul": compare_matmul,
                   "dense_fusion": compare_dense_fusion}
    what = args.what or list(comparisons)
    unknown = [w for w in what if w not in comparisons]
    if unknown:
        ap.error(f"unknown comparison {unknown[0]!r}: choose one of {', '.join(comparisons)}")
    for i, name in enumerate(what):
        if i:
            print()
        comparisons[name](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
