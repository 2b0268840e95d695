"""The generation loop: prefill the prompts once, then one token per row per step.

``generate`` runs under ``no_grad``. With ``use_cache=True`` (the default) the decoder reads a
:class:`~llm_from_scratch.generation.cache.KVCache` built for this call alone; with
``use_cache=False`` every step re-runs the decoder over each row's whole sequence, the
reference the cache must equal, or, with a ``window``, over its last ``window`` tokens only (at
positions 0 … window − 1), the way a model trained on windows of that length reads a longer text.

Arguments are read strictly, as the layers read theirs: ``prompts`` is always a list of prompts,
one per row, each a 1-D sequence of integer token IDs (a flat list ``[1, 2, 3]`` is refused, not
read as three one-token prompts: write ``[[1, 2, 3]]``); flags are True or False; token IDs,
positions, ``pad_id`` and ``end_id`` are integers in range, never rounded.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..autodiff import Tensor, no_grad
from ..errors import ArgumentError, TokenError
from ..nn.decoder import Decoder, check_ids, check_lengths
from ..random import SplitMix64
from ..validate import (
    as_flag,
    as_integer,
    as_numpy,
    generator,
    non_negative_int,
    positive_int,
    received,
)
from .cache import KVCache, check_cache_size
from .sampling import check_temperature, check_top_k, check_top_p, next_tokens

__all__ = ["Generation", "decode_step", "generate", "pad_prompts", "prefill"]


@dataclass(frozen=True)
class Generation:
    """What one ``generate`` call produced, row by row."""

    sequences: list[np.ndarray]  # row b: its prompt, then its new tokens (end token included)
    new_tokens: list[np.ndarray]  # row b: the tokens generated after its prompt
    stop_reasons: list[str]  # "end_id", "max_new_tokens" or "context"
    step_logits: list[np.ndarray] | None  # per step, [B, V] logits each row sampled from
    cache: KVCache | None  # the cache this call built (None without one)


def _token_id(value: Any, label: str, vocab_size: int) -> int:
    """One token ID: an integer (not a bool, not a float) in [0, vocab_size)."""
    number = as_integer(value, label, minimum=0, error=TokenError)
    if number >= vocab_size:
        raise TokenError(
            f"{label} must lie in [0, {vocab_size}) (a token of the vocabulary); got {number}."
        )
    return number


def _prompt_rows(prompts: Any, vocab_size: int) -> list[np.ndarray]:
    """Each prompt as an int64 array of >= 1 IDs in [0, vocab_size); prompts is a list of them."""
    if isinstance(prompts, np.ndarray):
        if prompts.ndim != 2:
            raise TokenError(
                f"prompts given as an array must be [B, T] (one row per prompt); got shape "
                f"{prompts.shape}. For one prompt write [ids] (a list holding it)."
            )
        prompts = list(prompts)
    if not isinstance(prompts, Sequence) or isinstance(prompts, str | bytes):
        raise TokenError(
            f"prompts must be a list of token-ID sequences (one per row); got "
            f"{type(prompts).__name__}."
        )
    if len(prompts) == 0:
        raise TokenError("prompts must hold at least one prompt; got none.")
    rows = []
    for b, prompt in enumerate(prompts):
        if isinstance(prompt, str | bytes) or not isinstance(prompt, Sequence | np.ndarray):
            raise TokenError(
                f"prompts must be a list of prompts, each a sequence of token IDs; prompt {b} "
                f"is {received(prompt)}. A flat list of IDs is not read as one-token prompts: "
                "for one prompt write [[1, 2, 3]], for three one-token prompts [[1], [2], [3]]."
            )
        row = as_numpy(prompt, f"prompt {b}", kind="sequence of token IDs", error=TokenError)
        if row.ndim != 1:
            raise TokenError(
                f"each prompt must be a 1-D sequence of token IDs; prompt {b} has shape "
                f"{row.shape}."
            )
        row = check_ids(row.reshape(1, -1), vocab_size)[0]
        if row.size == 0:
            raise TokenError(
                f"every prompt needs at least one token (the model predicts from the last "
                f"one); prompt {b} is empty."
            )
        rows.append(row)
    return rows


def pad_prompts(prompts: Any, vocab_size: int, pad_id: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Prompts of different lengths → ids [B, T_max] right-padded with pad_id, lengths [B].

    ``prompts`` is a list of prompts (or a [B, T] array), each a 1-D sequence of token IDs in
    [0, vocab_size); ``pad_id`` is a token ID in the same range.
    """
    vocab_size = positive_int(vocab_size, "pad_prompts vocab_size")
    pad_id = _token_id(pad_id, "pad_id", vocab_size)
    rows = _prompt_rows(prompts, vocab_size)
    lengths = np.array([len(r) for r in rows], dtype=np.int64)
    ids = np.full((len(rows), int(lengths.max())), pad_id, dtype=np.int64)
    for b, row in enumerate(rows):
        ids[b, : len(row)] = row
    return ids, lengths


