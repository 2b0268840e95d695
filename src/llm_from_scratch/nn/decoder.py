"""Token IDs in, next-token logits out: embedding, L blocks, a final norm and the LM head.

logits = x_final W_vocabᵀ with no bias ([B, T, V]). With tied embeddings W_vocab is the embedding
table itself (``<name>.embedding.weight``), so the head's gradient reaches every row of the table,
not only the rows the input looked up.

The table starts Xavier-uniform by default (variance 2/(V + D)). ``embedding_std=σ`` draws it
from N(0, σ²) instead, as nanoGPT does with σ = 0.02: after a unit-RMS final norm the tied
logits then start with variance about D·σ², so the loss at initialisation starts near ln V.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ..autodiff import Tensor
from ..errors import ArgumentError, TokenError, WidthError
from ..random import SplitMix64, xavier_uniform
from ..validate import (
    as_flag,
    as_float_array,
    as_integer,
    as_numpy,
    as_real,
    element_count,
    generator,
    positive_int,
)
from .attention import AttentionCache
from .block import DEFAULT_ROPE_THETA, NORMS, TransformerBlock, _choice, check_block_options
from .module import Module, Parameter, check_name
from .positions import LearnedPositions, sinusoidal_encoding

DECODER_POSITIONS = (None, "rope", "alibi", "sinusoidal", "learned")


def check_ids(ids: Any, vocab_size: int) -> np.ndarray:
    """Token IDs as an integer array [B, T] with every entry in [0, vocab_size)."""
    array = as_numpy(ids, "token IDs", kind="[B, T] integer array", error=TokenError)
    if array.dtype.kind not in "iu":
        raise TokenError(f"token IDs must be integers; got dtype {array.dtype}.")
    if array.ndim != 2:
        raise TokenError(f"token IDs must be a [B, T] array; got shape {array.shape}.")
    if array.size and (array.min() < 0 or array.max() >= vocab_size):
        raise TokenError(
            f"token IDs must lie in [0, {vocab_size}); got values from {array.min()} to "
            f"{array.max()}."
        )
    return array.astype(np.int64)


def check_lengths(lengths: Any, batch: int, tokens: int) -> np.ndarray:
    """Prompt lengths [B], each in [1, T]: row b's valid positions are 0 … lengths[b] − 1."""
    if lengths is None:
        return np.full(batch, tokens, dtype=np.int64)
    array = as_numpy(lengths, "lengths", kind=f"array of {batch} integers", error=TokenError)
    if array.shape != (batch,) or array.dtype.kind not in "iu":
        raise TokenError(f"lengths must be {batch} integers, one per prompt; got {array!r}.")
    if np.any(array < 1) or np.any(array > tokens):
        raise TokenError(f"every length must lie in [1, {tokens}]; got {array.tolist()}.")
    return array.astype(np.int64)


def check_std(std: Any, owner: str) -> float | None:
    """None (Xavier uniform) or a positive finite standard deviation σ of N(0, σ²)."""
    if std is None:
        return None
    return as_real(
        std,
        f"{owner} embedding_std",
        positive=True,
        fix="Pass None for Xavier uniform, or a standard deviation such as 0.02.",
    )


def initial_table(rows: int, width: int, std: float | None, rng: SplitMix64) -> np.ndarray:
    """[rows, width]: Xavier uniform U(−a, a), a = √(6 / (rows + width)), or σ · N(0, 1)."""
    if std is None:
        return xavier_uniform(rows, width, rng)
    return std * rng.normal((rows, width))


class Embedding(Module):
    """x[b, t] = W[ids[b, t]]: a [vocab_size, model_width] table read by gather."""

    def __init__(
        self,
        vocab_size: int,
        model_width: int,
        *,
        std: float | None = None,
        name: str = "embedding",
        rng: SplitMix64,
    ) -> None:
        vocab_size = positive_int(vocab_size, "Embedding vocab_size")
        model_width = positive_int(model_width, "Embedding model_width")
        element_count((vocab_size, model_width), "Embedding table")
        std = check_std(std, "Embedding")
        check_name(name, "Embedding")
        table = initial_table(vocab_size, model_width, std, generator(rng, "Embedding"))
        self._build(table, name)

    @classmethod
    def from_parameters(cls, weight: Any, *, name: str = "embedding") -> Embedding:
        """An embedding holding exactly this [vocab_size, model_width] table."""
        table = as_float_array(weight, "Embedding weight", finite=True)
        if table.ndim != 2 or 0 in table.shape:
            raise ArgumentError(
                f"Embedding weight must be a non-empty [vocab_size, model_width] matrix; got "
                f"shape {table.shape}."
            )
        return cls._assemble(table, check_name(name, "Embedding"))

    def _build(self, table: np.ndarray, name: str) -> None:
        Module.__init__(self, name)
        self.vocab_size, self.model_width = table.shape
        self.weight = Parameter(table, f"{name}.weight")

    def __repr__(self) -> str:
        return f"Embedding({self.vocab_size} × {self.model_width}, name={self.name!r})"

    def forward(self, ids: Any) -> Tensor:
        """Rows of the table at ``ids`` [B, T] → [B, T, D] (gradient: scatter-add into rows)."""
        return self.weight[check_ids(ids, self.vocab_size)]


