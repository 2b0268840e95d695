"""Fused gated feed-forward network: (act(X W_g) ⊙ (X W_u)) W_2 as one tape entry.

The taught version is the chain a bias-free :class:`~..nn.swiglu.GatedFeedForward` (SwiGLU,
GLU) records: the ``matmul`` with W_g, the gate activation, the ``matmul`` with W_u, the
elementwise ``mul`` and the ``matmul`` with W_2, five entries. ``fused_gated_ffn`` records one.
Its forward calls those ops' own array functions in the chain's order, and its VJP calls their
own VJPs in the chain's reverse order, so the output and every gradient are the chain's bit for
bit (``tests/autodiff/test_fused_ffn.py`` asserts equality, not closeness). X's two shares,
through W_g and through W_u, are added once, as the backward pass adds two shares that meet at
a tensor (two addends: their order cannot change the sum). It keeps what those VJPs read, the
gate's pre-activation and what the activation saved, the activated gate and the up branch, but
not their product: the VJP recomputes it (one elementwise product, the same bits) rather than
keep a fifth [..., d_ff] array alive from the forward pass to the backward.
"""

from __future__ import annotations

from ...errors import ArgumentError, ShapeError
from ..registry import OPS, Example, op
from .elementwise import mul
from .linalg import matmul

__all__ = ["GATE_ACTIVATIONS", "fused_gated_ffn"]

GATE_ACTIVATIONS = ("silu", "sigmoid")  # SwiGLU's and GLU's gates, both one-input ops


@op(
    example=Example(
        lambda x, g, u, d: fused_gated_ffn(x, g, u, d, activation="silu"),
        ((2, 3, 4), (4, 5), (4, 5), (5, 4)),
        "SwiGLU, rows @ shared",
    ),
    saves=True,
)
def fused_gated_ffn(x, w_gate, w_up, w_down, activation="silu"):
    """(act(x W_g) ⊙ (x W_u)) W_2: [..., D] → [..., D_out], the chain's own array functions"""
    gate = OPS[activation]
    a = matmul.forward(x, w_gate)  # (..., d_ff) the gate's pre-activation
    s, kept = gate.forward(a) if gate.saves else (gate.forward(a), None)  # (..., d_ff)
    u = matmul.forward(x, w_up)  # (..., d_ff)
    h = mul.forward(s, u)  # (..., d_ff) not kept: the VJP recomputes it, the same bits
    return matmul.forward(h, w_down), (a, kept, s, u)  # (..., D_out); what the VJPs read


@fused_gated_ffn.checks
def _(x, w_gate, w_up, w_down, activation):
    if not isinstance(activation, str) or activation not in GATE_ACTIVATIONS:
        raise ArgumentError(
            f"fused_gated_ffn's activation must be one of {GATE_ACTIVATIONS} (the gate ops of "
            f"the book's gated layers); got {activation!r}."
        )
    width = x.shape[-1] if x.ndim >= 2 else None
    if (
        width is None
        or w_gate.ndim != 2
        or w_gate.shape[0] != width
        or w_up.shape != w_gate.shape
        or w_down.ndim != 2
        or w_down.shape[0] != w_gate.shape[1]
    ):
        raise ShapeError(
            "fused_gated_ffn needs rows x [..., D] (rank 2 or more), W_g and W_u [D, d_ff] and "
            f"W_2 [d_ff, D_out]; got x {x.shape}, W_g {w_gate.shape}, W_u {w_up.shape} and "
            f"W_2 {w_down.shape}. Pass a bias-free gated layer's three weights."
        )
    return {"activation": activation}


@fused_gated_ffn.vjp
def _(grad, _out, x, w_gate, w_up, w_down, activation, saved, needs):
    a, kept, s, u = saved
    gate = OPS[activation]
    gate_wanted, up_wanted = needs[0] or needs[1], needs[0] or needs[2]  # what s and u lead to
    h = mul.forward(s, u)  # (..., d_ff) the product the forward pass let go
    grad_h, grad_down = matmul.backward(grad, None, h, w_down, needs=[True, needs[3]])
    del h  # each temporary goes as soon as it is used, as the chain's backward lets them go
    grad_s, grad_u = mul.backward(grad_h, None, s, u, needs=[gate_wanted, up_wanted])
    del grad_h
    grad_x = grad_up = grad_gate = None
    if up_wanted:
        grad_x, grad_up = matmul.backward(grad_u, None, x, w_up, needs=[needs[0], needs[2]])
    del grad_u
    if gate_wanted:
        extra = {"saved": kept} if gate.saves else {}
        grad_a = gate.backward(grad_s, s if gate.reads_out else None, a, **extra)
        del grad_s
        grad_x_gate, grad_gate = matmul.backward(
            grad_a, None, x, w_gate, needs=[needs[0], needs[1]]
        )
        if needs[0]:  # the two shares that meet at x, added once (into up's fresh share)
            grad_x += grad_x_gate
    return grad_x, grad_gate, grad_up, grad_down
