"""Switching mutants under attack (issue 28): every exit restores every seam; bad names refused.

A KeyboardInterrupt (or any BaseException) raised inside ``with bug(...)`` leaves every seam of the
catalogue holding its original function, whether the block was the only one or a refused nested
switch sat inside it; seams, mutants, checks and matrix lookups that name nothing are refused with
the package's ArgumentError, never a raw ImportError, AttributeError or KeyError.
"""

from __future__ import annotations

import pytest

from llm_from_scratch.bugs import MUTANTS, Mutant, bug, run_check, run_matrix
from llm_from_scratch.bugs.matrix import Matrix
from llm_from_scratch.bugs.switch import patched, resolve_seam, seam_of, switched
from llm_from_scratch.errors import ArgumentError


def _every_seam() -> dict[str, object]:
    """Each distinct seam's current value, as its owner holds it (own or inherited)."""
    values = {}
    for entry in MUTANTS.values():
        owner, attribute = resolve_seam(entry.seam)
        values[entry.seam] = vars(owner).get(attribute, getattr(owner, attribute))
    return values


ORIGINAL = _every_seam()


def _assert_every_seam_is_original() -> None:
    now = _every_seam()
    changed = [seam for seam, value in now.items() if value is not ORIGINAL[seam]]
    assert not changed, f"seams left mutated: {changed}"


@pytest.mark.parametrize("name", sorted(MUTANTS))
@pytest.mark.parametrize("signal", [KeyboardInterrupt, SystemExit, GeneratorExit])
def test_an_interrupt_inside_the_block_restores_every_seam(name: str, signal: type) -> None:
    with pytest.raises(signal), bug(name):
        assert _every_seam()[MUTANTS[name].seam] is not ORIGINAL[MUTANTS[name].seam]
        raise signal
    _assert_every_seam_is_original()
    with bug(name):  # and the mutant can be switched on again: nothing is left marked active
        pass
    _assert_every_seam_is_original()


@pytest.mark.parametrize("outer", ["unbiased-layernorm-variance", "adam-coupled-weight-decay"])
def test_an_interrupt_after_a_refused_nested_switch_restores_every_seam(outer: str) -> None:
    with pytest.raises(KeyboardInterrupt), bug(outer):
        with pytest.raises(ArgumentError, match="one mutant at a time"), bug("rope-sign-flipped"):
            pass  # pragma: no cover
        assert _every_seam()[MUTANTS[outer].seam] is not ORIGINAL[MUTANTS[outer].seam]
        raise KeyboardInterrupt
    _assert_every_seam_is_original()
    with bug("rope-sign-flipped"):
        pass
    _assert_every_seam_is_original()


def test_a_mutant_whose_make_fails_leaves_nothing_switched_on() -> None:
    def broken(original):
        raise ArgumentError("no replacement today")

    entry = Mutant("broken", 5, "LayerNorm", "none", MUTANTS["rope-sign-flipped"].seam, broken, {})
    with pytest.raises(ArgumentError, match="no replacement"), switched(entry):
        pass  # pragma: no cover
    _assert_every_seam_is_original()
    not_callable = Mutant("inert", 5, "LayerNorm", "none", entry.seam, lambda original: 3, {})
    with pytest.raises(ArgumentError, match="callable"), switched(not_callable):
        pass  # pragma: no cover
    with bug("rope-sign-flipped"):
        pass
    _assert_every_seam_is_original()


@pytest.mark.parametrize(
    "seam",
    [
        "no_such_package.module:f",
        "llm_from_scratch.nn.norms:NoSuchClass.forward",
        "llm_from_scratch.nn.norms:LayerNorm.no_such_method",
        3,
        None,
        b"llm_from_scratch.nn.norms:LayerNorm",
    ],
)
def test_seams_that_name_nothing_are_refused_by_the_package(seam: object) -> None:
    with pytest.raises(ArgumentError, match="seam"):
        resolve_seam(seam)  # type: ignore[arg-type]


@pytest.mark.parametrize("wrong", ["llm_from_scratch.autodiff.ops:layer_norm", None, ("a", "b")])
def test_patched_takes_a_resolved_seam_and_changes_nothing_otherwise(wrong: object) -> None:
    with pytest.raises(ArgumentError, match="resolved Seam"), patched(wrong, len):  # type: ignore[arg-type]
        pass  # pragma: no cover
    _assert_every_seam_is_original()


def test_patched_puts_the_original_back() -> None:
    seam = seam_of("llm_from_scratch.autodiff.ops:layer_norm")
    with patched(seam, len):
        assert seam.owner.layer_norm is len
    assert seam.owner.layer_norm is seam.original
    _assert_every_seam_is_original()


@pytest.mark.parametrize("wrong", [3, None, "x", object()])
def test_switched_takes_a_mutant(wrong: object) -> None:
    with pytest.raises(ArgumentError), switched(wrong):  # type: ignore[arg-type]
        pass  # pragma: no cover
    _assert_every_seam_is_original()


@pytest.mark.parametrize("check", ["no-such-check", "", 3, None, ["shapes"]])
def test_run_check_refuses_a_check_that_does_not_exist(check: object) -> None:
    with pytest.raises(ArgumentError, match="checks"):
        run_check(None, check)  # type: ignore[arg-type]


@pytest.mark.parametrize("names", [3, ["no-such-bug"], [3], [None]])
def test_run_matrix_refuses_unknown_mutants_and_checks(names: object) -> None:
    with pytest.raises(ArgumentError):
        run_matrix(names, [])  # type: ignore[arg-type]
    with pytest.raises(ArgumentError):
        run_matrix([], names)  # type: ignore[arg-type]


def test_a_single_name_is_one_mutant_not_its_letters() -> None:
    matrix = run_matrix("unbiased-layernorm-variance", [])
    assert matrix.mutants == ("unbiased-layernorm-variance",)


def test_matrix_lookups_of_unknown_names_are_refused() -> None:
    matrix = Matrix(("m",), ("c",), {}, {}, 0.0)
    for call in (
        lambda: matrix.status("x", "c"),
        lambda: matrix.status("m", "x"),
        lambda: matrix.catchers("x"),
        lambda: matrix.caught_by_check(["c"]),
    ):
        with pytest.raises(ArgumentError, match="knows"):
            call()
