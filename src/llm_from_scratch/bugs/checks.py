"""The checks: the package's own probes and tests, each a function returning pass or fail.

Each check builds its own small fixtures from SplitMix64 seeds, runs the package through its
public classes and through module attributes looked up at call time (so a mutant switched on
around it is reached), and returns an :class:`Outcome` with a short reason. Together they run in
a few seconds; the slowest is the short training run.

- ``shapes``: every piece returns the documented shape;
- ``gradcheck``: reverse-mode gradients of a tiny decoder's loss against central differences;
- ``known-values``: values the chapters work out in advance (and the ALiBi paper's
  slopes, which the unit tests hold), closed forms included;
- invariance probes: ``position-independence``, ``causal-prefix``,
  ``permutation-equivariance``, ``rope-relative-offset``, ``rows-sum-to-one`` and
  ``norm-scale-invariance``;
- ``numpy-block``: the pre-norm block against the written-out numpy block of
  ``llm_from_scratch.numpy_block``, forward and hand-derived backward;
- ``cache-equality``: generation with the key/value cache against generation without it (a
  grouped-query decoder with a sliding window among them);
- ``grouped-heads``, ``window-mask``, ``qk-norm-order``: grouped-query attention against H
  separate attentions, the sliding window against its closed-form mask, and QK-norm's place
  (before RoPE) against the layer's parts composed by hand;
- ``induction-loss``: a short training run on the induction task must learn (loss on the
  repeated half below ln V) without seeing the future (loss on the unpredictable tokens no
  lower than their entropy).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..autodiff import Tensor, gradcheck_parameters, no_grad
from ..generation import generate
from ..nn import attention as attention_module
from ..nn import moe as moe_module
from ..nn import positions as positions_module
from ..nn.attention import MultiHeadAttention, merge_heads
from ..nn.block import TransformerBlock
from ..nn.decoder import Decoder
from ..nn.feedforward import FeedForward
from ..nn.linear import Linear
from ..nn.module import Parameter
from ..nn.norms import LayerNorm, RMSNorm
from ..nn.positions import ALiBiPositions, RoPEPositions, RotaryEmbedding
from ..nn.swiglu import SwiGLU
from ..numpy_block import forward as numpy_forward
from ..numpy_block import handwritten as numpy_backward
from ..precision import array_text
from ..random import SplitMix64
from ..training import loss as loss_module
from ..training import optim as optim_module
from ..training.clip import clip_grad_norm
from ..training.data import IGNORE_INDEX, induction_batch
from ..validate import as_integer, non_negative_int

__all__ = ["CHECKS", "Check", "Outcome"]

SEED = 2026  # every fixture below draws from SplitMix64(SEED + k)
EXACT = 1e-12  # equalities that hold up to rounding
SEED_FACT_TOLERANCE = 5e-7  # seed facts are given to six decimals


@dataclass(frozen=True)
class Outcome:
    """A check's verdict and the reason, in one sentence."""

    passed: bool
    reason: str


@dataclass(frozen=True)
class Check:
    """A named check: what kind of evidence it is, what it asserts, and the function."""

    name: str  # "causal-prefix"
    kind: str  # "shapes", "gradients", "values", "invariance", "reference", "generation", ...
    claim: str  # what a pass means, in one sentence
    run: Callable[[], Outcome]


CHECKS: dict[str, Check] = {}


def check(name: str, kind: str, claim: str) -> Callable[[Callable[[], Outcome]], Check]:
    """Register ``fn`` as the check ``name``."""

    def register(fn: Callable[[], Outcome]) -> Check:
        entry = Check(name, kind, claim, fn)
        CHECKS[name] = entry
        return entry

    return register


def _first_failure(results: list[tuple[str, bool]], passed: str) -> Outcome:
    """Fail with the first failing item's description, or pass with ``passed``."""
    for description, ok in results:
        if not ok:
            return Outcome(False, description)
    return Outcome(True, passed)


