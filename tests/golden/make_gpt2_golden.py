#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes a small random GPT-2 and its reference training run, in llm.c's file formats, under
tests/golden/gpt2/, for `gpt2 test` (examples/gpt2):

  model.bin   the checkpoint: 256 int32 header (magic 20240326, version 3, max_seq_len, vocab,
              layers, heads, channels, padded vocab), then the 16 parameter tensors in float32, in
              llm.c's order (wte [Vp, C] with zero padding rows, wpe, ln1w, ln1b, qkvw, qkvb,
              attprojw, attprojb, ln2w, ln2b, fcw, fcb, fcprojw, fcprojb, lnfw, lnfb; the per-layer
              tensors stacked over layers, linear weights as [out, in]);
  state.bin   the debug state: 256 int32 header (magic 20240327, version 2, B, T), then x and y
              (int32 [B, T]), the logits over the real vocabulary (float32 [B, T, V]), the mean
              loss, and the gradients of the 16 tensors in checkpoint order (float32);
  losses.txt  the loss of each of 10 AdamW steps on that batch (lr 1e-4, betas 0.9/0.999,
              eps 1e-8, weight decay 0.01 on every parameter), one per line;
  tokens.bin  a token file (256 int32 header: magic 20240520, version 1, count; then uint16
              tokens) for `gpt2 train`: a random phrase repeated.

The model is llm.c's GPT-2: token + position embeddings, pre-LayerNorm blocks with causal
attention and a tanh-approximated GELU MLP, a final LayerNorm and an LM head tied to wte, mean
cross-entropy. It runs in float64 from float32-rounded initial values, so the reference carries
no float32 rounding of its own (the C++ side runs in float32).

