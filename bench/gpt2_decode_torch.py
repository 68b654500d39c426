#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""PyTorch eager beside bench/gpt2_decode: GPT-2 (llm.c's layout: tied head, tanh GELU, pre-LayerNorm) decoding
token by token with a KV cache at the same shapes, float32, on the CPU with --threads threads, under
torch.inference_mode. The weights are GPT-2's initialization (normal, std 0.02; the residual projections'
scaled by 1 / sqrt(2 L)): decoding reads every weight once per step whatever their values.

  python3 bench/gpt2_decode_torch.py [--layers 12] [--tokens 64] [--batch 1] [--threads 2]

Decodes --tokens positions greedily from token 0 once untimed (warm-up), then once timed, and prints
`decode: X ms/step`; bench/gpt2_decode reads that line. PyTorch is for comparison only.
"""
import argparse
import math
import time

import torch
import torch.nn.functional as F


def make_weights(layers, c, vocab, seed=1337):
    g = torch.Generator().manual_seed(seed)
    normal = lambda *shape, std=0.02: torch.randn(*shape, generator=g) * std  # noqa: E731
    proj_std = 0.02 / math.sqrt(2 * layers)
    blocks = [dict(ln1w=torch.ones(c), ln1b=torch.zeros(c), qkvw=normal(3 * c, c), qkvb=torch.zeros(3 * c),
                   attprojw=normal(c, c, std=proj_std), attprojb=torch.zeros(c), ln2w=torch.ones(c),
                   ln2b=torch.zeros(c), fcw=normal(4 * c, c), fcb=torch.zeros(4 * c),
                   fcprojw=normal(c, 4 * c, std=proj_std), fcprojb=torch.zeros(c)) for _ in range(layers)]
    return dict(wte=normal(vocab, c), wpe=normal(1024, c), blocks=blocks, lnfw=torch.ones(c), lnfb=torch.zeros(c))


def step(w, tokens, t, keys, values, heads):
    """The logits [B, V] of tokens [B] at position t; their keys and values join the caches [B, NH, T, hs]."""
    b = tokens.shape[0]
    x = w["wte"][tokens] + w["wpe"][t]  # [B, C]
    c = x.shape[1]
    for l, p in enumerate(w["blocks"]):
        qkv = F.linear(F.layer_norm(x, (c,), p["ln1w"], p["ln1b"], 1e-5), p["qkvw"], p["qkvb"])
        q, k, v = qkv.view(b, 3, heads, 1, c // heads).unbind(1)
        keys[l][:, :, t:t + 1] = k
        values[l][:, :, t:t + 1] = v
        y = F.scaled_dot_product_attention(q, keys[l][:, :, :t + 1], values[l][:, :, :t + 1])
        x = x + F.linear(y.reshape(b, c), p["attprojw"], p["attprojb"])
        h = F.gelu(F.linear(F.layer_norm(x, (c,), p["ln2w"], p["ln2b"], 1e-5), p["fcw"], p["fcb"]),
                   approximate="tanh")
        x = x + F.linear(h, p["fcprojw"], p["fcprojb"])
    return F.linear(F.layer_norm(x, (c,), w["lnfw"], w["lnfb"], 1e-5), w["wte"])


def decode(w, layers, heads, c, batch, tokens):
    keys = [torch.empty(batch, heads, tokens, c // heads) for _ in range(layers)]
    values = [torch.empty(batch, heads, tokens, c // heads) for _ in range(layers)]
    nxt = torch.zeros(batch, dtype=torch.long)
    for t in range(tokens):
        nxt = step(w, nxt, t, keys, values, heads).argmax(dim=1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    c, heads, vocab = 768, 12, 50257
    w = make_weights(a.layers, c, vocab)
    with torch.inference_mode():
        decode(w, a.layers, heads, c, a.batch, a.tokens)  # warm-up
        start = time.perf_counter()
        decode(w, a.layers, heads, c, a.batch, a.tokens)
        ms = (time.perf_counter() - start) * 1e3
    print(f"decode: {ms / a.tokens:.3f} ms/step")


if __name__ == "__main__":
    main()
