"""Figures for the chapter on the attention of current models: shared heads, windows, QK-norm.

Each chart has a pure data function (tested in ``tests/figures/test_current_attention.py``) and
a drawing function that returns a figure and never shows it:

- :func:`kv_head_reads` / :func:`grouping_figure`: which key/value head each query head of a
  layer reads, measured by perturbing one key/value head at a time;
- :func:`window_reach` / :func:`window_figure`: a sliding-window mask beside the number of input
  positions the last position depends on after 1 … N windowed layers, measured from gradients;
- :func:`logit_growth` / :func:`qk_norm_figure`: the largest attention logit of a layer with
  and without QK-norm as its query and key weights are scaled up;
- :func:`ablation_curves` / :func:`ablation_figure`: validation bits per character of stored
  training runs that differ only in the number of key/value heads.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..autodiff import Tensor, no_grad
from ..errors import ArgumentError, ShapeError
from ..nn.attention import MultiHeadAttention, sliding_window_mask
from ..random import SplitMix64
from .style import CYCLE, INK, LIGHT, MUTED, BookFigure, new_figure

__all__ = [
    "AblationCurves",
    "LogitGrowth",
    "WindowReach",
    "ablation_curves",
    "ablation_figure",
    "grouping_figure",
    "kv_head_reads",
    "logit_growth",
    "qk_norm_figure",
    "window_figure",
    "window_reach",
]


def _layer(attention: Any, what: str) -> MultiHeadAttention:
    if not isinstance(attention, MultiHeadAttention):
        raise ArgumentError(
            f"{what} needs a MultiHeadAttention layer; got {type(attention).__name__}."
        )
    return attention


def _rebuilt(layer: MultiHeadAttention, wq: np.ndarray, wk: np.ndarray) -> MultiHeadAttention:
    """The layer with W_Q and W_K replaced (W_V, W_O, QK-norm gains, positions kept)."""
    gains: dict[str, Any] = {}
    if layer.qk_norm:
        gains = {
            "query_norm_gain": layer.query_norm.gain.value,
            "key_norm_gain": layer.key_norm.gain.value,
        }
    return MultiHeadAttention.from_parameters(
        wq,
        wk,
        layer.value.weight.value,
        layer.output.weight.value,
        num_heads=layer.num_heads,
        num_kv_heads=layer.num_kv_heads,
        causal=layer.causal,
        window=layer.window,
        qk_norm=layer.qk_norm,
        positions=layer.positions,
        name=layer.name,
        **gains,
    )


def kv_head_reads(attention: MultiHeadAttention, tokens: int = 4, seed: int = 0) -> np.ndarray:
    """reads[h, g] = True when query head h's weights move as key head g's W_K columns move.

    Measured, not computed from the rule: each key head's d_h columns of W_K are scaled in turn
    and the per-head attention weights [H, T, T] on a random input are compared.
    """
    layer = _layer(attention, "kv_head_reads")
    if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 2:
        raise ArgumentError(f"kv_head_reads needs tokens >= 2 (an int); got {tokens!r}.")
    x = SplitMix64(seed).normal((1, tokens, layer.model_width))  # (1, T, D)
    wq, wk = layer.query.weight.value, layer.key.weight.value  # (D, D), (D, G·d_h)
    d_h = layer.head_width
    with no_grad():
        base = layer(x, average_weights=False)[1].value[0]  # (H, T, T)
        reads = np.zeros((layer.num_heads, layer.num_kv_heads), dtype=bool)
        for g in range(layer.num_kv_heads):
            moved = wk.copy()
            moved[:, g * d_h : (g + 1) * d_h] *= 3.0  # sharpen key head g's scores only
            weights = _rebuilt(layer, wq, moved)(x, average_weights=False)[1].value[0]
            reads[:, g] = np.abs(weights - base).reshape(layer.num_heads, -1).max(axis=1) > 1e-9
    return reads


def grouping_figure(reads: np.ndarray) -> BookFigure:
    """Query heads on top, key/value heads below, a line where query head h reads head g."""
    reads = np.asarray(reads, dtype=bool)
    if reads.ndim != 2 or 0 in reads.shape:
        raise ShapeError(f"grouping_figure needs reads [H, G] with H, G >= 1; got {reads.shape}.")
    heads, kv_heads = reads.shape
    fig, ax = new_figure(6.4, 2.8)
    top = np.linspace(0.0, 1.0, heads) if heads > 1 else np.array([0.5])
    bottom = np.linspace(0.1, 0.9, kv_heads) if kv_heads > 1 else np.array([0.5])
    for h, g in zip(*np.nonzero(reads), strict=True):
        ax.plot([top[h], bottom[g]], [1.0, 0.0], color=CYCLE[g % len(CYCLE)], linewidth=2.0)
    for h, x in enumerate(top):
        groups = np.nonzero(reads[h])[0]
        colour = CYCLE[groups[0] % len(CYCLE)] if groups.size == 1 else MUTED
        ax.plot([x], [1.0], "s", markersize=22, color="white", markeredgecolor=colour, mew=2)
        ax.text(x, 1.0, f"q{h}", ha="center", va="center", fontsize=11, color=INK)
    for g, x in enumerate(bottom):
        colour = CYCLE[g % len(CYCLE)]
        ax.plot([x], [0.0], "o", markersize=26, color=colour)
        ax.text(x, 0.0, f"kv{g}", ha="center", va="center", fontsize=11, color="white")
    ax.text(-0.08, 1.0, "query\nheads", ha="right", va="center", fontsize=11, color=MUTED)
    ax.text(-0.08, 0.0, "key/value\nheads", ha="right", va="center", fontsize=11, color=MUTED)
    ax.set_xlim(-0.35, 1.08)
    ax.set_ylim(-0.3, 1.3)
    ax.set_axis_off()
    ax.set_title(f"H = {heads} query heads over G = {kv_heads} key/value heads")
    fig.tight_layout()
    return fig


@dataclass(frozen=True)
class WindowReach:
    """Input positions the last of T positions depends on after 1 … N windowed layers."""

    window: int
    length: int
    depends: np.ndarray  # (N, T) bool: row n-1 after n layers, measured from gradients
    mask: np.ndarray  # (T, T) bool: True where query i may read key j (one layer)

    @property
    def reach(self) -> np.ndarray:
        """(N,) the number of positions the last one depends on after each depth."""
        return self.depends.sum(axis=1)


def window_reach(
    attention_layers: Sequence[MultiHeadAttention], tokens: int, seed: int = 0
) -> WindowReach:
    """Which inputs the last position's output depends on after each of the layers, stacked.

    Each layer adds its output to its input (a residual stream), as in a block; the dependence
    is where the gradient of the last position's output reaches a nonzero input row.
    """
    layers = [_layer(a, "window_reach") for a in attention_layers]
    if not layers:
        raise ArgumentError("window_reach needs at least one attention layer.")
    windows = {a.window for a in layers}
    if len(windows) != 1 or None in windows:
        raise ArgumentError(
            "window_reach needs layers sharing one sliding window; got windows "
            f"{sorted(windows, key=str)}."
        )
    if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 1:
        raise ArgumentError(f"window_reach needs tokens >= 1 (an int); got {tokens!r}.")
    width = layers[0].model_width
    x0 = SplitMix64(seed).normal((1, tokens, width))  # (1, T, D)
    depends = np.zeros((len(layers), tokens), dtype=bool)
    for depth in range(1, len(layers) + 1):
        x = Tensor(x0, requires_grad=True)
        h = x
        for layer in layers[:depth]:
            h = h + layer(h)[0]  # (1, T, D): residual stream
        h[0, tokens - 1].sum().backward()
        depends[depth - 1] = np.abs(x.grad[0]).max(axis=1) > 0.0
    window = int(next(iter(windows)))
    return WindowReach(window, tokens, depends, ~sliding_window_mask(tokens, tokens, window))


def window_figure(reach: WindowReach) -> BookFigure:
    """Left: the one-layer mask (who reads whom); right: the measured reach against depth."""
    fig, (left, right) = new_figure(6.7, 3.3, ncols=2)
    t = reach.length
    left.imshow(reach.mask, cmap="Greys", vmin=-0.3, vmax=1.3, interpolation="nearest")
    left.set_xlabel("key position j")
    left.set_ylabel("query position i")
    step = max(1, t // 6)
    left.set_xticks(range(0, t, step))
    left.set_yticks(range(0, t, step))
    left.set_title(f"window w = {reach.window}: dark = read")
    depths = np.arange(1, reach.depends.shape[0] + 1)
    right.plot(depths, reach.reach, "o-", color=CYCLE[0], label="measured")
    formula = np.minimum(depths * (reach.window - 1) + 1, t)
    right.plot(depths, formula, "--", color=CYCLE[1], label="N(w − 1) + 1")
    right.set_xlabel("layers N")
    right.set_ylabel("positions reached")
    right.set_xticks(depths)
    right.grid(True, color=LIGHT)
    right.legend(fontsize=10)
    right.set_title("what the last position sees")
    fig.tight_layout()
    return fig


@dataclass(frozen=True)
class LogitGrowth:
    """The largest |attention logit| at each weight scale, with and without QK-norm."""

    scales: np.ndarray  # (n,)
    plain: np.ndarray  # (n,)
    normed: np.ndarray  # (n,)
    bound: float  # √d_h · max|γ_q| · max|γ_k|, the QK-norm layer's bound


def _largest_logit(layer: MultiHeadAttention, x: np.ndarray) -> float:
    """max over heads and pairs of |q·k| / √d_h, q and k after QK-norm (if any) and positions."""
    q, k, _ = layer.project_heads(x)  # (B, H, T, d_h), (B, G, T, d_h)
    group = layer.num_heads // layer.num_kv_heads
    keys = np.repeat(k.value, group, axis=1)  # (B, H, T, d_h): head h reads g = h // (H/G)
    scores = q.value @ np.swapaxes(keys, -1, -2) / math.sqrt(layer.head_width)
    return float(np.abs(scores).max())


def logit_growth(
    plain: MultiHeadAttention, normed: MultiHeadAttention, scales: Sequence[float], x: Any
) -> LogitGrowth:
    """Scale W_Q and W_K of both layers by s and record each largest |logit|."""
    plain, normed = _layer(plain, "logit_growth"), _layer(normed, "logit_growth")
    if plain.qk_norm or not normed.qk_norm:
        raise ArgumentError("logit_growth needs a layer without QK-norm, then one with it.")
    factors = np.asarray(scales, dtype=np.float64)
    if factors.ndim != 1 or factors.size == 0 or not np.all(factors > 0):
        raise ArgumentError(f"scales must be a non-empty list of numbers > 0; got {scales!r}.")
    inputs = np.asarray(x, dtype=np.float64)
    rows: list[list[float]] = [[], []]
    with no_grad():
        for s in factors:
            for i, layer in enumerate((plain, normed)):
                wq, wk = layer.query.weight.value, layer.key.weight.value
                rows[i].append(_largest_logit(_rebuilt(layer, s * wq, s * wk), inputs))
    gains = np.abs(normed.query_norm.gain.value).max() * np.abs(normed.key_norm.gain.value).max()
    bound = math.sqrt(normed.head_width) * float(gains)
    return LogitGrowth(factors, np.array(rows[0]), np.array(rows[1]), bound)


def qk_norm_figure(growth: LogitGrowth) -> BookFigure:
    """Largest |logit| against the weight scale (log–log), with QK-norm's bound dashed."""
    fig, ax = new_figure(5.6, 3.4)
    ax.plot(growth.scales, growth.plain, "o-", color=CYCLE[1], label="without QK-norm")
    ax.plot(growth.scales, growth.normed, "s-", color=CYCLE[0], label="with QK-norm")
    ax.axhline(growth.bound, color=MUTED, linestyle="--", label="√d_h·max|γ_q|·max|γ_k|")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("scale s of W_Q and W_K (log)")
    ax.set_ylabel("largest |q·k| / √d_h (log)")
    ax.grid(True, color=LIGHT)
    ax.legend(fontsize=10)
    fig.tight_layout()
    return fig


