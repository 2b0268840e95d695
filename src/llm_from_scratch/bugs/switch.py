"""Switching one mutant on: replace one attribute (the seam), count its calls, always restore.

A seam is written ``"package.module:attribute"`` or ``"package.module:Class.attribute"``: a
module-level function that the package looks up by name at call time (``ops.layer_norm``,
``attention.split_heads``) or a method on a class (``AdamW.step``). Switching a mutant on sets
that one attribute to the mutant's replacement for the length of a ``with`` block and puts the
original back in ``finally``, whether the block ends, returns or raises. The clean modules hold
no flag and no branch for any bug: the seam is an ordinary name lookup.

Objects built while a mutant is on keep what it built (a Linear built with an extra bias keeps
it after the block ends); switch a mutant on before building what should carry it.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, NamedTuple

from ..errors import ArgumentError
from ..validate import received

__all__ = ["Mutant", "Seam", "Switch", "patched", "resolve_seam", "seam_of", "switched"]


@dataclass(frozen=True)
class Mutant:
    """A named wrong variant of one piece of the package, and the checks that must catch it."""

    name: str  # e.g. "unbiased-layernorm-variance"
    chapter: int  # the chapter that builds the piece
    piece: str  # the piece, as the chapter names it: "LayerNorm's variance"
    wrong: str  # the mistake, in one sentence
    seam: str  # the one attribute replaced: "llm_from_scratch.autodiff.ops:layer_norm"
    make: Callable[[Any], Any]  # original → the wrong replacement
    caught_by: frozenset[str]  # the checks that must fail while it is on (CI asserts it)


@dataclass
class Switch:
    """What ``with bug(name) as switch`` gives: the mutant and how often its seam was reached."""

    mutant: Mutant
    hits: int = 0  # calls of the replacement while the mutant was on

    def reached(self) -> bool:
        """True once the code under test has called the replaced piece at least once."""
        return self.hits > 0


_active: list[str] = []  # the mutant switched on now, if any (one at a time)


def resolve_seam(seam: str) -> tuple[Any, str]:
    """(owner, attribute name) for ``"module:attribute"`` or ``"module:Class.attribute"``."""
    if not isinstance(seam, str):
        raise ArgumentError(
            f"A seam is a string 'package.module:attribute' or 'package.module:Class.attribute';"
            f" got {received(seam)}."
        )
    module_name, _, path = seam.partition(":")
    parts = path.split(".")
    if not module_name or not path or not all(parts):
        raise ArgumentError(
            f"A seam is written 'package.module:attribute' or 'package.module:Class.attribute'; "
            f"got {seam!r}."
        )
    try:
        owner: Any = importlib.import_module(module_name)
    except ImportError as error:  # ModuleNotFoundError included
        raise ArgumentError(
            f"The seam {seam!r} names a module that cannot be imported ({error}). Write the "
            "module's dotted name, e.g. 'llm_from_scratch.nn.norms:...'."
        ) from error
    for part in parts[:-1]:
        if not hasattr(owner, part):
            raise ArgumentError(
                f"The seam {seam!r} names no attribute: {owner!r} has no {part!r}. The piece "
                "was renamed or moved; point the mutant at its new name."
            )
        owner = getattr(owner, part)
    if not hasattr(owner, parts[-1]):
        raise ArgumentError(
            f"The seam {seam!r} names no attribute: {owner!r} has no {parts[-1]!r}. The piece "
            "was renamed or moved; point the mutant at its new name."
        )
    return owner, parts[-1]


def _counting(replacement: Callable[..., Any], switch: Switch) -> Callable[..., Any]:
    """The replacement, counting its calls in ``switch.hits``."""

    @functools.wraps(replacement)
    def counted(*args: Any, **kwargs: Any) -> Any:
        switch.hits += 1
        return replacement(*args, **kwargs)

    return counted


class Seam(NamedTuple):
    """A resolved seam: where its attribute lives and what it holds now."""

    owner: Any
    attribute: str
    had_own: bool  # False for an inherited method: deleted again on restore, not copied down
    original: Any


def seam_of(seam: str) -> Seam:
    """The resolved seam ``"module:attribute"`` or ``"module:Class.attribute"``, as it is now."""
    owner, attribute = resolve_seam(seam)
    own = vars(owner)
    had_own = attribute in own
    return Seam(
        owner, attribute, had_own, own[attribute] if had_own else getattr(owner, attribute)
    )


@contextmanager
def patched(seam: Seam, replacement: Any) -> Iterator[None]:
    """The seam's attribute set to ``replacement`` in the block; the original back on any exit."""
    if not isinstance(seam, Seam):
        raise ArgumentError(
            f"patched() takes a resolved Seam, as seam_of('package.module:attribute') returns; "
            f"got {received(seam)}."
        )
    try:
        setattr(seam.owner, seam.attribute, replacement)
        yield
    finally:
        if seam.had_own:
            setattr(seam.owner, seam.attribute, seam.original)
        elif vars(seam.owner).get(seam.attribute) is replacement:
            delattr(seam.owner, seam.attribute)


@contextmanager
def switched(mutant: Mutant) -> Iterator[Switch]:
    """Replace the mutant's seam inside the block and restore the original on any exit.

    Any exit includes an exception of any kind, KeyboardInterrupt too: the original is put back
    before anything else happens, and a refused nested switch leaves the outer one untouched.
    """
    if not isinstance(mutant, Mutant):
        raise ArgumentError(
            f"switched() takes a Mutant (see bugs.MUTANTS, or bug(name) by name); got "
            f"{received(mutant)}."
        )
    if _active:
        raise ArgumentError(
            f"bug() switches on one mutant at a time; {_active[0]!r} is already on, so "
            f"{mutant.name!r} cannot be nested inside it. Leave the first with-block first."
        )
    seam = seam_of(mutant.seam)
    switch = Switch(mutant)
    wrong = mutant.make(seam.original)
    if not callable(wrong):
        raise ArgumentError(
            f"The mutant {mutant.name!r}'s make(original) must return the wrong replacement, a "
            f"callable; got {received(wrong)}."
        )
    _active.append(mutant.name)
    try:
        with patched(seam, _counting(wrong, switch)):
            yield switch
    finally:
        _active.clear()