def _gap(a: Any, b: Any) -> float:
    """max |a − b| over every entry (inf when the shapes differ)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(np.max(np.abs(a - b), initial=0.0)) if a.shape == b.shape else math.inf


def _rng(k: int) -> SplitMix64:
    return SplitMix64(SEED + k)


# --- shapes ------------------------------------------------------------------------------------


@check(
    "shapes",
    "shapes",
    "Every piece (layers, attention with RoPE and ALiBi, block, experts, decoder, loss, "
    "gradients, optimizer step, cached generation) returns the shape its chapter documents.",
)
def shapes() -> Outcome:
    """Compare each piece's output shape with the documented one."""
    rng = _rng(0)
    x = Tensor(rng.normal((2, 4, 8)))  # (B, T, D)
    got: list[tuple[str, tuple[int, ...], tuple[int, ...]]] = []

    def expect(label: str, value: Any, shape: tuple[int, ...]) -> None:
        got.append(
            (label, tuple(np.shape(value.value if isinstance(value, Tensor) else value)), shape)
        )

    expect("Linear(8 -> 3)", Linear(8, 3, rng=rng)(x), (2, 4, 3))
    expect("bias-free Linear(8 -> 3)", Linear(8, 3, bias=False, rng=rng)(x), (2, 4, 3))
    expect("LayerNorm(8)", LayerNorm(8)(x), (2, 4, 8))
    expect("RMSNorm(8)", RMSNorm(8)(x), (2, 4, 8))
    heads = attention_module.split_heads(x, 2)
    expect("split_heads", heads, (2, 2, 4, 4))
    expect("merge_heads", merge_heads(heads), (2, 4, 8))
    rope = MultiHeadAttention(8, 2, causal=True, positions=RoPEPositions(4), rng=rng)
    out, weights = rope(x)
    expect("attention with RoPE", out, (2, 4, 8))
    expect("its weights", weights, (2, 4, 4))
    alibi = MultiHeadAttention(6, 3, causal=True, positions=ALiBiPositions(3), rng=rng)
    out, weights = alibi(Tensor(rng.normal((2, 4, 6))), average_weights=False)
    expect("attention with ALiBi", out, (2, 4, 6))
    expect("its per-head weights", weights, (2, 3, 4, 4))
    current = MultiHeadAttention(
        8, 4, num_kv_heads=2, causal=True, window=2, qk_norm=True, positions=RoPEPositions(2),
        rng=rng,
    )  # fmt: skip
    out, weights = current(x, average_weights=False)
    expect("grouped-query attention with a window and QK-norm", out, (2, 4, 8))
    expect("its per-head weights", weights, (2, 4, 4, 4))
    block = TransformerBlock(8, 2, 16, positions="rope", rng=rng)
    expect("TransformerBlock", block(x)[0], (2, 4, 8))
    experts = moe_module.MixtureOfExperts(8, 16, 4, 2, rng=rng)
    out, report = experts(x)
    expect("MixtureOfExperts", out, (2, 4, 8))
    expect("its gates", report.gates, (8, 2))
    model = Decoder(10, 8, 1, 2, 16, positions="rope", rng=rng)
    ids = np.array([[1, 2, 3, 4], [5, 6, 7, 8]])
    logits = model(ids)
    expect("Decoder logits", logits, (2, 4, 10))
    targets = np.array([[2, 3, 4, IGNORE_INDEX], [6, 7, IGNORE_INDEX, IGNORE_INDEX]])
    loss = loss_module.cross_entropy(logits, targets, ignore_index=IGNORE_INDEX)
    expect("cross-entropy", loss, ())
    loss.backward()
    for name, p in model.named_parameters():
        expect(f"gradient of {name}", np.zeros(p.shape) if p.grad is None else p.grad, p.shape)
    before = {name: p.shape for name, p in model.named_parameters()}
    optim_module.AdamW(model.parameters(), lr=1e-2).step()
    for name, p in model.named_parameters():
        expect(f"{name} after an AdamW step", p.value, before[name])
    result = generate(model, [[1, 2, 3], [4, 5]], max_new_tokens=3, do_sample=False)
    for b, (prompt, sequence) in enumerate(zip((3, 2), result.sequences, strict=True)):
        expect(f"generated row {b}", sequence, (prompt + 3,))
    for layer, pair in enumerate(result.cache.shapes()):  # (B, H, C, d_h), C = 3 + 3 positions
        for kind, shape in zip(("keys", "values"), pair, strict=True):
            got.append((f"cache layer {layer} {kind}", tuple(shape), (2, 2, 6, 4)))
    return _first_failure(
        [
            (f"{label} has shape {shape}, expected {want}", shape == want)
            for label, shape, want in got
        ],
        f"all {len(got)} shapes are the documented ones",
    )


# --- gradients ---------------------------------------------------------------------------------


@check(
    "gradcheck",
    "gradients",
    "The reverse-mode gradient of a tiny decoder's loss (tied embedding, LayerNorm, RoPE, causal "
    "attention, GELU network) matches central differences in every parameter.",
)
def gradients() -> Outcome:
    """gradcheck_parameters on a decoder with V = 5, D = 4, one block, two heads."""
    rng = _rng(1)
    model = Decoder(5, 4, 1, 2, 6, positions="rope", rng=rng)
    for p in model.parameters():  # away from init's symmetries (unit gains, zero biases)
        p.value = p.value + rng.uniform(-0.3, 0.3, p.shape)
    ids = np.array([[0, 3, 1], [4, 2, 2]])
    targets = np.array([[3, 1, IGNORE_INDEX], [2, 2, 0]])

    def loss() -> Tensor:
        return loss_module.cross_entropy(model(ids), targets, ignore_index=IGNORE_INDEX)

    result = gradcheck_parameters(loss, model.parameters(), step=1e-6, atol=1e-6, name="decoder")
    if result.passed:
        return Outcome(True, "every parameter's gradient agrees with central differences")
    names = [n for n, _ in model.named_parameters()]
    return Outcome(
        False,
        f"the gradient of {names[result.worst_input]} differs from central differences by "
        f"{result.max_abs_error:.2g} (reverse {result.analytic:.6g}, central "
        f"{result.numeric:.6g})",
    )


