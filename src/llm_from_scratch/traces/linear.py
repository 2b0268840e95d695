"""The trace ``TRACE linear-layers-v1``: one affine projection, forward and backward, line by line.

:func:`linear_layers_trace` runs a :class:`~llm_from_scratch.nn.Linear` on a fixture (input X,
weight W, bias b, upstream gradient G = ∂L/∂Y), calls ``backward`` and writes what happened::

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

:func:`read_linear_trace` reads the text back into a :class:`LinearTraceView` for figures.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..autodiff import Tensor
from ..errors import ArgumentError, ShapeError
from ..traces import Record, Trace, parse_trace
from .linear import Linear

TRACE_NAME = "linear-layers-v1"


def _coordinate(index: tuple[int, ...]) -> str:
    """A leading coordinate as trace text: (0, 1) -> '0,1'; a vector's single position -> '()'."""
    return ",".join(str(int(i)) for i in index) if index else "()"


def linear_layers_trace(
    inputs: Any,
    weight: Any,
    bias: Any,
    upstream: Any,
    *,
    name: str = "token_projection",
    fixture: str = "known-affine-projection",
) -> Trace:
    """Run Y = XW + b and its backward pass with seed G, and record every step as a trace."""
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
    w, b, y = layer.weight.value, layer.bias.value, output.value
    leading = x.shape[:-1]
    x_rows = x.value.reshape(-1, d_in)  # (P, d_in), one row per leading position
    y_rows = y.reshape(-1, d_out)
    g_rows = seed.reshape(-1, d_out)
    dx_rows = x.grad.reshape(-1, d_in)
    sum_rows = plain.reshape(-1, d_out)

    trace = Trace(TRACE_NAME)
    trace.line(
        "FIXTURE",
        name=fixture,
        parameter_prefix=name,
        input_width=d_in,
        output_width=d_out,
        bias=True,
        parameter_count=layer.parameter_count,
        input_shape=x.shape,
        output_shape=output.shape,
        upstream_shape=seed.shape,
    )
    trace.line("INPUT", values=x.value)
    for feature in range(d_in):
        trace.line("WEIGHT-ROW", input_feature=feature, values=w[feature])
    trace.line("BIAS", values=b)
    for position in range(x_rows.shape[0]):
        coordinate = _coordinate(tuple(int(i) for i in np.unravel_index(position, leading)))
        for out in range(d_out):
            products = x_rows[position] * w[:, out]
            trace.line(
                "CELL",
                position=position,
                coordinate=coordinate,
                output_feature=out,
                input=x_rows[position],
                products=products,
                weighted_sum=float(sum_rows[position, out]),
                bias=float(b[out]),
                result=float(y_rows[position, out]),
            )
        trace.line(
            "POSITION-GRADIENT",
            position=position,
            coordinate=coordinate,
            upstream=g_rows[position],
            input_gradient=dx_rows[position],
        )
    trace.line("WEIGHT-GRADIENT", shape=layer.weight.grad.shape, values=layer.weight.grad)
    trace.line("BIAS-GRADIENT", shape=layer.bias.grad.shape, values=layer.bias.grad)
    trace.line(
        "POLICY",
        affine_parameters=layer.parameter_count,
        bias_free_parameters=bias_free.parameter_count,
        bias_free_output=plain,
    )
    trace.line(
        "AXES",
        input_leading=tuple(leading),
        output_leading=tuple(output.shape[:-1]),
        preserved=tuple(leading) == tuple(output.shape[:-1]),
        mixed_axis="feature",
    )
    return trace


def _shape(text: str) -> tuple[int, ...]:
    inner = text.strip("[]")
    return tuple(int(n) for n in inner.split(",")) if inner else ()


