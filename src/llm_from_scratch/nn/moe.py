"""Mixture of experts: a router picks k experts per token; only those experts run.

Routing has three parts, each separately testable:

* :func:`top_k_gates` — the pure selection: the k most probable experts per token and their
  probabilities renormalised to sum to one. Ties go to the lowest expert index.
* :func:`assign_capacity` — the ledger: which (token, slot) assignments each expert accepts when
  it holds at most ``capacity`` tokens per routing batch. Assignments are served in a fixed order:
  every token's first choice in token order, then every second choice, and so on. With
  ``overflow="drop"`` an assignment that finds its expert full is dropped (it contributes zero);
  with ``overflow="next"`` it moves to the token's next-ranked expert that has room and is not
  already serving that token, carrying its gate with it, and is dropped only when none has room.
* :class:`MixtureOfExperts` — runs each expert on exactly the tokens it accepted and adds their
  outputs, weighted by the gates. Gradients flow to the router through the gates and to each
  expert through its tokens; the selection itself is a hard choice with no gradient.

:class:`SparseMoE` is Mixtral's block (``MixtralSparseMoeBlock``): the same routing rule with no
capacity, no noise and no report, returning the output alone (its docstring says where it and
:class:`MixtureOfExperts` agree and differ).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..autodiff import Tensor, concat
from ..errors import ArgumentError, WidthError
from ..random import SplitMix64
from ..validate import (
    as_flag,
    as_float_array,
    as_numpy,
    as_real,
    as_width,
    element_count,
    generator,
    non_negative_int,
    positive_int,
)
from .linear import Linear
from .module import Module, as_tensor, check_feature_axis, check_name, check_part
from .swiglu import SwiGLU

OVERFLOW_POLICIES = ("drop", "next")
_FACTOR_RULE = "Use a finite and non-negative factor such as 1.25 (it scales an even share)."


def _check_k(k: Any, num_experts: int) -> int:
    """k in [1, E]: a token cannot be routed to more experts than exist."""
    k = positive_int(k, "k")
    if k > num_experts:
        raise ArgumentError(
            f"k must be at most num_experts {num_experts}; got {k}. Each token picks k distinct "
            "experts."
        )
    return k


def ranked_experts(probabilities: np.ndarray) -> np.ndarray:
    """Expert indices by descending probability per token; ties keep the lower index first."""
    return np.argsort(-probabilities, axis=-1, kind="stable")


def top_k_gates(probabilities: Any, k: int) -> tuple[np.ndarray, Any]:
    """(selected [..., k], gates [..., k]): the k largest p per row and p_sel / Σ p_sel."""
    p = as_float_array(probabilities, "top_k_gates probabilities", finite=True)
    if p.ndim == 0:
        raise WidthError(
            "top_k_gates needs probabilities [..., E] with an expert axis; got a scalar."
        )
    num_experts = p.shape[-1]
    k = positive_int(k, "k")
    if k > num_experts:
        raise ArgumentError(f"k must be at most the number of experts {num_experts}; got {k}.")
    selected = ranked_experts(p)[..., :k]  # (..., k)
    if isinstance(probabilities, Tensor):  # keep the gates on the tape
        flat = probabilities.reshape(-1, num_experts)  # (N, E)
        rows = np.arange(flat.shape[0])[:, None]
        chosen = flat[rows, selected.reshape(-1, k)]  # (N, k) gather
        gates = (chosen / chosen.sum(axis=-1, keepdims=True)).reshape(*p.shape[:-1], k)
    else:
        chosen = np.take_along_axis(p, selected, axis=-1)
        gates = chosen / chosen.sum(axis=-1, keepdims=True)
    return selected, gates


def dense_gates(selected: np.ndarray, gates: Any, num_experts: int) -> Any:
    """Gates scattered to [..., E]: each token's coefficient per expert, zero where unselected."""
    num_experts = positive_int(num_experts, "num_experts")
    selected = as_numpy(selected, "selected", kind="integer array [..., k]")
    gate_shape = as_numpy(gates, "gates", kind="array [..., k]").shape
    if selected.dtype.kind not in "iu" or (
        selected.size and (selected.min() < 0 or selected.max() >= num_experts)
    ):
        values = (
            f" from {selected.min()} to {selected.max()}"
            if selected.size and selected.dtype.kind in "biuf"
            else ""
        )
        raise ArgumentError(
            f"selected must hold integer expert indices in [0, {num_experts}); got dtype "
            f"{selected.dtype}, shape {selected.shape}{values}."
        )
    if gate_shape != selected.shape:
        raise ArgumentError(
            f"gates must have the shape of selected {selected.shape}, one gate per choice; got "
            f"{gate_shape}."
        )
    one_hot = (selected[..., None] == np.arange(num_experts)).astype(np.float64)  # (..., k, E)
    if isinstance(gates, Tensor):
        return (gates.reshape(*gates.shape, 1) * one_hot).sum(axis=-2)
    return (np.asarray(gates)[..., None] * one_hot).sum(axis=-2)