def _check_cache(model: Decoder, cache: Any, owner: str) -> KVCache:
    """A KVCache built for a decoder of model's shape (same number of blocks and width)."""
    if not isinstance(cache, KVCache):
        raise ArgumentError(f"{owner} needs a KVCache; got {received(cache)}.")
    if cache.num_layers != len(model.blocks) or cache.model_width != model.model_width:
        raise ArgumentError(
            f"{owner}: the cache was built for a decoder of {cache.num_layers} blocks of width "
            f"{cache.model_width}; this model has {len(model.blocks)} blocks of width "
            f"{model.model_width}. Build KVCache(model, batch, capacity) for this model."
        )
    return cache


def prefill(model: Decoder, cache: KVCache, ids: Any, lengths: Any = None) -> Tensor:
    """logits [B, T, V] for ids [B, T] at positions 0 … T − 1, filling the cache's slots.

    ``lengths`` [B] (optional): row b's prompt is its first lengths[b] tokens, the rest padding
    (a rolling window buffer then keeps each row's own last keys).
    """
    model = _check_model(model, "prefill")
    cache = _check_cache(model, cache, "prefill")
    ids = check_ids(ids, model.vocab_size)
    batch, tokens = ids.shape
    if batch != cache.batch:
        raise TokenError(
            f"prefill needs one row of ids per cache row: the cache holds B = {cache.batch} "
            f"rows; got ids of shape {ids.shape}."
        )
    if lengths is not None:
        lengths = check_lengths(lengths, batch, tokens)
    cache.start(np.broadcast_to(np.arange(tokens), (batch, tokens)), lengths)
    return model(ids, cache=cache)


def _one_per_row(values: Any, label: str, batch: int) -> np.ndarray:
    """[B] integers (not floats, not bools, never rounded), one per cache row."""
    array = as_numpy(values, label, kind=f"sequence of {batch} integers", error=TokenError)
    if array.dtype.kind not in "iu" or array.shape != (batch,):
        raise TokenError(
            f"{label} must be {batch} integers, one per cache row (shape ({batch},)); got "
            f"{received(values)}. Values are not rounded: pass integers."
        )
    return array.astype(np.int64)


def decode_step(model: Decoder, cache: KVCache, tokens: Any, positions: Any) -> Tensor:
    """logits [B, V] for one new token per row, tokens [B] at positions [B]."""
    model = _check_model(model, "decode_step")
    cache = _check_cache(model, cache, "decode_step")
    tokens = _one_per_row(tokens, "decode_step tokens", cache.batch)
    tokens = check_ids(tokens.reshape(-1, 1), model.vocab_size)  # (B, 1)
    positions = _one_per_row(positions, "decode_step positions", cache.batch)
    cache.start(positions.reshape(-1, 1))
    return model(tokens, cache=cache)[:, 0]  # (B, V)


def _check_model(model: Any, owner: str = "generate") -> Decoder:
    if not isinstance(model, Decoder):
        raise ArgumentError(
            f"{owner} needs an nn.Decoder (token IDs in, logits out); got {type(model).__name__}."
        )
    return model


