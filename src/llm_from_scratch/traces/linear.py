"""The trace ``TRACE linear-layers-v1``: one affine projection, forward and backward, line by line.

Three steps, the same for every trace in this package:

- :func:`linear_evidence` runs a :class:`~llm_from_scratch.nn.Linear` on a fixture (input X,
  weight W, bias b, upstream gradient G = ∂L/∂Y), calls ``backward`` and keeps what happened in
  a :class:`LinearEvidence`, exactly;
- :func:`linear_layers_trace` writes that evidence as text::

    FIXTURE            widths, bias, parameter count, input/output/upstream shapes
    INPUT              X, flattened
    WEIGHT-ROW ×d_in   row i of W: how input feature i feeds every output feature
    BIAS               b
    per position p (a leading coordinate):
      CELL ×d_out      x_p, the products x_p[i]·W[i, j], their sum, b[j] and y_p[j]
      POSITION-GRADIENT  G_p and dX_p = G_p Wᵀ
    WEIGHT-GRADIENT    dW = Σ_p X_pᵀ G_p
    BIAS-GRADIENT      db = Σ_p G_p
    POLICY             parameter counts with and without bias, and the bias-free output XW
    AXES               leading axes of input and output, and which axis is mixed

- :func:`read_linear_trace` reads the text back into a :class:`LinearEvidence` (at the trace's
  six decimals), which is what the figures of :mod:`llm_from_scratch.figures.linear` draw.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..autodiff import Tensor
from ..errors import ArgumentError, ShapeError
from ..nn.linear import Linear
from .format import Record, Trace, read_records

TRACE_NAME = "linear-layers-v1"
KINDS = (  # CELL and POSITION-GRADIENT lines are absent when there are no positions
    "FIXTURE",
    "WEIGHT-ROW",
    "BIAS",
    "WEIGHT-GRADIENT",
    "BIAS-GRADIENT",
    "POLICY",
    "AXES",
)


@dataclass(frozen=True)
class LinearEvidence:
    """One pass of Y = XW + b and its backward, position by position (P leading positions).

    :func:`linear_evidence` fills it exactly; :func:`read_linear_trace` fills it from the text.
    """

    parameter_prefix: str
    input_shape: tuple[int, ...]
    output_shape: tuple[int, ...]
    coordinates: tuple[str, ...]  # (P,) each position's leading coordinate: '0,1', or '()'
    weight: np.ndarray  # (d_in, d_out)
    bias: np.ndarray  # (d_out,)
    inputs: np.ndarray  # (P, d_in)  X_p
    products: np.ndarray  # (P, d_out, d_in)  products[p, j, i] = X_p[i] · W[i, j]
    weighted_sums: np.ndarray  # (P, d_out)  X_p W
    outputs: np.ndarray  # (P, d_out)  Y_p = X_p W + b
    upstream: np.ndarray  # (P, d_out)  G_p
    input_gradients: np.ndarray  # (P, d_in)  dX_p = G_p Wᵀ
    weight_gradient: np.ndarray  # (d_in, d_out)  dW = Σ_p X_pᵀ G_p
    bias_gradient: np.ndarray  # (d_out,)  db = Σ_p G_p
    affine_parameters: int
    bias_free_parameters: int
    bias_free_outputs: np.ndarray  # (P, d_out)  X_p W, the POLICY line's comparison
    input_leading: tuple[int, ...]
    output_leading: tuple[int, ...]
    leading_preserved: bool

    @property
    def input_width(self) -> int:
        """d_in, the rows of W."""
        return int(self.weight.shape[0])

    @property
    def output_width(self) -> int:
        """d_out, the columns of W."""
        return int(self.weight.shape[1])

    @property
    def positions(self) -> int:
        """P, the number of leading positions (1 for a vector input)."""
        return len(self.coordinates)


def _coordinate(index: tuple[int, ...]) -> str:
    """A leading coordinate as trace text: (0, 1) -> '0,1'; a vector's single position -> '()'."""
    return ",".join(str(int(i)) for i in index) if index else "()"


def linear_evidence(
    inputs: Any, weight: Any, bias: Any, upstream: Any, *, name: str = "token_projection"
) -> LinearEvidence:
    """Run Y = XW + b and its backward pass with seed G; keep every value the trace writes."""
    layer = Linear.from_parameters(weight, bias, name=name)
    bias_free = Linear.from_parameters(weight, None, name=name)
    if layer.bias is None:
        raise ArgumentError("The linear-layers trace compares affine with bias-free; pass a bias.")
    x = Tensor(inputs, requires_grad=True)
    layer.check_input(x)
    seed = np.array(upstream, dtype=np.float64)
    output = layer(x)
    if seed.shape != output.shape:
        raise ShapeError(
            f"The upstream gradient G must have the output's shape {output.shape}; "
            f"got {seed.shape}."
        )
    output.backward(seed)
    plain = bias_free(Tensor(inputs)).value  # XW: the weighted sums, without b

    d_in, d_out = layer.input_width, layer.output_width
    w, b = layer.weight.value, layer.bias.value
    leading = x.shape[:-1]
    x_rows = x.value.reshape(-1, d_in)  # (P, d_in), one row per leading position
    coordinates = tuple(
        _coordinate(tuple(int(i) for i in np.unravel_index(p, leading)))
        for p in range(x_rows.shape[0])
    )
    return LinearEvidence(
        parameter_prefix=name,
        input_shape=tuple(x.shape),
        output_shape=tuple(output.shape),
        coordinates=coordinates,
        weight=w.copy(),
        bias=b.copy(),
        inputs=x_rows.copy(),
        products=np.einsum("pi,ij->pji", x_rows, w),  # (P, d_out, d_in)
        weighted_sums=plain.reshape(-1, d_out).copy(),
        outputs=output.value.reshape(-1, d_out).copy(),
        upstream=seed.reshape(-1, d_out).copy(),
        input_gradients=x.grad.reshape(-1, d_in).copy(),
        weight_gradient=layer.weight.grad.copy(),
        bias_gradient=layer.bias.grad.copy(),
        affine_parameters=layer.parameter_count,
        bias_free_parameters=bias_free.parameter_count,
        bias_free_outputs=plain.reshape(-1, d_out).copy(),
        input_leading=tuple(leading),
        output_leading=tuple(output.shape[:-1]),
        leading_preserved=tuple(leading) == tuple(output.shape[:-1]),
    )


