"""The precomputed slider: validated state, value text, stable repr."""

from __future__ import annotations

import numpy as np
import pytest

from llm_from_scratch.errors import ArgumentError
from llm_from_scratch.widgets import precomputed_slider
from llm_from_scratch.widgets.slider import format_value, slider_state


def test_state_holds_formatted_values_and_frames() -> None:
    state = slider_state("temperature", [0.5, 1, np.float64(2.0)], ["<b>a</b>", "b", "c"], 1)
    assert state == {
        "label": "temperature",
        "value_texts": ["0.5", "1", "2"],
        "frames": ["<b>a</b>", "b", "c"],
        "index": 1,
    }


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (3, "3"),
        (np.int64(4), "4"),
        (0.1, "0.1"),
        (1 / 3, "0.333333"),
        (np.float32(0.5), "0.5"),
    ],
)
def test_format_value(value: object, text: str) -> None:
    assert format_value(value) == text


@pytest.mark.parametrize(
    ("label", "values", "frames", "index"),
    [
        ("", [1], ["a"], 0),
        ("T", [], [], 0),
        ("T", [1, 2], ["a"], 0),
        ("T", [1, 2], ["a", "b"], 2),
        ("T", [1, 2], ["a", "b"], -1),
        ("T", [1, 2], ["a", 3], 0),
        ("T", [1, float("nan")], ["a", "b"], 0),
        ("T", ["x", "y"], ["a", "b"], 0),
        ("T", [1, 2], ["a", "b"], 1.0),
    ],
)
def test_bad_arguments_raise_argument_error(
    label: str, values: list, frames: list, index: object
) -> None:
    with pytest.raises(ArgumentError):
        precomputed_slider(label, values, frames, initial_index=index)  # type: ignore[arg-type]


def test_widget_repr_and_current_frame() -> None:
    slider = precomputed_slider("temperature", [0.5, 1.0, 2.0], ["a", "b", "c"], initial_index=1)
    assert repr(slider) == "Precomputed slider: temperature (3 values, 0.5 to 2; showing 1)"
    assert slider.frame == "b"
    slider.index = 2
    assert slider.value_text == "2"
    single = precomputed_slider("k", [3], ["only"])
    assert repr(single) == "Precomputed slider: k (1 value, 3; showing 3)"


def test_widget_ships_its_module() -> None:
    state = precomputed_slider("k", [1, 2], ["a", "b"]).get_state()
    assert "export default { render };" in state["_esm"]
    assert state["frames"] == ["a", "b"]
