"""The generation loop: prefill the prompts once, then one token per row per step.

``generate`` runs under ``no_grad``. With ``use_cache=True`` (the default) the decoder reads a
:class:`~llm_from_scratch.generation.cache.KVCache` built for this call alone; with
``use_cache=False`` every step re-runs the decoder over each row's whole sequence, the
reference the cache must equal, or, with a ``window``, over its last ``window`` tokens only (at
positions 0 … window − 1), the way a model trained on windows of that length reads a longer text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..autodiff import Tensor, no_grad
from ..errors import ArgumentError, TokenError
from ..nn.decoder import Decoder, check_ids
from ..random import SplitMix64
from ..validate import as_flag, as_integer, generator, non_negative_int, positive_int
from .cache import KVCache
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


def pad_prompts(prompts: Any, vocab_size: int, pad_id: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Prompts of different lengths → ids [B, T_max] right-padded with pad_id, lengths [B]."""
    if isinstance(prompts, np.ndarray) and prompts.ndim == 2:
        prompts = list(prompts)
    if not isinstance(prompts, Sequence | np.ndarray) or isinstance(prompts, str | bytes):
        raise TokenError(
            f"prompts must be a list of token-ID sequences (one per row); got "
            f"{type(prompts).__name__}."
        )
    if len(prompts) == 0:
        raise TokenError("prompts must hold at least one prompt; got none.")
    rows = []
    for b, prompt in enumerate(prompts):
        row = check_ids(np.asarray(prompt).reshape(1, -1), vocab_size)[0]
        if row.size == 0:
            raise TokenError(
                f"every prompt needs at least one token (the model predicts from the last "
                f"one); prompt {b} is empty."
            )
        rows.append(row)
    lengths = np.array([len(r) for r in rows], dtype=np.int64)
    ids = np.full((len(rows), int(lengths.max())), pad_id, dtype=np.int64)
    for b, row in enumerate(rows):
        ids[b, : len(row)] = row
    return ids, lengths


def prefill(model: Decoder, cache: KVCache, ids: np.ndarray) -> Tensor:
    """logits [B, T, V] for ids [B, T] at positions 0 … T − 1, filling the cache's slots."""
    batch, tokens = ids.shape
    cache.start(np.broadcast_to(np.arange(tokens), (batch, tokens)))
    return model(ids, cache=cache)


def decode_step(model: Decoder, cache: KVCache, tokens: Any, positions: Any) -> Tensor:
    """logits [B, V] for one new token per row, tokens [B] at positions [B]."""
    tokens = np.asarray(tokens, dtype=np.int64).reshape(-1, 1)  # (B, 1)
    cache.start(np.asarray(positions, dtype=np.int64).reshape(-1, 1))
    return model(tokens, cache=cache)[:, 0]  # (B, V)


def _check_model(model: Any) -> Decoder:
    if not isinstance(model, Decoder):
        raise ArgumentError(
            f"generate needs an nn.Decoder (token IDs in, logits out); got {type(model).__name__}."
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

    ``do_sample=False`` is greedy (argmax); otherwise each token is drawn from
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
    if do_sample:
        rng = generator(rng, "generate (do_sample=True)")
        check_temperature(temperature)
        if top_k is not None:
            check_top_k(top_k)
        if top_p is not None:
            check_top_p(top_p)
    pad_id = as_integer(pad_id, "pad_id", minimum=0, error=TokenError)
    if end_id is not None:
        end_id = as_integer(end_id, "end_id", minimum=0, error=TokenError)
        if end_id >= model.vocab_size:
            raise TokenError(f"end_id must lie in [0, {model.vocab_size}); got {end_id}.")
    ids, lengths = pad_prompts(prompts, model.vocab_size, pad_id)
    batch, longest = ids.shape
    if context is None:
        context = longest + max(max_new_tokens, 1)
    context = positive_int(context, "context", fix="context is the most positions a row holds.")
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
                logits = prefill(model, cache, ids).value[np.arange(batch), positions]
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
