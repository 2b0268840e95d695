"""The display-precision policy: no number a reader sees depends on the processor.

Floats computed on two machines differ in their last bits: numpy picks SIMD code paths per CPU,
the BLAS library picks a kernel per CPU, and a different summation order rounds differently.
Those differences are about 1e-15 relative to the value. So the book never shows a float's full
``repr``:

- every float a chapter glues or prints is **rounded to ``SIGNIFICANT`` (10) significant
  digits** first (:func:`rounded`, :func:`glue`, :func:`fmt`), five orders of magnitude above
  the noise and still more digits than a reader reads;
- a quantity that *is* rounding noise (a gradient-check residual, a gap of ``2.2e-16``, agreement
  with a reference) is shown as the **bound a test asserts**, ``"below 1e-9"``, through
  :func:`below`, which refuses to print a bound the value does not meet;
- a set chosen by comparing floats (which rows changed, which positions moved) uses an explicit
  tolerance, :func:`changed`, never ``!= 0``.

The exact values stay in the chapter's variables, where tests read them.

Numbers in prose: :func:`glue` records each value (myst-nb's glue, which nbval checks as a cell
output) and keeps its text in :data:`glued`, so a chapter's prose writes
``{eval}`glued["loss:.6f"]` `` and shows the same text in the built book (tools/eval_role.py
pastes the glued value, as ``{glue:text}`loss:.6f` `` did) and in JupyterLab (jupyterlab-myst
evaluates the expression in the kernel, so the sentence follows a fixture edit).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from typing import Any

import numpy as np

from .errors import ArgumentError

SIGNIFICANT = 10  # significant digits of every float the book shows
GUARD_DIGITS = 12  # a stored output showing more significant digits than this is a defect

__all__ = [
    "GUARD_DIGITS",
    "SIGNIFICANT",
    "array_text",
    "below",
    "bound_text",
    "changed",
    "fmt",
    "gap_text",
    "glue",
    "glued",
    "rounded",
]


def _round_float(x: float, significant: int = SIGNIFICANT) -> float:
    """x rounded to ``significant`` digits; -0.0 becomes 0.0, inf and nan pass."""
    if not math.isfinite(x):
        return x
    return float(f"{x:.{significant - 1}e}") + 0.0  # + 0.0 turns -0.0 into 0.0


def rounded(value: Any, significant: int = SIGNIFICANT) -> Any:
    """``value`` with every float in it rounded to 10 significant digits (numpy → Python types).

    ``significant`` may be raised up to GUARD_DIGITS where an absolute tolerance needs it (a
    predict-then-check answer near 1e6 checked to 1e-6 keeps 12).

    Floats, numpy floating scalars and float arrays are rounded; ints, bools and strings pass
    unchanged; lists, tuples and dicts are rounded item by item. A numpy array comes back as an
    array of the same shape; a 0-d array or numpy scalar comes back as a Python number.
    """
    if isinstance(value, bool | np.bool_ | str | bytes) or value is None:
        return bool(value) if isinstance(value, np.bool_) else value
    if not (isinstance(significant, int) and 1 <= significant <= GUARD_DIGITS):
        raise ArgumentError(
            f"significant must be an integer from 1 to {GUARD_DIGITS}; got {significant!r}."
        )
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            return rounded(value.item(), significant)
        if np.issubdtype(value.dtype, np.floating):
            one = np.vectorize(lambda x: _round_float(x, significant), otypes=[np.float64])
            return one(value.astype(np.float64))
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return _round_float(float(value), significant)
    if isinstance(value, Mapping):
        return {key: rounded(item, significant) for key, item in value.items()}
    if isinstance(value, list | tuple):
        items = [rounded(item, significant) for item in value]
        return items if isinstance(value, list) else tuple(items)
    return value


def fmt(value: Any, spec: str = "") -> str:
    """``format(rounded(value), spec)``: a float printed at a precision noise cannot reach."""
    return format(rounded(value), spec)


def array_text(
    values: Any, precision: int = 6, *, separator: str = ", ", fixed: bool = False
) -> str:
    """An array printed at ``precision`` decimals; noise such as ``-0.000000`` prints as 0.

    ``fixed=True`` keeps trailing zeros (``0.500000``); otherwise they are dropped (``0.5``).
    """
    array = np.round(np.asarray(values, dtype=np.float64), precision) + 0.0  # -0.0 -> 0.0
    return np.array2string(
        array,
        precision=precision,
        suppress_small=True,
        separator=separator,
        floatmode="fixed" if fixed else "maxprec",
    )


class Shown(str):
    """Text for prose whose repr is the text itself: a kernel shows it without quotes."""

    def __repr__(self) -> str:
        return str.__str__(self)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str.__str__(self))


class Glued:
    """The text of every value glued so far, formatted on request: ``glued["key:.6f"]``.

    ``glued["key"]`` or ``glued["key:spec"]`` is exactly what ``{glue:text}`key:spec` `` shows:
    myst-nb's own formatting (``format_plain_text``) of the glued value's ``text/plain``, the
    text nbval compares. A chapter's prose writes ``{eval}`glued["key:spec"]` ``; the book build
    pastes the glued value there (tools/eval_role.py) and jupyterlab-myst evaluates it in the
    kernel, so both show the same text, and JupyterLab follows a fixture edit.
    """

    def __init__(self) -> None:
        self._plain: dict[str, str] = {}

    def record(self, name: str, plain: str) -> None:
        self._plain[name] = plain

    def __getitem__(self, spec: str) -> Shown:
        from myst_nb.core.variables import format_plain_text

        key, fmt_spec = spec.rsplit(":", 1) if ":" in spec else (spec, "s")  # as {glue:text}
        if key not in self._plain:
            raise KeyError(f"nothing is glued as {key!r} yet: run the cell that glues it")
        return Shown(format_plain_text(self._plain[key], fmt_spec))

    def __contains__(self, key: object) -> bool:
        return key in self._plain

    def __repr__(self) -> str:
        return f"<glued text of {len(self._plain)} values: glued['key'] or glued['key:.6f']>"


glued = Glued()  # one per kernel: a chapter imports it beside glue


GLUE_PREFIX = "application/papermill.record/"  # myst-nb's mime prefix of a hidden glue


def glue(name: str, value: Any, display: bool = False) -> None:
    """``myst_nb.glue`` of ``rounded(value)``: glue every number in prose through this.

    The output is myst-nb's own, byte for byte (``myst_nb.ext.glue.glue``: the value's display
    data, under GLUE_PREFIX unless displayed, with ``scrapbook`` metadata naming it), written
    here because importing myst-nb's glue module imports nbformat and jsonschema, about a
    second of every kernel's start; tests/test_glue_output.py holds the two outputs equal.
    The glued text is also kept in :data:`glued`, for ``{eval}`glued["name:spec"]` `` in prose.
    """
    from IPython.core.formatters import format_display_data
    from IPython.display import display as ipy_display  # imported here: only kernels need it

    value = rounded(value)
    data, metadata = format_display_data(value)
    prefix = "" if display else GLUE_PREFIX
    metadata["scrapbook"] = dict(name=name, mime_prefix=prefix)
    ipy_display({prefix + k: v for k, v in data.items()}, raw=True, metadata=metadata)
    glued.record(name, data.get("text/plain", ""))


def bound_text(bound: float) -> str:
    """A bound as prose writes it: 1e-09 -> '1e-9', 0.5 -> '0.5'."""
    mantissa, _, exponent = f"{bound:g}".partition("e")
    return f"{mantissa}e{int(exponent)}" if exponent else mantissa


def below(value: Any, bound: float) -> str:
    """The text ``"below 1e-9"`` for a noise-level ``value``, if every ``|value| <= bound``.

    Use it for residuals and gaps that are rounding noise: the chapter then shows the bound its
    test asserts, not digits that change between machines. A value above the bound, or not a
    finite number, raises ArgumentError instead of printing a false claim.
    """
    worst = float(np.max(np.abs(np.asarray(value, dtype=np.float64))))
    if not math.isfinite(worst):
        raise ArgumentError(f"below() needs finite values; got {worst!r}.")
    if not worst <= bound:
        raise ArgumentError(
            f"the value {worst:.3e} is not below the stated bound {bound:g}: the text would be "
            "false. Fix the computation or state a larger bound (and test it)."
        )
    return f"below {bound_text(bound)}"


def gap_text(value: float, floor: float = 1e-12, spec: str = ".1e") -> str:
    """A difference as text: ``"below 1e-12"`` when it is rounding noise, else ``fmt(value)``."""
    return f"below {bound_text(floor)}" if abs(value) < floor else fmt(value, spec)


def changed(before: Any, after: Any, atol: float) -> list[int]:
    """Indices of the rows (first axis) whose largest |after - before| exceeds ``atol``."""
    a = np.asarray(before, dtype=np.float64)
    b = np.asarray(after, dtype=np.float64)
    if a.shape != b.shape or a.ndim == 0:
        raise ArgumentError(
            f"changed() compares two arrays of one shape with rows; got {a.shape} and {b.shape}."
        )
    gap = np.abs(b - a).reshape(a.shape[0], -1).max(axis=1)  # (rows,)
    return [int(i) for i in np.flatnonzero(gap > atol)]
