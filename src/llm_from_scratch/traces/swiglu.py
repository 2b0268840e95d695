"""The trace ``TRACE swiglu-feed-forward-v1``: a gated feed-forward layer, stage by stage.

The same three steps as every trace in this package:

- :func:`gated_evidence` runs one forward and one backward pass on a copy of a layer and keeps
  every stage the chapter shows in a :class:`GatedEvidence`, exactly: the forward intermediates
  A, S, U, H, Y; the reverse gradients of the intermediates (dH, dA, dU, read from
  ``retain_grad`` probes on the recorded tensors), of the input (dX) and of the three shared
  weights; and a position-independence probe that replaces one position's input and recomputes;
- :func:`swiglu_trace` writes that evidence as eleven lines (for two positions)::

    FIXTURE                widths, bias, parameter count, input/branch/output/upstream shapes
    POSITION-FORWARD ×T    X_p and its stages A_p, S_p, U_p, H_p, Y_p
    POSITION-BACKWARD ×T   G_p and the gradients dH_p, dA_p, dU_p, dX_p
    PARAMETER-GRADIENT ×3  the shared sums dW_g, dW_u, dW_2 with their shapes
    INDEPENDENCE           the rewritten position and its new input, the observed position's
                           output before and after, every output row after the rewrite and
                           which rows stayed exactly unchanged

- :func:`read_swiglu_trace` reads the text back into a :class:`GatedEvidence` (at the trace's
  six decimals), which is what the figures of :mod:`llm_from_scratch.figures.swiglu` draw.

:func:`central_differences` is the finite-difference counterpart of the evidence's gradients.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..autodiff import Tensor, no_grad, numeric_jacobians
from ..errors import ArgumentError, ShapeError
from ..nn.swiglu import GatedFeedForward
from .format import Record, Trace, read_records

TRACE_NAME = "swiglu-feed-forward-v1"


@dataclass(frozen=True)
class GatedEvidence:
    """Forward stages, reverse gradients and the independence probe of one [T, d_in] input.

    :func:`gated_evidence` fills it exactly; :func:`read_swiglu_trace` fills it from the text.
    """

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
    unchanged: np.ndarray  # (T,) bool: is the row after the replacement exactly the row before?

    @property
    def positions(self) -> int:
        """T, the number of positions."""
        return int(self.X.shape[0])

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
        unchanged=np.all(y_after == stages.Y.value, axis=-1),  # exact, not to a tolerance
    )


# The per-position fields of the trace and the evidence attribute each one holds, in line order.
FORWARD = {"input": "X", "gate-pre": "A", "gate-silu": "S", "up": "U", "gated": "H", "output": "Y"}
BACKWARD = {
    "upstream": "G",
    "gated-gradient": "dH",
    "gate-gradient": "dA",
    "up-gradient": "dU",
    "input-gradient": "dX",
}
KINDS = ("FIXTURE", "POSITION-FORWARD", "POSITION-BACKWARD", "PARAMETER-GRADIENT", "INDEPENDENCE")


def swiglu_trace(evidence: GatedEvidence, *, fixture: str = "known-position-wise-swiglu") -> Trace:
    """``TRACE swiglu-feed-forward-v1``: FIXTURE, a forward and a backward line per position,
    three PARAMETER-GRADIENT lines and the INDEPENDENCE probe, written from the evidence."""
    e = evidence
    trace = Trace(TRACE_NAME)
    trace.line(
        "FIXTURE",
        name=fixture,
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
    for kind, columns in (("POSITION-FORWARD", FORWARD), ("POSITION-BACKWARD", BACKWARD)):
        for p in range(e.positions):
            rows = {key: getattr(e, attribute)[p] for key, attribute in columns.items()}
            trace.line(kind, position=p, **rows)
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
        outputs_after=e.Y_after,
        unchanged_positions=tuple(int(p) for p in np.flatnonzero(e.unchanged)),
    )
    return trace


def _rows(records: list[Record], key: str) -> np.ndarray:
    """One row per position, (T, width), in the order of the records' ``position=`` fields."""
    ordered = sorted(records, key=lambda r: r.integer("position"))
    return np.array([r.numbers(key) for r in ordered], dtype=np.float64)


def read_swiglu_trace(text: str) -> GatedEvidence:
    """Parse a ``swiglu-feed-forward-v1`` trace into a :class:`GatedEvidence` (six decimals)."""
    lines = read_records(text, TRACE_NAME, KINDS)
    forward = {a: _rows(lines["POSITION-FORWARD"], key) for key, a in FORWARD.items()}
    backward = {a: _rows(lines["POSITION-BACKWARD"], key) for key, a in BACKWARD.items()}
    gradients = lines["PARAMETER-GRADIENT"]
    if len(gradients) != 3:
        raise ArgumentError(
            f"TRACE {TRACE_NAME} has three PARAMETER-GRADIENT lines (gate, up, down); got "
            f"{len(gradients)}."
        )
    gate, up, down = (r.numbers("values").reshape(r.integers("shape")) for r in gradients)
    probe = lines["INDEPENDENCE"][0]
    positions, d_out = forward["Y"].shape
    unchanged = np.zeros(positions, dtype=bool)
    unchanged[list(probe.integers("unchanged-positions"))] = True
    return GatedEvidence(
        parameter_names=(
            gradients[0].text("name"),
            gradients[1].text("name"),
            gradients[2].text("name"),
        ),
        parameter_count=lines["FIXTURE"][0].integer("parameter-count"),
        **forward,
        **backward,
        dW_gate=gate,
        dW_up=up,
        dW_down=down,
        changed_position=probe.integer("changed-position"),
        replacement=probe.numbers("replacement-input"),
        Y_after=probe.numbers("outputs-after").reshape(positions, d_out),
        unchanged=unchanged,
    )


def central_differences(
    layer: GatedFeedForward, x: Any, upstream: Any, *, step: float = 1e-6
) -> dict[str, np.ndarray]:
    """Central differences of L = Σ upstream ⊙ layer(x) for X and every weight, by nudging values.

    Returns ``{"X": ..., "<prefix>.gate.weight": ..., ...}``: the finite-difference counterpart
    of :class:`GatedEvidence`'s ``dX`` and weight gradients. Works on a copy of ``layer``.
    """
    x_value = np.array(x.value if isinstance(x, Tensor) else x, dtype=np.float64)
    g_value = np.array(upstream, dtype=np.float64)
    names = ["X"] + [name for name, _ in layer.named_parameters()]

    def loss(x_in: Tensor, gate: Tensor, up: Tensor, down: Tensor) -> Tensor:
        probe = type(layer).from_parameters(gate.value, up.value, down.value, name=layer.name)
        return (probe(x_in) * g_value).sum()

    weights = [layer.gate.weight.value, layer.up.weight.value, layer.down.weight.value]
    numeric = numeric_jacobians(loss, [x_value, *weights], step)  # the one shared loop
    return dict(zip(names, numeric, strict=True))
