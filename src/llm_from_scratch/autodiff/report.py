"""A gradient-check report over every registered op, for the book and for a quick health check.

Each op in :data:`OPS` has one small deterministic case here: a function of tensors and inputs
drawn from a SplitMix64 stream, chosen to exercise what can go wrong in its VJP (broadcasting for
the arithmetic ops, repeated indices for ``getitem``, a batched product for ``matmul``, inputs kept
away from ``relu``'s kink and inside ``log``'s and ``sqrt``'s domains). :func:`gradcheck_rows`
runs :func:`gradcheck` on each and returns one row per op; :func:`gradcheck_table_markdown` renders
the rows. An op registered without a case here is an error, not a silent omission.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..errors import ArgumentError
from ..precision import below
from ..random import SplitMix64
from . import ops
from .gradcheck import gradcheck
from .registry import OPS
from .tensor import Tensor

__all__ = [
    "GradcheckCase",
    "GradcheckRow",
    "MissingCaseError",
    "gradcheck_cases",
    "gradcheck_rows",
    "gradcheck_table_markdown",
    "missing_cases",
]

TABLE_NOISE_BOUND = 1e-8  # every registered op's case checks far below this (tested)


class MissingCaseError(ArgumentError):
    """A registered op has no gradient-check case in the report."""


@dataclass(frozen=True)
class GradcheckCase:
    """One op's check: ``fn`` applied to ``inputs`` (float64 arrays), with a short note."""

    op: str
    fn: Callable[..., Tensor]
    inputs: tuple[np.ndarray, ...]
    note: str


@dataclass(frozen=True)
class GradcheckRow:
    """The outcome of one op's check."""

    op: str
    input_shapes: tuple[tuple[int, ...], ...]
    output_shape: tuple[int, ...]
    note: str
    max_abs_error: float
    passed: bool


def _away_from_zero(rng: SplitMix64, shape: tuple[int, ...]) -> np.ndarray:
    """Entries with 0.2 ≤ |x| < 1.2 and alternating signs: safe for kinks and divisions."""
    magnitude = rng.uniform(0.2, 1.2, shape)
    signs = np.where(np.arange(magnitude.size).reshape(shape) % 2 == 0, 1.0, -1.0)
    return magnitude * signs


