"""A small reverse-mode automatic differentiation engine on numpy float64 arrays."""

from . import ops
from .gradcheck import (
    GradcheckResult,
    gradcheck,
    gradcheck_parameters,
    jacobians,
    numeric_jacobians,
)
from .registry import OPS, Example, Op, op
from .tape import recorded_ops, walk_tape
from .tensor import Tensor, grad_enabled, no_grad, unbroadcast

concat = ops.concat
stack = ops.stack

__all__ = [
    "OPS",
    "Example",
    "GradcheckResult",
    "Op",
    "Tensor",
    "concat",
    "grad_enabled",
    "gradcheck",
    "gradcheck_parameters",
    "jacobians",
    "no_grad",
    "numeric_jacobians",
    "op",
    "ops",
    "recorded_ops",
    "stack",
    "unbroadcast",
    "walk_tape",
]
