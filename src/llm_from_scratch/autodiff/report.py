"""A gradient-check report over every registered op, for the book and for a quick health check.

Each op carries its own example (``@op(example=Example(...))`` in its module): a call of the op
on small inputs chosen to exercise what can go wrong in its VJP (broadcasting for the arithmetic
ops, repeated indices for ``getitem``, a batched product for ``matmul``, inputs kept away from
``relu``'s kink and inside ``log``'s and ``sqrt``'s domains). :func:`gradcheck_rows` draws each
example's inputs from its own SplitMix64 stream, runs :func:`gradcheck` on it and returns one row
per op; :func:`gradcheck_table_markdown` renders the rows. So registering an op is all it takes
for it to appear in the table and in the unit tests.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np

from ..precision import below
from ..random import SplitMix64
from .gradcheck import gradcheck
from .registry import OPS, Example
from .tensor import Tensor

__all__ = ["GradcheckRow", "example_inputs", "gradcheck_rows", "gradcheck_table_markdown"]

TABLE_NOISE_BOUND = 1e-8  # every registered op's example checks far below this (tested)


@dataclass(frozen=True)
class GradcheckRow:
    """The outcome of one op's check."""

    op: str
    input_shapes: tuple[tuple[int, ...], ...]
    output_shape: tuple[int, ...]
    note: str
    max_abs_error: float
    passed: bool


def example_inputs(name: str, example: Example, seed: int = 0) -> tuple[np.ndarray, ...]:
    """The example's inputs, drawn from a stream of their own (seed and the op's name)."""
    rng = SplitMix64(seed * 2**32 + zlib.crc32(name.encode()))
    if example.domain == "positive":
        return tuple(rng.uniform(0.5, 2.0, shape) for shape in example.shapes)
    if example.domain == "any":
        return tuple(rng.uniform(-1.0, 1.0, shape) for shape in example.shapes)
    inputs = []  # away from zero: 0.2 ≤ |x| < 1.2, signs alternating
    for shape in example.shapes:
        signs = np.where(np.arange(int(np.prod(shape))).reshape(shape) % 2 == 0, 1.0, -1.0)
        inputs.append(rng.uniform(0.2, 1.2, shape) * signs)
    return tuple(inputs)


def gradcheck_rows(seed: int = 0, step: float = 1e-6, atol: float = 1e-6) -> list[GradcheckRow]:
    """Run :func:`gradcheck` on every registered op's example, in registration order."""
    rows = []
    for name, registered in OPS.items():
        example = registered.example
        inputs = example_inputs(name, example, seed)
        result = gradcheck(example.call, inputs, step=step, atol=atol, name=name)
        output_shape = example.call(*[Tensor(x) for x in inputs]).shape
        rows.append(
            GradcheckRow(
                op=name,
                input_shapes=tuple(x.shape for x in inputs),
                output_shape=tuple(output_shape),
                note=example.note,
                max_abs_error=result.max_abs_error,
                passed=result.passed,
            )
        )
    return rows


def _shape_text(shape: tuple[int, ...]) -> str:
    return "[" + ", ".join(str(n) for n in shape) + "]"


def gradcheck_table_markdown(rows: list[GradcheckRow]) -> str:
    """A Markdown table: op, input shapes, output shape, case, error bound, verdict.

    A passing row's error is rounding noise whose digits differ between CPUs, so it is shown as
    the bound the tests assert (``below 1e-8``, :data:`TABLE_NOISE_BOUND`); a row above it shows
    its value.
    """
    lines = [
        "| op | input shapes | output shape | case | max abs error | passed |",
        "| --- | --- | --- | --- | ---: | --- |",
    ]
    for row in rows:
        shapes = ", ".join(_shape_text(s) for s in row.input_shapes)
        note = row.note.replace("|", "\\|")  # a bare | would end the Markdown cell
        verdict = "yes" if row.passed else "**no**"
        error = (
            below(row.max_abs_error, TABLE_NOISE_BOUND)
            if row.max_abs_error <= TABLE_NOISE_BOUND
            else f"{row.max_abs_error:.1e}"
        )
        lines.append(
            f"| `{row.op}` | {shapes} | {_shape_text(row.output_shape)} | {note} "
            f"| {error} | {verdict} |"
        )
    return "\n".join(lines)