# --- seed facts --------------------------------------------------------------------------------


def _swiglu_fact() -> tuple[np.ndarray, np.ndarray]:
    """S1-S3: SwiGLU's output Y and input gradient dX for upstream G = I."""
    layer = SwiGLU.from_parameters(
        [[-1.0, 0.0, 1.0], [0.0, 1.0, -1.0]],
        [[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]],
        [[1.0, 0.0], [0.0, 1.0], [1.0, -1.0]],
    )
    x = Tensor(np.eye(2), requires_grad=True)
    y = layer(x)
    y.backward(np.eye(2))
    return y.value, x.grad


def _linear_fact() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """L1, L3: Y, dX, dW and db of the two-position fixture."""
    layer = Linear.from_parameters([[1.0, 0.0, -1.0], [2.0, 0.5, 1.0]], [0.5, -0.5, 1.0])
    x = Tensor([[[1.0, 2.0], [-1.0, 3.0]]], requires_grad=True)
    y = layer(x)
    y.backward(np.array([[[1.0, 0.0, -1.0], [0.5, 2.0, 1.0]]]))
    return y.value, x.grad, layer.weight.grad, layer.bias.grad


def _adamw_fact() -> tuple[np.ndarray, np.ndarray]:
    """One AdamW step of Chapter 10's fixture (θ = 1, η = 0.01, λ = 0.1) and its closed form."""
    theta, grad, lr, decay, eps = np.ones(3), np.array([0.0, 0.01, 1.0]), 0.01, 0.1, 1e-8
    p = Parameter(theta.copy(), "theta")
    p.grad = grad.copy()
    optim_module.AdamW([p], lr=lr, weight_decay=decay, eps=eps).step()
    # First step: m̂ = g, v̂ = g², so θ₁ = θ(1 − ηλ) − η g / (|g| + ε).
    return p.value, theta * (1.0 - lr * decay) - lr * grad / (np.abs(grad) + eps)


@check(
    "known-values",
    "values",
    "Values the chapters work out in advance come out: Linear and SwiGLU outputs "
    "and gradients, parameter counts, the head split, LayerNorm and RMSNorm values, a RoPE "
    "rotation, ALiBi slopes, top-k gates, cross-entropy of uniform logits, one AdamW step.",
)
def known_values() -> Outcome:
    """Each fact against its written value (six-decimal facts within 5e-7)."""
    facts: list[tuple[str, Any, Any]] = []  # (fact, computed, expected)
    y, dx, dw, db = _linear_fact()
    facts += [
        ("L1 Linear output", y, [[[5.5, 0.5, 2.0], [5.5, 1.0, 5.0]]]),
        ("L3 dX", dx, [[[2.0, 1.0], [-0.5, 3.0]]]),
        ("L3 dW", dw, [[0.5, -2.0, -2.0], [3.5, 6.0, 1.0]]),
        ("L3 db", db, [1.5, 2.0, 0.0]),
    ]
    counts = [Linear(2, 3, bias=b, rng=_rng(2)).parameter_count for b in (True, False)]
    facts.append(("L5 parameter scalars with and without bias", counts, [9, 6]))
    y, dx = _swiglu_fact()
    facts += [
        ("S2 SwiGLU output", y, [[1.924234, -2.193176], [-0.268941, 1.731059]]),
        ("S3 SwiGLU dX", dx, [[4.634916, -2.858777], [2.196612, 3.658729]]),
    ]
    tokens = Tensor(np.arange(64.0).reshape(2, 4, 8))
    split = attention_module.split_heads(tokens, 2).value
    facts.append(
        ("T4 head rows of token 0", [split[0, 0, 0], split[0, 1, 0]], [[0, 1, 2, 3], [4, 5, 6, 7]])
    )
    layer_norm = LayerNorm.from_parameters(np.ones(2), np.zeros(2), eps=0.0)
    facts.append(
        (
            "T6 LayerNorm of (2, 4) and (1, 3)",
            layer_norm(Tensor([[[2.0, 4.0], [1.0, 3.0]]])).value,
            [[[-1.0, 1.0], [-1.0, 1.0]]],
        )
    )
    rms = RMSNorm.from_parameters(np.ones(2), eps=0.0)
    facts.append(("T6 RMSNorm of (3, 4)", rms(Tensor([3.0, 4.0])).value, [0.848528, 1.131371]))
    turned = positions_module.rotate_pairs(Tensor([1.0, 0.0]), [math.pi / 2]).value
    facts.append(("T14 pair (1, 0) rotated by 90°", turned, [0.0, 1.0]))
    row = RotaryEmbedding(4)(Tensor([[1.0, 0.0, 0.0, 0.0]] * 2)).value[1]
    facts.append(
        (
            "T14 book pairing (2j, 2j + 1): e₀ at position 1",
            row,
            [math.cos(1.0), math.sin(1.0), 0.0, 0.0],
        )
    )
    facts.append(
        (
            "T13 ALiBi slope 0.1 at distance 3",
            positions_module.alibi_bias(1, 4, 4, slopes=[0.1])[0, 3, 0],
            -0.3,
        )
    )
    six = ALiBiPositions(6).slopes  # Press et al.: the 4-head slopes, then every other 8-head one
    facts.append(
        (
            "ALiBi paper's slopes for 6 heads",
            six,
            [2.0**-2, 2.0**-4, 2.0**-6, 2.0**-8, 2.0**-1, 2.0**-3],
        )
    )
    selected, gates = moe_module.top_k_gates(np.array([0.56, 0.24, 0.20]), 2)
    facts += [
        ("T15 top-2 experts", selected, [0, 1]),
        ("T15 renormalised gates", gates, [0.7, 0.3]),
        ("T15 combined output of experts 2 and 5", float(np.dot(gates, [2.0, 5.0])), 2.9),
    ]
    uniform = loss_module.cross_entropy(
        Tensor(np.zeros((4, 16))), [0, 1, IGNORE_INDEX, 3], ignore_index=IGNORE_INDEX
    )
    facts.append(
        ("Chapter 10: uniform logits cost ln V, padding or not", uniform.item(), math.log(16))
    )
    stepped, closed = _adamw_fact()
    facts.append(("Chapter 10: one AdamW step θ(1 − ηλ) − η g/(|g| + ε)", stepped, closed))
    results = []
    for fact, computed, expected in facts:
        gap = _gap(computed, expected)
        got, want = (
            array_text(np.ravel(np.asarray(v, dtype=np.float64))) for v in (computed, expected)
        )
        results.append((f"{fact}: got {got}, the fact says {want}", gap <= SEED_FACT_TOLERANCE))
    return _first_failure(results, f"all {len(facts)} facts hold")


