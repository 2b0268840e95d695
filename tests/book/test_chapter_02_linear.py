"""Chapter 2 shows the seed's facts (L1–L13): read from the committed, nbval-checked notebook.

nbval proves the stored outputs are what the chapter computes today; this file proves those
outputs are the seed's numbers (seed-facts.md), so a fixture edit that is committed by mistake
fails here rather than silently changing the book.
"""

from __future__ import annotations

import nbformat
import pytest
from test_fixture_edits import glued, reveals

from tools.sync_notebooks import BOOK

NOTEBOOK = BOOK / "02-linear-layers.ipynb"


@pytest.fixture(scope="module")
def notebook() -> nbformat.NotebookNode:
    return nbformat.read(NOTEBOOK, as_version=4)


def text_outputs(notebook: nbformat.NotebookNode) -> str:
    parts = []
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            if output.output_type == "stream":
                parts.append(output.text)
            else:
                parts.extend(str(v) for v in output.get("data", {}).values())
    return "\n".join(parts)


SEED_GLUE = {
    # L1
    "x_shape": "[1, 2, 2]",
    "y_value": "[[[5.5, 0.5, 2], [5.5, 1, 5]]]",
    "y_shape": "[1, 2, 3]",
    "sums_first": "[5, 1, 1]",
    "sums_second": "[5, 1.5, 4]",
    # L2
    "unit": "5.5",
    # L3
    "g_value": "[[[1, 0, -1], [0.5, 2, 1]]]",
    "dx_value": "[[[2, 1], [-0.5, 3]]]",
    "dw_value": "[[0.5, -2, -2], [3.5, 6, 1]]",
    "db_value": "[1.5, 2, 0]",
    # L4
    "empty_in": "[0, 2]",
    "empty_out": "[0, 3]",
    # L5, L6
    "plain_value": "[[[5, 1, 1], [5, 1.5, 4]]]",
    "count_affine": "9",
    "count_plain": "6",
    "origin_affine": "[0.5, -0.5, 1]",
    "origin_plain": "[0, 0, 0]",
    # L7
    "db_three": "[4, 6]",
    # L8 (seven rules, nine refusals, two types: RankError and WidthError), L9, L10, L11
    "attempt_count": "9",
    "error_count": "2",
    "init_seed": "19",
    "unadvanced": "True",
    "fd_step": "1e-06",
    "fd_tol": "2e-06",
    "fd_pass": "True",
    "others_unchanged": "True",
    # L12
    "expansion": "y₀ = 1·1 + 2·2 + 0.5 = 5.5",
    "trace_lines": "19",
}


@pytest.mark.parametrize(("key", "expected"), SEED_GLUE.items())
def test_glued_value_is_the_seed_fact(notebook, key: str, expected: str) -> None:
    assert glued(notebook)[key] == repr(expected)


def test_shape_table_keeps_every_leading_axis(notebook) -> None:
    """L4: each leading shape passes through and only the feature axis changes width."""
    text = text_outputs(notebook)
    for row in [
        "| [2] | [3] | True |",
        "| [2, 2] | [2, 3] | True |",
        "| [1, 2, 2] | [1, 2, 3] | True |",
        "| [4, 7, 2] | [4, 7, 3] | True |",
        "| [0, 2] | [0, 3] | True |",
    ]:
        assert row in text


def test_every_refusal_prints_its_type_and_rule(notebook) -> None:
    """L8: every way to get the layer wrong is printed with its typed error, no traceback."""
    text = text_outputs(notebook)
    for kind, rule in [
        ("RankError", "Linear weight must be rank 2"),
        ("WidthError", "Linear weight must read at least one input feature"),
        ("WidthError", "Linear weight must produce at least one output feature"),
        ("RankError", "Linear bias must be rank 1"),
        ("WidthError", "Linear bias width must equal the output width"),
        ("RankError", "Linear(2 -> 3) needs an input with a feature axis"),
        ("WidthError", "Linear(2 -> 3) expects input whose last axis is 2; got shape"),
    ]:
        assert f"{kind}: {rule}" in text
    assert "Traceback" not in text


def test_stacked_collapse_and_shared_clone_are_shown(notebook) -> None:
    """L11 and L9: two projections collapse into one; a clone shares the parameter leaves."""
    text = text_outputs(notebook)
    assert "equal up to rounding: True" in text
    assert "same weight leaf: True" in text and "same bias leaf: True" in text
    assert "generator unadvanced after the failure: True" in text


def test_trace_is_printed_and_read_back_within_its_precision(notebook) -> None:
    """L12: the trace the figures are drawn from, and its round trip through the text."""
    text = text_outputs(notebook)
    assert "20 fields compared with the exact record; largest gap below 5e-7" in text
    assert "TRACE linear-layers-v1 BEGIN" in text and "TRACE linear-layers-v1 END" in text
    assert (
        "POLICY affine-parameters=9 bias-free-parameters=6 "
        "bias-free-output=[5.000000,1.000000,1.000000,5.000000,1.500000,4.000000]"
    ) in text


def test_widget_answers_are_the_seed_answers(notebook) -> None:
    """L13: every predict-then-check question, asked before its answer, reveals the seed's."""
    answers = reveals(notebook)
    expected = [
        "<strong>Answer:</strong> its transpose Wᵀ",  # y = b + Wx's weight in this layout
        "<code>[0.5, -0.5, 1, 0, 0, 0]</code>",  # L6: f(0) = b, and 0 without the bias
        "which is b, so it breaks the definition",  # L6: why "linear" is imprecise: affine
        "<code>[1, -1, 2]</code>",  # f(u) + f(-u) = 2b
        "<code>[0, 0, 0]</code>",  # and 0 without the bias
        "<code>[9, 6]</code>",  # 2·3 weights plus 3 bias entries, then without them
        "<code>[4, 6]</code>",  # [1, 0] + [0, 2] + [3, 4]
        "<code>(4, 7, 3)</code>",  # L4: [4, 7, 2] through [2, 3]
        "<strong>Answer:</strong> the weight is invalid, the input is valid",  # [2, 0], [0, 2]
        "<strong>Answer:</strong> No, never",
        "<code>(4, 7, 4)</code>",  # [4, 7, 2] through [2, 3], then [3, 4]
        "<strong>Answer:</strong> Bengio et al. (2003)",  # L14: affine computation in an LM
    ]
    assert len(answers) == len(expected)
    for answer, want in zip(answers, expected, strict=True):
        assert want in answer
