"""Every mutant against every check: the matrix of what catches what.

A cell is ``caught`` when the check fails (or raises one of the package's errors) with the
mutant on, ``missed`` when it passes although it reached the mutated piece, and ``n/a`` when the
check never called that piece: it cannot catch what it does not run. The clean row runs every
check with no mutant on; each must pass.
"""

from __future__ import annotations

import functools
import inspect
import time
from collections.abc import Iterable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any

from ..errors import ArgumentError, FromScratchError
from ..validate import received
from .catalogue import MUTANTS, mutant
from .checks import CHECKS, Outcome
from .switch import Mutant, patched, seam_of, switched

__all__ = ["CAUGHT", "MISSED", "NOT_APPLICABLE", "Cell", "Matrix", "run_check", "run_matrix"]

CAUGHT, MISSED, NOT_APPLICABLE = "caught", "missed", "n/a"


@dataclass(frozen=True)
class Cell:
    """One check run with one mutant on: its status, the check's reason and the time it took.

    A cell that run_matrix knows to be n/a from the check's clean run is not run: 0 seconds.
    """

    status: str  # CAUGHT, MISSED or NOT_APPLICABLE
    reason: str
    seconds: float


@dataclass(frozen=True)
class Matrix:
    """The clean run of every check and the cell of every (mutant, check) pair."""

    mutants: tuple[str, ...]
    checks: tuple[str, ...]
    clean: dict[str, Outcome]
    cells: dict[tuple[str, str], Cell]
    seconds: float

    def status(self, mutant: str, check: str) -> str:
        """CAUGHT, MISSED or NOT_APPLICABLE."""
        _known(mutant, self.mutants, "mutant")
        _known(check, self.checks, "check")
        return self.cells[mutant, check].status

    def catchers(self, mutant: str) -> list[str]:
        """The checks that caught ``mutant``, in check order."""
        _known(mutant, self.mutants, "mutant")
        return [c for c in self.checks if self.status(mutant, c) == CAUGHT]

    def caught_by_check(self, check: str) -> list[str]:
        """The mutants ``check`` caught, in catalogue order."""
        _known(check, self.checks, "check")
        return [m for m in self.mutants if self.status(m, check) == CAUGHT]


def _known(name: object, names: Iterable[str], what: str) -> str:
    """``name`` if it is one of ``names`` (a str), else ArgumentError listing them."""
    listed = list(names)
    if not isinstance(name, str) or name not in listed:
        raise ArgumentError(f"This matrix knows the {what}s {listed}; got {name!r}.")
    return name


def _names(names: object, what: str) -> list[object]:
    """The items of an iterable of names (a bare string is one name, not its letters)."""
    if isinstance(names, str):
        return [names]
    if not isinstance(names, Iterable):
        raise ArgumentError(
            f"run_matrix takes an iterable of {what} names or None; got {names!r} "
        )
    return list(names)


def _outcome(check: str) -> Outcome:
    """The check's outcome; one of the package's errors counts as a failure with its message."""
    try:
        return CHECKS[check].run()
    except FromScratchError as error:
        return Outcome(False, f"raised {type(error).__name__}: {error}")


def run_check(wrong: str | Mutant | None, check: str) -> Cell:
    """Run ``check`` with a mutant on (a catalogue name or a Mutant; None: the clean package)."""
    _known(check, CHECKS, "check")
    if wrong is not None and not isinstance(wrong, Mutant):
        mutant(wrong)  # a name of the catalogue, or ArgumentError listing them
    start = time.perf_counter()
    if wrong is None:
        outcome = _outcome(check)
        return Cell(
            MISSED if outcome.passed else CAUGHT, outcome.reason, time.perf_counter() - start
        )
    entry = wrong if isinstance(wrong, Mutant) else mutant(wrong)
    with switched(entry) as switch:
        outcome = _outcome(check)
    seconds = time.perf_counter() - start
    if not switch.reached():
        return Cell(NOT_APPLICABLE, f"never calls {entry.seam}", seconds)
    return Cell(MISSED if outcome.passed else CAUGHT, outcome.reason, seconds)


@contextmanager
def _spied(seams: Iterable[str]) -> Iterator[dict[str, int]]:
    """Count the calls of each seam's piece inside the block; the pieces behave as they are.

    Each seam that holds a plain function is wrapped by one that counts and calls it (a seam
    holding anything else is left alone and never counted). The originals are put back on any
    exit, by ``patched``, as in ``switched``.
    """
    calls: dict[str, int] = {}
    with ExitStack() as stack:
        for name in dict.fromkeys(seams):
            seam = seam_of(name)
            if not inspect.isfunction(seam.original):
                continue
            calls[name] = 0

            def counted(
                *args: Any, _name: str = name, _piece: Any = seam.original, **kw: Any
            ) -> Any:
                calls[_name] += 1
                return _piece(*args, **kw)

            stack.enter_context(patched(seam, functools.update_wrapper(counted, seam.original)))
        yield calls


def run_matrix(
    mutants: Iterable[str] | None = None, checks: Iterable[str] | None = None
) -> Matrix:
    """Run the clean package and every mutant against every check (all by default).

    The clean run of each check counts the calls of every mutant's seam. A check whose clean
    run never calls a mutant's piece runs exactly as it did clean with that mutant on (the run
    is the same up to the first call of the piece, and there is none), so its cell is n/a
    without running it again (0 seconds); every other cell is run with its mutant on.
    """
    start = time.perf_counter()
    chosen = list(MUTANTS) if mutants is None else _names(mutants, "mutant")
    for name in chosen:
        if not isinstance(name, str) or name not in MUTANTS:
            raise ArgumentError(
                f"run_matrix knows the mutants {list(MUTANTS)}; got {name!r} in "
                f"{received(mutants)}."
            )
    mutant_names = tuple(str(m) for m in chosen)
    check_names = tuple(CHECKS if checks is None else _names(checks, "check"))
    for name in check_names:
        if not isinstance(name, str) or name not in CHECKS:
            raise ArgumentError(
                f"run_matrix knows the checks {list(CHECKS)}; got {name!r} in {received(checks)}."
            )
    seams = [MUTANTS[m].seam for m in mutant_names]
    clean: dict[str, Outcome] = {}
    unreached: dict[str, set[str]] = {}  # check → the counted seams its clean run never called
    for c in check_names:
        with _spied(seams) as calls:
            clean[c] = _outcome(c)
        unreached[c] = {seam for seam, count in calls.items() if count == 0}
    cells = {
        (m, c): (
            Cell(NOT_APPLICABLE, f"never calls {MUTANTS[m].seam}", 0.0)
            if MUTANTS[m].seam in unreached[c]
            else run_check(m, c)
        )
        for m in mutant_names
        for c in check_names
    }
    return Matrix(mutant_names, check_names, clean, cells, time.perf_counter() - start)