# --- invariance probes -------------------------------------------------------------------------


@check(
    "position-independence",
    "invariance",
    "In every position-wise piece (Linear, LayerNorm, RMSNorm, the GELU network, SwiGLU, a "
    "mixture of experts), changing one token changes that token's output and no other.",
)
def position_independence() -> Outcome:
    """Replace token (1, 2) of a [2, 5, 6] input and compare every other token's output."""
    rng = _rng(3)
    x = rng.normal((2, 5, 6))
    other = x.copy()
    other[1, 2] = rng.normal((6,))
    pieces = {
        "Linear": Linear(6, 5, rng=rng),
        "LayerNorm": LayerNorm.from_parameters(rng.uniform(0.5, 1.5, (6,)), rng.normal((6,))),
        "RMSNorm": RMSNorm.from_parameters(rng.uniform(0.5, 1.5, (6,))),
        "GELU network": FeedForward(6, 12, rng=rng),
        "SwiGLU": SwiGLU(6, 12, 6, rng=rng),
        "mixture of experts": moe_module.MixtureOfExperts(6, 8, 3, 2, rng=rng),
    }
    results = []
    for label, piece in pieces.items():
        outputs = [piece(Tensor(a)) for a in (x, other)]
        a, b = (o[0].value if isinstance(o, tuple) else o.value for o in outputs)
        moved = np.abs(a - b).max(axis=-1)  # (B, T)
        elsewhere = float(np.delete(moved.reshape(-1), 1 * 5 + 2).max())
        results.append(
            (f"{label}: another token's output moved by {elsewhere:.2g}", elsewhere <= EXACT)
        )
        results.append((f"{label}: the changed token's output did not move", moved[1, 2] > 1e-6))
    return _first_failure(results, "each token's output depends on that token alone")


def _causal_decoders() -> dict[str, Decoder]:
    rng = _rng(4)
    return {
        f"{kind} decoder": Decoder(
            10, 12, 2, 3 if kind == "ALiBi" else 2, 24, positions=kind.lower(), rng=rng
        )
        for kind in ("RoPE", "ALiBi")
    }


@check(
    "causal-prefix",
    "invariance",
    "In causal decoders (RoPE and ALiBi), the logits at positions up to t do not change when "
    "the tokens after t do.",
)
def causal_prefix() -> Outcome:
    """Change the last two of six tokens; the first four positions' logits must stay put."""
    ids = np.array([[1, 7, 3, 3, 5, 2]])
    later = ids.copy()
    later[0, 4:] = [9, 0]
    results = []
    with no_grad():
        for label, model in _causal_decoders().items():
            gap = _gap(model(ids).value[:, :4], model(later).value[:, :4])
            results.append(
                (
                    f"{label}: earlier logits moved by {gap:.2g} when later tokens changed",
                    gap <= EXACT,
                )
            )
    return _first_failure(results, "no position reads a later token")


