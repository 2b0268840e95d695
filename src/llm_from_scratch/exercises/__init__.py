"""Graders for the book's write-it-yourself exercises, one module per chapter.

Each grader takes the reader's code, runs it against an independent answer (finite differences,
a closed form, the package's own layer) and returns a :class:`Grade` whose message says what is
wrong: which entry, which shape, which case.
"""

from .grading import AnswerError, Grade, call, compare, expect, frozen, grader, require_callable

__all__ = [
    "AnswerError",
    "Grade",
    "call",
    "compare",
    "expect",
    "frozen",
    "grader",
    "require_callable",
]
