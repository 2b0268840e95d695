"""Text traces in the seeds' format, for diagrams and tests.

A trace is a block of lines::

    TRACE linear-layers-v1 BEGIN
    FIXTURE name=known-affine-projection input-width=2 bias=true input-shape=[1,2,2]
    INPUT values=[1.000000,2.000000,-1.000000,3.000000]
    TRACE linear-layers-v1 END

Each body line is a KIND followed by ``key=value`` fields. Values are rendered by
:func:`format_value`: booleans as ``true``/``false``, integers as digits, floats with six fixed
decimals, sequences of integers (shapes) as ``[1,2,2]`` and other sequences or arrays as
fixed-precision lists. :func:`parse_trace` reads a trace back into ``(kind, fields)`` records.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .errors import ArgumentError

DECIMALS = 6


def fixed(value: float) -> str:
    """A float with six fixed decimals; negative zero prints as zero."""
    text = f"{float(value):.{DECIMALS}f}"
    return text[1:] if text.startswith("-") and float(text) == 0.0 else text


def fixed_list(values: Any) -> str:
    """A flat, fixed-precision list: [1.000000,-0.500000]."""
    flat = np.asarray(values, dtype=np.float64).ravel()
    return "[" + ",".join(fixed(v) for v in flat) + "]"


def shape_text(shape: Sequence[int]) -> str:
    """A shape as [1,2,2] (an empty shape as [])."""
    return "[" + ",".join(str(int(n)) for n in shape) + "]"


def format_value(value: Any) -> str:
    """Render one field value in the trace format."""
    if isinstance(value, bool | np.bool_):
        return "true" if value else "false"
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        return fixed(value)
    if isinstance(value, str):
        if not value or any(c.isspace() for c in value):
            raise ArgumentError(f"Trace text values must be non-empty without spaces; {value!r}.")
        return value
    if isinstance(value, tuple) and all(isinstance(n, int | np.integer) for n in value):
        return shape_text(value)
    return fixed_list(value)


@dataclass
class Trace:
    """A trace under construction: ``trace.line("INPUT", values=x)``, then ``str(trace)``."""

    name: str
    lines: list[str] = field(default_factory=list)

    def line(self, kind: str, **fields: Any) -> Trace:
        """Append ``KIND key=value ...``; underscores in keys become hyphens."""
        parts = [kind] + [f"{k.replace('_', '-')}={format_value(v)}" for k, v in fields.items()]
        self.lines.append(" ".join(parts))
        return self

    def render(self) -> str:
        """The whole trace, BEGIN and END lines included, newline-terminated."""
        header = f"TRACE {self.name} BEGIN"
        footer = f"TRACE {self.name} END"
        return "\n".join([header, *self.lines, footer]) + "\n"

    def __str__(self) -> str:
        return self.render()


@dataclass(frozen=True)
class Record:
    """One parsed trace line."""

    kind: str
    fields: dict[str, str]

    def numbers(self, key: str) -> np.ndarray:
        """A list field as a float array."""
        text = self.fields[key].strip("[]")
        return np.array([float(v) for v in text.split(",")] if text else [], dtype=np.float64)


def parse_trace(text: str) -> tuple[str, list[Record]]:
    """Read a trace back: its name and the body records, BEGIN/END checked."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    if len(lines) < 2 or not lines[0].startswith("TRACE ") or not lines[0].endswith(" BEGIN"):
        raise ArgumentError("A trace starts with 'TRACE <name> BEGIN'; got " + repr(lines[:1]))
    name = lines[0][len("TRACE ") : -len(" BEGIN")]
    if lines[-1] != f"TRACE {name} END":
        raise ArgumentError(f"Trace {name} must end with 'TRACE {name} END'; got {lines[-1]!r}.")
    records = []
    for line in lines[1:-1]:
        kind, *pairs = line.split(" ")
        records.append(Record(kind, dict(pair.split("=", 1) for pair in pairs)))
    return name, records
