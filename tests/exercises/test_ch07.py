"""Chapter 7's grader: the book's RoPE rotation passes; plausible wrong ones are named."""

import numpy as np

from llm_from_scratch.exercises.ch07 import check_rope


def rope(x, positions, base):
    """The book's solution: pair (a, b) → (a cos θ − b sin θ, a sin θ + b cos θ), θ = t·ω_j."""
    width = x.shape[-1]
    frequencies = base ** (-2.0 * np.arange(width // 2) / width)  # ω_j
    theta = positions[:, None] * frequencies  # (T, d/2)
    a, b = x[:, 0::2], x[:, 1::2]
    out = np.empty_like(x)
    out[:, 0::2] = a * np.cos(theta) - b * np.sin(theta)
    out[:, 1::2] = a * np.sin(theta) + b * np.cos(theta)
    return out


def test_the_books_solution_passes():
    assert repr(check_rope(rope)) == (
        "Chapter 7, the RoPE rotation: ✓ passed. Every pair turns by its position times its "
        "frequency, anticlockwise, lengths kept."
    )


def test_a_clockwise_rotation_is_named():
    assert check_rope(lambda x, positions, base: rope(x, -positions, base)).message == (
        "rope(x, positions, base) turns every pair by −θ for one pair (1, 0) at position 1: "
        "(1, 0) should go to (cos θ, sin θ), anticlockwise. Check the signs: "
        "a' = a cos θ − b sin θ, b' = a sin θ + b cos θ."
    )


def test_half_pairing_is_named():
    def half(x, positions, base):
        width = x.shape[-1]
        order = np.concatenate([np.arange(0, width, 2), np.arange(1, width, 2)])
        return rope(x[:, np.argsort(order)], positions, base)[:, order]

    assert check_rope(half).message == (
        "rope(x, positions, base) pairs coordinate j with j + d/2 for x of shape (4, 6), "
        "positions 0 … 3; this book's RoPE pairs neighbours: pair j is (x[2j], x[2j + 1])."
    )


def test_a_wrong_frequency_is_named():
    def half_exponent(x, positions, base):
        return rope(x, positions, base**0.5)  # ω_j = base^(−j/d)

    assert check_rope(half_exponent).message == (
        "pair 1 of row 1 turned by 0.215443 rad for x of shape (4, 6), positions 0 … 3; it "
        "should turn by positions[1]·ω_1 = 0.0464159 rad (mod 2π), with ω_j = base^(−2j/d) and "
        "j counted from 0."
    )


def test_a_map_that_is_not_a_rotation_is_named():
    def swapped_cos_sin(x, positions, base):
        width = x.shape[-1]
        theta = positions[:, None] * base ** (-2.0 * np.arange(width // 2) / width)
        a, b = x[:, 0::2], x[:, 1::2]
        out = np.empty_like(x)
        out[:, 0::2] = a * np.cos(theta) - b * np.sin(theta)
        out[:, 1::2] = a * np.cos(theta) + b * np.sin(theta)
        return out

    assert check_rope(swapped_cos_sin).message == (
        "pair 0 of row 0 has length 0.764103 after rope for one pair (1, 0) at position 1; it had "
        "length 1. A rotation keeps every pair's length: use (a cos θ − b sin θ, "
        "a sin θ + b cos θ), with the same θ in both lines."
    )
