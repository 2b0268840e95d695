"""Chapter 4's write-it-yourself grader: the SwiGLU gate h = SiLU(a) ⊙ u and its VJP.

:func:`check_swiglu_gate` takes the reader's ``gate(a, u)`` and ``gate_vjp(grad, a, u) ->
(da, du)`` and compares them with the closed forms ``SiLU(a) = a σ(a)``,
``da = grad ⊙ u ⊙ (σ(a) + a σ(a)(1 − σ(a)))`` and ``du = grad ⊙ SiLU(a)``, with σ computed here as
``1 / (1 + e^(−a))``, and then with central differences of the reader's own forward.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .grading import AnswerError, as_array, call, compare, grader, require_callable

__all__ = ["check_swiglu_gate"]

_A = np.array([[-1.0, 0.0, 1.0], [0.0, 1.0, -1.0]])  # the chapter's gate pre-activations XW_g
_U = np.array([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]])  # its up branch XW_u
_GRAD = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, -1.0]])  # dH of the chapter's G = I₂ through W₂
_STEP = 1e-6


def _sigmoid(a: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-a))


def _close(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=1e-9, atol=1e-9))


@grader("Chapter 4, the SwiGLU gate and its VJP")
def check_swiglu_gate(gate: Callable[..., Any], gate_vjp: Callable[..., Any]) -> str:
    """Grade gate(a, u) = SiLU(a)·u and gate_vjp(grad, a, u) = (da, du), the chapter's numbers."""
    require_callable(gate, "your gate")
    require_callable(gate_vjp, "your gate_vjp")
    case = "the chapter's a = XW_g and u = XW_u"
    s = _sigmoid(_A)
    silu = _A * s
    got = as_array(call(gate, _A.copy(), _U.copy(), what="your gate", case=case), "gate(a, u)")
    if _close(got, s * _U):
        raise AnswerError(
            "your gate is σ(a)·u, the sigmoid gate of the original GLU; SwiGLU gates with "
            "SiLU(a) = a·σ(a)."
        )
    if _close(got, silu):
        raise AnswerError("your gate returns SiLU(a) alone; multiply it by the up branch u.")
    compare(got, silu * _U, what="gate(a, u)", case=case)
    shares = call(gate_vjp, _GRAD.copy(), _A.copy(), _U.copy(), what="your gate_vjp", case=case)
    if not isinstance(shares, tuple | list) or len(shares) != 2:
        raise AnswerError("your gate_vjp should return two arrays, (da, du): one per input.")
    da, du = as_array(shares[0], "da"), as_array(shares[1], "du")
    want_da = _GRAD * _U * (s + _A * s * (1.0 - s))
    want_du = _GRAD * silu
    if _close(da, _GRAD * _U * s):
        raise AnswerError(
            "your da uses σ(a) as SiLU's slope; SiLU(a) = a·σ(a) is a product, so "
            "SiLU′(a) = σ(a) + a·σ(a)(1 − σ(a))."
        )
    if _close(du, _GRAD * s):
        raise AnswerError(
            "your du is grad·σ(a); the up branch is multiplied by SiLU(a) = a·σ(a), so "
            "du = grad·SiLU(a)."
        )
    if _close(da, want_du) and _close(du, want_da):
        raise AnswerError("you return (du, da); the order is (da, du), as the inputs (a, u).")
    compare(da, want_da, what="da", case=f"{case}, grad = dH")
    compare(du, want_du, what="du", case=f"{case}, grad = dH")
    _central(gate, da, du)
    return (
        "SiLU(a)·u and both gradients match the closed forms and central differences of your "
        "own forward."
    )


def _central(gate: Callable[..., Any], da: np.ndarray, du: np.ndarray) -> None:
    """Central differences of Σ grad ⊙ gate(a, u), entry by entry, against da and du."""
    for which, got in ((0, da), (1, du)):
        numeric = np.zeros_like(_A)
        for index in np.ndindex(_A.shape):
            nudged = [[_A.copy(), _U.copy()], [_A.copy(), _U.copy()]]
            nudged[0][which][index] += _STEP
            nudged[1][which][index] -= _STEP
            up, down = (np.sum(_GRAD * as_array(gate(*pair), "gate(a, u)")) for pair in nudged)
            numeric[index] = (up - down) / (2 * _STEP)
        name = ("da", "du")[which]
        compare(got, numeric, what=name, case="central differences of your gate", atol=1e-6)
