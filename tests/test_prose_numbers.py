"""No number typed by hand in a chapter's prose: every number a reader sees comes from the code.

The book's rule is that a number in the prose is computed when the notebook runs (a glued value,
``{eval}`glued["key"]```) and never typed. This test reads each ``book/*.md`` and looks for digits
in the prose a reader sees, after removing everything that is not prose or that is computed:

- the front matter, code cells and other fenced blocks (their numbers are code or computed
  output), HTML comments, and MyST targets such as ``(fig-label)=``;
- display math ``$$ ... $$`` and inline math ``$ ... $`` (formulas: ``12D^2``, ``\\sqrt 2``);
- roles with their content: ``{eval}`glued[...]```, ``{cite:t}`...```, ``{ref}`...``` and
  inline code in backticks (names such as ``float64`` or ``retain_graph=True``);
- the targets of Markdown links, ``[text](03-swiglu.md)``.

What is left is checked for digit strings. A digit is allowed only inside a word in ``NAMES``
(names that contain digits, like ``GPT-2``) or in one of the ``CONTEXTS`` below (a chapter
number in a cross-reference, a year beside an author). Keep both lists short: every entry is a
place where a typed number is legitimately part of a name, not a value the fixture could change.

Numbers spelled out in words ("eight questions") are beyond a digit scan; a reader's review
still has to catch those.

A chapter that still has typed numbers may be listed in ``NOT_YET_CLEAN`` with the reason; its
test is then a strict expected failure, so the entry must go as soon as the chapter is clean.
Every chapter is clean today.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

BOOK = Path(__file__).resolve().parents[1] / "book"

# Names that contain digits. Matched as whole words (case-sensitive).
NAMES = {
    "float64",
    "float32",
    "float16",
    "bfloat16",
    "int64",
    "SplitMix64",
    "Mix13",
    "MurmurHash3",
    "GPT-2",
    "GPT-3",
    "T5",
    "RoPE 2D",
    "2D",  # "a 2D rotation" (RoPE rotates pairs in the plane)
    "3D",
    "Swish₁",
    "64-bit",  # the width of a SplitMix64 state and output, part of the generator's name
    "32-bit",
    "top-1",  # routing schemes (mixture of experts): the name of the rule, not a value
    "top-2",
    "Top-1",
    "0/1",  # "a 0/1 matrix": a matrix of indicators
    "L1",  # norms and penalties: "L2 regularisation"
    "L2",
    "SHA-256",  # the hash function that fingerprints a stored corpus
    "AVX2",  # CPU instruction sets, named by the benchmark's machine line
    "AVX-512",
    "Llama 2",  # model names (Chapter 12's published configurations)
    "Llama 3",
    "Llama 2 7B",
    "Llama 3 8B",
    "Mistral 7B",
    "Qwen3",
    "Qwen3 8B",
    "DeepSeek-V2",
    "ViT-22B",
    "Llama 3.1 8B",  # Chapter 13's published models
    "Qwen3-0.6B",
    "SmolLM2-135M",
    "Mixtral 8x7B",
}

# Contexts in which a typed number is a reference, not a value.
CONTEXTS = [
    re.compile(r"\bChapters? \d+(?:\s*(?:,|and|to|–|-)\s*\d+)*"),  # cross-references
    re.compile(r"\bSections? \d+(?:\.\d+)*"),
    re.compile(r"§\d+(?:\.\d+)*"),  # a section of a cited paper
    re.compile(r"\b(?:19|20)\d\d[a-z]?\b"),  # a year: "Bengio et al. (2003)", "in 2017"
    re.compile(r"\bet al\.,? \(?\d{4}\)?"),
    re.compile(r"^\s*(?:\d+\.|\*\*\d+\.)(?=\s)"),  # an enumerated item: "1. ", "**2. A title.**"
    re.compile(r"\b\d+D\b"),  # a width written as a multiple of D: "the 4D expansion", "12D"
]

NOT_YET_CLEAN: dict[str, str] = {
    # file name: why it is not clean yet; remove the entry once the chapter passes (it then
    # shows as XPASS in the summary)
}

FENCE = re.compile(r"^(`{3,}|~{3,})")
MATH_BLOCK = re.compile(r"\$\$.*?\$\$", re.S)
INLINE_MATH = re.compile(r"(?<!\\)\$(?:[^$\n]|\n(?!\s*\n))+?(?<!\\)\$")  # may wrap a line
ROLE = re.compile(r"\{[a-z:-]+\}`[^`]*`")
INLINE_CODE = re.compile(r"`[^`\n]*`")
LINK_TARGET = re.compile(r"\]\([^)]*\)")
COMMENT = re.compile(r"<!--.*?-->", re.S)
TARGET = re.compile(r"^\([A-Za-z0-9_.:-]+\)=\s*$", re.M)
DIGITS = re.compile(r"\d+(?:[.,]\d+)*")


def prose_lines(text: str) -> list[tuple[int, str]]:
    """(line number, prose text) for every line outside front matter and fenced blocks."""
    lines = text.splitlines()
    out: list[tuple[int, str]] = []
    start = 0
    if lines and lines[0].strip() == "---":
        end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), 0)
        start = end + 1
    fence: str | None = None
    for number, line in enumerate(lines[start:], start=start + 1):
        opening = FENCE.match(line.lstrip())
        if fence is None and opening:
            fence = opening.group(1)
            continue
        if fence is not None:
            closing = line.strip()
            if closing.startswith(fence) and closing.strip(fence[0]) == "":
                fence = None
            continue
        out.append((number, line))
    return out


def strip_markup(text: str) -> str:
    """The chapter's prose with math, roles, code, links, comments and targets blanked out."""
    for pattern in (COMMENT, MATH_BLOCK):
        text = pattern.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    for pattern in (ROLE, INLINE_CODE, INLINE_MATH, LINK_TARGET, TARGET):
        text = pattern.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    return text


