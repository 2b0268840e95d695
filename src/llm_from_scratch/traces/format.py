"""The text format of every trace: lines of ``KIND key=value``, written and read back.

A trace is a block of lines::

    TRACE linear-layers-v1 BEGIN
    FIXTURE name=known-affine-projection input-width=2 bias=true input-shape=[1,2,2]
    INPUT values=[1.000000,2.000000,-1.000000,3.000000]
    TRACE linear-layers-v1 END

Each body line is a KIND followed by ``key=value`` fields. :class:`Trace` writes them, rendering
values with :func:`format_value`: booleans as ``true``/``false``, integers as digits, floats with
six fixed decimals (:func:`fixed`), tuples of integers (shapes, position lists) as ``[1,2,2]``
and other sequences or arrays as flat fixed-precision lists. :func:`parse_trace` reads a trace
back into :class:`Record` lines, and :func:`read_records` checks its name and the kinds a reader
needs. :func:`trace_gaps` compares two evidence records field by field.

Precision: a float is printed to six decimals (so a value read back is within
:data:`TRACE_TOLERANCE` = 5e-7 of the original), with fewer decimals from 1e4 up so that no value
shows more than the book's :data:`~llm_from_scratch.precision.SIGNIFICANT` digits, and in
exponent form from 1e10 up. Noise in a float's last bits, which differs between processors,
sits far below the last printed digit.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import ArgumentError
from ..precision import SIGNIFICANT

DECIMALS = 6
TRACE_TOLERANCE = 0.5 * 10.0**-DECIMALS  # 5e-7: half the last printed decimal, for |value| < 1e4


def decimals_for(value: float) -> int:
    """Decimals :func:`fixed` prints: six, fewer from 1e4 up so at most 10 digits show."""
    magnitude = abs(float(value))
    if not math.isfinite(magnitude) or magnitude < 10.0 ** (SIGNIFICANT - DECIMALS):
        return DECIMALS
    whole_digits = math.floor(math.log10(magnitude)) + 1
    return max(SIGNIFICANT - whole_digits, 0)


def fixed(value: float) -> str:
    """A float with six fixed decimals (fewer above 1e4); negative zero prints as zero."""
    number = float(value)
    if math.isfinite(number) and abs(number) >= 10.0**SIGNIFICANT:
        return f"{number:.{SIGNIFICANT - 1}e}"
    text = f"{number:.{decimals_for(number)}f}"
    return text[1:] if text.startswith("-") and float(text) == 0.0 else text


def fixed_list(values: Any) -> str:
    """A flat, fixed-precision list: [1.000000,-0.500000]."""
    flat = np.asarray(values, dtype=np.float64).ravel()
    return "[" + ",".join(fixed(v) for v in flat) + "]"


def shape_text(shape: Sequence[int]) -> str:
    """A shape (or any tuple of integers) as [1,2,2]; an empty one as []."""
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
    """One parsed trace line: its kind and its fields as text, with typed readers."""

    kind: str
    fields: dict[str, str]

    def text(self, key: str) -> str:
        """A field's text; ArgumentError naming the line if the field is missing."""
        if key not in self.fields:
            raise ArgumentError(
                f"The {self.kind} line needs a field {key}=...; it has {sorted(self.fields)}."
            )
        return self.fields[key]

    def numbers(self, key: str) -> np.ndarray:
        """A list field as a flat float array: [1.000000,-0.500000] -> array([1.0, -0.5])."""
        inner = self.text(key).strip("[]")
        return np.array([float(v) for v in inner.split(",")] if inner else [], dtype=np.float64)

    def number(self, key: str) -> float:
        """A float field: 5.500000 -> 5.5."""
        return float(self.text(key))

    def integer(self, key: str) -> int:
        """An integer field: 3 -> 3."""
        return int(self.text(key))

    def integers(self, key: str) -> tuple[int, ...]:
        """A shape or integer-list field: [1,2,2] -> (1, 2, 2); [] -> ()."""
        inner = self.text(key).strip("[]")
        return tuple(int(n) for n in inner.split(",")) if inner else ()

    def flag(self, key: str) -> bool:
        """A boolean field: true -> True, false -> False."""
        text = self.text(key)
        if text not in ("true", "false"):
            raise ArgumentError(f"{self.kind} {key}= must be true or false; got {text!r}.")
        return text == "true"


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
        if not all("=" in pair for pair in pairs):
            raise ArgumentError(f"Each field of a trace line is key=value; got {line!r}.")
        records.append(Record(kind, dict(pair.split("=", 1) for pair in pairs)))
    return name, records


def read_records(text: str, name: str, kinds: Iterable[str]) -> dict[str, list[Record]]:
    """Parse a ``TRACE name`` and group its records by kind; every kind in ``kinds`` must occur."""
    found, records = parse_trace(text)
    if found != name:
        raise ArgumentError(f"Expected a TRACE {name}; got TRACE {found}.")
    by_kind: dict[str, list[Record]] = {}
    for record in records:
        by_kind.setdefault(record.kind, []).append(record)
    missing = [kind for kind in kinds if kind not in by_kind]
    if missing:
        raise ArgumentError(f"TRACE {name} needs {', '.join(missing)} lines; found none.")
    return by_kind


def trace_gaps(exact: Any, traced: Any) -> dict[str, float]:
    """{field: max |traced − exact|} over two evidence records of one dataclass type.

    Float arrays give their largest absolute gap (0.0 when empty); every other field (names,
    counts, shapes, boolean verdicts) gives 0.0 if equal and ``inf`` if not, so one bound on
    ``max(gaps.values())`` checks a whole round trip through the text.
    """
    if type(exact) is not type(traced) or not dataclasses.is_dataclass(exact):
        raise ArgumentError(
            "trace_gaps compares two evidence records of one dataclass type; got "
            f"{type(exact).__name__} and {type(traced).__name__}."
        )
    gaps = {}
    for item in dataclasses.fields(exact):
        a, b = getattr(exact, item.name), getattr(traced, item.name)
        if isinstance(a, np.ndarray) and np.issubdtype(a.dtype, np.floating):
            b = np.asarray(b, dtype=np.float64)
            if a.shape != b.shape:
                gaps[item.name] = math.inf
            else:
                gaps[item.name] = float(np.max(np.abs(b - a))) if a.size else 0.0
        else:
            gaps[item.name] = 0.0 if np.array_equal(a, b) else math.inf
    return gaps
