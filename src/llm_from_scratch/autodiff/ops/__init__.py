"""Every registered op, importable by name (``ops.add``, ``ops.softmax``, …)."""

from .elementwise import (
    add,
    div,
    exp,
    gelu,
    log,
    masked_fill,
    mul,
    neg,
    power,
    relu,
    sigmoid,
    silu,
    sqrt,
    sub,
    tanh,
)
from .linalg import matmul
from .reductions import log_softmax, mean, softmax, sum
from .shape import concat, getitem, permute, reshape, stack

__all__ = [
    "add",
    "concat",
    "div",
    "exp",
    "gelu",
    "getitem",
    "log",
    "log_softmax",
    "masked_fill",
    "matmul",
    "mean",
    "mul",
    "neg",
    "permute",
    "power",
    "relu",
    "reshape",
    "sigmoid",
    "silu",
    "softmax",
    "sqrt",
    "stack",
    "sub",
    "sum",
    "tanh",
]
