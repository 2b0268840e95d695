"""Numbers in prose: the same text in the book and in JupyterLab, and every one checked by nbval.

A chapter's prose shows a computed number as ``{eval}`glued["key:spec"]` `` (converted from
``{glue:text}`key:spec` `` by tools/live_prose.py):

- the book build pastes the glue record ``key`` formatted with ``spec`` (tools/eval_role.py,
  myst-nb's own ``{glue:text}``);
- JupyterLab with jupyterlab-myst evaluates the expression in the kernel, where
  ``llm_from_scratch.precision.glued`` formats the same glued value the same way, so the sentence
  follows a fixture edit; the stored notebook keeps those results in each Markdown cell's
  ``user_expressions`` metadata (tools/sync_notebooks.py), so the numbers show before a run.

nbval compares the glue records (they are code cell outputs) but not Markdown metadata. So these
tests tie every number a reader sees to a glue record: no ``{glue:text}`` is left, every
``{eval}`` is a ``glued[...]`` lookup of a key the chapter glues, and every stored result is the
text the book shows for that record, as JupyterLab renders it.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import jupytext
import nbformat
import pytest
from myst_nb.core.variables import format_plain_text

from llm_from_scratch.precision import Glued, Shown, glue, glued
from tools.eval_role import glued_spec
from tools.live_prose import GLUE_TEXT, convert
from tools.notebook_outputs import glue_records
from tools.sync_notebooks import (
    SYNC_COMMAND,
    USER_EXPRESSIONS,
    chapter_sources,
    paired_path,
    prose_expressions,
)

SOURCES = chapter_sources()
IDS = [md.name for md in SOURCES]
CONVERT = "python tools/live_prose.py"
# How jupyterlab-myst 2.x shows a text/plain result (src/components/inlineExpression.tsx).
JUPYTERLAB_PLAIN = re.compile(r"^([\"'])(.*)\1$")


def split_spec(spec: str) -> tuple[str, str]:
    """``'key:.6f'`` -> (key, '.6f'); ``'key'`` -> (key, 's'), as {glue:text} reads it."""
    key, fmt_spec = spec.rsplit(":", 1) if ":" in spec else (spec, "s")
    return key, fmt_spec


@pytest.mark.parametrize("md", SOURCES, ids=IDS)
def test_prose_has_no_glue_text_role_left(md: Path) -> None:
    text = md.read_text(encoding="utf-8")
    assert convert(text)[0] == text, (
        f"{md.name} still pastes numbers with {{glue:text}}, which JupyterLab shows raw: run "
        f"`{CONVERT} book/{md.name}`, then `{SYNC_COMMAND} book/{md.name}`."
    )


@pytest.mark.parametrize("md", SOURCES, ids=IDS)
def test_every_eval_in_prose_is_a_glued_value(md: Path) -> None:
    glued_keys = glue_records(nbformat.read(paired_path(md), as_version=4))
    problems = []
    for index, cell in enumerate(jupytext.read(md).cells):
        if cell.cell_type != "markdown":
            continue
        for expression in prose_expressions(cell.source):
            spec = glued_spec(expression)
            if spec is None:
                problems.append(f'cell {index}: {{eval}}`{expression}` is not glued["key:spec"]')
            elif split_spec(spec)[0] not in glued_keys:
                problems.append(f"cell {index}: {{eval}}`{expression}`: nothing glues that key")
    assert not problems, (
        f"{md.name}: prose may show only glued values (nbval checks their glue records): "
        + "; ".join(problems[:10])
    )


@pytest.mark.parametrize("md", SOURCES, ids=IDS)
def test_stored_prose_shows_what_the_book_shows(md: Path) -> None:
    """Each stored result is the book's text for that glue record, as JupyterLab renders it."""
    stored = nbformat.read(paired_path(md), as_version=4)
    glued_keys = glue_records(stored)
    problems = []
    for index, cell in enumerate(stored.cells):
        if cell.cell_type != "markdown":
            continue
        expressions = prose_expressions(cell.source)
        results = cell.metadata.get(USER_EXPRESSIONS, [])
        if [entry.get("expression") for entry in results] != expressions:
            problems.append(f"cell {index}: stored expressions {len(results)} != prose")
            continue
        for entry in results:
            spec = glued_spec(entry["expression"])
            if spec is None or split_spec(spec)[0] not in glued_keys:
                continue  # reported by test_every_eval_in_prose_is_a_glued_value
            key, fmt_spec = split_spec(spec)
            book = format_plain_text(glued_keys[key], fmt_spec)
            result = entry["result"]
            data = result.get("data", {})
            plain = data.get("text/plain", "")
            shown = JUPYTERLAB_PLAIN.sub(r"\2", plain)
            if result.get("status") != "ok" or set(data) != {"text/plain"} or shown != book:
                expression = entry["expression"]
                problems.append(f"cell {index}: {expression} stores {plain!r}, book {book!r}")
    assert not problems, (
        f"{paired_path(md).name}: the stored prose numbers are not the book's: {problems[:5]}. "
        f"Re-pair with `{SYNC_COMMAND} book/{md.name}`."
    )


