"""Chapter 13's exercise: a Llama-family model's parameter count, written by the reader.

``llama_parameters(vocab_size, model_width, num_layers, num_heads, num_kv_heads, head_width,
hidden_width, tied)`` returns the number of scalars a Llama / Mistral / Qwen3-style checkpoint
stores: the embedding V·D, per layer W_Q and W_O (D·H·d_h each), W_K and W_V (D·G·d_h each),
the three SwiGLU matrices (3·D·F) and two RMSNorm gains (2·D), the final norm's D, and a
separate V·D head unless it is tied. The grader checks it against ``hub.count_parameters`` (the
shape declaration the loader builds from) on six configurations, and names the usual slips:
keys and values at full width (forgetting G), a tied head counted twice, the norms left out,
d_h taken as D / H.
"""

from __future__ import annotations

from typing import Any

from ..hub.spec import ModelSpec, count_parameters
from .grading import AnswerError, call, expect, grader, require_callable

__all__ = ["CASES", "check_llama_parameters", "declared_count"]

#: (V, D, L, H, G, d_h, F, tied): SmolLM2-135M, Llama 3.1 8B, Qwen3-0.6B's shapes (d_h ≠ D / H;
#: without its QK-norm gains) and three small ones (G = H, G = 1, tied and not).
CASES = (
    (49152, 576, 30, 9, 3, 64, 1536, True),
    (128256, 4096, 32, 32, 8, 128, 14336, False),
    (151936, 1024, 28, 16, 8, 128, 3072, True),
    (64, 32, 2, 4, 4, 8, 48, False),
    (64, 32, 2, 4, 1, 8, 48, True),
    (100, 24, 3, 6, 2, 4, 64, False),
)


def _spec(v: int, d: int, layers: int, h: int, g: int, dh: int, f: int, tied: bool) -> ModelSpec:
    return ModelSpec(
        family="llama",
        vocab_size=v,
        model_width=d,
        num_layers=layers,
        num_heads=h,
        num_kv_heads=g,
        head_width=dh,
        hidden_width=f,
        norm="rms",
        norm_eps=1e-5,
        positions="rope",
        max_positions=None,
        ffn="swiglu",
        tie_embeddings=tied,
    )


def declared_count(*case: Any) -> int:
    """The count from the loader's shape declaration (``hub.count_parameters``)."""
    return count_parameters(_spec(*case))


def _slip(case: tuple, got: int) -> str:
    """A hint when ``got`` is what a usual mistake gives."""
    v, d, layers, h, g, dh, f, tied = case
    slips = [
        (
            declared_count(v, d, layers, h, h, dh, f, tied),
            "You gave the keys and values H heads; they have G (W_K and W_V are D × G·d_h).",
        ),
        (
            declared_count(*case) + (v * d if tied else 0),
            "A tied head is the embedding table itself: count it once.",
        ),
        (
            declared_count(*case) - (2 * layers + 1) * d,
            "The RMSNorm gains are parameters too: two per layer and the final one, D each.",
        ),
        (declared_count(*case) - d, "The final norm (D gains) is missing."),
        (
            declared_count(v, d, layers, h, g, d // h, f, tied),
            "d_h is the config's head_dim, which need not be D / H (Qwen3-0.6B: 128 ≠ 1024 / 16).",
        ),
    ]
    for value, hint in slips:
        if got == value and value != declared_count(*case):
            return " " + hint
    return ""


@grader("Chapter 13, a Llama-family parameter count")
def check_llama_parameters(candidate: Any) -> str:
    """Grade ``llama_parameters(V, D, L, H, G, d_h, F, tied)`` on six configurations."""
    require_callable(candidate, "your llama_parameters")
    for case in CASES:
        v, d, layers, h, g, dh, f, tied = case
        label = f"V={v}, D={d}, L={layers}, H={h}, G={g}, d_h={dh}, F={f}, tied={tied}"
        got = call(candidate, *case, what="your llama_parameters", case=label)
        whole = isinstance(got, int) and not isinstance(got, bool)
        whole = whole or (hasattr(got, "dtype") and got.dtype.kind in "iu" and got.ndim == 0)
        expect(
            whole,
            f"llama_parameters should return a whole number of parameters; got {got!r} for "
            f"{label}.",
        )
        want = declared_count(*case)
        if int(got) != want:
            raise AnswerError(
                f"llama_parameters gives {int(got):,} for {label}; the checkpoint stores "
                f"{want:,}.{_slip(case, int(got))}"
            )
    return "Every count equals the loader's shape declaration, on six configurations."