@check(
    "permutation-equivariance",
    "invariance",
    "Without positions or a mask, permuting the tokens permutes the outputs of attention and of "
    "a block, and nothing else.",
)
def permutation_equivariance() -> Outcome:
    """Compare f(x[:, p]) with f(x)[:, p] for a fixed permutation p."""
    rng = _rng(5)
    x = rng.normal((2, 5, 8))
    order = np.array([3, 0, 4, 1, 2])
    pieces = {
        "attention": MultiHeadAttention(8, 2, causal=False, rng=rng),
        "block": TransformerBlock(8, 2, 16, causal=False, rng=rng),
    }
    results = []
    with no_grad():
        for label, piece in pieces.items():
            gap = _gap(piece(Tensor(x[:, order]))[0].value, piece(Tensor(x))[0].value[:, order])
            results.append(
                (f"{label}: permuted input gave outputs off by {gap:.2g}", gap <= EXACT)
            )
    return _first_failure(results, "outputs follow the tokens' order exactly")


@check(
    "rope-relative-offset",
    "invariance",
    "RoPE keeps every vector's length, and the score of a query at i with a key at j depends on "
    "j − i alone (and does depend on it).",
)
def rope_relative_offset() -> Outcome:
    """Scores R(i)q · R(j)k at shifted positions, and lengths, through RoPEPositions.rotate."""
    rng = _rng(6)
    rope = RoPEPositions(8)
    q, k = rng.normal((8,)), rng.normal((8,))

    def rotated(v: np.ndarray, position: int) -> np.ndarray:
        rows = Tensor(np.tile(v, (position + 1, 1))[None, None])  # (1, 1, T, 8)
        return rope.rotate(rows).value[0, 0, position]

    def score(i: int, j: int) -> float:
        return float(rotated(q, i) @ rotated(k, j))

    base = [score(i, j) for i, j in ((0, 1), (2, 5), (3, 3))]
    shifted = [score(i + 4, j + 4) for i, j in ((0, 1), (2, 5), (3, 3))]
    lengths = [abs(np.linalg.norm(rotated(q, t)) - np.linalg.norm(q)) for t in (1, 5)]
    gap = _gap(base, shifted)
    return _first_failure(
        [
            (f"scores moved by {gap:.2g} when both positions shifted by four", gap <= EXACT),
            (f"a rotation changed a length by {max(lengths):.2g}", max(lengths) <= EXACT),
            (
                "scores at offsets 1, 3 and 0 are equal: positions have no effect",
                abs(base[0] - base[1]) > 1e-6,
            ),
        ],
        "scores depend on the offset j − i alone, lengths are kept",
    )


@check(
    "rows-sum-to-one",
    "invariance",
    "Every row of attention weights (causal, with RoPE, with ALiBi, with padding) and every "
    "token's top-k gates sum to one.",
)
def rows_sum_to_one() -> Outcome:
    """Row sums of per-head weights [B, H, L, S] and of the router's gates [N, k]."""
    rng = _rng(7)
    sums: dict[str, np.ndarray] = {}
    with no_grad():
        rope = MultiHeadAttention(8, 2, causal=True, positions=RoPEPositions(4), rng=rng)
        sums["causal attention with RoPE"] = rope(
            Tensor(rng.normal((2, 5, 8))), average_weights=False
        )[1].value.sum(-1)
        alibi = MultiHeadAttention(6, 3, causal=True, positions=ALiBiPositions(3), rng=rng)
        sums["causal attention with ALiBi"] = alibi(
            Tensor(rng.normal((2, 5, 6))), average_weights=False
        )[1].value.sum(-1)
        padding = np.array([[False] * 5, [False, False, False, True, True]])
        plain = MultiHeadAttention(8, 2, rng=rng)
        sums["attention with padding"] = plain(
            Tensor(rng.normal((2, 5, 8))), key_padding_mask=padding, average_weights=False
        )[1].value.sum(-1)
        router = moe_module.TopKRouter(8, 4, 2, rng=rng)
        sums["top-2 gates"] = router(Tensor(rng.normal((6, 8)))).gates.value.sum(-1)
    results = []
    for label, row_sums in sums.items():
        gap = _gap(row_sums, np.ones_like(row_sums))
        worst = row_sums.reshape(-1)[np.argmax(np.abs(row_sums - 1.0))]
        results.append((f"{label}: a row sums to {worst:.6g}", gap <= EXACT))
    return _first_failure(results, "every row sums to one")


