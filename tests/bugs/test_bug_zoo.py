"""The bug zoo's matrix: the clean package passes every check, each mutant is caught as claimed.

A weakened check fails here: every mutant must still be caught by each check its catalogue entry
names in ``caught_by``. Shape checks must reach every mutated piece and catch none of them, and
``bug()`` must put the original piece back on every exit.
"""

from __future__ import annotations

import numpy as np
import pytest

from llm_from_scratch.autodiff import Tensor
from llm_from_scratch.bugs import (
    CAUGHT,
    CHECKS,
    MISSED,
    MUTANTS,
    NOT_APPLICABLE,
    Mutant,
    bug,
    run_check,
    run_matrix,
)
from llm_from_scratch.bugs.switch import resolve_seam, switched
from llm_from_scratch.errors import ArgumentError, FromScratchError
from llm_from_scratch.nn import LayerNorm


@pytest.fixture(scope="module")
def matrix():
    return run_matrix()


def test_the_clean_package_passes_every_check(matrix) -> None:
    failed = {name: o.reason for name, o in matrix.clean.items() if not o.passed}
    assert not failed, f"checks that fail on the clean package: {failed}"
    assert set(matrix.clean) == set(CHECKS)


@pytest.mark.parametrize("name", list(MUTANTS))
def test_each_mutant_is_caught_by_every_check_its_entry_claims(matrix, name: str) -> None:
    missed = {
        check: f"{matrix.status(name, check)}: {matrix.cells[name, check].reason}"
        for check in sorted(MUTANTS[name].caught_by)
        if matrix.status(name, check) != CAUGHT
    }
    assert not missed, f"{name} is claimed caught by these checks, which let it through: {missed}"


def test_every_mutant_is_caught_by_at_least_one_check(matrix) -> None:
    uncaught = [m for m in matrix.mutants if not matrix.catchers(m)]
    assert not uncaught, f"mutants no check catches: {uncaught}"
    assert all(MUTANTS[m].caught_by for m in matrix.mutants), "every entry claims a catcher"


def test_shape_checks_reach_every_mutant_and_catch_none(matrix) -> None:
    statuses = {m: matrix.status(m, "shapes") for m in matrix.mutants}
    assert set(statuses.values()) == {MISSED}, statuses
    assert all("shapes" not in MUTANTS[m].caught_by for m in matrix.mutants)


def test_claims_name_real_checks_and_cells_are_classified() -> None:
    for entry in MUTANTS.values():
        assert entry.caught_by <= set(CHECKS), (entry.name, entry.caught_by - set(CHECKS))
        resolve_seam(entry.seam)  # the seam still names an attribute of the package


def test_model_mutants_are_true_functions_with_true_gradients(matrix) -> None:
    # Each wrong variant is written with the engine's ops, so finite differences agree with its
    # gradient: only the engine's own mutant can fail the gradient check.
    failing = [m for m in matrix.mutants if matrix.status(m, "gradcheck") == CAUGHT]
    assert failing == ["gradient-overwritten-at-shared-tensor"]


def test_not_applicable_means_the_piece_was_never_called(matrix) -> None:
    for (name, check), cell in matrix.cells.items():
        assert cell.status in (CAUGHT, MISSED, NOT_APPLICABLE)
        if cell.status == NOT_APPLICABLE:
            assert cell.reason == f"never calls {MUTANTS[name].seam}", (name, check)
            assert check not in MUTANTS[name].caught_by


# --- the switch ----------------------------------------------------------------------------------


def _seam_value(entry: Mutant) -> object:
    owner, attribute = resolve_seam(entry.seam)
    return vars(owner).get(attribute, getattr(owner, attribute))


def _layer_norm_of_two_tokens() -> np.ndarray:
    layer = LayerNorm.from_parameters(np.ones(2), np.zeros(2), eps=0.0)
    return layer(Tensor([[2.0, 4.0], [1.0, 3.0]])).value


