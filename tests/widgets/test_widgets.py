"""The widget objects: stable text, two display outputs, the reveal, the shipped module."""

from __future__ import annotations

import re
from typing import Any

import pytest

from llm_from_scratch.widgets import (
    AnswerReveal,
    PredictThenCheck,
    predict_choice,
    predict_explain,
    predict_number,
    predict_shape,
    predict_vector,
)
from llm_from_scratch.widgets import predict as predict_module


def test_repr_is_stable_and_hides_the_answer() -> None:
    widget = predict_number("What is y0?", 5.5, reason="2 * 2 + 1.5.")
    assert repr(widget) == (
        'Predict-then-check (number): What is y0? [answer hidden: expand "Show the answer"]'
    )
    assert "5.5" not in repr(widget)
    assert not re.search(r"0x[0-9a-f]{6,}", repr(widget))


def test_repr_collapses_whitespace_in_long_questions() -> None:
    widget = predict_shape("What is\n   the shape?", (2, 3), reason="r.")
    assert repr(widget).startswith("Predict-then-check (shape): What is the shape? [")


@pytest.mark.parametrize(
    ("widget", "answer_html"),
    [
        (predict_number("q?", 5.5, reason="Because `x @ W`."), "<code>5.5</code>"),
        (predict_vector("q?", [0.5, 1], reason="Because `x @ W`."), "<code>[0.5, 1]</code>"),
        (predict_shape("q?", (4, 7, 3), reason="Because `x @ W`."), "<code>(4, 7, 3)</code>"),
        (predict_choice("q?", ["a < b", "b"], "a < b", reason="Because `x @ W`."), "a &lt; b"),
    ],
)
def test_reveal_is_plain_details_with_answer_and_reason(
    widget: PredictThenCheck, answer_html: str
) -> None:
    html = widget.reveal()._repr_html_()
    assert html.startswith('<details class="lfs-reveal">\n<summary>Show the answer</summary>')
    assert html.endswith("</details>")
    assert f"<p><strong>Answer:</strong> {answer_html}</p>" in html
    assert "<p><strong>Why:</strong> Because <code>x @ W</code>.</p>" in html


def test_explain_reveal_shows_the_model_answer() -> None:
    reveal = predict_explain("Why?", "Variance <grows>.").reveal()
    assert "<p><strong>Model answer:</strong> Variance &lt;grows&gt;.</p>" in reveal._repr_html_()
    assert repr(reveal) == "Show the answer: Variance <grows>."


def test_reveal_text_is_readable() -> None:
    reveal = predict_shape("q?", (4,), reason="One bias per output.").reveal()
    assert repr(reveal) == "Show the answer: (4,)\nWhy: One bias per output."


def test_display_publishes_the_view_then_the_reveal(monkeypatch: pytest.MonkeyPatch) -> None:
    shown: list[tuple[Any, dict[str, Any]]] = []
    monkeypatch.setattr(predict_module, "display", lambda obj, **kw: shown.append((obj, kw)))
    widget = predict_number("What is y0?", 5.5, reason="r.")
    widget._ipython_display_()
    (view, view_kw), (reveal, reveal_kw) = shown
    assert view_kw["raw"] is True
    assert view["text/plain"] == repr(widget)
    assert view["application/vnd.jupyter.widget-view+json"]["model_id"] == widget.model_id
    assert isinstance(reveal, AnswerReveal)
    assert reveal_kw == {}


def test_the_python_check_matches_the_spec() -> None:
    widget = predict_shape("q?", (4, 7, 3), reason="r.")
    assert widget.check("4x7x3").status == "correct"
    assert widget.kind == "shape"


def test_view_module_and_styles_are_synced_with_the_spec() -> None:
    widget = predict_number("q?", 1.0, reason="r.")
    state = widget.get_state()
    assert state["spec"]["answer_text"] == "1"
    assert "export default { render };" in state["_esm"]
    assert "function check(spec, text, tries = 0)" in state["_esm"]
    assert ".lfs-predict" in state["_css"]
    assert state["_model_module"] == "anywidget"