@check(
    "norm-scale-invariance",
    "invariance",
    "LayerNorm and RMSNorm (ε = 0) give the same output when each token is multiplied by its own "
    "positive factor.",
)
def norm_scale_invariance() -> Outcome:
    """N(c_t x_t) = N(x_t) with a different c_t for every token."""
    rng = _rng(8)
    x = rng.normal((2, 4, 6))
    scales = rng.uniform(0.2, 5.0, (2, 4, 1))
    norms = {
        "LayerNorm": LayerNorm.from_parameters(
            rng.uniform(0.5, 1.5, (6,)), rng.normal((6,)), eps=0.0
        ),
        "RMSNorm": RMSNorm.from_parameters(rng.uniform(0.5, 1.5, (6,)), eps=0.0),
    }
    results = []
    with no_grad():
        for label, norm in norms.items():
            gap = _gap(norm(Tensor(x * scales)).value, norm(Tensor(x)).value)
            results.append(
                (f"{label}: scaling tokens moved the output by {gap:.2g}", gap <= 1e-10)
            )
    return _first_failure(results, "each token's scale is normalised away")


# --- the written-out numpy block ---------------------------------------------------------------

NUMPY_NAMES = {  # the block's parameter (by its name's ending) → the numpy block's name
    "attention_norm.gain": "g1",
    "attention.query.weight": "wq",
    "attention.key.weight": "wk",
    "attention.value.weight": "wv",
    "attention.output.weight": "wo",
    "ffn_norm.gain": "g2",
    "ffn.gate.weight": "wg",
    "ffn.up.weight": "wu",
    "ffn.down.weight": "wd",
}


@check(
    "numpy-block",
    "reference",
    "A pre-norm block (RMSNorm, causal attention with RoPE, SwiGLU) gives the output and the "
    "gradients of the numpy block written out by hand in llm_from_scratch.numpy_block.",
)
def numpy_block() -> Outcome:
    """Outputs and every gradient against the handwritten forward and backward."""
    rng = _rng(9)
    heads = 2
    block = TransformerBlock(8, heads, 12, norm="rms", positions="rope", ffn="swiglu", rng=rng)
    params = {}
    for name, p in block.named_parameters():
        if name.endswith("gain"):
            p.value = p.value + rng.uniform(-0.1, 0.1, p.shape)
        short = next((v for k, v in NUMPY_NAMES.items() if name.endswith(k)), None)
        if short is not None:
            params[short] = p.value
    x = rng.uniform(-1.0, 1.0, (2, 5, 8))
    seed = rng.uniform(-1.0, 1.0, x.shape)
    expected, _ = numpy_forward(np, params, x, heads)
    grads, dx = numpy_backward(params, x, seed, heads)
    leaf = Tensor(x, requires_grad=True)
    output, _ = block(leaf)
    output.backward(seed)
    gaps = {"output": _gap(output.value, expected), "the input's gradient": _gap(leaf.grad, dx)}
    for name, p in block.named_parameters():
        short = next((v for k, v in NUMPY_NAMES.items() if name.endswith(k)), None)
        if short is not None:
            gaps[f"the gradient of {name}"] = _gap(p.grad, grads[short])
    return _first_failure(
        [
            (f"{what} differs from the numpy block by {gap:.2g}", gap <= 1e-10)
            for what, gap in gaps.items()
        ],
        "output and all gradients agree with the numpy block",
    )


# --- generation ----------------------------------------------------------------------------------


@check(
    "cache-equality",
    "generation",
    "Greedy generation with the key/value cache gives the tokens and logits of generation "
    "without it (RoPE and ALiBi decoders, and a grouped-query decoder with a sliding window of 3 "
    "whose rolling cache holds 3 positions, prompts of two lengths).",
)
def cache_equality() -> Outcome:
    """generate(use_cache=True) against generate(use_cache=False), step by step."""
    results = []
    prompts = [[1, 7, 3, 3], [5, 2]]
    decoders = _causal_decoders()
    decoders["grouped decoder with a window of 3"] = Decoder(
        10, 12, 2, 2, 24, positions="rope", num_kv_heads=1, window=3, rng=_rng(10)
    )
    for label, model in decoders.items():
        runs = [
            generate(
                model, prompts, max_new_tokens=4, do_sample=False, keep_logits=True, use_cache=flag
            )
            for flag in (True, False)
        ]
        gap = max(
            _gap(a, b) for a, b in zip(runs[0].step_logits, runs[1].step_logits, strict=True)
        )
        same = all(np.array_equal(a, b) for a, b in zip(*(r.sequences for r in runs), strict=True))
        results.append((f"{label}: cached logits differ by {gap:.2g}", gap <= 1e-10))
        results.append((f"{label}: cached generation chose other tokens", same))
    return _first_failure(results, "cached and uncached generation agree")


# --- the attention of current models -----------------------------------------------------------


