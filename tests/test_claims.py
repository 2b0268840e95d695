"""claim(): a sentence's condition checked where its result is computed, and shown if false."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import numpy as np
import pytest
from nbclient import NotebookClient

from llm_from_scratch.claims import (
    CLAIM_KEY,
    Claim,
    _note,
    claim,
    claims_made,
    failed_claims,
    reset_claims,
)
from llm_from_scratch.errors import ArgumentError
from tools.sync_notebooks import BOOK, chapter_sources, paired_path, read_source

NUMBERED = [md for md in chapter_sources() if re.match(r"^\d\d-", md.stem)]
CLAIM_CALL = re.compile(r"\bclaim\(")
MIN_CLAIMS = 10  # qualitative statements backed by a check, per numbered chapter


def test_claim_records_python_and_numpy_bools_and_never_raises_when_false() -> None:
    reset_claims()
    claim(True, "one is one")
    claim(np.float64(1.0) < 2.0, "one is below two", a=1.0)
    claim(np.bool_(False), "a false statement outside a notebook")  # no raise
    assert [(c.statement, c.holds) for c in claims_made()] == [
        ("one is one", True),
        ("one is below two", True),
        ("a false statement outside a notebook", False),
    ]


@pytest.mark.parametrize("bad", [np.array([True, False]), 1, 0.0, None, "yes", [True]])
def test_claim_refuses_a_condition_that_is_not_one_bool(bad: object) -> None:
    with pytest.raises(ArgumentError, match="one bool"):
        claim(bad, "a statement")


@pytest.mark.parametrize("bad", ["", "   ", None, 3])
def test_claim_refuses_an_empty_statement(bad: object) -> None:
    with pytest.raises(ArgumentError, match="statement"):
        claim(True, bad)  # type: ignore[arg-type]


def test_the_note_names_the_statement_and_rounded_values() -> None:
    note = _note(Claim("the loss falls", False, {"before": 2.0794415416798357, "after": 3}))
    assert "“the loss falls”" in note["text/markdown"]
    assert "before = 2.07944, after = 3" in note["text/plain"]
    assert note["text/plain"].startswith("⚠")


def test_in_a_kernel_a_false_claim_shows_a_note_and_a_true_one_shows_nothing() -> None:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell("from llm_from_scratch import claim\nclaim(1 < 2, 'holds')"),
        nbformat.v4.new_code_cell("claim(3 < 2, 'three is below two', three=3.0)"),
    ]
    NotebookClient(notebook, kernel_name="python3", timeout=60).execute()
    assert notebook.cells[0].outputs == []
    (note,) = notebook.cells[1].outputs
    assert note["metadata"][CLAIM_KEY]["claim"] == "three is below two"
    assert "three = 3.0" in note["data"]["text/markdown"]
    assert failed_claims(notebook) == ["three is below two"]


@pytest.mark.parametrize("md", chapter_sources(), ids=[md.stem for md in chapter_sources()])
def test_every_claim_holds_in_the_stored_chapter(md: Path) -> None:
    stored = nbformat.read(paired_path(md), as_version=4)
    assert failed_claims(stored) == [], (
        f"{md.name}: these sentences are false for the shipped fixture: "
        f"{failed_claims(stored)}. Fix the prose or the computation, then re-sync."
    )


@pytest.mark.parametrize("md", NUMBERED, ids=[md.stem for md in NUMBERED])
def test_every_numbered_chapter_backs_its_sentences_with_claims(md: Path) -> None:
    code = "\n".join(c.source for c in read_source(md).cells if c.cell_type == "code")
    count = len(CLAIM_CALL.findall(code))
    assert count >= MIN_CLAIMS, (
        f"{md.name} checks {count} claims; each numbered chapter backs at least {MIN_CLAIMS} "
        "qualitative sentences with claim(condition, statement, **values)."
    )


def test_the_book_folder_is_where_chapters_live() -> None:
    assert NUMBERED and all(md.parent == BOOK for md in NUMBERED)
