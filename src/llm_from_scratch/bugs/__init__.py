"""A zoo of plausible bugs: classic mistakes, each switchable, each caught by a named check.

``with bug("unbiased-layernorm-variance"): ...`` replaces one piece of the package by a wrong
variant for the length of the block (:mod:`.catalogue`); :data:`CHECKS` are the package's probes
and tests as pass/fail functions (:mod:`.checks`); :func:`run_matrix` runs every mutant against
every check (:mod:`.matrix`).
"""

from .catalogue import MUTANTS, bug, mutant
from .checks import CHECKS, Check, Outcome
from .matrix import CAUGHT, MISSED, NOT_APPLICABLE, Cell, Matrix, run_check, run_matrix
from .switch import Mutant, Switch

__all__ = [
    "CAUGHT",
    "CHECKS",
    "MISSED",
    "MUTANTS",
    "NOT_APPLICABLE",
    "Cell",
    "Check",
    "Matrix",
    "Mutant",
    "Outcome",
    "Switch",
    "bug",
    "mutant",
    "run_check",
    "run_matrix",
]
