"""Prose numbers that follow the kernel: `python tools/live_prose.py book/NN-x.md ...`.

Rewrites each MyST notebook in place, mechanically and idempotently:

- every ``{glue:text}`key` `` or ``{glue:text}`key:spec` `` in the prose (outside code cells)
  becomes ``{eval}`glued["key"]` `` or ``{eval}`glued["key:spec"]` ``, and
- the chapter's ``from llm_from_scratch.precision import ... glue`` also imports ``glued``.

``glued`` (``llm_from_scratch.precision.glued``) holds the text of every value the chapter glued,
formatted as ``{glue:text}`` formats it, so the sentence reads the same everywhere: the book
build pastes the glued value (tools/eval_role.py, the same HTML as ``{glue:text}``), JupyterLab
with jupyterlab-myst evaluates the expression in the kernel (and follows a fixture edit), and the
notebook stores that result in each Markdown cell's ``user_expressions`` metadata
(tools/sync_notebooks.py), so a reader sees the numbers before running anything. The glue calls
and their outputs do not change, so nbval still compares every number the prose shows.

Then re-pair the converted chapters: `python tools/sync_notebooks.py book/NN-x.md ...`.
`--check` converts nothing and exits 1 if a file still needs converting.
A ``{glue:text}`` pasting from another document (``doc::key``) is refused; ``{glue:md}`` and
the other glue roles are left alone (they paste Markdown, not text).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

GLUE_TEXT = re.compile(r"\{glue:text\}`([^`]*)`")
EVAL = re.compile(r"\{eval\}`([^`]*)`")
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})(.*)$")
IMPORT = re.compile(
    r"^from llm_from_scratch\.precision import (?P<names>[^(\n]+|\((?P<wrapped>[^)]*)\))$", re.M
)
LINE_LENGTH = 99  # ruff's line-length (pyproject.toml)


class ConversionError(Exception):
    pass


def eval_role(spec: str) -> str:
    """The ``{eval}`` role that shows what ``{glue:text}`spec` `` shows."""
    if "::" in spec:
        raise ConversionError(f"{{glue:text}}`{spec}` pastes from another document")
    if not spec or any(char in spec for char in "\"'\\"):
        raise ConversionError(f"{{glue:text}}`{spec}`: not a glue key with an optional spec")
    return f'{{eval}}`glued["{spec}"]`'


def prose_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) offsets of the text outside the front matter and fenced blocks."""
    lines = text.splitlines(keepends=True)
    spans: list[tuple[int, int]] = []
    offset = 0
    index = 0
    if lines and lines[0].strip() == "---":  # front matter
        for index in range(1, len(lines)):
            if lines[index].strip() == "---":
                break
        offset = sum(len(line) for line in lines[: index + 1])
        index += 1
    fence: str | None = None
    start = offset
    for line in lines[index:]:
        match = FENCE.match(line)
        if fence is None and match:
            spans.append((start, offset))
            fence = match.group(2)
        elif (
            fence is not None
            and match
            and match.group(2).startswith(fence[0] * len(fence))
            and not match.group(3).strip()
        ):
            fence = None
            start = offset + len(line)
        offset += len(line)
    if fence is None:
        spans.append((start, offset))
    return [(a, b) for a, b in spans if b > a]


def convert_prose(text: str) -> tuple[str, int]:
    """``text`` with every prose ``{glue:text}`` role made an ``{eval}``; and how many."""
    pieces: list[str] = []
    count = 0
    last = 0
    for start, end in prose_spans(text):
        pieces.append(text[last:start])
        chunk, found = GLUE_TEXT.subn(lambda m: eval_role(m.group(1)), text[start:end])
        pieces.append(chunk)
        count += found
        last = end
    pieces.append(text[last:])
    return "".join(pieces), count


def import_glued(text: str) -> tuple[str, bool]:
    """``text`` with ``glued`` imported beside ``glue``; whether that changed anything."""
    matches = list(IMPORT.finditer(text))
    if len(matches) != 1:
        raise ConversionError(
            f"expected one `from llm_from_scratch.precision import ...` line, found {len(matches)}"
        )
    match = matches[0]
    body = match.group("wrapped") if match.group("wrapped") is not None else match.group("names")
    names = [name.strip() for name in body.replace("\n", " ").split(",") if name.strip()]
    if "glued" in names:
        return text, False
    if "glue" not in names:
        raise ConversionError("the precision import does not import glue")
    names.insert(names.index("glue") + 1, "glued")
    line = "from llm_from_scratch.precision import " + ", ".join(names)
    if len(line) > LINE_LENGTH:
        line = (
            "from llm_from_scratch.precision import (\n"
            + "".join(f"    {name},\n" for name in names)
            + ")"
        )
    return text[: match.start()] + line + text[match.end() :], True


def convert(text: str) -> tuple[str, int, bool]:
    """(converted text, roles converted, whether the import changed)."""
    converted, count = convert_prose(text)
    if EVAL.search(converted) is None:
        return converted, count, False
    converted, imported = import_glued(converted)
    return converted, count, imported


def main(argv: list[str]) -> int:
    check = "--check" in argv
    paths = [Path(arg) for arg in argv if arg != "--check"]
    if not paths:
        print(__doc__)
        return 2
    pending = 0
    for path in paths:
        text = path.read_text(encoding="utf-8")
        try:
            converted, count, imported = convert(text)
        except ConversionError as error:
            print(f"{path}: {error}", file=sys.stderr)
            return 1
        left = len(GLUE_TEXT.findall(converted))
        note = f" ({left} {{glue:text}} left in code cells)" if left else ""
        if converted == text:
            print(f"{path}: nothing to convert{note}")
            continue
        pending += 1
        what = f"{count} {{glue:text}} roles -> {{eval}}" + (", imports glued" if imported else "")
        if check:
            print(f"{path}: needs converting: {what}")
        else:
            path.write_text(converted, encoding="utf-8")
            print(f"{path}: {what}{note}")
    return 1 if check and pending else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
