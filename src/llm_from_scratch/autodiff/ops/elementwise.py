"""Elementwise ops: arithmetic with numpy broadcasting, and the pointwise nonlinearities."""

from __future__ import annotations

import math

import numpy as np
from scipy.special import erf, expit

from ..registry import op

_INV_SQRT2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


@op
def add(x, y):
    """x + y"""
    return x + y


@add.vjp
def _(grad, _out, x, y):
    return grad, grad


@op
def sub(x, y):
    """x − y"""
    return x - y


@sub.vjp
def _(grad, _out, x, y, needs):
    return grad, (-grad if needs[1] else None)


@op
def mul(x, y):
    """x ⊙ y"""
    return x * y


@mul.vjp
def _(grad, _out, x, y, needs):
    return (grad * y if needs[0] else None), (grad * x if needs[1] else None)


@op
def div(x, y):
    """x / y"""
    return x / y


@div.vjp
def _(grad, out, x, y, needs):
    gx = grad / y if needs[0] else None
    gy = -grad * out / y if needs[1] else None  # d(x/y)/dy = −x/y² = −out/y
    return gx, gy


@op
def neg(x):
    """−x"""
    return -x


@neg.vjp
def _(grad, _out, x):
    return -grad


@op
def power(x, exponent):
    """x ** p for a constant exponent p"""
    return x**exponent


@power.vjp
def _(grad, _out, x, exponent):
    return grad * exponent * x ** (exponent - 1)


@op
def exp(x):
    """eˣ"""
    return np.exp(x)


@exp.vjp
def _(grad, out, x):
    return grad * out


@op
def log(x):
    """ln x"""
    return np.log(x)


@log.vjp
def _(grad, _out, x):
    return grad / x


@op
def sqrt(x):
    """√x"""
    return np.sqrt(x)


@sqrt.vjp
def _(grad, out, x):
    return grad * 0.5 / out


@op
def tanh(x):
    """tanh x"""
    return np.tanh(x)


@tanh.vjp
def _(grad, out, x):
    return grad * (1.0 - out * out)


@op
def sigmoid(x):
    """σ(x) = 1 / (1 + e⁻ˣ), evaluated without overflow"""
    return expit(x)


@sigmoid.vjp
def _(grad, out, x):
    return grad * out * (1.0 - out)


@op(saves=True)
def silu(x):
    """SiLU(x) = x σ(x)"""
    s = expit(x)
    return x * s, s


@silu.vjp
def _(grad, _out, x, saved):
    s = saved
    slope = 1.0 - s  # SiLU′ = σ + xσ(1 − σ) = σ (1 + x (1 − σ))
    slope *= x
    slope += 1.0
    slope *= s
    slope *= grad
    return slope


@op
def relu(x):
    """max(x, 0)"""
    return np.maximum(x, 0.0)


@relu.vjp
def _(grad, _out, x):
    return grad * (x > 0)


@op(saves=True)
def gelu(x):
    """GELU(x) = x Φ(x), Φ the standard normal CDF (exact erf form)"""
    cdf = 0.5 * (1.0 + erf(x * _INV_SQRT2))
    return x * cdf, cdf


@gelu.vjp
def _(grad, _out, x, saved):
    density = _INV_SQRT_2PI * np.exp(-0.5 * x * x)
    return grad * (saved + x * density)  # GELU′ = Φ(x) + x φ(x)


@op
def masked_fill(x, mask, value):
    """mask ? value : x"""
    return np.where(mask, value, x)


@masked_fill.vjp
def _(grad, _out, x, mask, value):
    return np.where(mask, 0.0, grad)