def importance_loss(gates: Any) -> Tensor:
    """CV²(importance) = Var(I) / mean(I)², I_e = Σ_tokens gate coefficient of expert e."""
    g = as_tensor(gates, "importance_loss gates")
    if g.ndim == 0:
        raise WidthError("importance_loss needs gates [..., E] with an expert axis; got a scalar.")
    importance = g.reshape(-1, g.shape[-1]).sum(axis=0)  # (E,)
    mean = importance.mean()
    variance = ((importance - mean) ** 2).mean()  # population variance
    return variance / (mean * mean)


def capacity_from_factor(tokens: int, num_experts: int, k: int, factor: float) -> int:
    """Slots per expert: ⌈factor · tokens · k / E⌉ (factor 1 is an exactly even share)."""
    tokens = non_negative_int(tokens, "tokens")
    num_experts = positive_int(num_experts, "num_experts")
    k = _check_k(k, num_experts)
    factor = as_real(factor, "capacity factor", minimum=0, fix=_FACTOR_RULE)
    share = factor * tokens * k / num_experts
    return math.ceil(round(share, 9))  # 1.1 · 100 / 10 is 11.000000000000002: still 11 slots


@dataclass(frozen=True)
class Ledger:
    """Where each (token, slot) assignment went: ``placement`` holds the expert or −1 (dropped)."""

    placement: np.ndarray  # (N, k) serving expert, −1 where dropped
    assigned: np.ndarray  # (E,) requested: first-choice ... k-th choice counts
    kept: np.ndarray  # (E,) accepted, counted at the expert that serves them
    rerouted: np.ndarray  # (E,) of those kept, requested from another expert (overflow="next")
    dropped: np.ndarray  # (E,) dropped, counted at the expert that was requested


