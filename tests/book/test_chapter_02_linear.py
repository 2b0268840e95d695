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
    # L8 (seven kinds), L9, L10, L11
    "error_count": "7",
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


def test_l4_shape_table(notebook) -> None:
    text = text_outputs(notebook)
    for row in [
        "| [2] | [3] | True |",
        "| [2, 2] | [2, 3] | True |",
        "| [1, 2, 2] | [1, 2, 3] | True |",
        "| [4, 7, 2] | [4, 7, 3] | True |",
        "| [0, 2] | [0, 3] | True |",
    ]:
        assert row in text


def test_l8_every_error_printed(notebook) -> None:
    text = text_outputs(notebook)
    for kind in [
        "WeightRankError",
        "ZeroInputWidthError",
        "ZeroOutputWidthError",
        "BiasRankError",
        "BiasWidthError",
        "ScalarInputError",
        "InputWidthError",
    ]:
        assert f"{kind}: " in text
    assert "InputWidthError: Linear(2 -> 3) expects input whose last axis is 2; got shape" in text
    assert "Traceback" not in text


def test_l11_collapse_and_l9_clone_shown(notebook) -> None:
    text = text_outputs(notebook)
    assert "equal up to rounding: True" in text
    assert "same weight leaf: True" in text and "same bias leaf: True" in text
    assert "generator unadvanced after the failure: True" in text


def test_l12_trace_printed(notebook) -> None:
    text = text_outputs(notebook)
    assert "TRACE linear-layers-v1 BEGIN" in text and "TRACE linear-layers-v1 END" in text
    assert (
        "POLICY affine-parameters=9 bias-free-parameters=6 "
        "bias-free-output=[5.000000,1.000000,1.000000,5.000000,1.500000,4.000000]"
    ) in text


def test_l13_widget_answers(notebook) -> None:
    answers = "\n".join(reveals(notebook))
    assert len(reveals(notebook)) == 9  # eight questions, the second in two parts
    for answer in [
        "<code>(4, 7, 3)</code>",
        "<code>[0.5, -0.5, 1]</code>",
        "<code>[0, 0, 0]</code>",
        "<strong>Answer:</strong> No, never",
        "<code>[4, 6]</code>",
        "<code>[9, 6]</code>",
        "the weight is invalid, the input is valid",
        "which is the bias b",
        "Bengio et al.",
    ]:
        assert answer in answers
