"""Sentences checked like numbers: a qualitative statement in prose backed by its condition.

A chapter computes a result, glues its numbers into a sentence, and the sentence also says
something qualitative about them: "the loss falls", "every row sums to one", "pre-norm keeps
the larger gradient". :func:`claim` takes the condition that sentence asserts and a short
statement of it, in the cell that computes the result:

    claim(after < before, "the loss falls", before=before, after=after)

- If the condition holds, nothing is shown (the prose is true) and the claim is recorded.
- If it does not hold (a reader edited the fixture, say), the cell shows a visible note next to
  its result naming the statement and the values, so the page never keeps a false sentence
  silently. It never raises: the reader's run goes on.

The note is a display output whose metadata carries ``{"llm_from_scratch": {"claim": ...}}``,
so tools can list the claims a run broke (``failed_claims``): the book's tests require none
with the shipped fixtures and report which ones each tested fixture edit flips.

Where a sentence can follow the data instead, compute its wording rather than claiming it:
``glue("direction", "falls" if after < before else "rises")``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .errors import ArgumentError
from .precision import rounded

__all__ = ["CLAIM_KEY", "Claim", "claim", "claims_made", "failed_claims", "reset_claims"]

CLAIM_KEY = "llm_from_scratch"  # output metadata key of a broken claim's note


@dataclass(frozen=True)
class Claim:
    """One checked sentence: what it states, whether it held, and the values it was about."""

    statement: str
    holds: bool
    values: dict[str, Any] = field(default_factory=dict)

    def values_text(self) -> str:
        """The values as ``name = value`` pairs, rounded as every shown number is."""
        return ", ".join(f"{name} = {_value_text(value)}" for name, value in self.values.items())


_ledger: list[Claim] = []  # every claim made in this kernel, in order


def _value_text(value: Any) -> str:
    shown = rounded(value, 6)
    if isinstance(shown, np.ndarray):
        return np.array2string(shown, separator=", ")
    return repr(shown) if isinstance(shown, str) else str(shown)


def _as_condition(holds: Any) -> bool:
    """The condition as a Python bool; an array or a non-boolean is a mistake in the chapter."""
    if isinstance(holds, bool | np.bool_):
        return bool(holds)
    if isinstance(holds, np.ndarray) and holds.shape == () and holds.dtype == np.bool_:
        return bool(holds)
    received = (
        f"an array of shape {holds.shape}"
        if isinstance(holds, np.ndarray)
        else f"{type(holds).__name__} {holds!r}"
    )
    raise ArgumentError(
        f"claim() needs the condition as one bool (True or False); got {received}. "
        "Reduce it first, e.g. bool(np.all(rows > 0)) or bool(abs(gap) < 1e-9)."
    )


def _note(item: Claim) -> dict[str, str]:
    """The visible note for a claim that no longer holds: Markdown and plain text."""
    values = f" ({item.values_text()})" if item.values else ""
    plain = (
        f"⚠ The text says “{item.statement}”, but with these numbers it does not hold{values}. "
        "Read the sentences around this result with that in mind."
    )
    markdown = (
        f"> **⚠ No longer true for these numbers:** the text says “{item.statement}”, but it "
        f"does not hold{values}. Read the sentences around this result with that in mind."
    )
    return {"text/plain": plain, "text/markdown": markdown}


def claim(holds: Any, statement: str, **values: Any) -> None:
    """Record that the prose asserts ``statement``; show a visible note if ``holds`` is False.

    ``holds`` is the condition the sentence states, as one bool. ``values`` are the numbers it
    is about, shown in the note (rounded). It returns nothing, so a claim on a cell's last line
    shows nothing either. A false claim never raises: the note stands next to the result.
    """
    if not (isinstance(statement, str) and statement.strip()):
        raise ArgumentError(
            f"claim() needs a short statement of the sentence it backs; got {statement!r}."
        )
    condition = _as_condition(holds)
    item = Claim(statement.strip(), condition, dict(values))
    _ledger.append(item)
    if not condition:
        _show(item)


def _show(item: Claim) -> None:
    """Display the note in a notebook; outside IPython the claim is only recorded."""
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:  # pragma: no cover - IPython comes with the book's requirements
        return
    if get_ipython() is None:
        return
    metadata = {CLAIM_KEY: {"claim": item.statement, "values": item.values_text()}}
    display(_note(item), raw=True, metadata=metadata)


def claims_made() -> list[Claim]:
    """Every claim made so far in this process, in order."""
    return list(_ledger)


def reset_claims() -> None:
    """Forget the claims made so far (a test's fresh start)."""
    _ledger.clear()


def failed_claims(notebook: Any) -> list[str]:
    """The statements of the claims an executed notebook shows as no longer true, in order."""
    found = []
    for cell in notebook.get("cells", []):
        for output in cell.get("outputs", []):
            record = output.get("metadata", {}).get(CLAIM_KEY)
            if isinstance(record, dict) and "claim" in record:
                found.append(record["claim"])
    return found
