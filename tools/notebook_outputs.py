"""Read a notebook's outputs the way nbval compares them, and find floats shown too precisely.

`comparable(cell)` flattens one code cell's outputs into ``{key: [text, ...]}`` with nbval's
rules (every output field and MIME type except images, widget views, tracebacks and metadata;
consecutive streams joined; memory addresses sanitised), so two runs of a chapter can be
compared without re-executing it. `noisy_floats(notebook)` lists every float literal in the
stored outputs (streams, text, glue records, widget state) showing more than
`GUARD_DIGITS` significant digits: a value the precision policy
(`llm_from_scratch.precision`) should have rounded.

`python -m tools.notebook_outputs A.ipynb B.ipynb` prints the cells whose outputs differ.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

import nbformat

from llm_from_scratch.precision import GUARD_DIGITS
from tools.sync_notebooks import WIDGET_STATE, merge_streams

SKIPPED = frozenset(
    {
        "metadata",
        "traceback",
        "prompt_number",
        "output_type",
        "name",
        "execution_count",
        "application/vnd.jupyter.widget-view+json",
        "image/png",
        "image/jpeg",
    }
)
ADDRESS = re.compile(r"(?<= at )0x[0-9a-fA-F]+")  # as tests/nbval_sanitize.cfg
# A decimal float literal (a point or an exponent), not part of a word, hex string or version.
FLOAT = re.compile(
    r"(?<![\w.])[-+]?(?:\d+\.\d*|\.\d+|\d+(?=[eE]))(?:[eE][-+]?\d+)?(?![\w.])", re.ASCII
)


def glue_records(notebook: nbformat.NotebookNode) -> dict[str, str]:
    """{glue name: text/plain} of a notebook's glue outputs (the values nbval compares)."""
    found = {}
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            record = output.get("metadata", {}).get("scrapbook")
            if record:
                prefix = record.get("mime_prefix", "")
                found[record["name"]] = output["data"][prefix + "text/plain"]
    return found


def _text(value: Any) -> str:
    text = "".join(value) if isinstance(value, list) else value
    return text if isinstance(text, str) else json.dumps(text, sort_keys=True)


def comparable(cell: nbformat.NotebookNode) -> dict[str, list[str]]:
    """One code cell's outputs as nbval compares them: {field or MIME type: [texts]}."""
    flat: dict[str, list[str]] = {}
    for output in merge_streams(cell.get("outputs", [])):
        for key, value in output.items():
            if key in SKIPPED:
                continue
            items = value.items() if key == "data" else [(key, value)]
            for name, item in items:
                if name not in SKIPPED:
                    flat.setdefault(name, []).append(ADDRESS.sub("0xADDRESS", _text(item)))
    return flat


def differing_cells(stored: nbformat.NotebookNode, fresh: nbformat.NotebookNode) -> list[str]:
    """'cell N [key]: stored … != fresh …' for every code cell whose outputs differ."""
    if len(stored.cells) != len(fresh.cells):
        return [f"{len(stored.cells)} cells stored, {len(fresh.cells)} in the fresh run"]
    found = []
    for index, (old, new) in enumerate(zip(stored.cells, fresh.cells, strict=True)):
        if old.cell_type != "code":
            continue
        before, after = comparable(old), comparable(new)
        for key in sorted(set(before) | set(after)):
            if before.get(key) != after.get(key):
                found.append(
                    f"cell {index} [{key}]: stored {str(before.get(key))[:300]} "
                    f"!= fresh {str(after.get(key))[:300]}"
                )
    return found


def significant_digits(literal: str) -> int:
    """Digits a float literal shows, leading zeros excluded: '0.00120' -> 3, '2.5e-07' -> 2."""
    mantissa = re.split(r"[eE]", literal.lstrip("+-"))[0].replace(".", "")
    return len(mantissa.lstrip("0")) or 1


def noisy_floats(notebook: nbformat.NotebookNode) -> list[str]:
    """'cell N: <literal>' for every stored float showing more than GUARD_DIGITS digits."""
    found = []
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code":
            continue
        texts = [text for values in comparable(cell).values() for text in values]
        found += [
            f"cell {index}: {literal}"
            for text in texts
            for literal in FLOAT.findall(text)
            if significant_digits(literal) > GUARD_DIGITS
        ]
    state = notebook.metadata.get("widgets", {}).get(WIDGET_STATE, {})
    for literal in FLOAT.findall(json.dumps(state)):
        if significant_digits(literal) > GUARD_DIGITS:
            found.append(f"widget state: {literal}")
    return found


def main(argv: list[str]) -> None:
    stored, fresh = (nbformat.read(path, as_version=4) for path in argv)
    differences = differing_cells(stored, fresh)
    print("\n".join(differences) or "outputs agree")
    sys.exit(1 if differences else 0)


if __name__ == "__main__":
    main(sys.argv[1:])
