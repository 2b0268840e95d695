"""The pre-norm block written out in numpy, with its backward derived by hand.

RMSNorm, causal multi-head attention with RoPE, SwiGLU, two residual adds: the same block as
``TransformerBlock(norm="rms", positions="rope", ffn="swiglu")``, in plain array code. It is the
reference the engine is measured against (``python -m benchmarks``) and checked against
(``tests/test_benchmarks.py``, the bug zoo's ``numpy-block`` check): one copy, here.
Parameters are a dict keyed by :data:`NAMES`, in the engine's parameter order.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import expit

EPS = 1e-6  # RMSNorm's default ε
NAMES = ("g1", "wq", "wk", "wv", "wo", "g2", "wg", "wu", "wd")


def rope_tables(tokens: int, head_width: int) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin of t·ω_j, ω_j = 10000^(−2j/d_h): [T, d_h/2]."""
    frequencies = 10000.0 ** (-np.arange(0, head_width, 2) / head_width)
    angles = np.arange(tokens)[:, None] * frequencies
    return np.cos(angles), np.sin(angles)


def forward(xp, p, x, heads):
    """The block in plain array code (xp is numpy or autograd.numpy); returns output, saved."""
    batch, tokens, width = x.shape
    dh = width // heads
    cos, sin = rope_tables(tokens, dh)
    blocked = np.triu(np.ones((tokens, tokens), dtype=bool), 1)

    def rms(z, g):
        r = 1.0 / xp.sqrt(xp.mean(z * z, axis=-1, keepdims=True) + EPS)
        return z * r * g, r

    def split(z):  # numpy: made contiguous, so the batched products below run on BLAS
        heads_view = xp.transpose(xp.reshape(z, (batch, tokens, heads, dh)), (0, 2, 1, 3))
        return np.ascontiguousarray(heads_view) if xp is np else heads_view

    def rope(z):
        a, b = z[..., 0::2], z[..., 1::2]
        rotated = xp.stack([a * cos - b * sin, a * sin + b * cos], axis=-1)
        return xp.reshape(rotated, z.shape)

    n1, r1 = rms(x, p["g1"])
    q, k, v = (rope(split(n1 @ p["wq"])), rope(split(n1 @ p["wk"])), split(n1 @ p["wv"]))
    scores = xp.where(blocked, -np.inf, (q @ xp.swapaxes(k, -1, -2)) / math.sqrt(dh))
    e = xp.exp(scores - xp.max(scores, axis=-1, keepdims=True))
    weights = e / xp.sum(e, axis=-1, keepdims=True)
    merged = xp.reshape(xp.transpose(weights @ v, (0, 2, 1, 3)), (batch, tokens, width))
    x1 = x + merged @ p["wo"]
    n2, r2 = rms(x1, p["g2"])
    a_gate = n2 @ p["wg"]
    s = 1.0 / (1.0 + xp.exp(-a_gate)) if xp is not np else expit(a_gate)
    u = n2 @ p["wu"]
    h = a_gate * s * u
    out = x1 + h @ p["wd"]
    saved = (n1, r1, q, k, v, weights, merged, x1, n2, r2, a_gate, s, u, h, cos, sin)
    return out, saved


def handwritten(p, x, seed, heads):
    """Forward, then every gradient by hand: returns (grads by name, grad of x).

    Like a careful hand-written backward, it lets each saved forward array go right after its
    last use (``del``), so its peak memory is the practical floor the engine is compared with.
    """
    batch, tokens, width = x.shape
    dh = width // heads
    out, saved = forward(np, p, x, heads)
    del out
    n1, r1, q, k, v, weights, merged, x1, n2, r2, a_gate, s, u, h, cos, sin = saved
    del saved
    g = {}
    rows = lambda z: z.reshape(-1, z.shape[-1])  # noqa: E731

    def rms_back(dn, z, r, gain):
        zhat = z * r
        g_gain = (dn * zhat).reshape(-1, width).sum(0)
        dzhat = dn * gain
        dz = r * (dzhat - zhat * np.mean(dzhat * zhat, axis=-1, keepdims=True))
        return dz, g_gain

    def merge(z):
        return z.transpose(0, 2, 1, 3).reshape(batch, tokens, width)

    def unrope(dz):
        da, db = dz[..., 0::2], dz[..., 1::2]
        back = np.empty_like(dz)
        back[..., 0::2] = da * cos + db * sin
        back[..., 1::2] = -da * sin + db * cos
        return back

    dx1 = seed.copy()
    # SwiGLU branch: out = x1 + h Wd, h = A σ(A) U
    g["wd"] = rows(h).T @ rows(seed)
    del h
    dh_ = seed @ p["wd"].T
    silu = a_gate * s
    g["wu"] = rows(n2).T @ rows(dh_ * silu)
    da = dh_ * u * (s + a_gate * s * (1.0 - s))
    del a_gate, s
    g["wg"] = rows(n2).T @ rows(da)
    del n2
    dn2 = da @ p["wg"].T
    del da
    dn2 += (dh_ * silu) @ p["wu"].T
    del dh_, silu, u
    dz, g["g2"] = rms_back(dn2, x1, r2, p["g2"])
    del dn2, x1
    dx1 += dz
    del dz
    # attention branch: x1 = x + merged Wo
    g["wo"] = rows(merged).T @ rows(dx1)
    del merged
    dmerged = (dx1 @ p["wo"].T).reshape(batch, tokens, heads, dh).transpose(0, 2, 1, 3)
    dmerged = np.ascontiguousarray(dmerged)  # (B, H, T, d_h), BLAS-ready
    dweights = dmerged @ v.swapaxes(-1, -2)
    dv = weights.swapaxes(-1, -2) @ dmerged
    del dmerged, v
    dweights -= np.sum(dweights * weights, axis=-1, keepdims=True)
    dweights *= weights  # now the gradient of the scores
    del weights
    dweights /= math.sqrt(dh)
    dq = merge(unrope(dweights @ k))
    dk = merge(unrope(dweights.swapaxes(-1, -2) @ q))
    del dweights, q, k
    dv = merge(dv)
    g["wq"], g["wk"], g["wv"] = (rows(n1).T @ rows(d) for d in (dq, dk, dv))
    del n1
    dn1 = dq @ p["wq"].T
    dn1 += dk @ p["wk"].T
    dn1 += dv @ p["wv"].T
    del dq, dk, dv
    dz, g["g1"] = rms_back(dn1, x, r1, p["g1"])
    dx1 += dz
    return g, dx1