@dataclass(frozen=True)
class AblationCurves:
    """Validation bits per character against step, one curve per stored run."""

    labels: tuple[str, ...]
    steps: tuple[np.ndarray, ...]
    bits: tuple[np.ndarray, ...]

    @property
    def final(self) -> np.ndarray:
        """(runs,) the last evaluation of each run."""
        return np.array([b[-1] for b in self.bits])


def ablation_curves(logs: Mapping[str, Mapping[str, Any]]) -> AblationCurves:
    """{label: training log} → each run's evaluations (step, validation bits per character)."""
    if not logs:
        raise ArgumentError("ablation_curves needs at least one training log.")
    labels, steps, bits = [], [], []
    for label, log in logs.items():
        evals = log.get("evals") if isinstance(log, Mapping) else None
        if not evals:
            raise ArgumentError(f"the log of {label!r} holds no evaluations ('evals').")
        labels.append(str(label))
        steps.append(np.array([e["step"] for e in evals], dtype=np.int64))
        bits.append(np.array([e["validation_bits_per_char"] for e in evals], dtype=np.float64))
    return AblationCurves(tuple(labels), tuple(steps), tuple(bits))


def ablation_figure(curves: AblationCurves, baseline: float | None = None) -> BookFigure:
    """Validation bits per character against step for each run; the bigram baseline dotted."""
    fig, ax = new_figure(5.6, 3.4)
    markers = "osD^v"
    for i, (label, s, b) in enumerate(zip(curves.labels, curves.steps, curves.bits, strict=True)):
        ax.plot(
            s,
            b,
            marker=markers[i % len(markers)],
            markersize=4,
            color=CYCLE[i % len(CYCLE)],
            label=label,
        )
    if baseline is not None:
        ax.axhline(baseline, color=MUTED, linestyle=":", label="bigram baseline")
    top = max(float(b[1]) if b.size > 1 else float(b[0]) for b in curves.bits)
    ax.set_ylim(min(float(b.min()) for b in curves.bits) - 0.1, top + 0.3)
    ax.set_xlabel("training step")
    ax.set_ylabel("validation bits per character")
    ax.grid(True, color=LIGHT)
    ax.legend(fontsize=10)
    fig.tight_layout()
    return fig
