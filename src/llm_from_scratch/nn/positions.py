"""Position information for attention: sinusoidal encodings, ALiBi score biases and RoPE.

Three ways to tell attention where a token sits:

- ``sinusoidal_encoding`` builds the absolute table of Vaswani et al. that is added to token
  vectors once, at the input of the stack;
- ``alibi_slopes`` / ``alibi_bias`` give Press et al.'s relative penalty −m_h(i − j), added to
  the scores of head h (a separate causal mask blocks j > i);
- ``rotate_pairs`` / ``RotaryEmbedding`` rotate query and key coordinate pairs by position-
  dependent angles (Su et al.), so a query-key dot product sees only the offset j − i.

``LearnedPositions`` is GPT-2's learned absolute table (``wpe``): row p is added to the token
vector at position p. ``rope_frequencies`` gives RoPE's ω_j = θ^(−2j/d_h) for a ``rope_theta``
θ, optionally rescaled as Llama 3 does (:func:`llama3_scaled_frequencies`).

RoPE's two pairings and the families that use them (both rotate pair j by tω_j):

- ``"half"`` pairs coordinates (j, j + d/2): Hugging Face's ``rotate_half`` (Llama, Mistral,
  Mixtral, Qwen2/3, GPT-NeoX checkpoints in ``transformers``);
- ``"interleaved"`` pairs (2j, 2j + 1): GPT-J's ``rotate_every_two`` and the original RoFormer
  (and Meta's own Llama code, whose weights ``transformers`` permutes into the half layout).

``ALiBiPositions`` and ``RoPEPositions`` wrap the last two as position schemes for attention:
``score_bias(num_heads, query_len, key_len)`` returns an [H, L, S] array to add to the scores
(or None) and ``rotate(t)`` returns queries or keys [B, H, T, d_h] with positions applied.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from ..autodiff import Tensor, ops
from ..errors import ArgumentError, RankError, ShapeError, TokenError, WidthError
from ..random import SplitMix64
from ..validate import (
    as_float_array,
    as_integer,
    as_numpy,
    as_real,
    broadcasts_to,
    element_count,
    generator,
    positive_int,
    received,
)
from .module import Module, Parameter, as_tensor, check_name

#: Explicit whole positions below this many (or below the current table's length) are read
#: from the shared cos/sin tables; a larger position is rotated by angles computed for it alone,
#: so position 1,000,000 costs one row, not a [1,000,000, d_h] table.
TABLE_ROWS = 4096

Pairing = Literal["interleaved", "half"]
PAIRINGS: tuple[str, ...] = ("interleaved", "half")

#: The rope_type values of a Hugging Face ``rope_scaling`` dict that are built: "default" (no
#: scaling, as ``transformers`` reads it) and "llama3" (:func:`llama3_scaled_frequencies`).
ROPE_TYPES: tuple[str, ...] = ("default", "llama3")
LLAMA3_KEYS: tuple[str, ...] = (
    "factor",
    "low_freq_factor",
    "high_freq_factor",
    "original_max_position_embeddings",
)


# --- argument checks -----------------------------------------------------------------------------


def _base(value: Any) -> float:
    """A finite base > 0 for the frequency schedule base^(−2j/D)."""
    return as_real(value, "base", positive=True, fix="Use a base such as 10000.0.")


def _even_width(label: str, value: Any, what: str) -> int:
    """A positive even width; odd widths raise WidthError (coordinates come in pairs)."""
    width = positive_int(value, label)
    if width % 2:
        raise WidthError(
            f"{what} pairs coordinates (2j, 2j + 1), so {label} must be even; got {width}. "
            f"Use {width - 1} or {width + 1}."
        )
    return width


def _pairing(value: Any) -> str:
    if value not in PAIRINGS:
        raise ArgumentError(
            f'pairing must be "interleaved" (pairs (2j, 2j + 1), GPT-J and RoFormer) or "half" '
            f"(pairs (j, j + d/2), Hugging Face's rotate_half for Llama, Mistral, Qwen); got "
            f"{value!r}."
        )
    return str(value)


# --- absolute: the sinusoidal table --------------------------------------------------------------


def pair_frequencies(width: int, base: float = 10000.0) -> np.ndarray:
    """ω_j = base^(−2j/width) for j = 0 … width/2 − 1, shape [width/2]."""
    width = _even_width("width", width, "A sinusoidal schedule")
    element_count((width // 2,), "pair_frequencies [width / 2]")
    base = _base(base)
    return base ** (-2.0 * np.arange(width // 2) / width)


def sinusoidal_encoding(num_positions: int, width: int, base: float = 10000.0) -> np.ndarray:
    """P[t, 2j] = sin(tω_j), P[t, 2j + 1] = cos(tω_j), ω_j = base^(−2j/width); shape [T, D]."""
    num_positions = as_integer(num_positions, "num_positions", minimum=0)
    width = _even_width("width", width, "The sinusoidal encoding")
    element_count((num_positions, width), "sinusoidal_encoding [T, D]")
    omega = pair_frequencies(width, base)  # (D/2,)
    angles = np.arange(num_positions, dtype=np.float64)[:, None] * omega[None, :]  # (T, D/2)
    table = np.empty((num_positions, width))
    table[:, 0::2] = np.sin(angles)
    table[:, 1::2] = np.cos(angles)
    return table


# --- absolute: a learned table (GPT-2's wpe) -----------------------------------------------------


def check_positions(positions: Any, max_positions: int) -> np.ndarray:
    """Integer positions [T] or [B, T], every entry in [0, max_positions), as int64."""
    array = as_numpy(positions, "positions", kind="[T] or [B, T] integer array", error=TokenError)
    if array.dtype.kind not in "iu":
        raise TokenError(
            f"LearnedPositions reads rows of its table at integer positions; got "
            f"{received(positions)}. Pass e.g. np.arange(T)."
        )
    if array.ndim not in (1, 2):
        raise TokenError(
            f"LearnedPositions needs positions [T] or [B, T]; got shape {array.shape}. Pass "
            "np.arange(T) or one row of positions per sequence."
        )
    if array.size and (array.min() < 0 or array.max() >= max_positions):
        raise TokenError(
            f"LearnedPositions holds rows for positions in [0, {max_positions}) only "
            f"(max_positions={max_positions}); got positions from {array.min()} to "
            f"{array.max()}. Keep sequences to {max_positions} tokens or build a longer table."
        )
    return array.astype(np.int64)


class LearnedPositions(Module):
    """P[t] = W[positions[t]]: a learned [max_positions, D] table (GPT-2's ``wpe``), a gather.

    Added to the token vectors at the input of the stack. The table starts N(0, σ²) with
    σ = ``std`` (0.02, GPT-2's initializer_range). Its parameter is ``<name>.weight``
    [max_positions, D]; the gradient of a read row is scatter-added into that row only. Checks,
    in order, before anything is drawn: max_positions, width, table size, std, name, rng.
    """

    def __init__(
        self,
        max_positions: int,
        width: int,
        *,
        std: float = 0.02,
        name: str = "positions",
        rng: SplitMix64,
    ) -> None:
        max_positions = positive_int(max_positions, "LearnedPositions max_positions")
        width = positive_int(width, "LearnedPositions width")
        element_count((max_positions, width), "LearnedPositions table [max_positions, D]")
        std = as_real(std, "LearnedPositions std", positive=True, fix="GPT-2 uses 0.02.")
        check_name(name, "LearnedPositions")
        table = std * generator(rng, "LearnedPositions").normal((max_positions, width))
        self._build(table, name)

    @classmethod
    def from_parameters(cls, table: Any, *, name: str = "positions") -> LearnedPositions:
        """Positions read from exactly this [max_positions, D] table (e.g. GPT-2's wpe.weight)."""
        weight = as_float_array(table, "LearnedPositions table", finite=True)
        if weight.ndim != 2:
            raise RankError(
                f"LearnedPositions table must be rank 2, [max_positions, D]; got shape "
                f"{weight.shape}."
            )
        if 0 in weight.shape:
            raise WidthError(
                f"LearnedPositions table needs at least one position and one feature; got shape "
                f"{weight.shape}."
            )
        return cls._assemble(weight, check_name(name, "LearnedPositions"))

    def _build(self, table: np.ndarray, name: str) -> None:
        Module.__init__(self, name)
        self.max_positions, self.width = table.shape
        self.weight = Parameter(table, f"{name}.weight")

    def __repr__(self) -> str:
        return f"LearnedPositions({self.max_positions} × {self.width}, name={self.name!r})"

    def forward(self, positions: Any) -> Tensor:
        """Rows at ``positions`` [T] → [T, D], or [B, T] → [B, T, D]."""
        return self.weight[check_positions(positions, self.max_positions)]


# --- relative score biases: ALiBi ---------------------------------------------------------------


def _alibi_head_count(num_heads: Any) -> int:
    return positive_int(
        num_heads,
        "ALiBi num_heads",
        fix="ALiBi needs one slope per head.",
    )


def _geometric_slopes(count: int) -> np.ndarray:
    """2^(−8k/count) for k = 1 … count: start and ratio both 2^(−8/count)."""
    return 2.0 ** (-8.0 * np.arange(1, count + 1) / count)


def alibi_slopes(num_heads: int) -> np.ndarray:
    """Press et al.'s head slopes m_h, shape [H].

    For H a power of two: m_h = 2^(−8h/H), h = 1 … H (8 heads: 1/2, 1/4, …, 1/256). Otherwise,
    with P the largest power of two below H: the P slopes for P heads, then every other slope of
    the 2P-head sequence (its 1st, 3rd, …) until there are H.
    """
    num_heads = _alibi_head_count(num_heads)
    element_count((num_heads,), "alibi_slopes [H]")
    closest = 1 << (num_heads.bit_length() - 1)  # largest power of two <= H
    if closest == num_heads:
        return _geometric_slopes(num_heads)
    extra = _geometric_slopes(2 * closest)[0::2][: num_heads - closest]
    return np.concatenate([_geometric_slopes(closest), extra])


def _custom_slopes(num_heads: int, slopes: Any) -> np.ndarray:
    """Explicit slopes: one finite, positive number per head."""
    array = as_float_array(slopes, "ALiBi slopes")
    if array.shape != (num_heads,):
        raise ArgumentError(
            f"ALiBi needs exactly one slope per head: {num_heads} heads need slopes of shape "
            f"({num_heads},); got shape {array.shape}."
        )
    if not (np.isfinite(array).all() and (array > 0).all()):
        raise ArgumentError(
            f"ALiBi slopes must be finite and positive (m_h > 0 penalises distance); got "
            f"{array.tolist()}."
        )
    return array


def alibi_bias(num_heads: int, query_len: int, key_len: int, *, slopes: Any = None) -> np.ndarray:
    """B[h, i, j] = −m_h(p_i − j) for j <= p_i, 0 for j > p_i, p_i = S − L + i; shape [H, L, S].

    The queries are the last L of the S key positions. Entries with j > p_i are left at zero on
    purpose: blocking them is the causal mask's job, not the bias's. ``slopes`` [H] replaces the
    paper's geometric slopes (``alibi_slopes``) when given.
    """
    num_heads = _alibi_head_count(num_heads)
    slopes = alibi_slopes(num_heads) if slopes is None else _custom_slopes(num_heads, slopes)
    query_len = as_integer(query_len, "query_len", minimum=0)
    key_len = as_integer(key_len, "key_len", minimum=0)
    element_count((num_heads, query_len, key_len), "alibi_bias [H, L, S]")
    if query_len > key_len:
        raise ShapeError(
            f"ALiBi places the L queries at the last L of the S key positions, so query_len "
            f"must be <= key_len; got query_len={query_len}, key_len={key_len}."
        )
    query_positions = np.arange(key_len - query_len, key_len)  # (L,)
    distance = query_positions[:, None] - np.arange(key_len)[None, :]  # (L, S): i − j
    penalty = slopes[:, None, None] * distance[None, :, :]  # (H, L, S)
    return np.where(distance[None, :, :] > 0, -penalty, 0.0)


def alibi_bias_at(slopes: Any, query_positions: Any, key_len: int) -> np.ndarray:
    """B[b, h, i, j] = −m_h(p_bi − j) for j <= p_bi, 0 for j > p_bi; shape [B, H, L, S].

    The same bias as :func:`alibi_bias`, for queries at explicit absolute positions p [B, L]
    (each batch row its own): what a key/value cache needs when rows sit at different positions.
    """
    slopes = as_float_array(slopes, "ALiBi slopes", finite=True)
    positions = np.asarray(query_positions)
    if positions.ndim != 2 or positions.dtype.kind not in "iu":
        raise ShapeError(
            f"alibi_bias_at needs integer query positions [B, L]; got {positions.dtype} array "
            f"of shape {positions.shape}."
        )
    key_len = as_integer(key_len, "key_len", minimum=0)
    element_count(
        (positions.shape[0], slopes.shape[0], positions.shape[1], key_len), "alibi_bias_at"
    )
    distance = positions[:, None, :, None] - np.arange(key_len)  # (B, 1, L, S): p_i − j
    penalty = slopes[None, :, None, None] * distance  # (B, H, L, S)
    return np.where(distance > 0, -penalty, 0.0)


# --- rotations: RoPE ---------------------------------------------------------------------------


def rotate_pairs(x: Any, angles: Any, pairing: Pairing = "interleaved") -> Tensor:
    """Rotate each pair (a, b) of x [..., d] by θ: (a cos θ − b sin θ, a sin θ + b cos θ).

    ``angles`` [..., d/2] (any float array broadcasting to x's pair shape) holds one angle per
    pair. ``pairing="interleaved"`` pairs coordinates (2j, 2j + 1); ``"half"`` pairs (j, j + d/2).
    Recorded as one engine op (``pair_rotate``), so gradients flow to x; the angles are constants
    (a Tensor of angles is read by value and receives no gradient).
    """
    pairing = _pairing(pairing)
    x = as_tensor(x, "input x")
    if x.ndim == 0:
        raise RankError(
            "rotate_pairs needs x with a feature axis [..., d]; got a scalar (shape ()). "
            "Pass a vector of at least two coordinates."
        )
    width = x.shape[-1]
    if width % 2:
        raise WidthError(
            f"rotate_pairs rotates coordinate pairs, so x's last axis must be even; got shape "
            f"{x.shape}."
        )
    half = width // 2
    pair_shape = (*x.shape[:-1], half)
    theta = as_float_array(angles, "rotate_pairs angles", finite=True)
    if not broadcasts_to(theta.shape, pair_shape):
        raise ShapeError(
            f"rotate_pairs needs one angle per coordinate pair: angles must broadcast to "
            f"{pair_shape} for x of shape {x.shape}; got angles of shape {theta.shape}."
        )
    cos_full, sin_signed, swap = rotation_tables(theta, pairing)
    # One recorded op computing x * cos_full + x[..., swap] * sin_signed, value for value.
    return ops.pair_rotate(x, cos=cos_full, sin=sin_signed, partner=swap)  # (..., d)


def rotation_tables(
    angles: np.ndarray, pairing: Pairing = "interleaved"
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """[cos θ, cos θ] per coordinate, [−sin θ, +sin θ] per coordinate, and each one's partner.

    From angles [..., d/2]: the three arrays with which y = x ⊙ cos_full + x[..., partner] ⊙
    sin_signed rotates every pair of x [..., d] by its angle.
    """
    cos, sin = np.cos(angles), np.sin(angles)  # (..., d/2)
    half = cos.shape[-1]
    width = 2 * half
    # Each coordinate c is rotated with its partner p(c): y_c = x_c cos θ ∓ x_p(c) sin θ, the
    # minus sign on the first member of each pair. Written with whole-vector ops:
    #   y = x ⊙ [cos, cos] + partner(x) ⊙ [−sin, +sin]
    if pairing == "interleaved":  # pairs (2j, 2j+1); partner swaps within each pair
        cos_full = np.repeat(cos, 2, axis=-1)
        sin_signed = np.stack([-sin, sin], axis=-1).reshape(*sin.shape[:-1], width)
        swap = np.arange(width).reshape(half, 2)[:, ::-1].ravel()  # 1, 0, 3, 2, ...
    else:  # pairs (j, j + d/2); partner swaps the two halves
        cos_full = np.concatenate([cos, cos], axis=-1)
        sin_signed = np.concatenate([-sin, sin], axis=-1)
        swap = np.concatenate([np.arange(half, width), np.arange(half)])  # d/2, …, 0, …
    # Swapping the members of each pair twice restores them: the partner is its own inverse,
    # which pair_rotate's gradient reads it as (a gather through p⁻¹ = p).
    assert np.array_equal(swap[swap], np.arange(width)), "a pairing that is not an involution"
    return cos_full, sin_signed, swap


def pairing_permutation(width: int) -> np.ndarray:
    """Indices p with x_half = x_interleaved[..., p]: (0, 2, 4, …, 1, 3, 5, …).

    Rotating x_half with pairing="half" equals rotating x_interleaved with "interleaved", then
    reading it through p: the two conventions differ only by this fixed reordering.
    """
    width = _even_width("width", width, "A pairing permutation")
    return np.concatenate([np.arange(0, width, 2), np.arange(1, width, 2)])


def _frequency_array(frequencies: Any) -> np.ndarray:
    """A non-empty rank-1 array of finite, positive frequencies ω_j."""
    omega = as_float_array(frequencies, "RoPE frequencies", finite=True)
    if omega.ndim != 1 or omega.size == 0:
        raise ShapeError(
            f"RoPE frequencies must be a non-empty vector [d_h/2], one per pair; got shape "
            f"{omega.shape}. Pass e.g. pair_frequencies(d_h, theta)."
        )
    if not (omega > 0).all():
        raise ArgumentError(
            f"RoPE frequencies must be positive (a wavelength 2π/ω needs ω > 0); got minimum "
            f"{omega.min()!r}. Pass e.g. pair_frequencies(d_h, theta)."
        )
    return omega


def llama3_scaled_frequencies(
    frequencies: Any,
    *,
    factor: float,
    low_freq_factor: float,
    high_freq_factor: float,
    original_max_position_embeddings: int,
) -> np.ndarray:
    """Llama 3's ω′ (λ = 2π/ω): ω if λ < L/h, ω/f if λ > L/l, else (1 − s)ω/f + sω.

    s = (L/λ − l)/(h − l) with L = ``original_max_position_embeddings``, l =
    ``low_freq_factor``, h = ``high_freq_factor``, f = ``factor`` (Llama 3.1: f = 8, l = 1, h = 4,
    L = 8192). Short wavelengths are kept, long ones stretched f times, and those between
    interpolated; the two boundaries (λ = L/h, λ = L/l) belong to the interpolated band, where
    s is 1 and 0, so ω′ is continuous in λ. This is ``transformers``'
    ``_compute_llama3_parameters``; shape [d_h/2] in, [d_h/2] out.
    """
    omega = _frequency_array(frequencies)
    factor = as_real(factor, "llama3 factor", minimum=1.0, fix="Llama 3.1 uses factor 8.0.")
    low = as_real(
        low_freq_factor, "llama3 low_freq_factor", positive=True, fix="Llama 3.1 uses 1.0."
    )
    high = as_real(
        high_freq_factor, "llama3 high_freq_factor", positive=True, fix="Llama 3.1 uses 4.0."
    )
    if not high > low:
        raise ArgumentError(
            f"llama3 scaling needs high_freq_factor > low_freq_factor (the band between them is "
            f"interpolated); got high_freq_factor={high!r}, low_freq_factor={low!r}. Llama 3.1 "
            "uses 4.0 and 1.0."
        )
    original = positive_int(
        original_max_position_embeddings,
        "llama3 original_max_position_embeddings",
        fix="Llama 3.1 uses 8192.",
    )
    low_wavelength = original / low  # longer than this: stretched
    high_wavelength = original / high  # shorter than this: kept
    wavelength = 2.0 * np.pi / omega  # (d_h/2,)
    stretched = np.where(wavelength > low_wavelength, omega / factor, omega)
    smooth = (original / wavelength - low) / (high - low)
    between = (1.0 - smooth) * stretched / factor + smooth * stretched
    medium = ~(wavelength < high_wavelength) & ~(wavelength > low_wavelength)
    return np.where(medium, between, stretched)


def _rope_type(scaling: dict) -> str:
    """The dict's rope_type (or the older key "type"), refused by name unless it is built."""
    kind = scaling.get("rope_type", scaling.get("type"))
    if "rope_type" in scaling and "type" in scaling and scaling["type"] != kind:
        raise ArgumentError(
            f"rope_scaling gives two different kinds, rope_type={kind!r} and "
            f"type={scaling['type']!r}. Keep one of them."
        )
    if kind not in ROPE_TYPES:
        raise ArgumentError(
            f"rope_scaling rope_type must be one of {', '.join(map(repr, ROPE_TYPES))}; got "
            f"{kind!r}. Only Llama 3's scaling is built (no linear, dynamic, yarn or longrope); "
            'pass None or {"rope_type": "default"} for none.'
        )
    return str(kind)


def check_scaling(scaling: Any) -> dict | None:
    """None, or a copy of a Hugging Face rope_scaling dict whose rope_type is built, checked."""
    if scaling is None:
        return None
    if not isinstance(scaling, dict):
        raise ArgumentError(
            f"rope_scaling must be None or a dict as in a Hugging Face config, e.g. "
            f'{{"rope_type": "llama3", "factor": 8.0, ...}}; got {received(scaling)}.'
        )
    kind = _rope_type(scaling)
    allowed = {"rope_type", "type", *(LLAMA3_KEYS if kind == "llama3" else ())}
    unknown = sorted(str(key) for key in scaling if key not in allowed)
    if unknown:
        raise ArgumentError(
            f"rope_scaling of rope_type {kind!r} reads only the keys {sorted(allowed)}; got "
            f"also {unknown}. Remove them."
        )
    missing = [key for key in LLAMA3_KEYS if kind == "llama3" and key not in scaling]
    if missing:
        raise ArgumentError(
            f"rope_scaling of rope_type 'llama3' needs the keys {list(LLAMA3_KEYS)}; missing "
            f"{missing}. Copy them from the model's config.json."
        )
    if kind == "llama3":  # every value checked now, so a bad one fails at construction
        llama3_scaled_frequencies([1.0], **{key: scaling[key] for key in LLAMA3_KEYS})
    return dict(scaling)


def rope_frequencies(
    head_width: int, theta: float = 10000.0, scaling: dict | None = None
) -> np.ndarray:
    """ω_j = θ^(−2j/d_h), j = 0 … d_h/2 − 1, then rescaled if ``scaling`` says so; [d_h/2].

    ``theta`` is a config's ``rope_theta`` (10000 for GPT-NeoX and Llama 2, 500000 for Llama 3,
    1000000 for Qwen3). ``scaling`` is its ``rope_scaling`` dict: None or rope_type "default"
    leaves ω as it is; rope_type "llama3" applies :func:`llama3_scaled_frequencies`; any other
    rope_type is refused by name.
    """
    head_width = _even_width("head_width", head_width, "RoPE")
    element_count((head_width // 2,), f"RoPE frequencies for head_width={head_width} [d_h/2]")
    theta = as_real(theta, "rope theta", positive=True, fix="Use a theta such as 10000.0.")
    scaling = check_scaling(scaling)
    omega = pair_frequencies(head_width, theta)  # (d_h/2,)
    if scaling is None or _rope_type(scaling) == "default":
        return omega
    return llama3_scaled_frequencies(omega, **{key: scaling[key] for key in LLAMA3_KEYS})


def _theta(base: Any, theta: Any) -> float:
    """The one frequency base: ``theta`` (Hugging Face's rope_theta) if given, else ``base``."""
    base = _base(base)
    if theta is None:
        return base
    theta = as_real(theta, "rope theta", positive=True, fix="Use a theta such as 10000.0.")
    if base != 10000.0 and base != theta:
        raise ArgumentError(
            f"base and theta name the same number (θ in ω_j = θ^(−2j/d_h)); got base={base!r} "
            f"and theta={theta!r}. Pass only one of them."
        )
    return theta


class RotaryEmbedding(Module):
    """RoPE: rotate pair j of the row at position t by tω_j, ω_j = θ^(−2j/d_h); no weights.

    ``base`` and ``theta`` are the same θ (``theta`` is the name in Hugging Face configs,
    ``rope_theta``; give one). ``scaling`` is a config's ``rope_scaling`` dict (see
    :func:`rope_frequencies`). ``pairing="half"`` is Hugging Face's ``rotate_half``,
    ``"interleaved"`` GPT-J's and RoFormer's (see the module docstring).
    """

    def __init__(
        self,
        head_width: int,
        base: float = 10000.0,
        pairing: Pairing = "interleaved",
        *,
        theta: float | None = None,
        scaling: dict | None = None,
        name: str = "rope",
    ) -> None:
        head_width = _even_width("head_width", head_width, "A rotary embedding")
        element_count((head_width,), f"RotaryEmbedding(head_width={head_width}) tables [d_h]")
        base = _theta(base, theta)
        pairing = _pairing(pairing)
        scaling = check_scaling(scaling)
        check_name(name, type(self).__name__)
        frequencies = rope_frequencies(head_width, base, scaling)  # (d_h/2,)
        super().__init__(name)
        self.head_width = head_width
        self.base = base
        self.pairing = pairing
        self.scaling = scaling
        self.frequencies = frequencies
        # One set of tables for positions 0 … T_max − 1, the longest length seen, sliced for
        # shorter calls: memory is bounded by one [T_max, d_h] table, however many lengths run.
        self._default_tables: tuple | None = None  # (pairing, ω, T_max, tables)

    @property
    def theta(self) -> float:
        """θ of ω_j = θ^(−2j/d_h), Hugging Face's ``rope_theta`` (the same number as ``base``)."""
        return self.base

    def _scaling_repr(self) -> str:
        return "" if self.scaling is None else f", scaling={self.scaling!r}"

    def __repr__(self) -> str:
        return (
            f"RotaryEmbedding(head_width={self.head_width}, base={self.base:g}, "
            f"pairing={self.pairing!r}{self._scaling_repr()}, name={self.name!r})"
        )

    def prepare_tables(self, length: int) -> None:
        """Build the shared tables for positions 0 … length − 1 now, up to TABLE_ROWS of them.

        A KV cache calls this once for its capacity, so that a step at a new position reads a
        row of the tables instead of rebuilding them one position longer: O(T) work per token.
        Lengths beyond TABLE_ROWS build nothing; those positions are rotated row by row anyway.
        """
        length = as_integer(length, "RotaryEmbedding.prepare_tables length", minimum=0)
        if 0 < length <= TABLE_ROWS:
            self._tables_for(length)

    def _tables_for(self, length: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """cos, signed sin [T, d_h] and the partner index for positions 0 … T − 1 (cached)."""
        cached = self._default_tables
        if (
            cached is None
            or cached[0] != self.pairing
            or cached[1] is not self.frequencies
            or cached[2] < length
        ):
            longest = length if cached is None else max(length, cached[2])
            element_count((longest, self.head_width), "RotaryEmbedding tables [T, d_h]")
            angles = self.angles(np.arange(longest, dtype=np.float64))  # (T_max, d_h/2)
            cached = (
                self.pairing,
                self.frequencies,
                longest,
                rotation_tables(angles, self.pairing),
            )
            self._default_tables = cached
        cos_full, sin_signed, swap = cached[3]
        return cos_full[:length], sin_signed[:length], swap  # views: no copy per call

    def angles(self, positions: Any) -> np.ndarray:
        """θ[..., t, j] = positions[..., t] · ω_j, shape positions.shape + (d_h/2,)."""
        positions = as_float_array(positions, "RotaryEmbedding positions", finite=True)
        return positions[..., None] * self.frequencies

    def forward(self, x: Any, positions: Any = None) -> Tensor:
        """x [..., T, d_h], row t rotated by positions[t]·ω (positions default to 0 … T − 1)."""
        x = as_tensor(x, "input x")
        if x.ndim < 2:
            raise RankError(
                f"RotaryEmbedding reads rows of x [..., T, d_h]; got shape {x.shape}. "
                "Add a position axis, e.g. x.reshape(1, -1)."
            )
        if x.shape[-1] != self.head_width:
            raise WidthError(
                f"RotaryEmbedding(head_width={self.head_width}) expects input whose last axis is "
                f"{self.head_width}; got shape {x.shape}."
            )
        rows = x.shape[:-1]
        if positions is None:  # the usual case: positions 0 … T − 1, from the shared tables
            cos_full, sin_signed, swap = self._tables_for(rows[-1])
            return ops.pair_rotate(x, cos=cos_full, sin=sin_signed, partner=swap)
        positions = as_float_array(positions, "RotaryEmbedding positions", finite=True)
        if not broadcasts_to(positions.shape, rows):
            raise ShapeError(
                f"RotaryEmbedding needs one position per row: positions must broadcast to "
                f"{rows} for x of shape {x.shape}; got positions of shape {positions.shape}."
            )
        whole = (
            positions.size and positions.min() >= 0 and np.array_equal(positions, positions // 1)
        )
        if whole and positions.max() < max(TABLE_ROWS, self._table_length()):
            # absolute positions (a KV cache): rows of the shared tables, the same values
            cos_full, sin_signed, swap = self._tables_for(int(positions.max()) + 1)
            index = positions.astype(np.int64)
            return ops.pair_rotate(x, cos=cos_full[index], sin=sin_signed[index], partner=swap)
        # Far or fractional positions: the angles of exactly the positions asked, never a table
        # up to them. The same products t·ω_j and the same cos and sin give, for a whole
        # position, bit for bit the table's row (tests/generation/test_rope_far.py).
        return rotate_pairs(x, self.angles(positions), self.pairing)

    def _table_length(self) -> int:
        """How many positions the shared tables hold now (0 before the first call)."""
        cached = self._default_tables
        return 0 if cached is None else cached[2]


# --- position schemes for attention ------------------------------------------------------------


class ALiBiPositions:
    """Position scheme adding Press et al.'s bias −m_h(i − j) to the scores; q and k unchanged."""

    def __init__(self, num_heads: int, *, slopes: Any = None) -> None:
        self.num_heads = _alibi_head_count(num_heads)
        self.slopes = (
            alibi_slopes(self.num_heads)
            if slopes is None
            else _custom_slopes(self.num_heads, slopes)
        )

    def __repr__(self) -> str:
        return f"ALiBiPositions(num_heads={self.num_heads})"

    def score_bias(self, num_heads: int, query_len: int, key_len: int) -> np.ndarray:
        """The [H, L, S] ALiBi bias for the last L of S positions."""
        if _alibi_head_count(num_heads) != self.num_heads:
            raise ArgumentError(
                f"ALiBiPositions was built with {self.num_heads} slopes, one per head; the "
                f"attention asking for a bias has {num_heads} heads. Build ALiBiPositions("
                f"{num_heads})."
            )
        return alibi_bias(self.num_heads, query_len, key_len, slopes=self.slopes)

    def score_bias_at(self, num_heads: int, query_positions: Any, key_len: int) -> np.ndarray:
        """The [B, H, L, S] ALiBi bias for queries at absolute positions [B, L] (a KV cache)."""
        self.score_bias(num_heads, 0, 0)  # the head-count check
        return alibi_bias_at(self.slopes, query_positions, key_len)

    def rotate(self, t: Tensor, positions: Any = None) -> Tensor:
        """ALiBi leaves queries and keys as they are."""
        return t


class RoPEPositions(RotaryEmbedding):
    """Position scheme rotating queries and keys [B, H, T, d_h]; adds no score bias."""

    def __repr__(self) -> str:
        return (
            f"RoPEPositions(head_width={self.head_width}, base={self.base:g}, "
            f"pairing={self.pairing!r}{self._scaling_repr()}, name={self.name!r})"
        )

    def score_bias(self, num_heads: int, query_len: int, key_len: int) -> None:
        """RoPE changes no score directly: position enters through the rotated q and k."""
        return None

    def score_bias_at(self, num_heads: int, query_positions: Any, key_len: int) -> None:
        """No bias at explicit positions either (a KV cache rotates q and k instead)."""
        return None

    def rotate(self, t: Tensor, positions: Any = None) -> Tensor:
        """t [..., T, d_h] rotated at positions (default 0 … T − 1)."""
        return self.forward(t, positions)