@pytest.mark.parametrize("md", SOURCES, ids=IDS)
def test_glued_is_imported_and_never_rebound(md: Path) -> None:
    notebook = jupytext.read(md)
    uses = any(prose_expressions(c.source) for c in notebook.cells if c.cell_type == "markdown")
    imported = False
    rebound = []
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code":
            continue
        source = "\n".join(
            line for line in cell.source.splitlines() if not line.lstrip().startswith(("%", "!"))
        )
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.ImportFrom) and any(a.name == "glued" for a in node.names):
                imported |= node.module == "llm_from_scratch.precision"
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                if node.id == "glued":
                    rebound.append(index)
            elif isinstance(node, ast.FunctionDef | ast.ClassDef) and node.name == "glued":
                rebound.append(index)
    assert not rebound, f"{md.name}: code cells {rebound} rebind `glued`, which the prose reads"
    assert imported or not uses, (
        f"{md.name}: its prose evaluates glued[...]: import it beside glue "
        "(`from llm_from_scratch.precision import glue, glued`)."
    )


# --- the pieces, on small inputs -------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "spec"),
    [
        (0.123456789012345, ".6f"),
        (-0.5, ".6g"),
        (12345, ",d"),
        (12345, ","),
        (3, "d"),
        (2.5e-7, ".1e"),
        (0.25, ".0%"),
        (1.0, "g"),
        ("it's", "s"),
        ((2, 3), "s"),
        (True, "s"),
        ([0.5, 0.25], "s"),
    ],
)
def test_glued_text_is_what_glue_text_showed(value: object, spec: str) -> None:
    """``glued["k:spec"]`` is myst-nb's {glue:text} formatting of what glue recorded."""
    from IPython.core.formatters import format_display_data

    from llm_from_scratch.precision import rounded

    glue("probe", value)
    recorded = format_display_data(rounded(value))[0]["text/plain"]
    assert glued[f"probe:{spec}"] == format_plain_text(recorded, spec)
    assert glued["probe"] == format_plain_text(recorded, "s")


def test_glued_text_repr_has_no_quotes_and_missing_keys_say_what_to_run() -> None:
    texts = Glued()
    texts.record("name", repr("it's"))
    assert texts["name"] == "it's" and repr(texts["name"]) == "it's"
    assert isinstance(texts["name"], Shown)
    with pytest.raises(KeyError, match="run the cell that glues it"):
        texts["missing:.3f"]


def test_only_glued_lookups_are_pasted() -> None:
    assert glued_spec('glued["loss:.6f"]') == "loss:.6f"
    assert glued_spec("glued['n']") == "n"
    for other in ("loss", "glued[key]", 'glued["a"] + 1', "__import__('os')", "glued[\"a']"):
        assert glued_spec(other) is None, other


def test_conversion_touches_prose_only_and_is_idempotent() -> None:
    text = (
        "---\njupytext: {}\n---\n\nLoss {glue:text}`loss:.6f` and {glue:text}`n`.\n\n"
        "```{code-cell} ipython3\nfrom llm_from_scratch.precision import below, glue\n"
        'print("{glue:text}`kept`")\n```\n\nAfter {glue:text}`shape`.\n'
    )
    converted, count, imported = convert(text)
    assert count == 3 and imported
    assert 'Loss {eval}`glued["loss:.6f"]` and {eval}`glued["n"]`.' in converted
    assert 'After {eval}`glued["shape"]`.' in converted
    assert "import below, glue, glued\n" in converted
    assert GLUE_TEXT.findall(converted) == ["kept"]  # code is never rewritten
    assert convert(converted) == (converted, 0, False)


def test_prose_expressions_keep_order_and_repeats() -> None:
    source = 'a {eval}`glued["x"]` b {eval}`glued["y:.2f"]` c {eval}`glued["x"]`'
    assert prose_expressions(source) == ['glued["x"]', 'glued["y:.2f"]', 'glued["x"]']


@pytest.mark.parametrize("md", SOURCES, ids=IDS)
def test_chapter_source_never_stores_user_expressions(md: Path) -> None:
    """Running a `.md` chapter in JupyterLab and saving it must not write the results into it."""
    header = jupytext.read(md).metadata.get("jupytext", {})
    kept = header.get("cell_metadata_filter", "").split(",")
    assert f"-{USER_EXPRESSIONS}" in kept, (
        f"{md.name}: its jupytext header must carry `cell_metadata_filter: -{USER_EXPRESSIONS}`: "
        f"run `{SYNC_COMMAND} book/{md.name}`."
    )
