"""Matrix products with numpy's batching rules."""

from __future__ import annotations

import numpy as np

from ...errors import ShapeError
from ..registry import Example, op


def _blas_ready(a: np.ndarray) -> np.ndarray:
    """A stacked operand whose matrices BLAS can read directly (copied only when they are not).

    numpy hands a batch of matrices to BLAS only when each matrix is contiguous, row- or
    column-major; a permuted view (heads split from tokens) falls back to a loop that is tens of
    times slower than copying the operand first.
    """
    if a.ndim <= 2 or a.flags.c_contiguous:
        return a
    item = a.itemsize
    rows, cols = a.shape[-2:]
    row_major = a.strides[-1] == item and a.strides[-2] == cols * item
    column_major = a.strides[-2] == item and a.strides[-1] == rows * item
    return a if row_major or column_major else np.ascontiguousarray(a)


def _bmm(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a @ b on BLAS-ready operands."""
    return _blas_ready(a) @ _blas_ready(b)


@op(
    example=Example(lambda a, b: matmul(a, b), ((2, 2, 3), (3, 2)), "batched @ shared"),
)
def matmul(x, y):
    """x @ y, batching over leading axes like numpy"""
    if y.ndim == 2 and x.ndim > 2:  # (…, n) @ (n, m): one 2-D gemm over all leading rows
        return (x.reshape(-1, x.shape[-1]) @ y).reshape(*x.shape[:-1], y.shape[-1])
    return _bmm(x, y)


@matmul.vjp
def _(grad, _out, x, y, needs):
    gx = gy = None
    if x.ndim == 1 and y.ndim == 1:  # inner product: out is a scalar
        return (grad * y if needs[0] else None), (grad * x if needs[1] else None)
    if x.ndim == 1:  # (n) @ (…, n, m) → (…, m)
        if needs[0]:
            gx = np.matmul(grad[..., None, :], np.swapaxes(y, -1, -2))[..., 0, :]
        if needs[1]:
            gy = x[:, None] * grad[..., None, :]
        return gx, gy
    if y.ndim == 1:  # (…, n, m) @ (m) → (…, n)
        if needs[0]:
            gx = grad[..., :, None] * y
        if needs[1]:
            gy = np.matmul(np.swapaxes(x, -1, -2), grad[..., :, None])[..., 0]
        return gx, gy
    if y.ndim == 2 and x.ndim > 2:  # shared weight: fold leading axes into one gemm
        rows_x = x.reshape(-1, x.shape[-1])
        rows_g = grad.reshape(-1, grad.shape[-1])
        if needs[0]:
            gx = (rows_g @ y.T).reshape(x.shape)
        if needs[1]:
            gy = rows_x.T @ rows_g
        return gx, gy
    if needs[0]:
        gx = _bmm(grad, np.swapaxes(y, -1, -2))
    if needs[1]:
        gy = _bmm(np.swapaxes(x, -1, -2), grad)
    return gx, gy


@op(
    example=Example(lambda a, w, b: affine(a, w, b), ((2, 2, 3), (3, 2), (2,)), "rows @ shared"),
)
def affine(x, w, b):
    """x @ W + b in one entry: matmul's product, the bias added into it in place

    The taught chain is ``matmul`` then ``add`` (what :class:`~...nn.Linear` records); this is
    the same sum bit for bit, with one temporary fewer, for layers built with ``fused=True``.
    """
    out = matmul.forward(x, w)  # a fresh (…, m) array
    out += b
    return out


@affine.checks
def _(x, w, b):
    if w.ndim != 2 or b.shape != (w.shape[1],) or x.ndim < 1 or x.shape[-1] != w.shape[0]:
        raise ShapeError(
            f"affine takes rows x [..., n], a weight W [n, m] and a bias b [m]; got x "
            f"{x.shape}, W {w.shape}, b {b.shape}. Use matmul and add for other shapes."
        )
    return {}


@affine.vjp
def _(grad, _out, x, w, _b, needs):
    gx, gw = matmul.backward(grad, None, x, w, needs=needs[:2])  # the chain's matmul VJP
    return gx, gw, (grad if needs[2] else None)  # add passes the gradient on; the engine sums
