"""The book's own prose as a character corpus, and a smoothed bigram baseline on it.

Prose only: from each ``book/*.md`` the YAML front matter, every fenced block (code cells,
directives, display math, examples), ``$$`` math, label targets ``(name)=``, HTML tags and
comments, tables and MyST role markup (``{cite:t}`…```, ``{glue:text}`…```) are dropped; inline
code keeps its text without backticks, inline math ``$…$`` is dropped, a link keeps its text, a
heading loses its ``#`` marks. Each chapter is split into a training head and a validation tail
(the last ``validation_fraction`` of its characters), so both splits sample every chapter.

A run stores the split it trained on as ``corpus.json`` (:func:`save_corpus`): the training and
validation text, the chapter names and the SHA-256 of train + validation, plain JSON, so the run
can be re-measured after the chapters have changed; :func:`load_corpus` reads it back and refuses
a file whose text does not match its fingerprint.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ArgumentError, TokenError
from ..validate import as_real, positive_int
from .atomic import write_json_atomic

_FENCE = re.compile(r"^\s*(`{3,}|~{3,}|:{3,})")
_ROLE = re.compile(r"\{[a-zA-Z][\w:.-]*\}`[^`]*`")
_INLINE_MATH = re.compile(r"\$[^$\n]+\$")
_INLINE_CODE = re.compile(r"`([^`\n]*)`")
_LINK = re.compile(r"\[([^\]\n]*)\]\([^)\n]*\)")
_TAG = re.compile(r"<[^>\n]+>")
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_TARGET = re.compile(r"^\s*\([\w:.-]+\)=\s*$")
_HEADING = re.compile(r"^#{1,6}\s+")
_SPACES = re.compile(r"[ \t]{2,}")


def markdown_prose(source: str) -> str:
    """The prose of one MyST Markdown notebook, by the rules in the module docstring."""
    if not isinstance(source, str):
        raise ArgumentError(f"markdown_prose reads a str; got {type(source).__name__}.")
    lines = source.splitlines()
    if lines and lines[0].strip() == "---":  # YAML front matter
        end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), len(lines) - 1)
        lines = lines[end + 1 :]
    text = _COMMENT.sub("", "\n".join(lines))
    kept: list[str] = []
    fence: str | None = None
    in_math = False
    for line in text.splitlines():
        match = _FENCE.match(line)
        if fence is not None:
            closes = match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence)
            if closes and line.strip() == match.group(1):  # a bare fence closes the block
                fence = None
            continue
        if match:
            fence = match.group(1)
            continue
        if line.strip().startswith("$$"):
            single = line.strip() != "$$" and line.strip().endswith("$$") and len(line.strip()) > 2
            if not single:
                in_math = not in_math
            continue
        if in_math or _TARGET.match(line) or line.lstrip().startswith("|"):
            continue
        line = _ROLE.sub("", line)
        line = _INLINE_MATH.sub("", line)
        line = _INLINE_CODE.sub(r"\1", line)
        line = _LINK.sub(r"\1", line)
        line = _TAG.sub("", line)
        line = _HEADING.sub("", line)
        line = _SPACES.sub(" ", line).rstrip()
        kept.append(line)
    prose = "\n".join(kept)
    prose = re.sub(r"\n{3,}", "\n\n", prose)
    return prose.strip() + "\n"


@dataclass(frozen=True)
class TextSplit:
    """Training and validation text, with the chapters they came from."""

    train: str
    validation: str
    sources: tuple[str, ...]

    @property
    def sha256(self) -> str:
        """The corpus fingerprint: SHA-256 of the UTF-8 bytes of train + validation."""
        return hashlib.sha256((self.train + self.validation).encode("utf-8")).hexdigest()


CORPUS_FORMAT = "llm_from_scratch.corpus/1"


def save_corpus(path: str | os.PathLike[str], split: TextSplit) -> Path:
    """Write the split as JSON {format, sources, sha256, train, validation}, atomically."""
    if not isinstance(split, TextSplit):
        raise ArgumentError(f"save_corpus stores a TextSplit; got {type(split).__name__}.")
    target = _path(path, "save_corpus")
    data = {
        "format": CORPUS_FORMAT,
        "sources": list(split.sources),
        "sha256": split.sha256,
        "train": split.train,
        "validation": split.validation,
    }
    target.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(target, data, ensure_ascii=False)
    return target


def _path(path: Any, what: str) -> Path:
    """``path`` as a Path if it is a non-empty str or os.PathLike without NUL bytes."""
    text = os.fspath(path) if isinstance(path, str | os.PathLike) else None
    if not isinstance(text, str) or not text or "\0" in text:
        raise ArgumentError(f"{what} needs a file path; got {path!r:.60}.")
    return Path(text)


def load_corpus(path: str | os.PathLike[str]) -> TextSplit:
    """The split a ``corpus.json`` holds, after checking its text against its SHA-256."""
    source = _path(path, "load_corpus")
    try:
        data = json.loads(source.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as error:  # ValueError: JSON, UTF-8
        raise ArgumentError(f"cannot read corpus {str(source)!r}: {error}") from error
    if not isinstance(data, dict) or data.get("format") != CORPUS_FORMAT:
        raise ArgumentError(
            f"{str(source)!r} is not a {CORPUS_FORMAT} file (JSON with train, validation, "
            "sources and sha256)."
        )
    fields = {"train": str, "validation": str, "sources": list, "sha256": str}
    for name, kind in fields.items():
        if not isinstance(data.get(name), kind):
            raise ArgumentError(f"corpus {str(source)!r}: {name!r} must be a {kind.__name__}.")
    split = TextSplit(data["train"], data["validation"], tuple(map(str, data["sources"])))
    if split.sha256 != data["sha256"]:
        raise ArgumentError(
            f"corpus {str(source)!r}: its text hashes to {split.sha256[:12]}…, not the "
            f"{data['sha256'][:12]}… it records; the file was edited or cut short."
        )
    return split


def book_prose_split(paths: Sequence[str | Path], validation_fraction: float = 0.1) -> TextSplit:
    """Each chapter's prose cut at (1 − f)·length: heads joined → train, tails → validation."""
    validation_fraction = as_real(validation_fraction, "validation_fraction")
    if not 0.0 < validation_fraction < 1.0:
        raise ArgumentError(
            f"validation_fraction must lie strictly between 0 and 1; got {validation_fraction!r}."
        )
    if isinstance(paths, str | os.PathLike | bytes) or not isinstance(paths, Sequence):
        raise ArgumentError(
            f"book_prose_split takes a list of Markdown paths; got {type(paths).__name__}."
        )
    files = [_path(p, "book_prose_split") for p in paths]
    if not files:
        raise ArgumentError("book_prose_split needs at least one Markdown file; got none.")
    heads, tails = [], []
    for file in files:
        if not file.is_file():
            raise ArgumentError(f"book_prose_split: no file at {str(file)!r}.")
        try:
            prose = markdown_prose(file.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as error:
            raise ArgumentError(f"book_prose_split: cannot read {str(file)!r}: {error}") from error
        cut = round(len(prose) * (1.0 - validation_fraction))
        heads.append(prose[:cut])
        tails.append(prose[cut:])
    return TextSplit("".join(heads), "".join(tails), tuple(f.name for f in files))


def bigram_bits_per_char(
    train_ids: Any, validation_ids: Any, vocab_size: int, alpha: float = 0.1
) -> float:
    """−(1/N) Σ log₂ P(xᵢ₊₁ | xᵢ) on validation; P(b | a) = (n(a, b) + α)/(n(a) + αV) on train."""
    vocab_size = positive_int(vocab_size, "vocab_size")
    alpha = as_real(alpha, "alpha", positive=True, fix="Add-α smoothing needs α > 0, e.g. 0.1.")
    arrays = []
    for label, ids in (("train_ids", train_ids), ("validation_ids", validation_ids)):
        array = np.asarray(ids)
        if array.ndim != 1 or array.size < 2 or array.dtype.kind not in "iu":
            raise TokenError(
                f"{label} must be a 1-D integer array of at least 2 IDs; got shape "
                f"{array.shape}, dtype {array.dtype}."
            )
        if array.min() < 0 or array.max() >= vocab_size:
            raise TokenError(f"{label} must lie in [0, {vocab_size}); got values outside.")
        arrays.append(array.astype(np.int64))
    train, validation = arrays
    counts = np.zeros((vocab_size, vocab_size))  # (V, V): counts[a, b] = #(a followed by b)
    np.add.at(counts, (train[:-1], train[1:]), 1.0)
    probs = (counts + alpha) / (counts.sum(axis=1, keepdims=True) + alpha * vocab_size)
    return float(-np.mean(np.log2(probs[validation[:-1], validation[1:]])))
