"""Predict-then-check widgets and precomputed sliders: a pure checker plus thin anywidget views.

Every widget works live in Jupyter and in the static HTML book with no kernel: Python computes
the answer (or every frame), and the browser does the rest. As a cell's last expression a
predict widget shows the view and a ``<details>`` "Show the answer" reveal::

    predict_number("What is y[0, 1]?", y[0, 1], reason="2 * 2 + 1.5.")
    predict_vector("What is b.grad?", b.grad, reason="Sum of G over the batch.", digits=4,
                   tolerance=1e-4)
    predict_shape("What is the shape of x @ W?", (x @ W).shape, reason="Only D changes.")
    predict_choice("Which axis?", ["B", "T", "D"], "D", reason="Linear acts on features.")
    predict_explain("Why share W across positions?", "Each position is projected alike ...")
    precomputed_slider("temperature", temps, [table_html(t) for t in temps], initial_index=2)

The answer is shown with ``digits`` decimals and a typed number is right when it is within
``tolerance`` of it; the answer as shown must pass its own check (else ArgumentError).
"""

from .checker import Verdict, check, format_number
from .predict import (
    AnswerReveal,
    PredictThenCheck,
    predict_choice,
    predict_explain,
    predict_number,
    predict_shape,
    predict_vector,
)
from .slider import PrecomputedSlider, precomputed_slider

__all__ = [
    "AnswerReveal",
    "PrecomputedSlider",
    "PredictThenCheck",
    "Verdict",
    "check",
    "format_number",
    "precomputed_slider",
    "predict_choice",
    "predict_explain",
    "predict_number",
    "predict_shape",
    "predict_vector",
]
