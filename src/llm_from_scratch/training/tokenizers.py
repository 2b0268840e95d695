"""Character-level and byte-level tokenizers: text ↔ integer IDs, with an exact round trip.

Unknown characters (character level): by default ``encode`` refuses a character outside the
vocabulary, naming it and its position; built with ``unknown=c`` (c in the vocabulary) it maps
every unknown character to c instead, so decode(encode(text)) equals text with those replaced.
Bytes have no unknowns: every string is UTF-8 and every byte is one of 256 IDs.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ..errors import ArgumentError, TokenError


def _check_text(text: Any, who: str) -> str:
    if not isinstance(text, str):
        raise ArgumentError(f"{who} encodes a str; got {type(text).__name__}.")
    return text


def _check_ids(ids: Any, vocab_size: int, who: str) -> np.ndarray:
    array = np.asarray(ids)
    if array.ndim != 1 or (array.size and array.dtype.kind not in "iu"):
        raise TokenError(
            f"{who}.decode takes a 1-D array of integer IDs; got shape {array.shape}, dtype "
            f"{array.dtype}."
        )
    array = array.astype(np.int64)
    if array.size and (array.min() < 0 or array.max() >= vocab_size):
        raise TokenError(
            f"{who}.decode: IDs must lie in [0, {vocab_size}); got values from {array.min()} to "
            f"{array.max()}."
        )
    return array


class CharTokenizer:
    """ID i ↔ the i-th character of a sorted vocabulary (the distinct characters of a text)."""

    def __init__(self, characters: Iterable[str], *, unknown: str | None = None) -> None:
        chars = list(characters)
        if not chars or any(not isinstance(c, str) or len(c) != 1 for c in chars):
            raise ArgumentError(
                "CharTokenizer needs a non-empty list of single characters; got "
                f"{chars[:5]!r}{'…' if len(chars) > 5 else ''}."
            )
        if len(set(chars)) != len(chars):
            raise ArgumentError("CharTokenizer characters must be distinct; got duplicates.")
        if unknown is not None and unknown not in chars:
            raise ArgumentError(
                f"CharTokenizer unknown={unknown!r} must be one of its characters."
            )
        self.characters = tuple(chars)
        self.unknown = unknown
        self._index = {c: i for i, c in enumerate(chars)}

    @classmethod
    def from_text(cls, text: str, *, unknown: str | None = None) -> CharTokenizer:
        """The tokenizer whose vocabulary is sorted(set(text))."""
        return cls(sorted(set(_check_text(text, "CharTokenizer.from_text"))), unknown=unknown)

    @property
    def vocab_size(self) -> int:
        """V, the number of characters."""
        return len(self.characters)

    def __repr__(self) -> str:
        return f"CharTokenizer(vocab_size={self.vocab_size}, unknown={self.unknown!r})"

    def encode(self, text: str) -> np.ndarray:
        """[len(text)] int64 IDs; unknown characters raise, or become ``unknown`` if set."""
        text = _check_text(text, "CharTokenizer.encode")
        fallback = None if self.unknown is None else self._index[self.unknown]
        ids = np.empty(len(text), dtype=np.int64)
        for position, c in enumerate(text):
            i = self._index.get(c, fallback)
            if i is None:
                raise TokenError(
                    f"CharTokenizer.encode: {c!r} (position {position}) is not in the "
                    f"{self.vocab_size}-character vocabulary; build the tokenizer from text that "
                    "contains it, or pass unknown=<a vocabulary character> to map it there."
                )
            ids[position] = i
        return ids

    def decode(self, ids: Any) -> str:
        """The characters of ``ids`` joined."""
        array = _check_ids(ids, self.vocab_size, "CharTokenizer")
        return "".join(self.characters[i] for i in array)


class ByteTokenizer:
    """ID = one byte of the UTF-8 encoding, so V = 256 and every string round-trips."""

    vocab_size = 256

    def __repr__(self) -> str:
        return "ByteTokenizer(vocab_size=256)"

    def encode(self, text: str) -> np.ndarray:
        """[len(text.encode('utf-8'))] int64 IDs in [0, 256)."""
        raw = _check_text(text, "ByteTokenizer.encode").encode("utf-8")
        return np.frombuffer(raw, dtype=np.uint8).astype(np.int64)

    def decode(self, ids: Any) -> str:
        """bytes(ids) decoded as UTF-8; a cut multi-byte character becomes U+FFFD."""
        array = _check_ids(ids, 256, "ByteTokenizer")
        return array.astype(np.uint8).tobytes().decode("utf-8", errors="replace")
