"""A slider over precomputed frames: Python renders one HTML frame per value, the browser swaps."""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence

import anywidget
import numpy as np
import traitlets

from ..errors import ArgumentError
from ._assets import slider_esm, widget_css
from .checker import format_number

VALUE_DIGITS = 6


def format_value(value: object) -> str:
    """An integer as itself, a float with up to six decimals: 2 -> '2', 0.1 -> '0.1'."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ArgumentError(f"Slider values must be real numbers; got {value!r}.")
    if isinstance(value, numbers.Integral):
        return str(int(value))
    number = float(value)
    if not math.isfinite(number):
        raise ArgumentError(f"Slider values must be finite; got {number!r}.")
    return format_number(number, VALUE_DIGITS)


def slider_state(
    label: str, values: Sequence[float | int], frames: Sequence[str], initial_index: int
) -> dict[str, object]:
    """Validated, JSON-ready state: label, value texts, frames and the starting index."""
    if not isinstance(label, str) or label.strip() == "":
        raise ArgumentError(f"label must be a non-empty string; got {label!r}.")
    texts = [format_value(v) for v in values]
    frame_list = list(frames)
    if not all(isinstance(f, str) for f in frame_list):
        raise ArgumentError("Each frame must be an HTML string (an inline SVG, a table, ...).")
    if len(texts) == 0:
        raise ArgumentError("A slider needs at least one value; got none.")
    if len(texts) != len(frame_list):
        raise ArgumentError(
            f"Each value needs one frame; got {len(texts)} values and {len(frame_list)} frames."
        )
    if isinstance(initial_index, bool) or not isinstance(initial_index, numbers.Integral):
        raise ArgumentError(f"initial_index must be an integer; got {initial_index!r}.")
    if not 0 <= int(initial_index) < len(texts):
        raise ArgumentError(
            f"initial_index must be in [0, {len(texts) - 1}]; got {initial_index!r}."
        )
    return {
        "label": label,
        "value_texts": texts,
        "frames": frame_list,
        "index": int(initial_index),
    }


class PrecomputedSlider(anywidget.AnyWidget):
    """A slider whose every position shows a frame computed in Python; no kernel needed."""

    _esm = slider_esm()
    _css = widget_css()
    label = traitlets.Unicode().tag(sync=True)
    value_texts = traitlets.List(traitlets.Unicode()).tag(sync=True)
    frames = traitlets.List(traitlets.Unicode()).tag(sync=True)
    index = traitlets.Int(0).tag(sync=True)

    @property
    def value_text(self) -> str:
        """The slider value currently shown, as text."""
        return str(self.value_texts[self.index])

    @property
    def frame(self) -> str:
        """The HTML frame currently shown."""
        return str(self.frames[self.index])

    def __repr__(self) -> str:
        """Stable text (nbval compares it): label, range and the value shown."""
        texts = self.value_texts
        span = texts[0] if len(texts) == 1 else f"{texts[0]} to {texts[-1]}"
        count = "1 value" if len(texts) == 1 else f"{len(texts)} values"
        return f"Precomputed slider: {self.label} ({count}, {span}; showing {self.value_text})"


def precomputed_slider(
    label: str, values: Sequence[float | int], frames: Sequence[str], *, initial_index: int = 0
) -> PrecomputedSlider:
    """A slider over ``values``; position i shows ``frames[i]`` (HTML computed in Python)."""
    return PrecomputedSlider(**slider_state(label, values, frames, initial_index))
