"""The zoo: classic transformer mistakes, each a wrong variant of one real piece of the package.

Every entry names the piece, the chapter that builds it, the seam it replaces and the checks
that must catch it (``caught_by``; ``tests/bugs/test_bug_zoo.py`` asserts each claim). A wrong
variant is written the way the mistake is made in practice: with the engine's own ops, so its
gradient is the true gradient of the wrong function, and with the original's argument checks
kept, so nothing but the mistake changes. Adding a mutant is one entry in :data:`MUTANTS`.

``with bug("unbiased-layernorm-variance"): ...`` switches one on for the length of the block.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from ..autodiff import Tensor
from ..errors import ArgumentError
from .switch import Mutant, Switch, switched

__all__ = ["MUTANTS", "bug", "mutant"]

Wrong = Callable[[Any], Any]  # original piece → wrong replacement


def _tensor(x: Any) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(x)


# --- Chapter 1: the engine -----------------------------------------------------------------


def _overwritten_share(original: Any) -> Any:
    from ..autodiff.tensor import unbroadcast

    def _send(tensor: Tensor, share: np.ndarray, grads: dict[Tensor, np.ndarray]) -> None:
        """Deliver one gradient share, but replace what the tensor had: `=` where `+=` belongs."""
        if share.shape != tensor.value.shape:
            share = unbroadcast(share, tensor.value.shape)
        if tensor.is_leaf:
            tensor.grad = share.copy()  # the last share wins
        else:
            grads[tensor] = share

    return _send


# --- Chapter 2: linear layers --------------------------------------------------------------


def _bias_everywhere(original: Any) -> Any:
    def _build(self: Any, weight: np.ndarray, bias: np.ndarray | None, name: str) -> None:
        """Build the layer, giving a bias-free projection a (zero) bias after all."""
        original(self, weight, np.zeros(weight.shape[1]) if bias is None else bias, name)

    return _build


# --- Chapter 5: normalization ----------------------------------------------------------------


def _unbiased_variance(original: Any) -> Any:
    def layer_norm(x: Tensor, gain: Tensor, bias: Tensor, eps: float) -> Tensor:
        """(x − μ) / √(s² + ε) ⊙ γ + β with the sample variance s² = Σ(x − μ)² / (D − 1)."""
        width = x.shape[-1]
        centred = x - x.mean(axis=-1, keepdims=True)  # (..., D)
        variance = (centred * centred).sum(axis=-1, keepdims=True) * (1.0 / max(width - 1, 1))
        return centred / (variance + eps).sqrt() * gain + bias

    return layer_norm


def _statistics_over_positions(original: Any) -> Any:
    def layer_norm(x: Tensor, gain: Tensor, bias: Tensor, eps: float) -> Tensor:
        """Mean and variance per feature over every token (all axes but the last): batch norm."""
        axes = tuple(range(x.ndim - 1)) or (-1,)
        centred = x - x.mean(axis=axes, keepdims=True)  # (..., D)
        variance = (centred * centred).mean(axis=axes, keepdims=True)
        return centred / (variance + eps).sqrt() * gain + bias

    return layer_norm


# --- Chapter 6: multi-head attention ---------------------------------------------------------


def _split_by_reshape(original: Any) -> Any:
    def split_heads(x: Any, num_heads: int) -> Tensor:
        """[B, T, D] reshaped straight to [B, H, T, d_h]: the permute (0, 2, 1, 3) forgotten."""
        batch, heads, tokens, head_width = original(x, num_heads).shape  # the checks, the shape
        return _tensor(x).reshape(batch, heads, tokens, head_width)

    return split_heads


def _softmax_over_queries(original: Any) -> Any:
    def attention_weights(
        q: Tensor, k: Tensor, *bias: Tensor, scale: float, blocked: Any, added: Any
    ) -> Tensor:
        """softmax(q kᵀ / √d_h + masks) normalised down each key's column instead of each row."""
        scores = (q * scale) @ k.transpose(-2, -1)  # (B, H, L, S)
        if added is not None:
            scores = scores + added
        if bias:
            scores = scores + bias[0]
        if blocked is None:
            return scores.softmax(axis=-2)
        blocked = np.broadcast_to(blocked, scores.shape)
        weights = scores.masked_fill(blocked, -1e30).softmax(axis=-2)  # over queries
        return weights.masked_fill(blocked, 0.0)

    return attention_weights