def assign_capacity(
    ranking: np.ndarray, k: int, capacity: int | None, overflow: str = "drop"
) -> Ledger:
    """Serve the top-k choices of ``ranking`` [N, E] slot by slot, in token order, to capacity."""
    if overflow not in OVERFLOW_POLICIES:
        raise ArgumentError(f"overflow must be one of {OVERFLOW_POLICIES}; got {overflow!r}.")
    if capacity is not None and (
        isinstance(capacity, bool) or not isinstance(capacity, int | np.integer) or capacity < 0
    ):
        raise ArgumentError(f"capacity must be None or an integer ≥ 0; got {capacity!r}.")
    ranking = as_numpy(ranking, "ranking", kind="integer [N, E] array")
    if ranking.ndim != 2 or ranking.dtype.kind not in "iu":
        raise ArgumentError(
            f"ranking must be an integer [N, E] array of expert indices; got dtype "
            f"{ranking.dtype} and shape {ranking.shape}."
        )
    tokens, num_experts = ranking.shape
    k = _check_k(k, num_experts) if tokens else positive_int(k, "k")
    if tokens and (ranking.min() < 0 or ranking.max() >= num_experts):
        raise ArgumentError(f"ranking entries must be expert indices in [0, {num_experts}).")
    limit = tokens * k if capacity is None else int(capacity)
    placement = np.full((tokens, k), -1, dtype=np.int64)
    assigned = np.zeros(num_experts, dtype=np.int64)
    kept = np.zeros(num_experts, dtype=np.int64)
    rerouted = np.zeros(num_experts, dtype=np.int64)
    dropped = np.zeros(num_experts, dtype=np.int64)
    for slot in range(k):  # all first choices, then all second choices, ...
        for token in range(tokens):
            wanted = int(ranking[token, slot])
            assigned[wanted] += 1
            target = wanted if kept[wanted] < limit else -1
            if target < 0 and overflow == "next":
                serving = set(placement[token].tolist())
                for candidate in ranking[token, k:].tolist():  # next-ranked, in order
                    if candidate not in serving and kept[candidate] < limit:
                        target = int(candidate)
                        break
            if target < 0:
                dropped[wanted] += 1
            else:
                kept[target] += 1
                rerouted[target] += target != wanted
                placement[token, slot] = target
    return Ledger(placement, assigned, kept, rerouted, dropped)


@dataclass(frozen=True)
class RoutingReport:
    """What one routing batch did: choices, gates, and the per-expert ledger."""

    selected: np.ndarray  # (N, k) the router's choices
    gates: np.ndarray  # (N, k) renormalised gate per choice
    placement: np.ndarray  # (N, k) the expert that served each choice, −1 if dropped
    assigned: np.ndarray  # (E,) requested per expert
    kept: np.ndarray  # (E,) served per expert
    rerouted: np.ndarray  # (E,) of those served, requested from another expert
    dropped: np.ndarray  # (E,) dropped per requested expert
    importance: np.ndarray  # (E,) Σ over tokens of each expert's gate coefficient
    capacity: int | None


@dataclass(frozen=True)
class RouterOutput:
    """Scores, probabilities and the top-k choice for a batch of tokens."""

    scores: Tensor  # (..., E)
    probabilities: Tensor  # (..., E)
    selected: np.ndarray  # (..., k)
    gates: Tensor  # (..., k)


class TopKRouter(Module):
    """scores = X W_r (bias-free), p = softmax(scores), then the top-k renormalised gates."""

    def __init__(
        self,
        model_width: int,
        num_experts: int,
        k: int,
        *,
        noisy: bool = False,
        name: str = "router",
        rng: SplitMix64,
    ) -> None:
        model_width = as_width(model_width, "TopKRouter model_width")
        num_experts = positive_int(num_experts, "num_experts")
        k = _check_k(k, num_experts)
        noisy = as_flag(noisy, "noisy")
        element_count((model_width, num_experts), "TopKRouter weight")
        check_name(name, "TopKRouter")
        with generator(rng, "TopKRouter").transaction() as draft:
            projection = Linear(model_width, num_experts, bias=False, name=name, rng=draft)
            noise = (
                Linear(model_width, num_experts, bias=False, name=f"{name}.noise", rng=draft)
                if noisy
                else None
            )
        self._build(projection, noise, k, name)

    @classmethod
    def from_parameters(
        cls, weight: Any, k: int, *, noise_weight: Any = None, name: str = "router"
    ) -> TopKRouter:
        """A router with exactly this [model_width, num_experts] weight."""
        projection = Linear.from_parameters(weight, name=check_name(name, "TopKRouter"))
        noise = (
            None
            if noise_weight is None
            else Linear.from_parameters(noise_weight, name=f"{name}.noise")
        )
        if noise is not None and noise.weight.shape != projection.weight.shape:
            raise ArgumentError(
                f"TopKRouter noise_weight must have the router weight's shape "
                f"{projection.weight.shape}; got {noise.weight.shape}."
            )
        k = _check_k(k, projection.output_width)
        return cls._assemble(projection, noise, k, name)

    def _build(self, projection: Linear, noise: Linear | None, k: int, name: str) -> None:
        Module.__init__(self, name)
        self.model_width = projection.input_width
        self.num_experts = projection.output_width
        self.k = k
        self.projection = projection  # parameter: <name>.weight
        if noise is not None:
            self.noise = noise
        self.noisy = noise is not None

    def forward(self, x: Any, *, noise_rng: SplitMix64 | None = None) -> RouterOutput:
        """Scores [..., E] → softmax → top-k gates; noise only when noisy and given a generator."""
        x = as_tensor(x, "TopKRouter input")
        if noise_rng is not None:
            generator(noise_rng, "TopKRouter noise")
        scores = self.projection(x)  # (..., E)
        if self.noisy and noise_rng is not None:
            z = self.noise(x)  # softplus(z) = relu(z) + log(1 + e^−|z|), the noise scale
            scale = z.relu() + (1.0 + (-(z.relu() + (-z).relu())).exp()).log()
            scores = scores + scale * noise_rng.normal(scores.shape)
        probabilities = scores.softmax(axis=-1)
        selected, gates = top_k_gates(probabilities, self.k)
        return RouterOutput(scores, probabilities, selected, gates)