def gradcheck_cases(seed: int = 0) -> dict[str, GradcheckCase]:
    """One deterministic case per registered op, inputs drawn from ``SplitMix64(seed)``."""
    rng = SplitMix64(seed)

    def u(*shape: int) -> np.ndarray:
        return rng.uniform(-1.0, 1.0, shape)

    def positive(*shape: int) -> np.ndarray:
        return rng.uniform(0.5, 2.0, shape)

    mask = np.array([[False, True, False], [True, False, False]])
    gather = np.array([2, 0, 2])  # index 2 twice: its gradient must be a sum
    angles = SplitMix64(seed + 1).uniform(-3.0, 3.0, (2,))  # own stream: other cases unchanged
    cos = np.repeat(np.cos(angles), 2)
    sin = np.stack([-np.sin(angles), np.sin(angles)], axis=-1).ravel()
    causal = np.triu(np.ones((3, 3), dtype=bool), 1)
    norm_rng = SplitMix64(seed + 2)  # its own stream too: the cases after it keep their inputs
    cases = [
        GradcheckCase("add", lambda a, b: a + b, (u(2, 3), u(3)), "[3] broadcast over rows"),
        GradcheckCase("sub", lambda a, b: a - b, (u(2, 1), u(1, 3)), "both sides broadcast"),
        GradcheckCase("mul", lambda a, b: a * b, (u(2, 3), u(2, 1)), "[2, 1] broadcast"),
        GradcheckCase(
            "div",
            lambda a, b: a / b,
            (u(2, 3), _away_from_zero(rng, (3,))),
            "divisor at least 0.2 in size",
        ),
        GradcheckCase("neg", lambda a: -a, (u(2, 3),), "elementwise"),
        GradcheckCase("power", lambda a: a**3, (u(2, 3),), "exponent 3"),
        GradcheckCase("exp", lambda a: a.exp(), (u(2, 3),), "elementwise"),
        GradcheckCase("log", lambda a: a.log(), (positive(2, 3),), "inputs in [0.5, 2)"),
        GradcheckCase("sqrt", lambda a: a.sqrt(), (positive(2, 3),), "inputs in [0.5, 2)"),
        GradcheckCase("tanh", lambda a: a.tanh(), (u(2, 3),), "elementwise"),
        GradcheckCase("sigmoid", lambda a: a.sigmoid(), (u(2, 3),), "elementwise"),
        GradcheckCase("silu", lambda a: a.silu(), (u(2, 3),), "elementwise"),
        GradcheckCase(
            "relu",
            lambda a: a.relu(),
            (_away_from_zero(rng, (2, 3)),),
            "at least 0.2 from the kink",
        ),
        GradcheckCase("gelu", lambda a: a.gelu(), (u(2, 3),), "exact erf form"),
        GradcheckCase(
            "masked_fill", lambda a: a.masked_fill(mask, -5.0), (u(2, 3),), "two entries masked"
        ),
        GradcheckCase("matmul", lambda a, b: a @ b, (u(2, 2, 3), u(3, 2)), "batched @ shared"),
        GradcheckCase("sum", lambda a: a.sum(axis=1), (u(2, 3),), "over axis 1"),
        GradcheckCase("softmax", lambda a: a.softmax(axis=-1), (u(2, 3),), "over the last axis"),
        GradcheckCase(
            "log_softmax", lambda a: a.log_softmax(axis=-1), (u(2, 3),), "over the last axis"
        ),
        GradcheckCase("reshape", lambda a: a.reshape(3, 2), (u(2, 3),), "[2, 3] → [3, 2]"),
        GradcheckCase("permute", lambda a: a.permute(2, 0, 1), (u(2, 3, 2),), "axes (2, 0, 1)"),
        GradcheckCase("getitem", lambda a: a[gather], (u(3, 2),), "rows [2, 0, 2]: repeats add"),
        GradcheckCase(
            "concat",
            lambda a, b: _concat(a, b),
            (u(2, 1), u(2, 2)),
            "along axis 1",
        ),
        GradcheckCase(
            "rms_norm",
            lambda a, g: ops.rms_norm(a, g, eps=1e-6),
            (u(2, 3), u(3)),
            "input and gain",
        ),
        GradcheckCase(
            "layer_norm",
            lambda a, g, b: ops.layer_norm(a, g, b, eps=1e-5),
            tuple(norm_rng.uniform(-1.0, 1.0, shape) for shape in ((2, 3), (3,), (3,))),
            "input, gain and bias",
        ),
        GradcheckCase(
            "pair_rotate",
            lambda a: ops.pair_rotate(a, cos=cos, sin=sin, partner=np.array([1, 0, 3, 2])),
            (u(2, 4),),
            "partners (1, 0, 3, 2)",
        ),
        GradcheckCase(
            "attention_weights",
            lambda q, k: ops.attention_weights(q, k, scale=0.5, blocked=causal, added=None),
            (u(1, 2, 3, 2), u(1, 2, 3, 2)),
            "causal, 2 heads",
        ),
    ]
    return {case.op: case for case in cases}


def _concat(a: Tensor, b: Tensor) -> Tensor:
    from .ops import concat

    return concat([a, b], axis=1)


def missing_cases(cases: dict[str, GradcheckCase] | None = None) -> list[str]:
    """Registered ops (in registration order) that have no case."""
    cases = gradcheck_cases() if cases is None else cases
    return [name for name in OPS if name not in cases]


def gradcheck_rows(seed: int = 0, step: float = 1e-6, atol: float = 1e-6) -> list[GradcheckRow]:
    """Run :func:`gradcheck` on every registered op's case, in registration order."""
    cases = gradcheck_cases(seed)
    missing = missing_cases(cases)
    if missing:
        raise MissingCaseError(
            f"Every registered op needs a gradient-check case in autodiff/report.py; "
            f"no case for {missing}. Add one to gradcheck_cases()."
        )
    rows = []
    for name in OPS:
        case = cases[name]
        result = gradcheck(case.fn, case.inputs, step=step, atol=atol, name=name)
        output_shape = case.fn(*[Tensor(x) for x in case.inputs]).shape
        rows.append(
            GradcheckRow(
                op=name,
                input_shapes=tuple(x.shape for x in case.inputs),
                output_shape=tuple(output_shape),
                note=case.note,
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
