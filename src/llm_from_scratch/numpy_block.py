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
from scipy.special import expit, ndtr

from .errors import ArgumentError

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


# --- the Chapter 10 decoder's training step, written out by hand ---------------------------------
#
# Embedding, N pre-norm blocks (LayerNorm, causal attention with interleaved RoPE, GELU
# feed-forward with biases), the final LayerNorm, the head tied to the embedding table,
# cross-entropy over the counted targets, every gradient by hand, global-norm clipping and AdamW:
# what ``training.loop.train`` does once per batch with ``Decoder(norm="layer",
# positions="rope", ffn="gelu")``, in plain numpy. ``python -m benchmarks train-step`` times the
# engine against it; ``tests/test_numpy_train_step.py`` checks it equal to the engine first.

LAYERNORM_EPS = 1e-5  # LayerNorm's default ε
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def _decoder_names(prefix: str, layers: int) -> list[str]:
    """The engine's parameter names of the Chapter 10 decoder, in its parameter order."""
    names = [f"{prefix}.embedding.weight"]
    for i in range(layers):
        b = f"{prefix}.blocks.{i}"
        names += [f"{b}.attention_norm.gain", f"{b}.attention_norm.bias"]
        names += [f"{b}.attention.{r}.weight" for r in ("query", "key", "value", "output")]
        names += [f"{b}.ffn_norm.gain", f"{b}.ffn_norm.bias"]
        names += [f"{b}.ffn.up.weight", f"{b}.ffn.up.bias", f"{b}.ffn.down.weight"]
        names += [f"{b}.ffn.down.bias"]
    return [*names, f"{prefix}.final_norm.gain", f"{prefix}.final_norm.bias"]


