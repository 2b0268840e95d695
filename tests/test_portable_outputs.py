"""Every number a reader sees survives another CPU: the precision policy, guarded and proven.

Two guards, each cheap:

- **Static**: no stored output (stream, text, glue record, widget state) shows a float with more
  than ``GUARD_DIGITS`` significant digits. A full ``repr`` such as ``3.0032491189825086`` changes
  in its last digits between processors; the policy (``llm_from_scratch.precision``) rounds to 10.
- **Two numeric configurations in one run**: the book build (``tools/install_and_build.sh``)
  executes every chapter with numpy as the machine has it, and this test compares the build's
  executed notebooks (``_build/jupyter_execute/``, glue values in its ``*.glue.json``) with the
  stored ones. nbval, in the same ``pytest --nbval`` run, re-executes them with every dispatched
  SIMD path of numpy turned off (``NPY_DISABLE_CPU_FEATURES``, set for the kernels in
  ``tests/conftest.py``), the same baseline code on any x86-64 machine. Both must reproduce the
  stored outputs.
"""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from myst_nb.core.utils import coalesce_streams

from tools.notebook_outputs import comparable, differing_cells, glue_records, noisy_floats
from tools.sync_notebooks import ROOT, chapter_sources, paired_path

BUILD = ROOT / "_build" / "jupyter_execute"
BUILD_COMMAND = "bash tools/install_and_build.sh"
SOURCES = chapter_sources()
IDS = [md.stem for md in SOURCES]


