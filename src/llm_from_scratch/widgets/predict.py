"""Predict-then-check widgets: the reader predicts, presses Check, and sees the computed answer.

The check runs in the browser (``checker.js``) on a spec computed here, so it works live in
Jupyter and in the static book with no kernel. As a cell's last expression a widget shows two
outputs: the interactive view and a plain ``<details>`` reveal that works where scripts do not.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from typing import Any

import anywidget
import numpy as np
import traitlets
from IPython.display import display

from ._assets import predict_esm, widget_css
from .checker import Verdict, check
from .specs import choice_spec, explain_spec, number_spec, shape_spec, vector_spec

_BLANK_RUN = re.compile(r"\s+")


def inline_html(text: str) -> str:
    """Escape ``text`` for HTML, turning `backticked` spans into <code> as the view does."""
    parts = text.split("`")
    return "".join(
        f"<code>{html.escape(part)}</code>" if i % 2 else html.escape(part)
        for i, part in enumerate(parts)
    )


class AnswerReveal:
    """The answer behind a ``<details>`` element: reachable even when the page runs no script."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec

    def _repr_html_(self) -> str:
        """``<details><summary>Show the answer</summary>...</details>``."""
        spec = self.spec
        if spec["kind"] == "explain":
            body = f"<p><strong>Model answer:</strong> {inline_html(spec['model_answer'])}</p>"
        else:
            answer = inline_html(spec["answer_text"])
            shown = answer if spec["kind"] == "choice" else f"<code>{answer}</code>"
            body = (
                f"<p><strong>Answer:</strong> {shown}</p>\n"
                f"<p><strong>Why:</strong> {inline_html(spec['reason'])}</p>"
            )
        return (
            f'<details class="lfs-reveal">\n<summary>Show the answer</summary>\n{body}\n</details>'
        )

    def __repr__(self) -> str:
        """Plain-text fallback: the answer and the reason on two lines."""
        spec = self.spec
        if spec["kind"] == "explain":
            return f"Show the answer: {spec['model_answer']}"
        return f"Show the answer: {spec['answer_text']}\nWhy: {spec['reason']}"


class PredictThenCheck(anywidget.AnyWidget):
    """One predict-then-check question; ``spec`` is synced to the browser, which runs the check."""

    _esm = predict_esm()
    _css = widget_css()
    spec = traitlets.Dict().tag(sync=True)

    def __init__(self, spec: dict[str, Any]) -> None:
        super().__init__(spec=spec)

    @property
    def kind(self) -> str:
        """'number', 'vector', 'shape', 'choice' or 'explain'."""
        return str(self.spec["kind"])

    def check(self, text: str, tries: int = 0) -> Verdict:
        """The verdict the browser gives for ``text`` after ``tries`` wrong tries (same rules)."""
        return check(self.spec, text, tries)

    def reveal(self) -> AnswerReveal:
        """The ``<details>`` reveal shown under the view."""
        return AnswerReveal(self.spec)

    def __repr__(self) -> str:
        """Stable text (nbval compares it): the kind and the question, never the answer."""
        question = _BLANK_RUN.sub(" ", self.spec["question"]).strip()
        return (
            f"Predict-then-check ({self.kind}): {question} "
            '[answer hidden: expand "Show the answer"]'
        )

    def _ipython_display_(self) -> None:
        """Display the interactive view, then the reveal, as two outputs."""
        data, metadata = self._repr_mimebundle_()
        display(data, metadata=metadata, raw=True)
        display(self.reveal())


def predict_number(
    question: str, answer: float, *, reason: str, tolerance: float = 1e-6, digits: int = 6
) -> PredictThenCheck:
    """Ask for one number; right when |typed - answer| <= tolerance; shown with ``digits``."""
    return PredictThenCheck(
        number_spec(question, answer, reason=reason, tolerance=tolerance, digits=digits)
    )


def predict_vector(
    question: str,
    answer: Sequence[float] | np.ndarray,
    *,
    reason: str,
    tolerance: float = 1e-6,
    digits: int = 6,
) -> PredictThenCheck:
    """Ask for a list of numbers (the answer is flattened); each must be within tolerance."""
    return PredictThenCheck(
        vector_spec(question, answer, reason=reason, tolerance=tolerance, digits=digits)
    )


def predict_shape(question: str, answer: Sequence[int], *, reason: str) -> PredictThenCheck:
    """Ask for a shape; accepts [4, 7, 3], 4,7,3, (4, 7, 3), 4 7 3, and () or [] for a scalar."""
    return PredictThenCheck(shape_spec(question, answer, reason=reason))


def predict_choice(
    question: str, options: Sequence[str], answer: str, *, reason: str
) -> PredictThenCheck:
    """Ask the reader to pick one of ``options``; ``answer`` must be one of them."""
    return PredictThenCheck(choice_spec(question, options, answer, reason=reason))


def predict_explain(question: str, model_answer: str) -> PredictThenCheck:
    """Ask for a written explanation; once the reader writes something, show ``model_answer``."""
    return PredictThenCheck(explain_spec(question, model_answer))
