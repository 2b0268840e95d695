"""Elementwise ops: arithmetic with numpy broadcasting, and the pointwise nonlinearities."""

from __future__ import annotations

import math

import numpy as np
from scipy.special import expit, ndtr

from ...errors import ArgumentError, ShapeError
from ...validate import as_real, broadcasts_to, received
from ..registry import Example, op
from ..tensor import Tensor

_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_LARGEST = np.finfo(np.float64).max  # ±∞ clipped to this keeps 0·∞ out of the formulas
_TWO_MASKED = np.array([[False, True, False], [True, False, False]])  # masked_fill example
_DENSITY_EDGE = 40.0  # φ(40) = e⁻⁸⁰⁰ / √2π is 0 in float64, and so is x φ(x) for |x| ≥ 40
_TANH_SCALE = 2.0 * math.sqrt(2.0 / math.pi)  # 2c, c = √(2/π): ½(1 + tanh u) = σ(2u)
_TANH_CUBIC = 0.044715  # GPT-2's gelu_new, torch's approximate="tanh"
_TANH_EDGE = 40.0  # 2u(±40) = ±4656: σ(2u) is exactly 1 or 0 in float64 from |x| ≈ 22 on


@op(
    example=Example(lambda a, b: add(a, b), ((2, 3), (3,)), "[3] broadcast over rows"),
)
def add(x, y):
    """x + y"""
    return x + y


@add.vjp
def _(grad, _out, _x, _y):
    return grad, grad


@op(
    example=Example(lambda a, b: sub(a, b), ((2, 1), (1, 3)), "both sides broadcast"),
)
def sub(x, y):
    """x − y"""
    return x - y


@sub.vjp
def _(grad, _out, _x, _y, needs):
    return grad, (-grad if needs[1] else None)


@op(
    example=Example(lambda a, b: mul(a, b), ((2, 3), (2, 1)), "[2, 1] broadcast"),
)
def mul(x, y):
    """x ⊙ y"""
    return x * y


@mul.vjp
def _(grad, _out, x, y, needs):
    return (grad * y if needs[0] else None), (grad * x if needs[1] else None)


@op(
    example=Example(
        lambda a, b: div(a, b), ((2, 3), (3,)), "divisor at least 0.2 in size", "away-from-zero"
    ),
)
def div(x, y):
    """x / y"""
    return x / y


@div.vjp
def _(grad, out, x, y, needs):
    gx = grad / y if needs[0] else None
    gy = -grad * out / y if needs[1] else None  # d(x/y)/dy = −x/y² = −out/y
    return gx, gy


@op(
    example=Example(lambda a: neg(a), ((2, 3),), "elementwise"),
)
def neg(x):
    """−x"""
    return -x


@neg.vjp
def _(grad, _out, _x):
    return -grad


@op(
    example=Example(lambda a: power(a, exponent=3), ((2, 3),), "exponent 3"),
)
def power(x, exponent):
    """x ** p for a constant exponent p"""
    return x**exponent


@power.checks
def _(x, exponent):
    return {"exponent": as_real(exponent, "power's exponent")}


@power.vjp
def _(grad, _out, x, exponent):
    if exponent == 0.0:  # x⁰ = 1 everywhere, including x = 0 (where p x^(p−1) would be 0·∞)
        return np.zeros_like(grad)
    return grad * exponent * x ** (exponent - 1)


@op(
    example=Example(lambda a: exp(a), ((2, 3),), "elementwise"),
    method=True,
)
def exp(x):
    """eˣ"""
    return np.exp(x)


@exp.vjp
def _(grad, out, x):
    return grad * out


@op(
    example=Example(lambda a: log(a), ((2, 3),), "inputs in [0.5, 2)", "positive"),
    method=True,
)
def log(x):
    """ln x"""
    return np.log(x)


@log.vjp
def _(grad, _out, x):
    return grad / x


@op(
    example=Example(lambda a: sqrt(a), ((2, 3),), "inputs in [0.5, 2)", "positive"),
    method=True,
)
def sqrt(x):
    """√x"""
    return np.sqrt(x)


@sqrt.vjp
def _(grad, out, x):
    return grad * 0.5 / out


@op(
    example=Example(lambda a: tanh(a), ((2, 3),), "elementwise"),
    method=True,
)
def tanh(x):
    """tanh x"""
    return np.tanh(x)


@tanh.vjp
def _(grad, out, x):
    return grad * (1.0 - out * out)


@op(
    example=Example(lambda a: sigmoid(a), ((2, 3),), "elementwise"),
    method=True,
)
def sigmoid(x):
    """σ(x) = 1 / (1 + e⁻ˣ), evaluated without overflow"""
    return expit(x)


@sigmoid.vjp
def _(grad, out, x):
    return grad * out * (1.0 - out)