def _unscaled(original: Any) -> Any:
    def attention_weights(
        q: Tensor, k: Tensor, *bias: Tensor, scale: float, blocked: Any, added: Any
    ) -> Tensor:
        """softmax(q kᵀ + masks): the scores never divided by √d_h."""
        return original(q, k, *bias, scale=1.0, blocked=blocked, added=added)

    return attention_weights


def _causal(offset: int | None) -> Wrong:
    """A causal mask shifted by ``offset`` diagonals (−1 blocks i = j, +1 opens j = i + 1)."""

    def make(original: Any) -> Any:
        def causal_mask(query_len: int, key_len: int) -> np.ndarray:
            """Boolean [L, S], True (blocked) where key j > (S − L) + i, off by the mistake."""
            right = original(query_len, key_len)  # the checks and the shape
            if offset is None:
                return np.zeros_like(right)  # nothing blocked
            queries, keys = right.shape
            return np.triu(np.ones((queries, keys), dtype=bool), k=keys - queries + 1 + offset)

        return causal_mask

    return make


# --- Chapter 7: positions --------------------------------------------------------------------


def _rotation_backwards(original: Any) -> Any:
    def pair_rotate(x: Tensor, cos: np.ndarray, sin: np.ndarray, partner: np.ndarray) -> Tensor:
        """Each pair turned by −θ: (a cos θ + b sin θ, −a sin θ + b cos θ)."""
        return original(x, cos=cos, sin=-np.asarray(sin), partner=partner)

    return pair_rotate