class DecoderStep:
    """One training step of the Chapter 10 decoder in numpy: forward, loss, backward by hand,
    clip, AdamW (θ ← θ(1 − ηλ) − η m̂ / (√v̂ + ε), decay on matrices only).

    ``params`` maps the engine's names (``Decoder.named_parameters()``) to arrays; they are
    copied, and updated in place by :meth:`step`.
    """

    def __init__(
        self,
        params: dict[str, np.ndarray],
        *,
        num_layers: int,
        num_heads: int,
        lr: float,
        betas: tuple[float, float],
        weight_decay: float,
        grad_clip: float,
        adam_eps: float = 1e-8,
        clip_eps: float = 1e-6,
        norm_eps: float = LAYERNORM_EPS,
        prefix: str = "decoder",
    ) -> None:
        self.names = _decoder_names(prefix, num_layers)
        missing = [n for n in self.names if n not in params]
        if missing or len(params) != len(self.names):
            raise ArgumentError(
                f"DecoderStep needs exactly the {len(self.names)} parameters of a {num_layers}-"
                f"block tied decoder named {prefix!r}; missing {missing[:3]}, got {len(params)}."
            )
        width = params[self.names[0]].shape[1]
        if num_heads < 1 or width % num_heads or (width // num_heads) % 2:
            raise ArgumentError(
                f"DecoderStep needs D = {width} split into num_heads = {num_heads} heads of an "
                "even width (RoPE rotates pairs)."
            )
        self.p = {n: np.array(params[n], dtype=np.float64) for n in self.names}
        self.prefix, self.layers, self.heads = prefix, num_layers, num_heads
        self.lr, self.betas, self.decay = float(lr), tuple(betas), float(weight_decay)
        self.grad_clip, self.adam_eps, self.clip_eps = float(grad_clip), adam_eps, clip_eps
        self.norm_eps = norm_eps
        self.t = 0
        self.m = {n: np.zeros_like(v) for n, v in self.p.items()}
        self.v = {n: np.zeros_like(v) for n, v in self.p.items()}
        self._tables: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    def _rope(self, tokens: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """cos, sin [T, d_h/2] of t·ω_j, ω_j = 10000^(−2j/d_h), and the causal block mask."""
        if tokens not in self._tables:
            dh = self.p[self.names[0]].shape[1] // self.heads
            cos, sin = rope_tables(tokens, dh)
            self._tables[tokens] = (cos, sin, np.triu(np.ones((tokens, tokens), dtype=bool), 1))
        return self._tables[tokens]

    def _norm(self, x, name):
        """LayerNorm over the last axis: (γ ⊙ x̂ + β, x̂, 1/r), x̂ = (x − μ)/r, r = √(σ² + ε)."""
        centred = x - x.mean(axis=-1, keepdims=True)
        inv = 1.0 / np.sqrt(np.mean(centred * centred, axis=-1, keepdims=True) + self.norm_eps)
        centred *= inv  # x̂
        out = centred * self.p[f"{name}.gain"]
        out += self.p[f"{name}.bias"]
        return out, centred, inv

    def _norm_back(self, dy, xhat, inv, name, g):
        """∂/∂x = (ĝ − mean ĝ − x̂ mean(ĝ x̂)) / r, ĝ = dy ⊙ γ; gain and bias gradients into g."""
        rows_dy, rows_hat = dy.reshape(-1, dy.shape[-1]), xhat.reshape(-1, xhat.shape[-1])
        g[f"{name}.gain"] = np.einsum("ij,ij->j", rows_dy, rows_hat)
        g[f"{name}.bias"] = rows_dy.sum(axis=0)
        gh = dy * self.p[f"{name}.gain"]
        inner = np.mean(gh * xhat, axis=-1, keepdims=True)
        gh -= gh.mean(axis=-1, keepdims=True)
        gh -= xhat * inner
        gh *= inv
        return gh

    def loss_and_gradients(
        self, inputs: np.ndarray, targets: np.ndarray, ignore_index: int | None = None
    ) -> tuple[float, dict[str, np.ndarray]]:
        """(mean cross-entropy over counted targets, {name: gradient}), backward by hand."""
        p, pre, heads = self.p, self.prefix, self.heads
        batch, tokens = inputs.shape
        table = p[f"{pre}.embedding.weight"]  # (V, D), tied with the head
        width = table.shape[1]
        dh = width // heads
        scale = 1.0 / math.sqrt(dh)
        cos, sin, blocked = self._rope(tokens)

        def split(z):  # (B, T, D) → (B, H, T, d_h), contiguous for BLAS
            return np.ascontiguousarray(z.reshape(batch, tokens, heads, dh).transpose(0, 2, 1, 3))

        def merge(z):  # (B, H, T, d_h) → (B·T, D)
            return z.transpose(0, 2, 1, 3).reshape(batch * tokens, width)

        def rope(z):  # pairs (2j, 2j + 1) rotated by t·ω_j
            a, b = z[..., 0::2], z[..., 1::2]
            out = np.empty_like(z)
            out[..., 0::2] = a * cos - b * sin
            out[..., 1::2] = a * sin + b * cos
            return out

        def unrope(dz):  # the rotation's transpose
            da, db = dz[..., 0::2], dz[..., 1::2]
            out = np.empty_like(dz)
            out[..., 0::2] = da * cos + db * sin
            out[..., 1::2] = db * cos - da * sin
            return out

        ids = inputs.reshape(-1)
        x = table[ids]  # (B·T, D) token rows
        saved = []
        for i in range(self.layers):
            b = f"{pre}.blocks.{i}"
            n1, hat1, inv1 = self._norm(x, f"{b}.attention_norm")
            q = rope(split(n1 @ p[f"{b}.attention.query.weight"]))  # (B, H, T, d_h)
            k = rope(split(n1 @ p[f"{b}.attention.key.weight"]))
            v = split(n1 @ p[f"{b}.attention.value.weight"])
            scores = q @ k.swapaxes(-1, -2)  # (B, H, T, T)
            scores *= scale
            np.copyto(scores, -np.inf, where=blocked)
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)  # the weights P
            merged = merge(scores @ v)  # (B·T, D)
            x1 = x + merged @ p[f"{b}.attention.output.weight"]
            n2, hat2, inv2 = self._norm(x1, f"{b}.ffn_norm")
            u = n2 @ p[f"{b}.ffn.up.weight"]  # (B·T, D_ff)
            u += p[f"{b}.ffn.up.bias"]
            cdf = ndtr(u)  # Φ(u)
            h = u * cdf  # GELU(u) = u Φ(u)
            x2 = h @ p[f"{b}.ffn.down.weight"]
            x2 += p[f"{b}.ffn.down.bias"]
            x2 += x1
            saved.append((n1, hat1, inv1, q, k, v, scores, merged, n2, hat2, inv2, u, cdf, h))
            x = x2
        nf, hatf, invf = self._norm(x, f"{pre}.final_norm")
        logits = nf @ table.T  # (B·T, V)
        # cross-entropy: −(1/N) Σ_counted log softmax(z)[y]
        y = targets.reshape(-1)
        counted = np.ones(y.shape, bool) if ignore_index is None else y != ignore_index
        rows = np.flatnonzero(counted)
        count = rows.size
        logits -= logits.max(axis=-1, keepdims=True)
        probs = np.exp(logits)
        total = probs.sum(axis=-1, keepdims=True)
        loss = float(np.sum(np.log(total[rows, 0]) - logits[rows, y[rows]]) / count)
        # backward: ∂loss/∂z = (softmax(z) − one-hot(y)) / N on counted rows, 0 elsewhere
        probs *= (counted / count)[:, None] / total
        probs[rows, y[rows]] -= 1.0 / count
        g: dict[str, np.ndarray] = {}
        grad_table = probs.T @ nf  # (V, D): the head's share
        dx = self._norm_back(probs @ table, hatf, invf, f"{pre}.final_norm", g)
        del probs, logits, nf
        for i in reversed(range(self.layers)):
            b = f"{pre}.blocks.{i}"
            n1, hat1, inv1, q, k, v, weights, merged, n2, hat2, inv2, u, cdf, h = saved.pop()
            # feed-forward branch: x2 = x1 + GELU(n2 W_up + b_up) W_down + b_down
            g[f"{b}.ffn.down.weight"] = h.T @ dx
            g[f"{b}.ffn.down.bias"] = dx.sum(axis=0)
            del h
            du = dx @ p[f"{b}.ffn.down.weight"].T  # ∂/∂GELU(u)
            slope = u * u  # GELU′(u) = Φ(u) + u φ(u)
            slope *= -0.5
            np.exp(slope, out=slope)
            slope *= _INV_SQRT_2PI
            slope *= u
            slope += cdf
            du *= slope
            del slope, u, cdf
            g[f"{b}.ffn.up.weight"] = n2.T @ du
            g[f"{b}.ffn.up.bias"] = du.sum(axis=0)
            dx += self._norm_back(du @ p[f"{b}.ffn.up.weight"].T, hat2, inv2, f"{b}.ffn_norm", g)
            del du, n2
            # attention branch: x1 = x + merge(P v) W_O
            g[f"{b}.attention.output.weight"] = merged.T @ dx
            dheads = split(dx @ p[f"{b}.attention.output.weight"].T)  # (B, H, T, d_h)
            dweights = dheads @ v.swapaxes(-1, -2)  # (B, H, T, T)
            dv = weights.swapaxes(-1, -2) @ dheads
            dweights -= np.sum(dweights * weights, axis=-1, keepdims=True)
            dweights *= weights  # ∂/∂scores
            dweights *= scale
            dq = merge(unrope(dweights @ k))
            dk = merge(unrope(dweights.swapaxes(-1, -2) @ q))
            dv = merge(dv)
            del dweights, weights, q, k, v
            g[f"{b}.attention.query.weight"] = n1.T @ dq
            g[f"{b}.attention.key.weight"] = n1.T @ dk
            g[f"{b}.attention.value.weight"] = n1.T @ dv
            dn1 = dq @ p[f"{b}.attention.query.weight"].T
            dn1 += dk @ p[f"{b}.attention.key.weight"].T
            dn1 += dv @ p[f"{b}.attention.value.weight"].T
            dx += self._norm_back(dn1, hat1, inv1, f"{b}.attention_norm", g)
        # the embedding's share: each token's row gradient added into its table row
        np.add.at(grad_table, ids, dx)
        g[f"{pre}.embedding.weight"] = grad_table
        return loss, {n: g[n] for n in self.names}

    def clip(self, grads: dict[str, np.ndarray]) -> float:
        """‖g‖ = √(Σ g²) over all gradients; if ‖g‖ > κ, g ← g κ / (‖g‖ + ε), in place."""
        total = math.sqrt(sum(float(np.vdot(g, g)) for g in grads.values()))
        coefficient = self.grad_clip / (total + self.clip_eps)
        if coefficient < 1.0:
            for g in grads.values():
                g *= coefficient
        return total

    def update(self, grads: dict[str, np.ndarray]) -> None:
        """AdamW: m, v moments; θ ← θ(1 − ηλ) − η/(1 − β₁ᵗ) · m / (√v / √(1 − β₂ᵗ) + ε)."""
        self.t += 1
        beta1, beta2 = self.betas
        step_size = self.lr / (1.0 - beta1**self.t)
        root_correction = math.sqrt(1.0 - beta2**self.t)
        for n, g in grads.items():
            p, m, v = self.p[n], self.m[n], self.v[n]
            m *= beta1
            m += (1.0 - beta1) * g
            v *= beta2
            g *= g
            g *= 1.0 - beta2
            v += g
            denominator = np.sqrt(v)
            denominator /= root_correction
            denominator += self.adam_eps
            if p.ndim >= 2:  # decay on matrices (and the table), not on gains and biases
                p *= 1.0 - self.lr * self.decay
            np.divide(m, denominator, out=denominator)
            denominator *= step_size
            p -= denominator

    def step(self, inputs: np.ndarray, targets: np.ndarray, ignore_index: int | None = None):
        """One training step: forward, loss, backward, clip, AdamW; returns the loss."""
        loss, grads = self.loss_and_gradients(inputs, targets, ignore_index)
        self.clip(grads)
        self.update(grads)
        return loss
