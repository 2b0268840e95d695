"""Chapters 5 to 8 each have a write-it-yourself exercise the book grades, solution included.

Each exercise is a visible starter cell (the grader's import, a stub that raises
NotImplementedError, the grader's call commented out) followed by a collapsed solution cell that
calls the same grader; the stored notebook (which nbval re-checks) shows that call passing.
"""

from __future__ import annotations

import re
from importlib import import_module

import nbformat
import pytest

from tools.sync_notebooks import BOOK

CHAPTERS = {
    "05-normalization-residuals": ["check_layer_norm_vjp"],
    "06-multi-head-attention": ["check_split_heads", "check_causal_mask"],
    "07-positions": ["check_rope"],
    "08-mixture-of-experts": ["check_top_k_gate"],
}


def _outputs(cell: nbformat.NotebookNode) -> str:
    """Printed text and the repr of the cell's value, as the notebook stores them."""
    parts = []
    for output in cell.get("outputs", []):
        parts.append(output.get("text", ""))
        parts.append(output.get("data", {}).get("text/plain", ""))
    return "".join(parts)


def _imports(cell: nbformat.NotebookNode, name: str) -> bool:
    return (
        re.search(
            rf"^from llm_from_scratch\.exercises\.\w+ import .*\b{name}\b", cell.source, re.M
        )
        is not None
    )


@pytest.mark.parametrize(("stem", "graders"), CHAPTERS.items())
def test_each_exercise_has_a_starter_and_a_passing_collapsed_solution(stem, graders) -> None:
    code = [
        c
        for c in nbformat.read(BOOK / f"{stem}.ipynb", as_version=4).cells
        if c.cell_type == "code"
    ]
    for name in graders:
        starters = [
            i
            for i, c in enumerate(code)
            if _imports(c, name) and "hide-cell" not in c.metadata.get("tags", [])
        ]
        assert len(starters) == 1, f"{stem}: one visible starter cell imports {name}"
        starter = code[starters[0]]
        assert "raise NotImplementedError" in starter.source
        assert re.search(rf"^# {name}\(", starter.source, re.M), "the grader call is commented out"
        solution = code[starters[0] + 1]
        assert "hide-cell" in solution.metadata.get("tags", [])
        assert f"{name}(" in solution.source
        grade = getattr(import_module(f"llm_from_scratch.exercises.ch{stem[:2]}"), name)
        assert f"{grade.exercise}: ✓ passed" in _outputs(solution), (
            f"{stem}: the solution to {name} passes"
        )