@dataclass(frozen=True)
class PositionView:
    """One leading position of the trace: its input, output cells and gradients."""

    position: int
    coordinate: str
    inputs: np.ndarray  # (d_in,)
    products: np.ndarray  # (d_out, d_in): products[j, i] = x[i] · W[i, j]
    weighted_sums: np.ndarray  # (d_out,)
    outputs: np.ndarray  # (d_out,)
    bias_free_outputs: np.ndarray  # (d_out,)
    upstream: np.ndarray  # (d_out,)
    input_gradient: np.ndarray  # (d_in,)


@dataclass(frozen=True)
class LinearTraceView:
    """Everything a linear-layers diagram draws, read back from the trace text."""

    fixture: str
    parameter_prefix: str
    input_width: int
    output_width: int
    input_shape: tuple[int, ...]
    output_shape: tuple[int, ...]
    weight: np.ndarray  # (d_in, d_out)
    bias: np.ndarray  # (d_out,)
    positions: tuple[PositionView, ...]
    weight_gradient: np.ndarray  # (d_in, d_out)
    bias_gradient: np.ndarray  # (d_out,)
    affine_parameters: int
    bias_free_parameters: int
    input_leading: tuple[int, ...]
    output_leading: tuple[int, ...]
    leading_preserved: bool


def read_linear_trace(text: str) -> LinearTraceView:
    """Parse a ``linear-layers-v1`` trace into arrays, one :class:`PositionView` per position."""
    name, records = parse_trace(text)
    if name != TRACE_NAME:
        raise ArgumentError(f"Expected a {TRACE_NAME} trace; got {name!r}.")
    by_kind: dict[str, list[Record]] = {}
    for record in records:
        by_kind.setdefault(record.kind, []).append(record)
    fixture = by_kind["FIXTURE"][0].fields
    d_in, d_out = int(fixture["input-width"]), int(fixture["output-width"])
    weight = np.stack([r.numbers("values") for r in by_kind["WEIGHT-ROW"]]).reshape(d_in, d_out)
    policy = by_kind["POLICY"][0]
    plain = policy.numbers("bias-free-output").reshape(-1, d_out)
    gradients = {int(r.fields["position"]): r for r in by_kind.get("POSITION-GRADIENT", [])}
    cells: dict[int, list[Record]] = {}
    for record in by_kind.get("CELL", []):
        cells.setdefault(int(record.fields["position"]), []).append(record)
    positions = []
    for position, rows in sorted(cells.items()):
        rows = sorted(rows, key=lambda r: int(r.fields["output-feature"]))
        grad = gradients[position]
        positions.append(
            PositionView(
                position=position,
                coordinate=rows[0].fields["coordinate"],
                inputs=rows[0].numbers("input"),
                products=np.stack([r.numbers("products") for r in rows]),
                weighted_sums=np.array([float(r.fields["weighted-sum"]) for r in rows]),
                outputs=np.array([float(r.fields["result"]) for r in rows]),
                bias_free_outputs=plain[position],
                upstream=grad.numbers("upstream"),
                input_gradient=grad.numbers("input-gradient"),
            )
        )
    axes = by_kind["AXES"][0].fields
    return LinearTraceView(
        fixture=fixture["name"],
        parameter_prefix=fixture["parameter-prefix"],
        input_width=d_in,
        output_width=d_out,
        input_shape=_shape(fixture["input-shape"]),
        output_shape=_shape(fixture["output-shape"]),
        weight=weight,
        bias=by_kind["BIAS"][0].numbers("values"),
        positions=tuple(positions),
        weight_gradient=by_kind["WEIGHT-GRADIENT"][0].numbers("values").reshape(d_in, d_out),
        bias_gradient=by_kind["BIAS-GRADIENT"][0].numbers("values"),
        affine_parameters=int(policy.fields["affine-parameters"]),
        bias_free_parameters=int(policy.fields["bias-free-parameters"]),
        input_leading=_shape(axes["input-leading"]),
        output_leading=_shape(axes["output-leading"]),
        leading_preserved=axes["preserved"] == "true",
    )