@op(
    example=Example(lambda a: silu(a), ((2, 3),), "elementwise"),
    saves=True,
    method=True,
)
def silu(x):
    """SiLU(x) = x σ(x); SiLU(−∞) = 0, its limit"""
    s = expit(x)
    finite = bool(np.isfinite(x).all())  # one cheap test: the ±∞ handling runs only for ±∞
    lower = x if finite else np.maximum(x, -_LARGEST)  # −∞ read as −max: −max · 0 is −0
    return lower * s, (s, finite)


@silu.vjp
def _(grad, _out, x, saved):
    s, finite = saved
    slope = 1.0 - s  # SiLU′ = σ + xσ(1 − σ) = σ (1 + x (1 − σ)); 1 at +∞, 0 at −∞
    slope *= x if finite else np.clip(x, -_LARGEST, _LARGEST)  # ±∞ read as ±max: no 0 · ∞
    slope += 1.0
    slope *= s
    slope *= grad
    return slope


@op(
    example=Example(lambda a: relu(a), ((2, 3),), "at least 0.2 from the kink", "away-from-zero"),
    method=True,
)
def relu(x):
    """max(x, 0)"""
    return np.maximum(x, 0.0)


@relu.vjp
def _(grad, _out, x):
    return grad * (x > 0)


@op(
    example=Example(lambda a: gelu(a), ((2, 3),), "exact erf form"),
    saves=True,
    method=True,
)
def gelu(x):
    """GELU(x) = x Φ(x), Φ the standard normal CDF (exact, not tanh); GELU(−∞) = 0, its limit"""
    cdf = ndtr(x)  # Φ(x) = ½ (1 + erf(x / √2)), without the cancellation in 1 + erf for x < 0
    out = np.maximum(x, -_LARGEST)  # −∞ · 0 would be NaN; −max · 0 is −0
    out *= cdf
    return out, cdf


@gelu.vjp
def _(grad, _out, x, saved):
    edge = np.clip(x, -_DENSITY_EDGE, _DENSITY_EDGE)  # x² would overflow from |x| ≈ 1.3e154
    slope = edge * edge
    slope *= -0.5
    np.exp(slope, out=slope)
    slope *= _INV_SQRT_2PI  # φ(x): 0 beyond the edge, as φ is there
    slope *= edge
    slope += saved  # GELU′ = Φ(x) + x φ(x)
    slope *= grad
    return slope


@op(
    example=Example(lambda a: gelu_tanh(a), ((2, 3),), "tanh approximation"),
    saves=True,
    method=True,
)
def gelu_tanh(x):
    """GELU_tanh(x) = ½ x (1 + tanh u) = x σ(2u), u = √(2/π)(x + 0.044715 x³); 0 at −∞"""
    edge = np.clip(x, -_TANH_EDGE, _TANH_EDGE)  # x³ would overflow from |x| ≈ 5.6e102
    gate = edge * edge
    gate *= _TANH_CUBIC
    gate += 1.0
    gate *= edge
    gate *= _TANH_SCALE  # 2u
    gate = expit(gate)  # σ(2u) = ½(1 + tanh u), without the cancellation in 1 + tanh u for u < 0
    out = np.maximum(x, -_LARGEST)  # −∞ · 0 would be NaN; −max · 0 is −0
    out *= gate
    return out, (edge, gate)


@gelu_tanh.vjp
def _(grad, _out, x, saved):
    edge, gate = saved
    slope = edge * edge
    slope *= 3.0 * _TANH_CUBIC
    slope += 1.0
    slope *= _TANH_SCALE  # (2u)′ = 2c (1 + 3 · 0.044715 x²)
    slope *= edge
    slope *= gate
    slope *= 1.0 - gate  # x σ′(2u) (2u)′, σ′ = σ(1 − σ): 0 beyond the edge, as it is there
    slope += gate  # GELU_tanh′ = σ(2u) + x σ(2u)(1 − σ(2u)) (2u)′
    slope *= grad
    return slope


@op(
    example=Example(
        lambda a: masked_fill(a, mask=_TWO_MASKED, value=-5.0), ((2, 3),), "two entries masked"
    ),
)
def masked_fill(x, mask, value):
    """mask ? value : x"""
    return np.where(mask, value, x)


@masked_fill.checks
def _(x, mask, value):
    try:  # a copy: the VJP reads the mask, so the caller's later edits must not reach it
        array = mask.value if isinstance(mask, Tensor) else np.array(mask)
    except ValueError:
        array = None
    if array is None or array.dtype != np.bool_:
        raise ArgumentError(
            "masked_fill needs a Boolean mask (True where the value replaces x); got "
            f"{received(mask)}. Build it with a comparison such as x.value > 0, or "
            "np.asarray(m, dtype=bool)."
        )
    if not broadcasts_to(array.shape, x.shape):
        raise ShapeError(
            f"masked_fill's mask must broadcast to the input's shape {x.shape}; got mask shape "
            f"{array.shape}."
        )
    return {"mask": array, "value": as_real(value, "masked_fill's value", finite=False)}


@masked_fill.vjp
def _(grad, _out, _x, mask, value):
    return np.where(mask, 0.0, grad)
