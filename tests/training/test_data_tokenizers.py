"""Batches from SplitMix64, the induction task, tokenizers and the book-prose corpus."""

from __future__ import annotations

import math

import numpy as np
import pytest

from llm_from_scratch.errors import ArgumentError, ShapeError, TokenError
from llm_from_scratch.random import SplitMix64
from llm_from_scratch.training import (
    IGNORE_INDEX,
    ByteTokenizer,
    CharTokenizer,
    bigram_bits_per_char,
    book_prose_split,
    induction_batch,
    markdown_prose,
    random_windows,
    uniform_integers,
)


def test_uniform_integers_follow_the_generator() -> None:
    rng, twin = SplitMix64(5), SplitMix64(5)
    drawn = uniform_integers(rng, 10, 6)
    by_hand = [int(twin.next_float() * 10) for _ in range(6)]
    assert drawn.tolist() == by_hand and rng.state == twin.state


def test_windows_are_shifted_slices_of_the_array() -> None:
    tokens = np.arange(100, 150)
    rng, twin = SplitMix64(1), SplitMix64(1)
    inputs, targets = random_windows(tokens, 4, 8, rng)
    starts = [int(twin.next_float() * (50 - 8)) for _ in range(4)]
    for b, s in enumerate(starts):
        assert inputs[b].tolist() == list(range(100 + s, 108 + s))
        assert targets[b].tolist() == list(range(101 + s, 109 + s))
    again = random_windows(tokens, 4, 8, SplitMix64(1))
    np.testing.assert_array_equal(again[0], inputs)


def test_window_refusals() -> None:
    with pytest.raises(ShapeError, match="at least context"):
        random_windows(np.arange(8), 2, 8, SplitMix64(0))
    with pytest.raises(ShapeError, match="1-D integer"):
        random_windows(np.zeros(20), 2, 4, SplitMix64(0))
    with pytest.raises(ArgumentError, match="SplitMix64"):
        random_windows(np.arange(20), 2, 4, np.random.default_rng(0))


def test_induction_rows_repeat_and_count_only_the_second_half() -> None:
    inputs, targets = induction_batch(6, 12, 9, SplitMix64(2), half_lengths=(2, 6))
    assert inputs.shape == targets.shape == (6, 12)
    sequence = np.concatenate([inputs, targets[:, -1:]], axis=1)  # (B, T + 1) where known
    lengths = set()
    for b in range(6):
        counted = np.flatnonzero(targets[b] != IGNORE_INDEX)
        length = int(counted[0])  # the first counted input position is L
        lengths.add(length)
        assert counted.tolist() == list(range(length, 2 * length - 1))
        first = inputs[b, :length]
        assert len(set(first.tolist())) == length  # distinct: one earlier occurrence each
        np.testing.assert_array_equal(inputs[b, length : 2 * length], first)
        for t in counted:  # the target is the token after the earlier occurrence of x_t
            earlier = int(np.flatnonzero(first == inputs[b, t])[0])
            assert targets[b, t] == sequence[b, earlier + 1]
    assert len(lengths) > 1  # L varies from row to row
    assert inputs.min() >= 0 and inputs.max() < 9


def test_induction_default_and_refusals() -> None:
    inputs, targets = induction_batch(2, 9, 8, SplitMix64(0))  # L = 5 fills the window
    np.testing.assert_array_equal(inputs[:, :4], inputs[:, 5:9])
    assert np.all(targets[:, :5] == IGNORE_INDEX) and np.all(targets[:, 5:8] != IGNORE_INDEX)
    for lengths, vocab in (((1, 3), 8), ((4, 3), 8), ((2, 6), 8), ((2, 4), 3)):
        with pytest.raises(ArgumentError, match="half_lengths"):
            induction_batch(2, 9, vocab, SplitMix64(0), half_lengths=lengths)


def test_char_tokenizer_round_trip_and_unknown_policy() -> None:
    tok = CharTokenizer.from_text("hello, world")
    assert tok.characters == tuple(sorted(set("hello, world"))) and tok.vocab_size == 9
    assert tok.decode(tok.encode("world, hello")) == "world, hello"
    assert tok.encode("lo").tolist() == [tok.characters.index("l"), tok.characters.index("o")]
    with pytest.raises(TokenError, match=r"'z' \(position 2\)"):
        tok.encode("woz")
    lenient = CharTokenizer.from_text("hello, world", unknown=" ")
    assert lenient.decode(lenient.encode("hazel")) == "h  el"  # a and z are unknown
    with pytest.raises(ArgumentError, match="unknown"):
        CharTokenizer("ab", unknown="c")
    with pytest.raises(TokenError, match=r"\[0, 9\)"):
        tok.decode([9])


def test_byte_tokenizer_round_trip() -> None:
    tok = ByteTokenizer()
    text = "naïve → ε"
    ids = tok.encode(text)
    assert ids.tolist() == list(text.encode("utf-8")) and tok.decode(ids) == text
    assert tok.decode(ids[:3]) == "na\ufffd"  # a cut two-byte character: the replacement mark


def test_markdown_prose_keeps_prose_only() -> None:
    source = "\n".join(
        [
            "---",
            "jupytext: {}",
            "---",
            "",
            "# A title",
            "",
            "Text with {cite:t}`vaswani2017` a role, `code`, $x^2$ math and [a link](b.md).",
            "",
            "```{code-cell} ipython3",
            "x = 1",
            "```",
            "(fig-label)=",
            "````{figure} a.png",
            "```",
            "nested",
            "```",
            "````",
            "$$",
            "y = 2",
            "$$",
            "<details><summary>Why</summary>",
            "| a | b |",
            "Last line.",
        ]
    )
    assert markdown_prose(source) == (
        "A title\n\nText with a role, code, math and a link.\n\nWhy\nLast line.\n"
    )


def test_book_split_takes_each_chapters_tail(tmp_path) -> None:
    for name, body in (("a.md", "0123456789"), ("b.md", "abcdefghij")):
        (tmp_path / name).write_text(body + "\n", encoding="utf-8")
    split = book_prose_split(sorted(tmp_path.glob("*.md")), validation_fraction=0.2)
    # each prose is 11 characters with its newline; the tail is round(11 · 0.2) = 2 of them
    assert split.train == "012345678abcdefghi"
    assert split.validation == "9\nj\n"
    assert split.sources == ("a.md", "b.md")


def test_bigram_baseline_by_hand() -> None:
    train = np.array(
        [0, 1, 0, 1, 1]
    )  # pairs 01, 10, 01, 11: counts[0] = (0, 2), counts[1] = (1, 1)
    validation = np.array([0, 1, 1])  # pairs 01, 11
    alpha = 0.5
    p01 = (2 + alpha) / (2 + 2 * alpha)
    p11 = (1 + alpha) / (2 + 2 * alpha)
    expected = -(math.log2(p01) + math.log2(p11)) / 2
    assert bigram_bits_per_char(train, validation, 2, alpha) == pytest.approx(expected, 1e-14)
    with pytest.raises(TokenError, match=r"must lie in \[0, 2\)"):
        bigram_bits_per_char(train, np.array([0, 2]), 2)