def generate(
    model: Decoder,
    prompts: Any,
    *,
    max_new_tokens: int,
    rng: SplitMix64 | None = None,
    do_sample: bool = True,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    context: int | None = None,
    window: int | None = None,
    end_id: int | None = None,
    pad_id: int = 0,
    use_cache: bool = True,
    keep_logits: bool = False,
) -> Generation:
    """Extend each prompt by up to max_new_tokens tokens, each from the last position's logits.

    ``prompts`` is a list of prompts, one per row (``[[1, 2, 3]]`` for one; a flat list is
    refused). ``do_sample=False`` is greedy (argmax); otherwise each token is drawn from
    softmax(filters(z / τ)) with top-k then top-p, one SplitMix64 uniform per row per step
    (same seed → same text). A row stops after ``end_id``, after ``max_new_tokens`` tokens, or
    when it holds ``context`` tokens (default: longest prompt + max_new_tokens). With a
    ``window`` (and ``use_cache=False``) the model reads only each row's last ``window`` tokens.
    """
    model = _check_model(model)
    max_new_tokens = non_negative_int(max_new_tokens, "max_new_tokens")
    do_sample = as_flag(do_sample, "do_sample")
    use_cache = as_flag(use_cache, "use_cache")
    keep_logits = as_flag(keep_logits, "keep_logits")
    if window is not None:
        window = positive_int(window, "window", fix="It counts the last tokens the model reads.")
        if use_cache:
            raise ArgumentError(
                "A window re-reads each row's last window tokens at positions 0 … window − 1 at "
                "every step, so no cached key stays valid; pass use_cache=False with window="
                f"{window}."
            )
    # every option is checked, whether or not this call reads it (greedy ignores τ, k, p, rng)
    if do_sample or rng is not None:
        rng = generator(rng, f"generate (do_sample={do_sample})")
    temperature = check_temperature(temperature)
    top_k = None if top_k is None else check_top_k(top_k)
    top_p = None if top_p is None else check_top_p(top_p)
    pad_id = _token_id(pad_id, "pad_id", model.vocab_size)
    if end_id is not None:
        end_id = _token_id(end_id, "end_id", model.vocab_size)
    if context is not None:
        context = positive_int(
            context, "context", fix="context is the most positions a row holds."
        )
    ids, lengths = pad_prompts(prompts, model.vocab_size, pad_id)
    batch, longest = ids.shape
    context_given = context is not None
    if context is None:
        context = longest + max(max_new_tokens, 1)
    if use_cache:  # refused here, naming the argument that sets the cache's capacity
        sized_by = (
            f"context={context}"
            if context_given
            else f"the longest prompt ({longest}) + max_new_tokens={max_new_tokens}"
        )
        check_cache_size(model, batch, context, f"generate's KV cache for {sized_by}:")
    if longest > context:
        raise TokenError(
            f"every prompt must fit the context of {context} positions; prompt "
            f"{int(np.argmax(lengths))} has {longest} tokens. Shorten it (keep its last "
            f"{context} tokens) or raise context."
        )

    def choose(logits: np.ndarray) -> np.ndarray:
        return next_tokens(
            logits, rng, do_sample=do_sample, temperature=temperature, top_k=top_k, top_p=top_p
        )

    sequences = [list(ids[b, : lengths[b]]) for b in range(batch)]
    reasons = ["context" if len(s) >= context else "" for s in sequences]
    kept: list[np.ndarray] | None = [] if keep_logits else None
    cache = KVCache(model, batch, context) if use_cache else None
    positions = lengths - 1  # (B,): each row's last valid position
    with no_grad():
        for step in range(max_new_tokens if not all(reasons) else 0):
            if step == 0 and cache is not None:
                logits = prefill(model, cache, ids, lengths).value[np.arange(batch), positions]
            elif cache is not None:
                last = np.array([s[-1] for s in sequences], dtype=np.int64)
                logits = decode_step(model, cache, last, positions).value  # (B, V)
            else:
                rows = sequences if window is None else [s[-window:] for s in sequences]
                current, current_lengths = pad_prompts(rows, model.vocab_size, pad_id)
                logits = model.next_token_logits(current, current_lengths).value  # (B, V)
            if kept is not None:
                kept.append(logits)
            chosen = choose(logits)  # (B,)
            for b in range(batch):
                if reasons[b]:
                    continue
                sequences[b].append(int(chosen[b]))
                if end_id is not None and chosen[b] == end_id:
                    reasons[b] = "end_id"
                elif len(sequences[b]) >= context and step + 1 < max_new_tokens:
                    reasons[b] = "context"
            if all(reasons):
                break
            # a stopped row stays at its last position: its work is wasted, never read
            positions = np.array([len(s) - 1 for s in sequences], dtype=np.int64)
    reasons = [r or "max_new_tokens" for r in reasons]
    out = [np.array(s, dtype=np.int64) for s in sequences]
    new = [o[lengths[b] :] for b, o in enumerate(out)]
    return Generation(out, new, reasons, kept, cache)
