"""The numbers behind the introduction's block diagram, and a smoke test on Agg."""

from __future__ import annotations

import pytest
from matplotlib.figure import Figure

from llm_from_scratch.autodiff import Tensor
from llm_from_scratch.errors import ArgumentError
from llm_from_scratch.figures.block_overview import block_overview, block_overview_figure
from llm_from_scratch.nn import TransformerBlock
from llm_from_scratch.random import SplitMix64


def small_block(order: str = "pre") -> tuple[TransformerBlock, Tensor]:
    block = TransformerBlock(4, 2, 16, order=order, rng=SplitMix64(1))
    return block, Tensor(SplitMix64(2).normal((1, 3, 4)))


def test_steps_follow_the_pre_norm_cycle_with_live_shapes() -> None:
    block, x = small_block()
    steps = block_overview(block, x, {"attention": "attention chapter"})
    assert [s.label for s in steps] == [
        "X",
        "Norm",
        "Attention",
        "+",
        "Norm",
        "FFN",
        "+",
        "next block",
    ]
    assert [s.kind for s in steps].count("add") == 2
    assert all(s.shape == (1, 3, 4) for s in steps)
    assert steps[2].note == "attention chapter" and steps[1].note == ""
    assert [s.label_text for s in steps if s.kind == "add"] == ["X₁ =", "X₂ ="]


def test_shapes_come_from_the_block() -> None:
    block = TransformerBlock(6, 3, 12, rng=SplitMix64(3))
    steps = block_overview(block, Tensor(SplitMix64(4).normal((2, 5, 6))))
    assert {s.shape for s in steps} == {(2, 5, 6)}


def test_rejects_post_norm_and_unknown_notes() -> None:
    block, x = small_block("post")
    with pytest.raises(ArgumentError):
        block_overview(block, x)
    block, x = small_block()
    with pytest.raises(ArgumentError):
        block_overview(block, x, {"router": "no such part"})
    with pytest.raises(ArgumentError):
        block_overview_figure(block_overview(block, x)[:-1])


def test_figure_draws_every_step_and_both_residuals() -> None:
    block, x = small_block()
    fig = block_overview_figure(block_overview(block, x, {"ffn": "FFN chapters"}))
    assert isinstance(fig, Figure)
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert texts.count("residual") == 2
    assert "FFN chapters" in texts and texts.count("+") == 2
