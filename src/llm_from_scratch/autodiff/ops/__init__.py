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

# isort: split
# Registered after the primitives they are built from, so listings show the primitives first.
from .composite import attention_weights, layer_norm, pair_rotate, rms_norm

__all__ = [
    "add",
    "attention_weights",
    "concat",
    "div",
    "exp",
    "gelu",
    "getitem",
    "layer_norm",
    "log",
    "log_softmax",
    "masked_fill",
    "matmul",
    "mean",
    "mul",
    "neg",
    "pair_rotate",
    "permute",
    "power",
    "relu",
    "reshape",
    "rms_norm",
    "sigmoid",
    "silu",
    "softmax",
    "sqrt",
    "stack",
    "sub",
    "sum",
    "tanh",
]