def _attention_by_hand(
    x: np.ndarray, q: np.ndarray, k: np.ndarray, v: np.ndarray, blocked: np.ndarray
) -> np.ndarray:
    """softmax(q kᵀ/√d_h, blocked → −∞) v for one head, [T, d_h] each: numpy only."""
    scores = np.where(blocked, -np.inf, q @ k.T / math.sqrt(q.shape[-1]))
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return weights / weights.sum(axis=-1, keepdims=True) @ v


@check(
    "grouped-heads",
    "reference",
    "Grouped-query attention (H = 4 query heads over G = 2 and G = 1 key/value heads) equals H "
    "separate causal attentions written in numpy, query head h reading key/value head h // (H/G).",
)
def grouped_heads() -> Outcome:
    """The layer's output against one numpy attention per query head, then W_O."""
    rng = _rng(11)
    width, heads, tokens = 8, 4, 5
    d_h = width // heads
    x = rng.normal((1, tokens, width))
    blocked = np.triu(np.ones((tokens, tokens), dtype=bool), k=1)
    results = []
    with no_grad():
        for kv_heads in (2, 1):
            layer = MultiHeadAttention(
                width, heads, num_kv_heads=kv_heads, causal=True, rng=_rng(12 + kv_heads)
            )
            weights = [p.value for p in (layer.query.weight, layer.key.weight, layer.value.weight)]
            q, k, v = (x[0] @ w for w in weights)  # (T, H·d_h), (T, G·d_h) ×2
            heads_out = []
            for h in range(heads):
                g = h // (heads // kv_heads)
                cols, kv_cols = slice(h * d_h, (h + 1) * d_h), slice(g * d_h, (g + 1) * d_h)
                heads_out.append(
                    _attention_by_hand(x, q[:, cols], k[:, kv_cols], v[:, kv_cols], blocked)
                )
            expected = np.concatenate(heads_out, axis=-1) @ layer.output.weight.value
            gap = _gap(layer(Tensor(x))[0].value[0], expected)
            results.append(
                (f"G = {kv_heads}: the layer differs from H separate attentions by {gap:.2g}",
                 gap <= EXACT)
            )  # fmt: skip
    return _first_failure(results, "query head h reads key/value head h // (H / G)")


@check(
    "window-mask",
    "values",
    "The sliding-window mask is the closed form i − w < j <= i (a query sees itself and the "
    "w − 1 keys before it), and a windowed layer equals the same weights under that mask.",
)
def window_mask() -> Outcome:
    """sliding_window_mask and a windowed layer against the mask written from its definition."""
    rng = _rng(14)
    results = []
    for queries, keys, window in ((6, 6, 1), (6, 6, 3), (2, 7, 2)):
        i = np.arange(queries)[:, None] + keys - queries  # each query's position p_i
        j = np.arange(keys)[None, :]
        closed = ~((i - window < j) & (j <= i))  # blocked outside the window
        mask = attention_module.sliding_window_mask(queries, keys, window)
        results.append(
            (f"the mask for L = {queries}, S = {keys}, w = {window} is not i − w < j <= i",
             np.array_equal(mask, closed))
        )  # fmt: skip
    x = Tensor(rng.normal((2, 7, 8)))
    layer = MultiHeadAttention(8, 2, causal=True, window=3, rng=rng)
    weights = [p.value for p in (layer.query.weight, layer.key.weight, layer.value.weight)]
    plain = MultiHeadAttention.from_parameters(*weights, layer.output.weight.value, num_heads=2)
    i, j = np.indices((7, 7))
    closed = ~((i - 3 < j) & (j <= i))
    with no_grad():
        got, seen = layer(x, average_weights=False)
        expected = plain(x, mask=closed)[0]
    gap = _gap(got.value, expected.value)
    reads = int((seen.value[0, 0] > 0).sum(axis=-1).max())
    results.append((f"the windowed layer differs from the masked one by {gap:.2g}", gap <= EXACT))
    results.append((f"a query reads {reads} keys with w = 3", reads == 3))
    return _first_failure(results, "the window is i − w < j <= i, w keys per query")


@check(
    "qk-norm-order",
    "reference",
    "With QK-norm (learned gains not all one) and RoPE, the layer normalises each head's queries "
    "and keys first and rotates them after, as Qwen3 and OLMo 2 do.",
)
def qk_norm_order() -> Outcome:
    """The layer against its parts composed in order: project, RMSNorm, rotate, attend."""
    rng = _rng(15)
    width, heads = 8, 2
    layer = MultiHeadAttention(
        width, heads, causal=True, qk_norm=True, positions=RoPEPositions(4), rng=rng
    )
    for norm in (layer.query_norm, layer.key_norm):  # gains off one: norm and rotation differ
        norm.gain.value = rng.uniform(0.3, 2.0, norm.gain.shape)
    x = Tensor(rng.normal((1, 6, width)))
    with no_grad():
        q = attention_module.split_heads(layer.query(x), heads)  # (B, H, T, d_h)
        k = attention_module.split_heads(layer.key(x), heads)
        v = attention_module.split_heads(layer.value(x), heads)
        q = layer.positions.rotate(layer.query_norm(q))  # RMSNorm, then RoPE
        k = layer.positions.rotate(layer.key_norm(k))
        out, _ = attention_module.scaled_dot_product_attention(q, k, v, causal=True)
        expected = layer.output(merge_heads(out)).value
        got = layer(x)[0].value
    gap = _gap(got, expected)
    return _first_failure(
        [(f"the layer differs from norm-then-rotate by {gap:.2g}", gap <= EXACT)],
        "queries and keys are normalised before they are rotated",
    )


