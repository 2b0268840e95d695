"""Counting the work of a decoder pass: multiply-adds of every matrix product on its tape.

A pass run with gradients on records each op with its inputs; the matrix products are
``matmul`` (x W, weights · V, the LM head), ``attention_weights`` (q kᵀ inside the fused
scores op), and in a model built with ``fused=True`` ``affine`` (x W + b),
``fused_attention`` (both attention products) and ``fused_gated_ffn`` (its three projections).
Their multiply-adds follow from the recorded
shapes alone, so the count is exact and the same on every machine (no timing). Elementwise
work (norms, softmax, GELU) is left out: it is a few operations per value, against D or S per
value for a product.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..autodiff import Tensor, no_grad, walk_tape
from ..errors import ArgumentError
from ..nn.decoder import Decoder
from ..validate import as_flag, element_count, positive_int, received
from .cache import KVCache
from .loop import decode_step, prefill

__all__ = ["decoder_step_work", "multiply_adds"]


def _product_work(node: Tensor) -> int:
    """Multiply-adds of one recorded product: batch · m · k · n, or B · H · L · S · d_h."""
    if node.op_name == "matmul" or node.op_name == "affine":
        summed = node.inputs[0].shape[-1]  # k of [..., m, k] @ [..., k, n] (or a vector)
        return int(node.size) * int(summed)  # every output entry is a length-k dot product
    if node.op_name == "attention_weights":
        q = node.inputs[0].shape  # (B, H, L, d_h); the op's output is (B, H, L, S)
        return int(node.size) * int(q[-1])
    if node.op_name == "fused_attention":  # q kᵀ and weights · V over T keys, heads merged
        batch, tokens, query_width = node.inputs[0].shape  # (B, T, H·d_h)
        value_width = node.inputs[2].shape[-1]  # (B, T, H·d_v)
        return batch * tokens * tokens * (query_width + value_width)
    if node.op_name == "fused_gated_ffn":  # rows · (D · d_ff twice, gate and up, + d_ff · D_out)
        width, hidden = node.inputs[1].shape  # W_g [D, d_ff]
        rows = int(node.inputs[0].size) // width
        return rows * hidden * (2 * width + int(node.inputs[3].shape[-1]))
    return 0


def multiply_adds(roots: Sequence[Tensor]) -> int:
    """Σ of the multiply-adds of every matrix product on the roots' tapes, each counted once."""
    if not isinstance(roots, list | tuple):
        raise ArgumentError(
            f"multiply_adds reads tapes of Tensors: pass a list or tuple of them; got "
            f"{received(roots)}. For one tensor write multiply_adds([t])."
        )
    seen: set[int] = set()
    total = 0
    for root in roots:
        if not isinstance(root, Tensor):
            raise ArgumentError(
                f"multiply_adds reads tapes of Tensors; got {type(root).__name__}."
            )
        for node in walk_tape(root):
            if id(node) not in seen:
                seen.add(id(node))
                total += _product_work(node)
    return total


def decoder_step_work(model: Decoder, length: int, *, cached: bool) -> int:
    """Multiply-adds to produce the logits of the token at position length − 1 of one row.

    Uncached: a forward pass over all ``length`` positions. Cached: the one position, reading
    the cache that holds positions 0 … length − 2 (filled beforehand, not counted).
    """
    if not isinstance(model, Decoder):
        raise ArgumentError(f"decoder_step_work needs a Decoder; got {type(model).__name__}.")
    length = positive_int(length, "decoder_step_work length")
    cached = as_flag(cached, "decoder_step_work cached")
    # both ways read the scores of length − 1 or length positions against as many keys
    element_count((length, length), "decoder_step_work's attention scores [T, T] per head")
    ids = (np.arange(length, dtype=np.int64) % model.vocab_size)[None, :]  # (1, T)
    if not cached:
        return multiply_adds([model(ids)])
    cache = KVCache(model, 1, length)
    if length > 1:
        with no_grad():
            prefill(model, cache, ids[:, :-1])
    logits = decode_step(model, cache, ids[:, -1], [length - 1])  # recorded: grad mode on
    return multiply_adds([logits, *cache.written()])