class MixtureOfExperts(Module):
    """y = Σ_{kept choices} gate · expert(x): only the experts a token was routed to run on it."""

    def __init__(
        self,
        model_width: int,
        hidden_width: int,
        num_experts: int,
        k: int,
        *,
        capacity: int | None = None,
        overflow: str = "drop",
        expert: str = "swiglu",
        name: str = "moe",
        rng: SplitMix64,
    ) -> None:
        model_width = as_width(model_width, "MixtureOfExperts model_width")
        hidden_width = as_width(hidden_width, "MixtureOfExperts hidden_width")
        num_experts = positive_int(num_experts, "num_experts")
        k = _check_k(k, num_experts)
        if expert != "swiglu":
            raise ArgumentError(f"expert must be 'swiglu'; got {expert!r}.")
        assign_capacity(np.zeros((0, num_experts), dtype=np.int64), 1, capacity, overflow)
        per_expert = 3 * model_width * hidden_width  # gate, up [D, H] and down [H, D]
        element_count((model_width, hidden_width), "MixtureOfExperts expert weight")
        element_count((num_experts, per_expert + model_width), "MixtureOfExperts parameters")
        check_name(name, "MixtureOfExperts")
        with generator(rng, "MixtureOfExperts").transaction() as draft:
            router = TopKRouter(model_width, num_experts, k, name=f"{name}.router", rng=draft)
            experts = [
                SwiGLU(
                    model_width, hidden_width, model_width, name=f"{name}.experts.{e}", rng=draft
                )
                for e in range(num_experts)
            ]
        self._build(router, experts, capacity, overflow, name)

    @classmethod
    def from_parameters(
        cls,
        router: TopKRouter,
        experts: list[Module],
        *,
        capacity: int | None = None,
        overflow: str = "drop",
        name: str = "moe",
    ) -> MixtureOfExperts:
        """A mixture from an existing router and one expert module per router output."""
        if not isinstance(router, TopKRouter):
            raise ArgumentError(f"router must be a TopKRouter; got {type(router).__name__}.")
        if isinstance(experts, Module) or not isinstance(experts, list | tuple):
            raise ArgumentError(
                f"experts must be a list of modules, one per router output; got "
                f"{type(experts).__name__}."
            )
        why = "the router's, because its output is added back in place of the token"
        for e, module in enumerate(experts):
            check_part(module, f"expert {e}", router.model_width, why)
        if len(experts) != router.num_experts:
            raise ArgumentError(
                f"the router scores {router.num_experts} experts; got {len(experts)} modules."
            )
        assign_capacity(np.zeros((0, router.num_experts), dtype=np.int64), 1, capacity, overflow)
        check_name(name, "MixtureOfExperts")
        return cls._assemble(router, list(experts), capacity, overflow, name)

    def _build(
        self,
        router: TopKRouter,
        experts: list[Module],
        capacity: int | None,
        overflow: str,
        name: str,
    ) -> None:
        Module.__init__(self, name)
        self.router = router
        for e, expert in enumerate(experts):
            setattr(self, f"expert_{e}", expert)
        self.experts = tuple(experts)
        self.model_width = router.model_width
        self.num_experts = router.num_experts
        self.k = router.k
        self.capacity = capacity
        self.overflow = overflow
        self.last_report: RoutingReport | None = None

    def forward(
        self, x: Any, *, noise_rng: SplitMix64 | None = None
    ) -> tuple[Tensor, RoutingReport]:
        """(output with x's shape, the routing report of this batch)."""
        x = as_tensor(x, "MixtureOfExperts input")
        if x.ndim == 0 or x.shape[-1] != self.model_width:
            raise WidthError(
                f"MixtureOfExperts expects input whose last axis is {self.model_width}; "
                f"got shape {x.shape}."
            )
        rows = x.reshape(-1, self.model_width)  # (N, D)
        routed = self.router(rows, noise_rng=noise_rng)
        ledger = assign_capacity(
            ranked_experts(routed.probabilities.value), self.k, self.capacity, self.overflow
        )
        tokens = rows.shape[0]
        contributions, destinations = [], []
        for e, expert in enumerate(self.experts):
            token_idx, slot_idx = np.nonzero(ledger.placement == e)  # token order
            if token_idx.size == 0:
                continue
            weight = routed.gates[token_idx, slot_idx].reshape(-1, 1)  # (n_e, 1)
            contributions.append(expert(rows[token_idx]) * weight)  # (n_e, D)
            destinations.append(token_idx)
        if contributions:
            where = np.concatenate(destinations)
            combine = (np.arange(tokens)[:, None] == where[None, :]).astype(np.float64)
            output = Tensor(combine) @ concat(contributions, axis=0)  # (N, D)
        else:
            output = rows * 0.0
        importance = dense_gates(routed.selected, routed.gates.value, self.num_experts).sum(0)
        report = RoutingReport(
            selected=routed.selected,
            gates=routed.gates.value.copy(),
            placement=ledger.placement,
            assigned=ledger.assigned,
            kept=ledger.kept,
            rerouted=ledger.rerouted,
            dropped=ledger.dropped,
            importance=importance,
            capacity=self.capacity,
        )
        self.last_report = report
        return output.reshape(*x.shape), report