# --- training ----------------------------------------------------------------------------------

INDUCTION = {"vocab": 8, "context": 12, "halves": (2, 5), "width": 16, "heads": 2, "layers": 1}
TRAIN_STEPS, TRAIN_BATCH, TRAIN_LR = 150, 16, 1e-2
LEARNED_MARGIN = 0.5  # the repeated half must end at least this far below ln V (nats)
LEAK_MARGIN = 0.25  # unpredictable targets may score at most this far below their entropy


def induction_run(steps: int = TRAIN_STEPS, seed: int = SEED) -> dict[str, Any]:
    """Train a small causal decoder on the induction task; losses and held-out measurements.

    The held-out batch is scored twice: on the repeated half (copyable, so a model that learned
    anything beats ln V) and on the first half, whose next token is new (uniform over the V − t − 1
    unseen tokens: no causal model can beat that entropy, so a lower loss means a leak).
    """
    steps = non_negative_int(steps, "induction_run steps")
    seed = as_integer(seed, "induction_run seed")
    c = INDUCTION
    rng = SplitMix64(seed)
    model = Decoder(
        c["vocab"], c["width"], c["layers"], c["heads"], 2 * c["width"], positions="rope", rng=rng
    )
    optimizer = optim_module.AdamW(model.parameters(), lr=TRAIN_LR, weight_decay=0.01)
    losses = []
    for _ in range(steps):
        inputs, targets = induction_batch(
            TRAIN_BATCH, c["context"], c["vocab"], rng, half_lengths=c["halves"]
        )
        optimizer.zero_grad()
        loss = loss_module.cross_entropy(model(inputs), targets, ignore_index=IGNORE_INDEX)
        loss.backward()
        clip_grad_norm(model.parameters(), 1.0)
        optimizer.step()
        losses.append(loss.item())
    held_out = SplitMix64(seed + 1)
    inputs, targets = induction_batch(
        64, c["context"], c["vocab"], held_out, half_lengths=c["halves"]
    )
    first = np.full_like(targets, IGNORE_INDEX)
    entropy = []
    following = np.concatenate([inputs[:, 1:], inputs[:, -1:]], axis=1)  # the next token
    for b, row in enumerate(targets):
        length = int(np.flatnonzero(row != IGNORE_INDEX)[0])  # L: the repeat starts here
        first[b, : length - 1] = following[b, : length - 1]
        entropy += [math.log(c["vocab"] - t - 1) for t in range(length - 1)]
    with no_grad():
        logits = model(inputs)
        repeated = loss_module.cross_entropy(logits, targets, ignore_index=IGNORE_INDEX).item()
        unpredictable = loss_module.cross_entropy(logits, first, ignore_index=IGNORE_INDEX).item()
    return {
        "losses": losses,
        "repeated": repeated,
        "unpredictable": unpredictable,
        "entropy": float(np.mean(entropy)),
        "ln_v": math.log(c["vocab"]),
    }


@check(
    "induction-loss",
    "training",
    "After a short training run on the induction task the loss on the repeated half is below "
    "ln V, and the loss on the first half is not below its entropy (no peeking ahead).",
)
def induction_loss() -> Outcome:
    """Both bounds on the held-out batch after TRAIN_STEPS steps."""
    run = induction_run()
    return _first_failure(
        [
            (
                f"the repeated half still costs {run['repeated']:.2f} nats, not below "
                f"ln V − {LEARNED_MARGIN} = {run['ln_v'] - LEARNED_MARGIN:.2f}",
                run["repeated"] < run["ln_v"] - LEARNED_MARGIN,
            ),
            (
                f"the first half costs {run['unpredictable']:.2f} nats, below the "
                f"{run['entropy']:.2f} no causal model can beat: it reads ahead, or the loss "
                "is not the loss",
                run["unpredictable"] > run["entropy"] - LEAK_MARGIN,
            ),
        ],
        f"learned (repeated half {run['repeated']:.2f} < ln V = {run['ln_v']:.2f}) without "
        f"peeking (first half {run['unpredictable']:.2f} ≥ entropy {run['entropy']:.2f})",
    )
