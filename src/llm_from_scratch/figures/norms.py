"""Figures for the normalization chapter, each from values the package computed.

- :func:`scaling_curves` / :func:`scaling_figure`: the root mean square of N(c·x) as the input
  is scaled by c > 0; flat where the norm ignores scale, bending down where ε takes over;
- :func:`stack_input_gradient_norms` / :func:`gradient_paths_figure`: the size of the gradient
  that reaches the input of a stack of N residual blocks, pre-norm against post-norm, for
  N = 1, 2, …, built from the same (norm, branch) parameters in both orderings.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from ..autodiff import Tensor
from ..nn.residual import Ordering, post_norm, pre_norm
from .style import MUTED, PALETTE, BookFigure, new_figure

__all__ = [
    "gradient_paths_figure",
    "root_mean_square",
    "scaling_curves",
    "scaling_figure",
    "stack_input_gradient_norms",
]

Layer = Callable[[Tensor], Tensor]

_ORDERING_STYLE = {
    "pre": {"color": PALETTE.blue, "marker": "o"},
    "post": {"color": PALETTE.vermillion, "marker": "s"},
}
_LINESTYLES = ("-", "--", ":", "-.")


def root_mean_square(values: np.ndarray) -> np.ndarray:
    """√(mean of squares) over the last axis."""
    values = np.asarray(values, dtype=np.float64)
    return np.sqrt((values * values).mean(axis=-1))


def scaling_curves(
    x: np.ndarray, scales: Sequence[float], norms: Mapping[str, Layer]
) -> dict[str, np.ndarray]:
    """For each label: RMS of norm(c·x) for every c in ``scales`` (x one token, shape [D])."""
    x = np.asarray(x, dtype=np.float64)
    curves = {"input c·x": np.array([root_mean_square(c * x) for c in scales])}
    for label, norm in norms.items():
        curves[label] = np.array([root_mean_square(norm(Tensor(c * x)).value) for c in scales])
    return curves


def scaling_figure(scales: Sequence[float], curves: Mapping[str, np.ndarray]) -> BookFigure:
    """Log–log: RMS of each curve against the scale c."""
    fig, ax = new_figure(6.4, 3.6)
    colours = (PALETTE.black, PALETTE.blue, PALETTE.vermillion, PALETTE.bluish_green)
    for k, (label, values) in enumerate(curves.items()):
        ax.loglog(
            scales,
            values,
            label=label,
            color=colours[k % len(colours)],
            ls=_LINESTYLES[k % len(_LINESTYLES)],
        )
    ax.set_xlabel("scale c applied to the token")
    ax.set_ylabel("root mean square of the output")
    ax.grid(True, which="major")
    ax.legend(loc="upper left")
    fig.tight_layout()
    return fig


def stack_input_gradient_norms(
    parts: Sequence[tuple[Layer, Layer]],
    x: np.ndarray,
    upstream: np.ndarray,
    ordering: Ordering,
) -> np.ndarray:
    """‖∂(Σ upstream ⊙ stack_N(x))/∂x‖ for N = 1 … len(parts), stack_N the first N blocks.

    Block k is pre_norm(·, norm_k, branch_k) or post_norm(·, norm_k, branch_k): the same
    parameters in either ordering.
    """
    rule = {"pre": pre_norm, "post": post_norm}[ordering]
    upstream = np.asarray(upstream, dtype=np.float64)
    norms = []
    for depth in range(1, len(parts) + 1):
        leaf = Tensor(x, requires_grad=True)
        h = leaf
        for norm, branch in parts[:depth]:
            h = rule(h, norm, branch)
        h.backward(upstream)
        norms.append(float(np.linalg.norm(leaf.grad)))
    return np.array(norms)


def gradient_paths_figure(series: Mapping[tuple[str, str], Sequence[float]]) -> BookFigure:
    """Gradient size at the input against depth N; keys (ordering, condition label)."""
    fig, ax = new_figure(6.4, 3.8)
    conditions = list(dict.fromkeys(condition for _, condition in series))
    for (ordering, condition), values in series.items():
        depths = np.arange(1, len(values) + 1)
        ax.semilogy(
            depths,
            values,
            label=f"{ordering}-norm, {condition}",
            ls=_LINESTYLES[conditions.index(condition) % len(_LINESTYLES)],
            **_ORDERING_STYLE[ordering],
        )
    ax.axhline(1.0, color=MUTED, lw=0.8)
    ax.set_xlabel("number of blocks N")
    ax.set_ylabel("‖gradient at the input‖ (upstream norm 1)")
    ax.set_xticks(np.arange(1, max(len(v) for v in series.values()) + 1))
    ax.grid(True, which="major")
    ax.legend(loc="best")
    fig.tight_layout()
    return fig