def linear_layers_trace(
    evidence: LinearEvidence, *, fixture: str = "known-affine-projection"
) -> Trace:
    """``TRACE linear-layers-v1``: the evidence of one pass written line by line."""
    e = evidence
    trace = Trace(TRACE_NAME)
    trace.line(
        "FIXTURE",
        name=fixture,
        parameter_prefix=e.parameter_prefix,
        input_width=e.input_width,
        output_width=e.output_width,
        bias=True,
        parameter_count=e.affine_parameters,
        input_shape=e.input_shape,
        output_shape=e.output_shape,
        upstream_shape=e.output_shape,
    )
    trace.line("INPUT", values=e.inputs)
    for feature in range(e.input_width):
        trace.line("WEIGHT-ROW", input_feature=feature, values=e.weight[feature])
    trace.line("BIAS", values=e.bias)
    for p, coordinate in enumerate(e.coordinates):
        for out in range(e.output_width):
            trace.line(
                "CELL",
                position=p,
                coordinate=coordinate,
                output_feature=out,
                input=e.inputs[p],
                products=e.products[p, out],
                weighted_sum=float(e.weighted_sums[p, out]),
                bias=float(e.bias[out]),
                result=float(e.outputs[p, out]),
            )
        trace.line(
            "POSITION-GRADIENT",
            position=p,
            coordinate=coordinate,
            upstream=e.upstream[p],
            input_gradient=e.input_gradients[p],
        )
    trace.line("WEIGHT-GRADIENT", shape=e.weight_gradient.shape, values=e.weight_gradient)
    trace.line("BIAS-GRADIENT", shape=e.bias_gradient.shape, values=e.bias_gradient)
    trace.line(
        "POLICY",
        affine_parameters=e.affine_parameters,
        bias_free_parameters=e.bias_free_parameters,
        bias_free_output=e.bias_free_outputs,
    )
    trace.line(
        "AXES",
        input_leading=e.input_leading,
        output_leading=e.output_leading,
        preserved=e.leading_preserved,
        mixed_axis="feature",
    )
    return trace


def _by_position(records: list[Record]) -> dict[int, list[Record]]:
    """Records grouped by their ``position=`` field, in position order."""
    grouped: dict[int, list[Record]] = {}
    for record in records:
        grouped.setdefault(record.integer("position"), []).append(record)
    return dict(sorted(grouped.items()))


def _rows(values: Any, *tail: int) -> np.ndarray:
    """Per-position values as one float array (P, *tail); (0, *tail) when there are none."""
    return np.array(values, dtype=np.float64).reshape(-1, *tail)


def read_linear_trace(text: str) -> LinearEvidence:
    """Parse a ``linear-layers-v1`` trace into a :class:`LinearEvidence` (six decimals)."""
    lines = read_records(text, TRACE_NAME, KINDS)
    fixture = lines["FIXTURE"][0]
    d_in, d_out = fixture.integer("input-width"), fixture.integer("output-width")
    rows = sorted(lines["WEIGHT-ROW"], key=lambda r: r.integer("input-feature"))
    weight = np.stack([r.numbers("values") for r in rows]).reshape(d_in, d_out)
    cells = [
        sorted(group, key=lambda r: r.integer("output-feature"))
        for group in _by_position(lines.get("CELL", [])).values()
    ]  # [position][output feature]
    gradients = [g[0] for g in _by_position(lines.get("POSITION-GRADIENT", [])).values()]
    if len(gradients) != len(cells):
        raise ArgumentError(
            f"TRACE {TRACE_NAME} has one POSITION-GRADIENT line per position; got "
            f"{len(gradients)} for {len(cells)} positions."
        )
    policy, axes = lines["POLICY"][0], lines["AXES"][0]
    return LinearEvidence(
        parameter_prefix=fixture.text("parameter-prefix"),
        input_shape=fixture.integers("input-shape"),
        output_shape=fixture.integers("output-shape"),
        coordinates=tuple(group[0].text("coordinate") for group in cells),
        weight=weight,
        bias=lines["BIAS"][0].numbers("values"),
        inputs=_rows([group[0].numbers("input") for group in cells], d_in),
        products=_rows([[r.numbers("products") for r in group] for group in cells], d_out, d_in),
        weighted_sums=_rows([[r.number("weighted-sum") for r in group] for group in cells], d_out),
        outputs=_rows([[r.number("result") for r in group] for group in cells], d_out),
        upstream=_rows([r.numbers("upstream") for r in gradients], d_out),
        input_gradients=_rows([r.numbers("input-gradient") for r in gradients], d_in),
        weight_gradient=lines["WEIGHT-GRADIENT"][0].numbers("values").reshape(d_in, d_out),
        bias_gradient=lines["BIAS-GRADIENT"][0].numbers("values"),
        affine_parameters=policy.integer("affine-parameters"),
        bias_free_parameters=policy.integer("bias-free-parameters"),
        bias_free_outputs=policy.numbers("bias-free-output").reshape(-1, d_out),
        input_leading=axes.integers("input-leading"),
        output_leading=axes.integers("output-leading"),
        leading_preserved=axes.flag("preserved"),
    )