@runtime_checkable
class DecoderCache(Protocol):
    """What a cached decoder pass asks of a cache (``generation.KVCache``).

    ``query_positions`` [B, L] holds the absolute position of each new token; ``layer(i)`` is
    block i's :class:`~llm_from_scratch.nn.attention.AttentionCache`.
    """

    query_positions: np.ndarray

    def layer(self, index: int) -> AttentionCache: ...


@dataclass(frozen=True)
class DecodeTrace:
    """The shapes of one decoding step, stage by stage, from the live model."""

    stages: list[tuple[str, tuple[int, ...]]]
    next_ids: np.ndarray
    extended: np.ndarray


class Decoder(Module):
    """ids [B,T] → embedding [B,T,D] → L blocks → final norm → logits [B,T,V]."""

    def __init__(
        self,
        vocab_size: int,
        model_width: int,
        num_layers: int,
        num_heads: int,
        hidden_width: int,
        *,
        tie_embeddings: bool = True,
        positions: str | None = "rope",
        norm: str = "layer",
        ffn: str = "gelu",
        order: str = "pre",
        embedding_std: float | None = None,
        num_kv_heads: int | None = None,
        window: int | None = None,
        qk_norm: bool = False,
        attention_bias: bool = False,
        head_width: int | None = None,
        rope_theta: float = DEFAULT_ROPE_THETA,
        rope_scaling: dict | None = None,
        rope_pairing: str = "interleaved",
        ffn_bias: bool | None = None,
        num_experts: int | None = None,
        top_k: int | None = None,
        norm_eps: float | None = None,
        fused: bool = False,
        max_positions: int | None = None,
        name: str = "decoder",
        rng: SplitMix64,
    ) -> None:
        """``embedding_std``: None for a Xavier-uniform table (and head), σ for N(0, σ²).

        ``num_kv_heads`` G (dividing H; None: G = H), ``window`` w (each query sees itself and
        the w − 1 tokens before it), ``qk_norm``, ``attention_bias``, ``head_width``,
        ``rope_theta``, ``rope_scaling``, ``rope_pairing``, ``ffn_bias``, ``num_experts``,
        ``top_k``, ``norm_eps`` and ``fused`` are passed to every block (see TransformerBlock;
        ``norm_eps`` also sets the final norm's ε). ``positions="learned"`` adds a learned table of
        ``max_positions`` rows (GPT-2's wpe, ``<name>.positions.weight``) to the token vectors.
        """
        vocab_size = positive_int(vocab_size, "Decoder vocab_size")
        model_width = positive_int(model_width, "Decoder model_width")
        num_layers = positive_int(num_layers, "num_layers")
        num_heads = positive_int(num_heads, "num_heads")
        hidden_width = positive_int(hidden_width, "Decoder hidden_width")
        _choice(positions, DECODER_POSITIONS, "positions")
        _choice(norm, tuple(NORMS), "norm")
        if positions == "learned":
            if max_positions is None:
                raise ArgumentError(
                    "positions='learned' reads a table of max_positions rows (GPT-2: 1024); got "
                    "max_positions=None. Pass the longest context the model will read."
                )
            max_positions = positive_int(max_positions, "max_positions")
        elif max_positions is not None:
            raise ArgumentError(
                "max_positions sizes the learned position table; got max_positions="
                f"{max_positions!r} with positions={positions!r}. Pass positions='learned', or "
                "max_positions=None."
            )
        block_options = {
            "num_kv_heads": num_kv_heads,
            "window": window,
            "qk_norm": qk_norm,
            "attention_bias": attention_bias,
            "head_width": head_width,
            "rope_theta": rope_theta,
            "rope_scaling": rope_scaling,
            "rope_pairing": rope_pairing,
            "ffn_bias": ffn_bias,
            "num_experts": num_experts,
            "top_k": top_k,
            "norm_eps": norm_eps,
            "fused": fused,
        }
        block_positions = None if positions in ("sinusoidal", "learned") else positions
        # every block option is checked here, on a draft that is thrown away, before building
        check_block_options(
            model_width, num_heads, hidden_width, norm, order, ffn, block_positions, block_options
        )
        tie_embeddings = as_flag(tie_embeddings, "tie_embeddings")
        embedding_std = check_std(embedding_std, "Decoder")
        if positions == "sinusoidal" and model_width % 2:
            raise WidthError(
                f"Sinusoidal positions fill sin/cos pairs (2j, 2j + 1), so model_width must be "
                f"even; got {model_width}. Use {model_width - 1} or {model_width + 1}, or another "
                "positions scheme."
            )
        per_block = 4 * model_width**2 + 3 * model_width * hidden_width + 4 * model_width
        tables = (1 if tie_embeddings else 2) * vocab_size * model_width
        element_count(
            (num_layers * per_block + tables,),
            f"Decoder(vocab_size={vocab_size}, model_width={model_width}, num_layers="
            f"{num_layers}, hidden_width={hidden_width}) parameters",
        )
        check_name(name, "Decoder")
        with generator(rng, "Decoder").transaction() as draft:
            embedding = Embedding(
                vocab_size, model_width, std=embedding_std, name=f"{name}.embedding", rng=draft
            )
            learned = (
                LearnedPositions(max_positions, model_width, name=f"{name}.positions", rng=draft)
                if positions == "learned"
                else None
            )
            blocks = [
                TransformerBlock(
                    model_width,
                    num_heads,
                    hidden_width,
                    norm=norm,
                    order=order,
                    ffn=ffn,
                    positions=block_positions,
                    causal=True,
                    name=f"{name}.blocks.{i}",
                    rng=draft,
                    **block_options,
                )
                for i in range(num_layers)
            ]
            head = (
                None
                if tie_embeddings
                else initial_table(vocab_size, model_width, embedding_std, draft)
            )
        Module.__init__(self, name)
        self.vocab_size, self.model_width = vocab_size, model_width
        self.positions = positions
        self.tie_embeddings = bool(tie_embeddings)
        self.embedding = embedding
        if learned is not None:
            self.position_embedding = learned
        else:
            self.position_embedding = None
        self.max_positions = max_positions
        for i, block in enumerate(blocks):
            setattr(self, f"block_{i}", block)
        self.blocks = tuple(blocks)
        eps = {} if norm_eps is None else {"eps": norm_eps}
        self.final_norm = NORMS[norm](model_width, name=f"{name}.final_norm", **eps)
        if head is not None:
            self.head_weight = Parameter(head, f"{name}.head.weight")

    def __repr__(self) -> str:
        return (
            f"Decoder(V={self.vocab_size}, D={self.model_width}, layers={len(self.blocks)}, "
            f"positions={self.positions!r}, tied={self.tie_embeddings}, name={self.name!r})"
        )

    @property
    def vocab_weight(self) -> Parameter:
        """W_vocab [V, D]: the embedding table when tied, the separate head otherwise."""
        return self.embedding.weight if self.tie_embeddings else self.head_weight

    def hidden_states(
        self,
        ids: Any,
        lengths: Any = None,
        record: list | None = None,
        cache: DecoderCache | None = None,
    ) -> Tensor:
        """x_final [B, T, D]: after every block and the final norm (stage shapes → record).

        With a ``cache`` the T tokens sit at ``cache.query_positions`` and read the keys and
        values the cache holds (``lengths`` must then be None: the positions say what is seen).
        """
        ids = check_ids(ids, self.vocab_size)
        if cache is not None:
            return self._cached_hidden_states(ids, lengths, cache)
        batch, tokens = ids.shape
        lengths = check_lengths(lengths, batch, tokens)
        padding = np.arange(tokens)[None, :] >= lengths[:, None]  # (B, T) True = padding
        stages = record if record is not None else []
        x = self.embedding(ids)  # (B, T, D)
        stages.append(("embeddings", x.shape))
        if self.positions == "sinusoidal":
            x = x + sinusoidal_encoding(tokens, self.model_width)
        elif self.position_embedding is not None:
            x = x + self.position_embedding(np.arange(tokens))  # (B, T, D) + (T, D)
        for i, block in enumerate(self.blocks):
            x, _ = block(
                x, key_padding_mask=padding if padding.any() else None, average_weights=False
            )  # the per-head weights are not read: no mean over heads
            stages.append((f"block {i}", x.shape))
        x = self.final_norm(x)
        stages.append(("final norm", x.shape))
        return x

    def _cached_hidden_states(self, ids: np.ndarray, lengths: Any, cache: DecoderCache) -> Tensor:
        """x_final [B, L, D] for L new tokens at cache.query_positions, each block reading it."""
        if not (hasattr(cache, "query_positions") and callable(getattr(cache, "layer", None))):
            raise ArgumentError(
                "cache must provide query_positions [B, L] and layer(i) (the DecoderCache "
                f"protocol); got {type(cache).__name__}."
            )
        if lengths is not None:
            raise ArgumentError(
                "With a cache, each token's position comes from cache.query_positions; pass "
                f"lengths=None (got {lengths!r})."
            )
        positions = np.asarray(cache.query_positions)  # (B, L)
        if positions.shape != ids.shape:
            raise TokenError(
                f"cache.query_positions must hold one position per token, shape {ids.shape}; "
                f"got shape {positions.shape}."
            )
        x = self.embedding(ids)  # (B, L, D)
        if self.positions == "sinusoidal":
            table = sinusoidal_encoding(int(positions.max()) + 1, self.model_width)
            x = x + table[positions]  # (B, L, D): each token's own absolute position
        elif self.position_embedding is not None:
            x = x + self.position_embedding(positions)  # (B, L, D): rows at absolute positions
        for i, block in enumerate(self.blocks):
            x, _ = block(x, cache=cache.layer(i), average_weights=False)
        return self.final_norm(x)

    def forward(self, ids: Any, lengths: Any = None, cache: DecoderCache | None = None) -> Tensor:
        """logits [B, T, V] = x_final W_vocabᵀ (no bias); with a cache, for the new tokens."""
        return self.hidden_states(ids, lengths, cache=cache) @ self.vocab_weight.T

    def next_token_logits(self, ids: Any, lengths: Any = None) -> Tensor:
        """[B, V]: each row's logits at its last valid position lengths[b] − 1."""
        ids = check_ids(ids, self.vocab_size)
        lengths = check_lengths(lengths, *ids.shape)
        logits = self.forward(ids, lengths)  # (B, T, V)
        return logits[np.arange(ids.shape[0]), lengths - 1]  # (B, V)

    def greedy_step(self, ids: Any, lengths: Any = None, *, pad_id: int = 0) -> np.ndarray:
        """A new [B, T+1] array: row b keeps its prompt, then argmax at lengths[b], then pad_id."""
        pad_id = as_integer(pad_id, "pad_id", minimum=0, error=TokenError)
        ids = check_ids(ids, self.vocab_size)
        batch, tokens = ids.shape
        lengths = check_lengths(lengths, batch, tokens)
        next_ids = np.argmax(self.next_token_logits(ids, lengths).value, axis=-1)  # ties: lowest
        extended = np.full((batch, tokens + 1), pad_id, dtype=np.int64)
        for b in range(batch):
            extended[b, : lengths[b]] = ids[b, : lengths[b]]
            extended[b, lengths[b]] = next_ids[b]
        return extended

    def trace_step(self, ids: Any, lengths: Any = None) -> DecodeTrace:
        """Shapes through one greedy step: ids, embeddings, each block, norm, logits, next IDs."""
        ids = check_ids(ids, self.vocab_size)
        lengths = check_lengths(lengths, *ids.shape)
        stages: list[tuple[str, tuple[int, ...]]] = [("token IDs", ids.shape)]
        x = self.hidden_states(ids, lengths, record=stages)
        logits = x @ self.vocab_weight.T
        stages.append(("logits", logits.shape))
        last = logits[np.arange(ids.shape[0]), lengths - 1]
        stages.append(("last valid position", last.shape))
        next_ids = np.argmax(last.value, axis=-1)
        stages.append(("next IDs", next_ids.shape))
        extended = self.greedy_step(ids, lengths)
        stages.append(("extended IDs", extended.shape))
        return DecodeTrace(stages, next_ids, extended)