@pytest.mark.parametrize("name", list(MUTANTS))
def test_bug_replaces_one_seam_and_restores_it_on_exit_and_on_error(name: str) -> None:
    entry = MUTANTS[name]
    original = _seam_value(entry)
    with bug(name) as switch:
        assert _seam_value(entry) is not original
        assert switch.mutant is entry and switch.hits == 0
    assert _seam_value(entry) is original
    with pytest.raises(ZeroDivisionError), bug(name):
        1 / 0  # noqa: B018
    assert _seam_value(entry) is original


def test_the_wrong_value_is_seen_inside_and_the_right_one_after() -> None:
    right = _layer_norm_of_two_tokens()
    with bug("unbiased-layernorm-variance") as switch:
        wrong = _layer_norm_of_two_tokens()
    np.testing.assert_allclose(right, [[-1.0, 1.0], [-1.0, 1.0]], atol=1e-15)
    np.testing.assert_allclose(wrong, right / np.sqrt(2.0), atol=1e-15)  # √((D − 1)/D), D = 2
    assert switch.hits == 1 and switch.reached()
    np.testing.assert_array_equal(_layer_norm_of_two_tokens(), right)


def test_nesting_is_refused_and_leaves_the_outer_mutant_on() -> None:
    with bug("unbiased-layernorm-variance"):
        refused = pytest.raises(ArgumentError, match=r"one mutant at a time.*unbiased-layernorm")
        with refused, bug("rope-sign-flipped"):
            pass  # pragma: no cover
        assert not np.allclose(_layer_norm_of_two_tokens(), [[-1.0, 1.0], [-1.0, 1.0]])
    with bug("rope-sign-flipped"):  # the refusal left nothing switched on
        pass


@pytest.mark.parametrize("name", ["no-such-bug", "", None, 3])
def test_unknown_names_are_refused_with_the_catalogue_listed(name: object) -> None:
    with pytest.raises(ArgumentError) as error, bug(name):  # type: ignore[arg-type]
        pass  # pragma: no cover
    assert isinstance(error.value, FromScratchError)
    assert "unbiased-layernorm-variance" in str(error.value) and repr(name) in str(error.value)


def test_a_seam_that_names_nothing_is_refused() -> None:
    for seam in ("llm_from_scratch.nn.norms", "llm_from_scratch.nn.norms:no_such_function", ":x"):
        with pytest.raises(ArgumentError):
            resolve_seam(seam)


def test_a_new_mutant_needs_only_an_entry() -> None:
    # RMSNorm that centres the token first: an entry outside the catalogue, run like any other.
    def centred(original):
        def rms_norm(x, gain, eps):
            return original(x - x.mean(axis=-1, keepdims=True), gain, eps=eps)

        return rms_norm

    entry = Mutant(
        "centred-rmsnorm",
        5,
        "RMSNorm",
        "subtracts the mean",
        "llm_from_scratch.autodiff.ops:rms_norm",
        centred,
        frozenset({"known-values", "numpy-block"}),
    )
    for check in sorted(entry.caught_by):
        assert run_check(entry, check).status == CAUGHT
    assert run_check(entry, "shapes").status == MISSED
    assert (
        run_check(entry, "cache-equality").status == NOT_APPLICABLE
    )  # its decoders use LayerNorm
    with switched(entry) as switch:
        _layer_norm_of_two_tokens()
    assert not switch.reached()


CHEAP_CHECKS = ["shapes", "known-values", "causal-prefix", "rows-sum-to-one", "window-mask"]


def test_cells_the_matrix_leaves_unrun_are_those_a_run_finds_unreached() -> None:
    """run_matrix marks a cell n/a from the check's clean run without running it; running every
    such cell with its mutant on (run_check) gives the same status and reason, cell by cell."""
    quick = run_matrix(checks=CHEAP_CHECKS)
    skipped = [key for key, cell in quick.cells.items() if cell.seconds == 0.0]
    assert skipped, "the cheap checks leave some mutant's piece uncalled"
    for (name, check), cell in quick.cells.items():
        full = run_check(name, check)
        assert (cell.status, cell.reason) == (full.status, full.reason), (name, check)