def _other_pairing(
    cos: np.ndarray, sin: np.ndarray, partner: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The same pair angles laid out for the other convention: (2j, 2j + 1) ↔ (j, j + d/2)."""
    cos, sin, partner = np.asarray(cos), np.asarray(sin), np.asarray(partner)
    width = partner.shape[-1]
    half = width // 2
    cos, sin = np.broadcast_arrays(cos, sin)
    if partner[0] == 1:  # interleaved tables → pairs (j, j + d/2)
        pair_cos = cos[..., 0::2]
        cos_full = np.concatenate([pair_cos, pair_cos], axis=-1)
        sin_signed = np.concatenate([sin[..., 0::2], sin[..., 1::2]], axis=-1)
        swap = np.concatenate([np.arange(half, width), np.arange(half)])
    else:  # half tables → pairs (2j, 2j + 1)
        cos_full = np.repeat(cos[..., :half], 2, axis=-1)
        sin_signed = np.stack([sin[..., :half], sin[..., half:]], axis=-1).reshape(sin.shape)
        swap = np.arange(width).reshape(half, 2)[:, ::-1].ravel()
    return cos_full, sin_signed, swap


def _wrong_pairing(original: Any) -> Any:
    def pair_rotate(x: Tensor, cos: np.ndarray, sin: np.ndarray, partner: np.ndarray) -> Tensor:
        """Rotate pairs (j, j + d/2) where the weights were laid out for (2j, 2j + 1)."""
        cos_full, sin_signed, swap = _other_pairing(cos, sin, partner)
        return original(x, cos=cos_full, sin=sin_signed, partner=swap)

    return pair_rotate


def _power_of_two_slopes(original: Any) -> Any:
    def alibi_slopes(num_heads: int) -> np.ndarray:
        """m_h = 2^(−8h/H) for every H, not only for powers of two."""
        heads = original(num_heads).shape[0]  # the checks
        return 2.0 ** (-8.0 * np.arange(1, heads + 1) / heads)

    return alibi_slopes


# --- Chapter 8: mixture of experts -----------------------------------------------------------


def _gates_not_renormalised(original: Any) -> Any:
    def top_k_gates(probabilities: Any, k: int) -> tuple[np.ndarray, Any]:
        """The k largest probabilities as gates, never divided by their sum."""
        selected, _ = original(probabilities, k)  # the same choice and the same checks
        if isinstance(probabilities, Tensor):
            experts = probabilities.shape[-1]
            flat = probabilities.reshape(-1, experts)  # (N, E)
            rows = np.arange(flat.shape[0])[:, None]
            chosen = flat[rows, selected.reshape(-1, k)]  # (N, k)
            return selected, chosen.reshape(*probabilities.shape[:-1], k)
        p = np.asarray(probabilities, dtype=np.float64)
        return selected, np.take_along_axis(p, selected, axis=-1)

    return top_k_gates


# --- Chapter 10: training --------------------------------------------------------------------


def _mean_over_padding(original: Any) -> Any:
    def cross_entropy(logits: Tensor, targets: Any, ignore_index: int | None = None) -> Tensor:
        """The summed loss of the counted targets divided by every target, padding included."""
        loss = original(logits, targets, ignore_index=ignore_index)
        if ignore_index is None:
            return loss
        y = np.asarray(targets.value if isinstance(targets, Tensor) else targets)
        return loss * (float(np.sum(y != ignore_index)) / y.size)  # Σ / N_counted → Σ / N_all

    return cross_entropy


def _coupled_decay(original: Any) -> Any:
    def step(self: Any) -> None:
        """Adam with L2: λθ added to the gradient before the moments, no decoupled shrink."""
        grads = self._gradients()
        for group in self.param_groups:
            lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
            decay = group["weight_decay"]
            for p in group["params"]:
                if id(p) not in grads:
                    continue
                g = grads[id(p)] + decay * p.value  # the decay enters m and v
                state = self.state.get(id(p))
                if state is None:
                    state = {
                        "step": 0.0,
                        "exp_avg": np.zeros(p.shape),
                        "exp_avg_sq": np.zeros(p.shape),
                    }
                t = state["step"] + 1.0
                m = beta1 * state["exp_avg"] + (1.0 - beta1) * g
                v = beta2 * state["exp_avg_sq"] + (1.0 - beta2) * (g * g)
                self.state[id(p)] = {"step": t, "exp_avg": m, "exp_avg_sq": v}
                step_size = lr / (1.0 - beta1**t)
                denominator = np.sqrt(v) / np.sqrt(1.0 - beta2**t) + eps
                p.value = p.value - step_size * (m / denominator)

    return step


# --- Chapter 11: generation ------------------------------------------------------------------


def _positions_restart(original: Any) -> Any:
    def start(self: Any, positions: Any, *rest: Any) -> None:
        """Every pass numbers its tokens 0, 1, …, as if each step began a new sequence."""
        array = np.asarray(positions)
        if array.ndim == 2:
            array = np.broadcast_to(np.arange(array.shape[1]), array.shape)
        original(self, array, *rest)

    return start


# --- Chapter 12: the attention of current models ----------------------------------------


def _groups_interleaved(original: Any) -> Any:
    def _grouped_attention(q: Tensor, k: Tensor, v: Tensor, masks: Any, bias: Any) -> Any:
        """Query head h reads key/value head h mod G instead of h // (H / G)."""
        batch, heads, queries, width = q.shape
        kv_heads = k.shape[1]
        group = heads // kv_heads
        # head h = r·G + g moves to g·(H/G) + r, where the right grouping reads head g
        mixed = q.reshape(batch, group, kv_heads, queries, width).permute(0, 2, 1, 3, 4)
        out, weights = original(mixed.reshape(q.shape), k, v, masks, bias)
        back = out.reshape(batch, kv_heads, group, queries, out.shape[-1]).permute(0, 2, 1, 3, 4)
        keys = weights.shape[-1]
        w = weights.reshape(batch, kv_heads, group, queries, keys).permute(0, 2, 1, 3, 4)
        return back.reshape(out.shape), w.reshape(weights.shape)

    return _grouped_attention


def _window_one_wider(original: Any) -> Any:
    def sliding_window_mask(query_len: int, key_len: int, window: int) -> np.ndarray:
        """Blocked unless p − w − 1 < j <= p: the query sees w + 1 keys, one too many."""
        original(query_len, key_len, window)  # the checks
        return original(query_len, key_len, window + 1)

    return sliding_window_mask


def _qk_norm_after_rope(original: Any) -> Any:
    def project_heads(self: Any, x: Any, positions: Any = None) -> tuple[Tensor, Tensor, Tensor]:
        """q and k rotated first and normalised after: RMSNorm's per-coordinate gain then acts
        on rotated coordinates (without gains, norm and rotation would commute)."""
        if self.query_norm is None or self.positions is None:
            return original(self, x, positions)
        query_norm, key_norm = self.query_norm, self.key_norm
        try:
            self.query_norm = self.key_norm = None  # the projections and the rotation alone
            q, k, v = original(self, x, positions)
        finally:
            self.query_norm, self.key_norm = query_norm, key_norm
        return query_norm(q), key_norm(k), v

    return project_heads


# --- the catalogue ---------------------------------------------------------------------------


def _entry(
    name: str, chapter: int, piece: str, wrong: str, seam: str, make: Wrong, caught_by: set[str]
) -> tuple[str, Mutant]:
    return name, Mutant(name, chapter, piece, wrong, seam, make, frozenset(caught_by))


OPS = "llm_from_scratch.autodiff.ops"
ATTENTION = "llm_from_scratch.nn.attention"

MUTANTS: dict[str, Mutant] = dict(
    [
        _entry(
            "gradient-overwritten-at-shared-tensor",
            1,
            "gradient accumulation in backward",
            "a tensor used twice keeps only the last gradient share instead of their sum",
            "llm_from_scratch.autodiff.tensor:_send",
            _overwritten_share,
            {"gradcheck", "known-values", "numpy-block"},
        ),
        _entry(
            "bias-in-bias-free-projection",
            2,
            "a bias-free projection",
            "Linear(..., bias=False) gets a (zero-initialised) bias anyway",
            "llm_from_scratch.nn.linear:Linear._build",
            _bias_everywhere,
            {"known-values"},
        ),
        _entry(
            "unbiased-layernorm-variance",
            5,
            "LayerNorm's variance",
            "the sample variance Σ(x − μ)²/(D − 1) instead of the population variance /D",
            f"{OPS}:layer_norm",
            _unbiased_variance,
            {"known-values"},
        ),
        _entry(
            "layernorm-over-positions",
            5,
            "LayerNorm's axis",
            "statistics per feature over the tokens (batch norm's axes) instead of per token",
            f"{OPS}:layer_norm",
            _statistics_over_positions,
            {
                "known-values",
                "position-independence",
                "causal-prefix",
                "norm-scale-invariance",
                "cache-equality",
            },
        ),
        _entry(
            "heads-split-by-reshape",
            6,
            "the head split",
            "[B, T, D] reshaped straight to [B, H, T, d_h], without the permute",
            f"{ATTENTION}:split_heads",
            _split_by_reshape,
            {
                "known-values",
                "causal-prefix",
                "permutation-equivariance",
                "numpy-block",
                "cache-equality",
            },
        ),
        _entry(
            "softmax-over-queries",
            6,
            "the softmax axis of attention",
            "the attention softmax taken over the query axis instead of the key axis",
            f"{OPS}:attention_weights",
            _softmax_over_queries,
            {"causal-prefix", "rows-sum-to-one", "numpy-block", "cache-equality"},
        ),
        _entry(
            "unscaled-scores",
            6,
            "the 1/√d_k scale",
            "scores q·k used without dividing by √d_k",
            f"{OPS}:attention_weights",
            _unscaled,
            {"numpy-block"},
        ),
        _entry(
            "causal-mask-missing",
            6,
            "the causal mask",
            "no causal mask: every query sees every key",
            f"{ATTENTION}:causal_mask",
            _causal(None),
            {"causal-prefix", "numpy-block", "cache-equality", "induction-loss"},
        ),
        _entry(
            "causal-mask-blocks-diagonal",
            6,
            "the causal mask",
            "off by one: query t may not read key t (its own position)",
            f"{ATTENTION}:causal_mask",
            _causal(-1),
            {"rows-sum-to-one", "numpy-block", "cache-equality"},
        ),
        _entry(
            "causal-mask-sees-next",
            6,
            "the causal mask",
            "off by one: query t also reads key t + 1",
            f"{ATTENTION}:causal_mask",
            _causal(+1),
            {"causal-prefix", "numpy-block", "cache-equality", "induction-loss"},
        ),
        _entry(
            "rope-sign-flipped",
            7,
            "RoPE's rotation",
            "every pair rotated by −θ instead of θ",
            f"{OPS}:pair_rotate",
            _rotation_backwards,
            {"known-values", "numpy-block"},
        ),
        _entry(
            "rope-wrong-pairing",
            7,
            "RoPE's pairing",
            "pairs (r, r + d/2) rotated where the weights expect (2r, 2r + 1)",
            f"{OPS}:pair_rotate",
            _wrong_pairing,
            {"known-values", "numpy-block"},
        ),
        _entry(
            "alibi-power-of-two-slopes",
            7,
            "ALiBi's slopes",
            "m_h = 2^(−8h/H) even when H is not a power of two",
            "llm_from_scratch.nn.positions:alibi_slopes",
            _power_of_two_slopes,
            {"known-values"},
        ),
        _entry(
            "moe-gates-not-renormalised",
            8,
            "the top-k gates",
            "the k largest router probabilities used as gates without dividing by their sum",
            "llm_from_scratch.nn.moe:top_k_gates",
            _gates_not_renormalised,
            {"known-values", "rows-sum-to-one"},
        ),
        _entry(
            "cross-entropy-over-padding",
            10,
            "the cross-entropy mean",
            "the loss summed over counted targets but divided by every target, padding included",
            "llm_from_scratch.training.loss:cross_entropy",
            _mean_over_padding,
            {"known-values", "induction-loss"},
        ),
        _entry(
            "adam-coupled-weight-decay",
            10,
            "AdamW's weight decay",
            "λθ added to the gradient (L2, inside the moments) instead of decoupled decay",
            "llm_from_scratch.training.optim:AdamW.step",
            _coupled_decay,
            {"known-values"},
        ),
        _entry(
            "kv-cache-positions-restart",
            11,
            "the key/value cache's positions",
            "every decoding step numbers its new token 0 instead of its place in the sequence",
            "llm_from_scratch.generation.cache:KVCache.start",
            _positions_restart,
            {"cache-equality"},
        ),
        _entry(
            "gqa-groups-interleaved",
            12,
            "grouped-query attention's sharing",
            "query head h reads key/value head h mod G instead of h // (H / G)",
            f"{ATTENTION}:_grouped_attention",
            _groups_interleaved,
            {"grouped-heads"},
        ),
        _entry(
            "window-one-too-wide",
            12,
            "the sliding window",
            "off by one: a query sees w + 1 keys (itself and w before it) instead of w",
            f"{ATTENTION}:sliding_window_mask",
            _window_one_wider,
            {"window-mask", "cache-equality"},
        ),
        _entry(
            "qk-norm-after-rope",
            12,
            "the QK-norm's place",
            "RMSNorm applied to queries and keys after RoPE rotates them instead of before",
            f"{ATTENTION}:MultiHeadAttention.project_heads",
            _qk_norm_after_rope,
            {"qk-norm-order"},
        ),
    ]
)


def mutant(name: str) -> Mutant:
    """The catalogue entry called ``name`` (ArgumentError naming every entry otherwise)."""
    if not isinstance(name, str) or name not in MUTANTS:
        listed = ", ".join(MUTANTS)
        raise ArgumentError(
            f"bug() switches on a mutant of the catalogue by name; got {name!r}. The catalogue "
            f"holds: {listed}."
        )
    return MUTANTS[name]


@contextmanager
def bug(name: str) -> Iterator[Switch]:
    """Switch the mutant ``name`` on inside the block; the original piece is back on any exit."""
    with switched(mutant(name)) as switch:
        yield switch