Run: python3 tests/golden/make_gpt2_golden.py   (needs torch; the tests do not)
"""
import math
import os
import struct

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "gpt2")

# Odd sizes on purpose: a head size of 12 and T = 17 leave SIMD tails everywhere.
V, VP, MAX_T, L, H, C = 101, 128, 24, 2, 4, 48
B, T = 3, 17
STEPS = 10
LR, BETAS, EPS, WD = 1e-4, (0.9, 0.999), 1e-8, 0.01

NAMES = ["wte", "wpe", "ln1w", "ln1b", "qkvw", "qkvb", "attprojw", "attprojb",
         "ln2w", "ln2b", "fcw", "fcb", "fcprojw", "fcprojb", "lnfw", "lnfb"]


def init_params(gen):
    """GPT-2's initialization (std 0.02, residual projections scaled by 1/sqrt(2 L)); LayerNorm
    weights and biases random around 1 and 0 so that their gradients are tested, not trivial."""
    def normal(*shape, std=0.02):
        return torch.randn(*shape, generator=gen) * std
    proj = 0.02 / math.sqrt(2 * L)
    p = {
        "wte": normal(V, C), "wpe": normal(MAX_T, C),
        "ln1w": 1 + normal(L, C, std=0.1), "ln1b": normal(L, C, std=0.1),
        "qkvw": normal(L, 3 * C, C), "qkvb": normal(L, 3 * C),
        "attprojw": normal(L, C, C, std=proj), "attprojb": normal(L, C),
        "ln2w": 1 + normal(L, C, std=0.1), "ln2b": normal(L, C, std=0.1),
        "fcw": normal(L, 4 * C, C), "fcb": normal(L, 4 * C),
        "fcprojw": normal(L, C, 4 * C, std=proj), "fcprojb": normal(L, C),
        "lnfw": 1 + normal(C, std=0.1), "lnfb": normal(C, std=0.1),
    }
    # float32-rounded values, computed with in float64
    return {k: v.float().double().requires_grad_() for k, v in p.items()}


def forward(p, x, y, vocab=V, layers=L, heads=H):
    """llm.c's GPT-2 over parameters p (the 16 tensors by name; wte may have padding rows past
    `vocab`). Returns (logits over the real vocabulary [B, T, vocab], mean loss against y)."""
    bsz, t = x.shape
    c = p["wpe"].shape[1]
    h = p["wte"][x] + p["wpe"][:t]
    for l in range(layers):
        a = F.layer_norm(h, (c,), p["ln1w"][l], p["ln1b"][l], 1e-5)
        qkv = a @ p["qkvw"][l].T + p["qkvb"][l]
        q, k, v = (z.view(bsz, t, heads, c // heads).transpose(1, 2) for z in qkv.split(c, dim=-1))
        att = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        att = att.transpose(1, 2).reshape(bsz, t, c)
        h = h + att @ p["attprojw"][l].T + p["attprojb"][l]
        a = F.layer_norm(h, (c,), p["ln2w"][l], p["ln2b"][l], 1e-5)
        m = F.gelu(a @ p["fcw"][l].T + p["fcb"][l], approximate="tanh")
        h = h + m @ p["fcprojw"][l].T + p["fcprojb"][l]
    h = F.layer_norm(h, (c,), p["lnfw"], p["lnfb"], 1e-5)
    logits = (h @ p["wte"].T)[..., :vocab]
    loss = F.cross_entropy(logits.reshape(-1, vocab), y.reshape(-1))
    return logits, loss


def header(magic, version, *fields):
    ints = [magic, version, *fields]
    return struct.pack("<256i", *(ints + [0] * (256 - len(ints))))


def padded_wte(t):
    """wte with the rows from V to VP zero, as llm.c writes it."""
    out = torch.zeros(VP, C, dtype=t.dtype)
    out[:V] = t
    return out


def flat(tensors):
    parts = [padded_wte(tensors["wte"]) if name == "wte" else tensors[name] for name in NAMES]
    return torch.cat([t.detach().reshape(-1) for t in parts]).float().numpy().tobytes()


def main():
    os.makedirs(OUT, exist_ok=True)
    gen = torch.Generator().manual_seed(20240326)
    p = init_params(gen)
    x = torch.randint(0, V, (B, T), generator=gen)
    y = torch.randint(0, V, (B, T), generator=gen)

    with open(os.path.join(OUT, "model.bin"), "wb") as f:
        f.write(header(20240326, 3, MAX_T, V, L, H, C, VP))
        f.write(flat(p))

    logits, loss = forward(p, x, y)
    loss.backward()
    grads = {k: v.grad for k, v in p.items()}
    with open(os.path.join(OUT, "state.bin"), "wb") as f:
        f.write(header(20240327, 2, B, T))
        f.write(x.to(torch.int32).numpy().tobytes())
        f.write(y.to(torch.int32).numpy().tobytes())
        f.write(logits.detach().float().numpy().tobytes())
        f.write(struct.pack("<f", loss.item()))
        f.write(flat(grads))

    # 10 steps of torch.optim.AdamW on that batch (its decoupled decay p *= 1 - lr wd equals llm.c's
    # p -= lr (m_hat / (sqrt(v_hat) + eps) + wd p)), the loss printed before each update.
    for v in p.values():
        v.grad = None
    opt = torch.optim.AdamW(p.values(), lr=LR, betas=BETAS, eps=EPS, weight_decay=WD)
    losses = []
    for _ in range(STEPS):
        opt.zero_grad()
        _, loss = forward(p, x, y)
        loss.backward()
        losses.append(loss.item())
        opt.step()
    with open(os.path.join(OUT, "losses.txt"), "w") as f:
        f.write("".join(f"{v:.9f}\n" for v in losses))

    # A random phrase of 40 tokens repeated: a model that trains learns to predict it, so the
    # loss of `gpt2 train` on this file falls well below log(V).
    phrase = torch.randint(0, V, (40,), generator=gen)
    tokens = phrase.repeat(100).to(torch.int16)  # < V <= 32767
    with open(os.path.join(OUT, "tokens.bin"), "wb") as f:
        f.write(header(20240520, 1, tokens.numel()))
        f.write(tokens.numpy().tobytes())
    print("wrote", OUT, "loss", losses[0], "->", losses[-1])


if __name__ == "__main__":
    main()