# --- Mixtral's sparse MoE block ------------------------------------------------------------------


@dataclass(frozen=True)
class SparseRouting:
    """One routing of N tokens: logits x W_r, p = softmax, the top-k experts and their gates."""

    logits: Tensor  # (N, E)
    probabilities: Tensor  # (N, E)
    selected: np.ndarray  # (N, k) expert indices, most probable first, ties to the lower index
    gates: Tensor  # (N, k) p of the selected experts divided by their sum


def _experts_list(experts: Any, num_experts: int) -> list:
    """The experts argument: a list or tuple of num_experts (gate, up, down) weight triples."""
    if not isinstance(experts, list | tuple) or len(experts) != num_experts:
        count = len(experts) if isinstance(experts, list | tuple) else None
        raise ArgumentError(
            f"SparseMoE experts must be a list of {num_experts} (gate, up, down) weight triples, "
            f"one per router output (column of router_weight); got "
            f"{count if count is not None else type(experts).__name__}"
            f"{' triples' if count is not None else ''}."
        )
    for e, triple in enumerate(experts):
        if not isinstance(triple, list | tuple) or len(triple) != 3:
            raise ArgumentError(
                f"SparseMoE expert {e} must be a (gate, up, down) triple of weights [D, F], "
                f"[D, F], [F, D]; got {type(triple).__name__}"
                f"{f' of length {len(triple)}' if isinstance(triple, list | tuple) else ''}."
            )
    return list(experts)