def typed_numbers(path: Path) -> list[str]:
    """Every digit string left in the prose of ``path``, as 'file:line: number in «context»'."""
    kept = prose_lines(path.read_text(encoding="utf-8"))
    numbers = [n for n, _ in kept]
    cleaned = strip_markup("\n".join(line for _, line in kept)).split("\n")
    found = []
    for number, line in zip(numbers, cleaned, strict=True):
        blanked = line  # headings are prose too: checked like any other line
        for context in CONTEXTS:
            blanked = context.sub(lambda m: " " * len(m.group(0)), blanked)
        for name in sorted(NAMES, key=len, reverse=True):
            blanked = re.sub(
                rf"(?<![\w-]){re.escape(name)}(?!\w)", lambda m: " " * len(m.group(0)), blanked
            )
        for match in DIGITS.finditer(blanked):
            left = max(0, match.start() - 30)
            snippet = line[left : match.end() + 30].strip()
            found.append(f"{path.name}:{number}: {match.group(0)!r} in «{snippet}»")
    return found


CHAPTERS = sorted(p for p in BOOK.glob("*.md") if p.name != "references.md")


def test_the_scanner_sees_prose_and_skips_the_rest(tmp_path: Path) -> None:
    sample = tmp_path / "sample.md"
    sample.write_text(
        "---\njupytext: 1\n---\n\n# Title\n\n(fig-x)=\nA width of 512 is typed.\n"
        'A glued {eval}`glued["width:d"]` and $12D^2$ and `float64` and Chapter 6 are not.\n'
        "```{code-cell} ipython3\nx = 768\n```\n$$\ny = 2x\n$$\n"
        "Bengio et al. (2003) and GPT-2 are names; [link](03-ffn.md) is a target.\n",
        encoding="utf-8",
    )
    found = typed_numbers(sample)
    assert len(found) == 1 and "'512'" in found[0] and "sample.md:8" in found[0], found


@pytest.mark.parametrize(
    "path",
    [
        pytest.param(
            p,
            marks=pytest.mark.xfail(reason=NOT_YET_CLEAN[p.name], strict=True),
            id=p.name,
        )
        if p.name in NOT_YET_CLEAN
        else pytest.param(p, id=p.name)
        for p in CHAPTERS
    ],
)
def test_no_typed_number_in_prose(path: Path) -> None:
    found = typed_numbers(path)
    assert not found, (
        "Numbers typed into prose: glue them from the code (llm_from_scratch.precision.glue, "
        'then {eval}`glued["key"]`), or, if the digits are part of a name, add the name to '
        "NAMES in tests/test_prose_numbers.py with a reason:\n  " + "\n  ".join(found)
    )
