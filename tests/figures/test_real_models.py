"""Chapter 13's block-difference figure: the parts read from built decoders, and the drawing."""

from __future__ import annotations

from llm_from_scratch.figures.real_models import (
    PARTS,
    block_parts,
    differences_figure,
    differing,
)
from llm_from_scratch.figures.style import MIN_TEXT_PX
from llm_from_scratch.nn import Decoder
from llm_from_scratch.random import SplitMix64


def _book() -> Decoder:
    return Decoder(20, 16, 1, 4, 64, rng=SplitMix64(1))


def _llama_like() -> Decoder:
    return Decoder(
        20,
        16,
        1,
        4,
        24,
        tie_embeddings=False,
        norm="rms",
        ffn="swiglu",
        num_kv_heads=2,
        norm_eps=1e-6,
        rope_pairing="half",
        rope_theta=500000.0,
        window=3,
        rng=SplitMix64(2),
    )


def test_parts_read_from_the_modules() -> None:
    book = block_parts(_book())
    assert book == {
        "norm": "LayerNorm, ε = 1e-05",
        "positions": "RoPE interleaved, θ = 10000",
        "attention": "H = 4, G = 4",
        "feed-forward": "GELU 16→64",
        "biases": "FFN",
        "head": "tied to embedding",
    }
    llama = block_parts(_llama_like())
    assert llama["norm"] == "RMSNorm, ε = 1e-06"
    assert llama["positions"] == "RoPE half, θ = 500000"
    assert llama["attention"] == "H = 4, G = 2, window 3"
    assert llama["feed-forward"] == "SwiGLU 24"
    assert (llama["biases"], llama["head"]) == ("none", "separate")


def test_gpt2_parts() -> None:
    gpt2 = Decoder(
        20,
        16,
        1,
        4,
        64,
        positions="learned",
        max_positions=12,
        ffn="gelu_tanh",
        attention_bias=True,
        rng=SplitMix64(3),
    )
    parts = block_parts(gpt2)
    assert parts["positions"] == "learned table (12 rows)"
    assert parts["feed-forward"] == "GELU tanh 16→64"
    assert parts["biases"] == "attention + FFN"


def test_differences_are_designs_not_sizes() -> None:
    wider = Decoder(20, 32, 1, 8, 128, rng=SplitMix64(4))  # the book's design, other sizes
    rows = {
        "book": block_parts(_book()),
        "wider": block_parts(wider),
        "llama": block_parts(_llama_like()),
    }
    changed = differing(rows)
    assert changed["book"] == [] and changed["wider"] == []
    assert changed["llama"] == list(PARTS)


def test_figure_is_legible() -> None:
    rows = {"book": block_parts(_book()), "llama": block_parts(_llama_like())}
    fig = differences_figure(rows)
    fig.render_png()
    assert fig.legibility.displayed_text_px() >= MIN_TEXT_PX