def as_built(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy as the book build stores it: hidden glue outputs removed, streams coalesced.

    myst-nb (``nb_merge_streams: true``) merges each cell's streams with its own
    ``coalesce_streams``, which also strips trailing blank lines, and writes the result to
    ``_build/jupyter_execute``; the stored notebook goes through the same function here.
    """
    copy = nbformat.from_dict(json.loads(json.dumps(notebook)))
    for cell in copy.cells:
        if cell.cell_type == "code":
            cell.outputs = without_blank_lines(
                coalesce_streams(
                    [
                        output
                        for output in cell.outputs
                        if not output.get("metadata", {}).get("scrapbook", {}).get("mime_prefix")
                    ]
                )
            )
    return copy


@pytest.mark.parametrize("md", SOURCES, ids=IDS)
def test_stored_outputs_show_no_noise_digits(md: Path) -> None:
    noisy = noisy_floats(nbformat.read(paired_path(md), as_version=4))
    assert not noisy, (
        f"{paired_path(md).name} shows floats with digits that change between CPUs: "
        f"{noisy[:10]}. Glue through llm_from_scratch.precision.glue, print with explicit "
        "format specs (precision.fmt, precision.array_text), and show noise as a bound "
        "(precision.below); then re-pair with `python tools/sync_notebooks.py`."
    )


def test_float_guard_flags_full_precision_and_passes_policy_output() -> None:
    notebook = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("glue(...)")
    record = {"scrapbook": {"name": "gap", "mime_prefix": "application/papermill.record/"}}
    cell.outputs = [
        nbformat.v4.new_output(
            "display_data",
            data={"application/papermill.record/text/plain": "3.0032491189825086"},
            metadata=record,
        ),
        nbformat.v4.new_output(
            "stream",
            name="stdout",
            text="seed 0x9e3779b97f4a7c15, 123456789012345 ids, version 1.19.6, 3.003249119\n",
        ),
    ]
    notebook.cells.append(cell)
    assert noisy_floats(notebook) == ["cell 0: 3.0032491189825086"]
    cell.outputs[0]["data"]["application/papermill.record/text/plain"] = "2.9000000000000004"
    assert noisy_floats(notebook) == ["cell 0: 2.9000000000000004"]
    cell.outputs[0]["data"]["application/papermill.record/text/plain"] = "1.778279410e-06"
    assert noisy_floats(notebook) == []


def test_widget_state_floats_are_guarded_too() -> None:
    notebook = nbformat.v4.new_notebook()
    state = {"state": {"m": {"state": {"spec": {"answer": 0.22313016014842993}}}}}
    notebook.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": state}
    assert noisy_floats(notebook) == ["widget state: 0.22313016014842993"]


def _build_outputs(md: Path) -> tuple[nbformat.NotebookNode, dict[str, str]]:
    executed = BUILD / "book" / f"{md.stem}.ipynb"
    if not executed.is_file():
        pytest.fail(
            f"{executed.relative_to(ROOT)} is missing: build the book first with "
            f"`{BUILD_COMMAND}` (see README), then run `pytest --nbval` again."
        )
    glue_file = executed.with_suffix(".glue.json")
    glued = json.loads(glue_file.read_text(encoding="utf-8")) if glue_file.is_file() else {}
    values = {key: output["data"]["text/plain"] for key, output in glued.items()}
    built = nbformat.read(executed, as_version=4)
    for cell in built.cells:
        if cell.cell_type == "code":
            cell.outputs = without_blank_lines(first_stream_per_name(cell.outputs))
    return built, values


def without_blank_lines(outputs: list) -> list:
    """Streams as their characters without whitespace: myst-nb re-joins what the kernel sent.

    The kernel may deliver one print in several chunks, split anywhere, even inside a line, and
    myst-nb's ``coalesce_streams`` strips each chunk's trailing whitespace and ends it with a
    newline before joining them. So where line breaks and trailing spaces fall in the build
    depends on timing; every other character, every digit included, is compared in order.
    """
    for output in outputs:
        if output.get("output_type") == "stream":
            output["text"] = "".join(output["text"].split())
    return outputs


def first_stream_per_name(outputs: list) -> list:
    """The build's outputs without the stale stream copies myst-nb leaves behind.

    myst-nb's ``coalesce_streams`` appends every later stream's text to the first stream of that
    name *in place* and returns a new list, but the notebook it writes keeps the old list: the
    first stream holds the merged text and the later ones are leftovers already contained in it.
    """
    seen: set[str] = set()
    kept = []
    for output in outputs:
        if output.get("output_type") == "stream":
            if output["name"] in seen:
                continue
            seen.add(output["name"])
        kept.append(output)
    return kept


@pytest.mark.parametrize("md", SOURCES, ids=IDS)
def test_book_build_reproduced_the_stored_outputs(md: Path) -> None:
    stored = nbformat.read(paired_path(md), as_version=4)
    built, built_glue = _build_outputs(md)
    differences = differing_cells(as_built(stored), built)
    stored_glue = glue_records(stored)
    differences += [
        f"glue {key}: stored {stored_glue.get(key)!r} != build {built_glue.get(key)!r}"
        for key in sorted(set(stored_glue) | set(built_glue))
        if stored_glue.get(key) != built_glue.get(key)
    ]
    assert not differences, (
        f"the book build, run with numpy's native SIMD paths, did not reproduce "
        f"{paired_path(md).name}: {differences[:5]}. If the chapter changed, re-pair it "
        "(`python tools/sync_notebooks.py`) and rebuild; if not, a shown number depends on "
        "the CPU: route it through llm_from_scratch.precision."
    )


def test_comparison_ignores_what_nbval_ignores() -> None:
    cell = nbformat.v4.new_code_cell("x")
    cell.outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="<Foo at 0x7f00aa>\n"),
        nbformat.v4.new_output("display_data", data={"image/png": "AAAA", "text/plain": "fig"}),
    ]
    other = nbformat.from_dict(json.loads(json.dumps(cell)))
    other.outputs[0]["text"] = "<Foo at 0x7fffff>\n"
    other.outputs[1]["data"]["image/png"] = "BBBB"
    assert comparable(cell) == comparable(other)
    other.outputs[1]["data"]["text/plain"] = "figure"
    assert comparable(cell) != comparable(other)


def test_build_reader_drops_the_stale_stream_copies_myst_nb_leaves() -> None:
    merged = nbformat.v4.new_output("stream", name="stdout", text="a\nb\n")
    stale = nbformat.v4.new_output("stream", name="stdout", text="b\n")
    error = nbformat.v4.new_output("stream", name="stderr", text="w\n")
    figure = nbformat.v4.new_output("display_data", data={"text/plain": "fig"})
    kept = first_stream_per_name([merged, figure, stale, error])
    assert kept == [merged, figure, error]


def test_build_comparison_ignores_where_chunk_boundaries_fell() -> None:
    """A blank line, or a line broken where a chunk ended, is timing; a changed digit is not."""
    one = [nbformat.v4.new_output("stream", name="stdout", text="a = 1.5\n\nb\n")]
    two = [nbformat.v4.new_output("stream", name="stdout", text="a =\n1.5\nb\n")]
    assert without_blank_lines(one) == without_blank_lines(two)
    three = [nbformat.v4.new_output("stream", name="stdout", text="a = 1.6\nb\n")]
    assert without_blank_lines(three) != without_blank_lines(two)
