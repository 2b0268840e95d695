"""Matrix products with numpy's batching rules."""

from __future__ import annotations

import numpy as np

from ..registry import op


@op
def matmul(x, y):
    """x @ y, batching over leading axes like numpy"""
    if y.ndim == 2 and x.ndim > 2:  # (…, n) @ (n, m): one 2-D gemm over all leading rows
        return (x.reshape(-1, x.shape[-1]) @ y).reshape(*x.shape[:-1], y.shape[-1])
    return x @ y


@matmul.vjp
def _(grad, out, x, y, needs):
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
        gx = grad @ np.swapaxes(y, -1, -2)
    if needs[1]:
        gy = np.swapaxes(x, -1, -2) @ grad
    return gx, gy
