"""Grouped-query and windowed attention against PyTorch's scaled_dot_product_attention (float64).

torch is the reference here only (requirements.txt pins it for the tests); the package never
imports it. ``enable_gqa=True`` is torch's own grouped-query rule: query head h reads key/value
head h // (H / G). A sliding window w is passed to torch as the boolean mask it means: query i
sees key j when i − w < j ≤ i.
"""

import numpy as np
import pytest

from llm_from_scratch.autodiff import Tensor
from llm_from_scratch.nn.attention import scaled_dot_product_attention
from llm_from_scratch.random import SplitMix64

torch = pytest.importorskip("torch")

B, H, T, D_H = 2, 6, 7, 4


def draws(kv_heads: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """q [B,H,T,d_h], k and v [B,G,T,d_h], and an upstream gradient for the output."""
    rng = SplitMix64(seed)
    q = rng.normal((B, H, T, D_H))
    k = rng.normal((B, kv_heads, T, D_H))
    v = rng.normal((B, kv_heads, T, D_H))
    return q, k, v, rng.normal((B, H, T, D_H))


@pytest.mark.parametrize("kv_heads", [6, 3, 2, 1])
@pytest.mark.parametrize("window", [None, 1, 3])
def test_grouped_and_windowed_attention_equal_torch_forward_and_gradient(kv_heads, window):
    q, k, v, upstream = draws(kv_heads, seed=40 + kv_heads)
    tq, tk, tv = (torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in (q, k, v))
    i, j = np.arange(T)[:, None], np.arange(T)[None, :]
    allowed = (j <= i) & ((i - j < window) if window else True)
    reference = torch.nn.functional.scaled_dot_product_attention(
        tq, tk, tv, attn_mask=torch.tensor(allowed), enable_gqa=True
    )
    reference.backward(torch.tensor(upstream))

    bq, bk, bv = (Tensor(a, requires_grad=True) for a in (q, k, v))
    out, _ = scaled_dot_product_attention(
        bq, bk, bv, causal=True, window=window, enable_gqa=kv_heads != H
    )
    (out * Tensor(upstream)).sum().backward()

    np.testing.assert_allclose(out.value, reference.detach().numpy(), rtol=1e-12, atol=1e-13)
    for mine, theirs in ((bq, tq), (bk, tk), (bv, tv)):
        np.testing.assert_allclose(mine.grad, theirs.grad.numpy(), rtol=1e-11, atol=1e-12)
