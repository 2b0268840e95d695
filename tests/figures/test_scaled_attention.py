"""The numbers behind the 1/√d_k figure: variance, saturation and vanishing gradient."""

from __future__ import annotations

import math

import numpy as np
import pytest
from matplotlib.figure import Figure

from llm_from_scratch.autodiff import Tensor
from llm_from_scratch.errors import ArgumentError
from llm_from_scratch.figures.scaled_attention import score_scale_figure, score_scale_study

WIDTHS = (1, 4, 16, 64, 256)


@pytest.fixture(scope="module")
def study():
    return score_scale_study(WIDTHS, keys=16, rows=400, seed=31)


def test_unscaled_variance_grows_like_the_width(study) -> None:
    # Σ of d_k products of independent unit normals has variance d_k; 6400 samples per width.
    ratio = study.variance["unscaled"] / np.array(WIDTHS)
    assert np.all(np.abs(ratio - 1.0) < 0.1), ratio


def test_scaled_variance_stays_near_one(study) -> None:
    assert np.all(np.abs(study.variance["scaled"] - 1.0) < 0.1), study.variance["scaled"]


def test_width_one_is_the_same_either_way(study) -> None:
    for table in (study.variance, study.max_weight, study.gradient_norm):
        assert table["scaled"][0] == pytest.approx(table["unscaled"][0], rel=1e-12)


def test_unscaled_softmax_saturates_and_its_gradient_vanishes(study) -> None:
    largest, gradient = study.max_weight["unscaled"], study.gradient_norm["unscaled"]
    assert largest[-1] > 0.9 and np.all(np.diff(largest) > 0)
    assert gradient[-1] < 0.3 * gradient[0]
    assert np.all(np.diff(gradient[1:]) < 0)


def test_scaled_softmax_keeps_its_spread_and_gradient(study) -> None:
    largest, gradient = study.max_weight["scaled"], study.gradient_norm["scaled"]
    assert np.ptp(largest) < 0.1 and largest.max() < 0.4
    assert gradient.min() > 0.8 * gradient.max()


def test_gradient_matches_the_softmax_jacobian_by_hand() -> None:
    # One row: ∂(uᵀ softmax(z))/∂z = (diag(p) − p pᵀ) u, the closed form the study relies on.
    z = np.array([[[0.3, -1.2, 2.0, 0.1]]])
    u = np.array([[[1.0, -0.5, 0.25, 2.0]]])
    leaf = Tensor(z, requires_grad=True)
    (leaf.softmax(axis=-1) * Tensor(u)).sum().backward()
    p = np.exp(z[0, 0]) / np.exp(z[0, 0]).sum()
    expected = (np.diag(p) - np.outer(p, p)) @ u[0, 0]
    np.testing.assert_allclose(leaf.grad[0, 0], expected, atol=1e-14)


def test_deterministic_for_a_seed() -> None:
    a = score_scale_study((2, 8), keys=4, rows=8, seed=5)
    b = score_scale_study((2, 8), keys=4, rows=8, seed=5)
    for name in ("variance", "max_weight", "gradient_norm"):
        for label in ("scaled", "unscaled"):
            assert np.array_equal(getattr(a, name)[label], getattr(b, name)[label])


@pytest.mark.parametrize(
    "kwargs",
    [
        {"widths": (), "keys": 4, "rows": 4, "seed": 0},
        {"widths": (0, 2), "keys": 4, "rows": 4, "seed": 0},
        {"widths": (2,), "keys": 1, "rows": 4, "seed": 0},
        {"widths": (2,), "keys": 4, "rows": True, "seed": 0},
    ],
)
def test_rejects_bad_arguments(kwargs) -> None:
    with pytest.raises(ArgumentError):
        score_scale_study(**kwargs)


def test_figure_smoke(study) -> None:
    fig = score_scale_figure(study)
    assert isinstance(fig, Figure)
    assert len(fig.axes) == 3
    assert math.isclose(fig.axes[1].get_ylim()[1], 1.05)