class SparseMoE(Module):
    """Mixtral's block: p = softmax(x W_r), g = top-k of p / their sum, y = Σ_sel g_i SwiGLU_i(x).

    Exactly ``transformers``' ``MixtralSparseMoeBlock`` (no jitter): the router is a bias-free
    [D, E] projection; softmax over all E logits; the k largest probabilities per token are
    kept and renormalised to sum to one; each selected expert, a bias-free SwiGLU
    (SiLU(x W_g) ⊙ x W_u) W_d, runs on exactly the tokens that chose it; there is no capacity,
    so no token is ever dropped. Ties in p go to the lower expert index (a stable sort;
    ``torch.topk`` leaves the order of ties unspecified). Gradients are exact: to the experts
    through their tokens, to the router through the gates (the choice itself is piecewise
    constant and has none).

    Parameter names for ``name="moe"``, with their Hugging Face counterparts (``nn.Linear``
    stores [out, in], so each is the transpose):

    - ``moe.router.weight`` [D, E] ← ``block_sparse_moe.gate.weight`` [E, D];
    - ``moe.experts.{i}.gate.weight`` [D, F] ← ``block_sparse_moe.experts.{i}.w1.weight``;
    - ``moe.experts.{i}.up.weight`` [D, F] ← ``block_sparse_moe.experts.{i}.w3.weight``;
    - ``moe.experts.{i}.down.weight`` [F, D] ← ``block_sparse_moe.experts.{i}.w2.weight``.

    Against Chapter 8's :class:`MixtureOfExperts`: the routing rule is the same (softmax, then
    top-k, then renormalise over the k, ties to the lower index), and with ``capacity=None``
    and no noise the two compute the same function and gradients. They differ in what surrounds
    it: the Chapter 8 layer can cap each expert's tokens (``capacity``, dropping or rerouting
    the overflow), add noisy routing, and return a routing report for the balancing losses
    (:func:`importance_loss`); SparseMoE has no capacity, no noise and no auxiliary loss (Mixtral
    adds its load-balancing loss outside the block, from the router logits, when training) and
    returns the output alone, so it can stand wherever a feed-forward layer does.
    """

    def __init__(
        self,
        model_width: int,
        hidden_width: int,
        num_experts: int,
        top_k: int,
        *,
        name: str = "moe",
        rng: SplitMix64,
    ) -> None:
        model_width = as_width(model_width, "SparseMoE model_width")
        hidden_width = as_width(hidden_width, "SparseMoE hidden_width")
        num_experts = positive_int(num_experts, "SparseMoE num_experts")
        top_k = _check_k(top_k, num_experts)
        element_count((model_width, hidden_width), "SparseMoE expert weight")
        element_count(
            (num_experts, 3 * model_width * hidden_width + model_width), "SparseMoE parameters"
        )
        check_name(name, "SparseMoE")
        with generator(rng, "SparseMoE").transaction() as draft:  # router, then experts 0 … E−1
            router = Linear(model_width, num_experts, bias=False, name=f"{name}.router", rng=draft)
            experts = [
                SwiGLU(
                    model_width, hidden_width, model_width, name=f"{name}.experts.{e}", rng=draft
                )
                for e in range(num_experts)
            ]
        self._build(router, experts, top_k, name)

    @classmethod
    def from_parameters(
        cls, router_weight: Any, experts: Any, *, top_k: int, name: str = "moe"
    ) -> SparseMoE:
        """A block holding exactly W_r [D, E] and experts [(W_g, W_u [D, F], W_d [F, D]), …]."""
        check_name(name, "SparseMoE")
        router = Linear.from_parameters(router_weight, name=f"{name}.router")
        model_width, num_experts = router.input_width, router.output_width
        top_k = _check_k(top_k, num_experts)
        triples = _experts_list(experts, num_experts)
        layers = [
            SwiGLU.from_parameters(gate, up, down, name=f"{name}.experts.{e}")
            for e, (gate, up, down) in enumerate(triples)
        ]
        why = "the router's, because its output is added back in place of the token"
        for e, layer in enumerate(layers):
            check_part(layer, f"SparseMoE expert {e}", model_width, why)
            if layer.hidden_width != layers[0].hidden_width:
                raise WidthError(
                    f"SparseMoE experts share one hidden width F; expert 0 has "
                    f"{layers[0].hidden_width} and expert {e} has {layer.hidden_width}. Give "
                    "every expert weights of the same shapes."
                )
        return cls._assemble(router, layers, top_k, name)

    def _build(self, router: Linear, experts: list[SwiGLU], top_k: int, name: str) -> None:
        Module.__init__(self, name)
        self.router = router  # registration order = forward order = named_parameters() order
        for e, expert in enumerate(experts):
            setattr(self, f"expert_{e}", expert)
        self.experts = tuple(experts)
        self.model_width = router.input_width
        self.input_width = self.output_width = router.input_width
        self.hidden_width = experts[0].hidden_width
        self.num_experts = router.output_width
        self.top_k = top_k

    def __repr__(self) -> str:
        return (
            f"SparseMoE(D={self.model_width}, F={self.hidden_width}, experts={self.num_experts}, "
            f"top_k={self.top_k}, name={self.name!r})"
        )

    def _rows(self, x: Any) -> tuple[Tensor, Tensor]:
        x = as_tensor(x, "SparseMoE input")
        if not (x.ndim and x.shape[-1] == self.model_width):
            check_feature_axis(
                x,
                self.model_width,
                f"SparseMoE(D={self.model_width})",
                f"SparseMoE needs an input with a feature axis [..., {self.model_width}]; got a "
                f"rank-0 value. Wrap one token as shape ({self.model_width},).",
            )
        return x, x.reshape(-1, self.model_width)  # (N, D)

    def route(self, x: Any) -> SparseRouting:
        """The routing of x [..., D] flattened to N = Π leading axes tokens."""
        _, rows = self._rows(x)
        return self._route(rows)

    def _route(self, rows: Tensor) -> SparseRouting:
        logits = self.router(rows)  # (N, E)
        probabilities = logits.softmax(axis=-1)  # (N, E)
        selected = ranked_experts(probabilities.value)[:, : self.top_k]  # (N, k)
        chosen = probabilities[np.arange(rows.shape[0])[:, None], selected]  # (N, k) gather
        gates = chosen / chosen.sum(axis=-1, keepdims=True)  # renormalised over the k
        return SparseRouting(logits, probabilities, selected, gates)

    def forward(self, x: Any) -> Tensor:
        """y [..., D] = Σ over each token's k experts of gate · SwiGLU_e(token)."""
        x, rows = self._rows(x)
        tokens = rows.shape[0]
        if tokens == 0:
            return x * 0.0
        routing = self._route(rows)
        outputs, where, offset = [], np.empty((tokens, self.top_k), dtype=np.int64), 0
        for e, expert in enumerate(self.experts):
            token_idx, slot_idx = np.nonzero(routing.selected == e)  # token order
            if token_idx.size == 0:
                continue  # an expert no token chose does not run
            outputs.append(expert(rows[token_idx]))  # (n_e, D)
            where[token_idx, slot_idx] = offset + np.arange(token_idx.size)
            offset += token_idx.size
        results = concat(outputs, axis=0)  # (N k, D): every (token, slot) exactly once
        gathered = results[where]  # (N, k, D): token n's k expert outputs
        weighted = gathered * routing.gates.reshape(tokens, self.top_k, 1)
        return weighted.sum(axis=1).reshape(*x.shape)  # (..., D)
