"""Why gradient checks run in float64: central-difference error as a function of the step.

The central difference (f(x + h) − f(x − h)) / 2h of a smooth f differs from f′(x) by a
truncation error of about |f‴(x)| h² / 6, which shrinks with h, plus a rounding error of about
ε |f(x)| / h (ε the unit roundoff of the arithmetic), which grows as h shrinks. The total is
smallest near h ≈ ε^(1/3): about 5e-6 in float64 but about 4e-3 in float32, where no step gets
the error much below 1e-6 (for derivatives of order one). :func:`central_difference_errors`
computes the curve for ``tanh`` in a chosen floating-point type; :func:`step_error_figure` plots
one curve per type.

Each evaluation of tanh is *correctly rounded* to the chosen type (computed in 40-digit decimal
arithmetic, then rounded once), which is exactly the model of rounding the analysis assumes. It
also makes the curve the same on every machine: numpy's own ``tanh`` picks a SIMD code path per
CPU, and its last-bit differences, divided by a step of 1e-10, would change the curve.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal, localcontext

import numpy as np

from .style import MUTED, PALETTE, BookFigure, new_figure

__all__ = [
    "best_step",
    "central_difference_errors",
    "log_steps",
    "rounded_tanh",
    "step_error_figure",
    "tanh_derivative",
    "tanh_third_derivative",
]

_STYLE = {  # Okabe–Ito colours, distinct line styles and markers (readable in grey too)
    0: {"color": PALETTE.blue, "linestyle": "-", "marker": "o"},
    1: {"color": PALETTE.vermillion, "linestyle": "--", "marker": "s"},
    2: {"color": PALETTE.bluish_green, "linestyle": ":", "marker": "^"},
}


def _tanh_decimal(x: float) -> Decimal:
    """tanh(x) = (e^{2x} − 1) / (e^{2x} + 1) in 40-digit decimal arithmetic (exact input x)."""
    with localcontext() as context:
        context.prec = 40
        e = (2 * Decimal(float(x))).exp()
        return (e - 1) / (e + 1)


def rounded_tanh(x: float, dtype: type[np.floating] = np.float64) -> np.floating:
    """tanh(x) correctly rounded to ``dtype``: the same bits on every machine."""
    return dtype(float(_tanh_decimal(x)))


def tanh_derivative(x: float) -> float:
    """tanh′(x) = 1 − tanh²(x), correctly rounded to float64."""
    t = _tanh_decimal(x)
    with localcontext() as context:
        context.prec = 40
        return float(1 - t * t)


def tanh_third_derivative(x: float) -> float:
    """tanh‴(x) = −2 (1 − t²)(1 − 3t²) with t = tanh x, in float64."""
    t = np.tanh(np.float64(x))
    return float(-2.0 * (1.0 - t * t) * (1.0 - 3.0 * t * t))


def central_difference_errors(
    x: float, steps: Sequence[float], dtype: type[np.floating] = np.float64
) -> np.ndarray:
    """|central difference of tanh at x, computed entirely in ``dtype`` − exact tanh′(x)|."""
    # Written out rather than through autodiff.numeric_jacobians, the one the tests use: that
    # one runs the engine (float64, numpy's tanh), while this curve needs every step in
    # ``dtype`` (float32 too) on correctly rounded tanh values, the rounding model studied here.
    exact = tanh_derivative(x)
    point = dtype(x)
    errors = []
    for step in steps:
        h = dtype(step)
        ahead, behind = rounded_tanh(point + h, dtype), rounded_tanh(point - h, dtype)
        estimate = (ahead - behind) / (dtype(2) * h)
        errors.append(abs(float(estimate) - exact))
    return np.array(errors, dtype=np.float64)


def log_steps(start: int, stop: int, count: int) -> np.ndarray:
    """``np.logspace(start, stop, count)``, each 10^e correctly rounded (the same on every CPU)."""
    with localcontext() as context:
        context.prec = 40
        exponents = [
            Decimal(start) + (Decimal(stop - start) * k) / (count - 1) for k in range(count)
        ]
        return np.array([float(Decimal(10) ** e) for e in exponents], dtype=np.float64)


def best_step(steps: Sequence[float], errors: Sequence[float]) -> float:
    """The step with the smallest error (the first one on ties)."""
    return float(np.asarray(steps)[int(np.argmin(np.asarray(errors)))])


def step_error_figure(
    steps: Sequence[float],
    errors: Mapping[str, Sequence[float]],
    *,
    marked_step: float | None = None,
) -> BookFigure:
    """Log–log plot of error against step, one curve per label; optionally mark one step."""
    fig, ax = new_figure(6.0, 3.6)
    floor = 1e-18  # an exact zero cannot sit on a log axis
    for k, (label, values) in enumerate(errors.items()):
        shown = np.maximum(np.asarray(values, dtype=np.float64), floor)
        ax.loglog(steps, shown, label=label, markersize=4, **_STYLE[k % len(_STYLE)])
    if marked_step is not None:
        ax.axvline(marked_step, color=MUTED, linewidth=0.8, linestyle="-.")
        ax.annotate(
            f"step {marked_step:g}",
            xy=(marked_step, 0.6),
            xycoords=("data", "axes fraction"),
            xytext=(-4, 0),
            textcoords="offset points",
            ha="right",
            fontsize=8,
            color=MUTED,
        )
    ax.set_xlabel("finite-difference step h")
    ax.set_ylabel("|central difference − exact|")
    ax.grid(True, which="major")
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=len(errors))
    return fig
