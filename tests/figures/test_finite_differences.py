"""Central-difference error against the step: truncation, rounding, and why float64."""

import matplotlib
import numpy as np
import pytest

from llm_from_scratch.figures.finite_differences import (
    best_step,
    central_difference_errors,
    step_error_figure,
    tanh_derivative,
    tanh_third_derivative,
)

matplotlib.use("Agg")

X = 0.5


def test_closed_forms():
    t = np.tanh(X)
    assert tanh_derivative(X) == pytest.approx(1 / np.cosh(X) ** 2, rel=1e-14)
    # tanh‴ by central differences of tanh′ twice (float64, generous tolerance)
    h = 1e-3
    second = (tanh_derivative(X + h) - 2 * tanh_derivative(X) + tanh_derivative(X - h)) / h**2
    assert tanh_third_derivative(X) == pytest.approx(second, rel=1e-5)
    assert tanh_third_derivative(0.0) == -2.0
    assert t == pytest.approx(0.46211715726000974, abs=1e-16)


@pytest.mark.parametrize("step", [1e-2, 3e-2, 1e-1])
def test_large_steps_are_truncation_limited(step):
    predicted = abs(tanh_third_derivative(X)) * step**2 / 6
    (error,) = central_difference_errors(X, [step])
    assert error == pytest.approx(predicted, rel=0.02)


def test_float64_at_the_book_step_is_accurate_and_float32_is_not():
    (e64,) = central_difference_errors(X, [1e-6], np.float64)
    (e32,) = central_difference_errors(X, [1e-6], np.float32)
    assert e64 < 1e-9
    assert e32 > 1e-3


def test_tiny_steps_in_float32_see_no_change_at_all():
    # x ± h rounds back to x in float32 (unit roundoff ≈ 6e-8): the estimate is exactly 0
    (error,) = central_difference_errors(X, [1e-9], np.float32)
    assert error == pytest.approx(tanh_derivative(X), rel=1e-15)


def test_best_steps_sit_near_the_cube_root_of_epsilon():
    steps = np.logspace(-12, -1, 45)
    best64 = best_step(steps, central_difference_errors(X, steps, np.float64))
    best32 = best_step(steps, central_difference_errors(X, steps, np.float32))
    assert 1e-8 <= best64 <= 1e-4
    assert 1e-4 <= best32 <= 3e-2
    assert best32 > best64
    assert min(central_difference_errors(X, steps, np.float32)) > 1e-7


def test_best_step_takes_the_first_on_ties():
    assert best_step([1.0, 2.0, 3.0], [0.5, 0.1, 0.1]) == 2.0


def test_figure_smoke():
    steps = np.logspace(-10, -1, 10)
    fig = step_error_figure(
        steps,
        {
            "float64": central_difference_errors(X, steps),
            "float32": central_difference_errors(X, steps, np.float32),
        },
        marked_step=1e-6,
    )
    assert len(fig.axes[0].get_lines()) == 3
