"""Evidence for a gated feed-forward layer and its trace ``TRACE swiglu-feed-forward-v1``.

:func:`gated_evidence` runs one forward and one backward pass on a copy of a layer and records
every stage the chapter shows: the forward intermediates A, S, U, H, Y; the reverse gradients of
the intermediates (dH, dA, dU, read from ``retain_grad`` probes on the recorded tensors), of the
input (dX) and of the three shared weights; and a position-independence probe that replaces one
position's input and recomputes. :func:`swiglu_trace` renders that evidence as eleven lines.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..autodiff import Tensor, no_grad
from ..errors import ArgumentError, ShapeError
from ..traces import Trace
from .swiglu import GatedFeedForward

TRACE_NAME = "swiglu-feed-forward-v1"


@dataclass(frozen=True)
class GatedEvidence:
    """Forward stages, reverse gradients and the independence probe of one [T, d_in] input."""

    parameter_names: tuple[str, str, str]  # gate, up, down
    parameter_count: int
    X: np.ndarray  # (T, d_in)
    A: np.ndarray  # (T, d_ff)  gate pre-activation X W_g
    S: np.ndarray  # (T, d_ff)  activated gate
    U: np.ndarray  # (T, d_ff)  up branch X W_u
    H: np.ndarray  # (T, d_ff)  gated product S ⊙ U
    Y: np.ndarray  # (T, d_out) output H W_2
    G: np.ndarray  # (T, d_out) upstream gradient dL/dY
    dH: np.ndarray  # noqa: N815  (T, d_ff)
    dA: np.ndarray  # noqa: N815  (T, d_ff)
    dU: np.ndarray  # noqa: N815  (T, d_ff)
    dX: np.ndarray  # noqa: N815  (T, d_in)
    dW_gate: np.ndarray  # noqa: N815  (d_in, d_ff)  Σ_p X_pᵀ dA_p
    dW_up: np.ndarray  # noqa: N815  (d_in, d_ff)  Σ_p X_pᵀ dU_p
    dW_down: np.ndarray  # noqa: N815  (d_ff, d_out) Σ_p H_pᵀ G_p
    changed_position: int
    replacement: np.ndarray  # (d_in,) the input written at the changed position
    Y_after: np.ndarray  # (T, d_out) output after the replacement

    @property
    def positions(self) -> int:
        return self.X.shape[0]

    @property
    def weight_gradients(self) -> dict[str, np.ndarray]:
        """{parameter name: gradient}, gate, up, down."""
        grads = (self.dW_gate, self.dW_up, self.dW_down)
        return dict(zip(self.parameter_names, grads, strict=True))

    @property
    def observed_position(self) -> int:
        """The first position other than the changed one."""
        return 1 if self.changed_position == 0 else 0

    @property
    def unchanged(self) -> np.ndarray:
        """Per position: is the output after the replacement exactly equal to before?"""
        return np.all(self.Y_after == self.Y, axis=-1)

    @property
    def independent(self) -> bool:
        """Every position other than the changed one kept exactly the same output."""
        others = np.arange(self.positions) != self.changed_position
        return bool(np.all(self.unchanged[others]))


def gated_evidence(
    layer: GatedFeedForward,
    x: Any,
    upstream: Any,
    *,
    changed_position: int = 0,
    replacement: Any = None,
) -> GatedEvidence:
    """Run x [T, d_in] through a fresh copy of ``layer``, backward with ``upstream`` [T, d_out].

    The copy (built with ``from_parameters``) keeps the caller's layer and its gradients
    untouched. ``replacement`` defaults to zeros.
    """
    x_value = np.array(x.value if isinstance(x, Tensor) else x, dtype=np.float64)
    if x_value.ndim != 2 or x_value.shape[0] < 2:
        raise ShapeError(
            "gated_evidence reads positions along the first axis: x must be [T, d_in] with "
            f"T >= 2 so one position can change while another is observed; got {x_value.shape}."
        )
    g_value = np.array(upstream, dtype=np.float64)
    positions = x_value.shape[0]
    if g_value.shape != (positions, layer.output_width):
        raise ShapeError(
            f"The upstream gradient must have the output's shape ({positions}, "
            f"{layer.output_width}); got {g_value.shape}."
        )
    if not 0 <= changed_position < positions:
        raise ArgumentError(
            f"changed_position must index one of the {positions} positions; got "
            f"{changed_position}."
        )
    if replacement is None:
        replacement = np.zeros(layer.input_width)
    replacement = np.array(replacement, dtype=np.float64)
    if replacement.shape != (layer.input_width,):
        raise ShapeError(
            f"The replacement input must have shape ({layer.input_width},); got "
            f"{replacement.shape}."
        )

    probe = type(layer).from_parameters(
        layer.gate.weight.value, layer.up.weight.value, layer.down.weight.value, name=layer.name
    )
    x_leaf = Tensor(x_value, requires_grad=True, name="X")
    stages = probe.forward_with_intermediates(x_leaf)
    for recorded in (stages.A, stages.U, stages.H):  # probes: keep these intermediates' grads
        recorded.retain_grad()
    stages.Y.backward(g_value)

    changed = x_value.copy()
    changed[changed_position] = replacement
    with no_grad():
        y_after = probe(Tensor(changed)).value

    return GatedEvidence(
        parameter_names=tuple(name for name, _ in probe.named_parameters()),
        parameter_count=probe.parameter_count,
        X=x_value,
        A=stages.A.value,
        S=stages.S.value,
        U=stages.U.value,
        H=stages.H.value,
        Y=stages.Y.value,
        G=g_value,
        dH=stages.H.grad,
        dA=stages.A.grad,
        dU=stages.U.grad,
        dX=x_leaf.grad,
        dW_gate=probe.gate.weight.grad,
        dW_up=probe.up.weight.grad,
        dW_down=probe.down.weight.grad,
        changed_position=changed_position,
        replacement=replacement,
        Y_after=y_after,
    )


def swiglu_trace(evidence: GatedEvidence, *, name: str = "known-position-wise-swiglu") -> Trace:
    """``TRACE swiglu-feed-forward-v1``: FIXTURE, a forward and a backward line per position,
    three PARAMETER-GRADIENT lines and the INDEPENDENCE probe."""
    e = evidence
    trace = Trace(TRACE_NAME)
    trace.line(
        "FIXTURE",
        name=name,
        model_width=e.X.shape[1],
        hidden_width=e.H.shape[1],
        output_width=e.Y.shape[1],
        bias=False,
        parameter_count=e.parameter_count,
        input_shape=e.X.shape,
        branch_shape=e.H.shape,
        output_shape=e.Y.shape,
        upstream_shape=e.G.shape,
    )
    for p in range(e.positions):
        trace.line(
            "POSITION-FORWARD",
            position=p,
            input=e.X[p],
            gate_pre=e.A[p],
            gate_silu=e.S[p],
            up=e.U[p],
            gated=e.H[p],
            output=e.Y[p],
        )
    for p in range(e.positions):
        trace.line(
            "POSITION-BACKWARD",
            position=p,
            upstream=e.G[p],
            gated_gradient=e.dH[p],
            gate_gradient=e.dA[p],
            up_gradient=e.dU[p],
            input_gradient=e.dX[p],
        )
    for parameter, gradient in e.weight_gradients.items():
        trace.line("PARAMETER-GRADIENT", name=parameter, shape=gradient.shape, values=gradient)
    observed = e.observed_position
    trace.line(
        "INDEPENDENCE",
        changed_position=e.changed_position,
        replacement_input=e.replacement,
        observed_position=observed,
        before=e.Y[observed],
        after=e.Y_after[observed],
        unchanged=bool(e.unchanged[observed]),
    )
    return trace


def central_differences(
    layer: GatedFeedForward, x: Any, upstream: Any, *, step: float = 1e-6
) -> dict[str, np.ndarray]:
    """Central differences of L = Σ upstream ⊙ layer(x) for X and every weight, by nudging values.

    Returns ``{"X": ..., "<prefix>.gate.weight": ..., ...}``: the finite-difference counterpart
    of :class:`GatedEvidence`'s ``dX`` and weight gradients. Works on a copy of ``layer``.
    """
    probe = type(layer).from_parameters(
        layer.gate.weight.value, layer.up.weight.value, layer.down.weight.value, name=layer.name
    )
    x_value = np.array(x.value if isinstance(x, Tensor) else x, dtype=np.float64)
    g_value = np.array(upstream, dtype=np.float64)

    def loss() -> float:
        with no_grad():
            return float(np.sum(probe(Tensor(x_value)).value * g_value))

    arrays = {"X": x_value} | {name: p.value for name, p in probe.named_parameters()}
    result = {}
    for name, array in arrays.items():
        numeric = np.zeros(array.shape)
        for index in np.ndindex(array.shape):
            original = array[index]
            array[index] = original + step
            plus = loss()
            array[index] = original - step
            minus = loss()
            array[index] = original
            numeric[index] = (plus - minus) / (2.0 * step)
        result[name] = numeric
    return result
