"""Chapters 1 to 4 each end with a write-it-yourself exercise the book grades, solution included.

Each exercise is a visible starter cell (the grader's import, a stub that raises
NotImplementedError, the grader's call commented out) followed by a collapsed solution cell that
calls the same grader; the stored notebook (which nbval re-checks) shows that call passing.
"""

from __future__ import annotations

import re

import nbformat
import pytest

from tools.sync_notebooks import BOOK

CHAPTERS = {
    "01-autodiff": ["check_loss_gradient", "check_tanh_op"],
    "02-linear-layers": ["check_linear_backward"],
    "03-feed-forward-variants": ["check_gated_width"],
    "04-swiglu": ["check_swiglu_gate"],
}


def _outputs(cell: nbformat.NotebookNode) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", []))


@pytest.mark.parametrize(("stem", "graders"), CHAPTERS.items())
def test_each_exercise_has_a_starter_and_a_passing_collapsed_solution(stem, graders) -> None:
    cells = [c for c in nbformat.read(BOOK / f"{stem}.ipynb", as_version=4).cells]
    code = [c for c in cells if c.cell_type == "code"]
    for name in graders:
        starters = [
            i
            for i, c in enumerate(code)
            if f"import {name}" in c.source and "hide-cell" not in c.metadata.get("tags", [])
        ]
        assert len(starters) == 1, f"{stem}: one visible starter cell imports {name}"
        starter = code[starters[0]]
        assert "raise NotImplementedError" in starter.source
        assert re.search(rf"^# {name}\(", starter.source, re.M), "the grader call is commented out"
        solution = code[starters[0] + 1]
        assert "hide-cell" in solution.metadata.get("tags", [])
        assert f"{name}(" in solution.source
        assert "✓ passed" in _outputs(solution), f"{stem}: the solution to {name} passes"
