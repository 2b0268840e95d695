"""Optimizers with the semantics of ``torch.optim``: SGD (momentum optional) and AdamW.

Each holds ``param_groups`` (a list of dicts: ``params`` plus hyper-parameters such as ``lr``,
which a schedule may rewrite between steps) and per-parameter ``state``. ``step`` reads each
parameter's ``.grad`` (parameters without one are skipped, as in torch) and updates ``.value``
in place of the old array; ``state_dict`` / ``load_state_dict`` copy everything a resumed run
needs, keyed by the parameter's position in the groups, as torch does.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from ..errors import ArgumentError, ParameterError, ShapeError
from ..nn.module import Parameter
from ..validate import as_flag, as_real


def _number(value: Any, label: str, *, low: float = 0.0, below: float | None = None) -> float:
    number = as_real(value, label, minimum=low)
    if below is not None and number >= below:
        raise ArgumentError(f"{label} must be below {below:g}; got {value!r}.")
    return number


class Optimizer:
    """Base: parameter groups, per-parameter state, zero_grad and the state-dict round trip."""

    defaults: dict[str, Any]

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any]) -> None:
        items = list(params)
        groups = items if items and isinstance(items[0], Mapping) else [{"params": items}]
        self.defaults = dict(defaults)
        self.param_groups: list[dict[str, Any]] = []
        seen: set[int] = set()
        for group in groups:
            if not isinstance(group, Mapping) or "params" not in group:
                raise ArgumentError(
                    f"{type(self).__name__} takes parameters or a list of dicts each with a "
                    f"'params' entry; got {group!r}."
                )
            unknown = sorted(set(group) - set(defaults) - {"params"})
            if unknown:
                raise ArgumentError(
                    f"{type(self).__name__} parameter groups accept {sorted(defaults)}; got "
                    f"unknown options {unknown}."
                )
            members = list(group["params"])
            for p in members:
                if not isinstance(p, Parameter):
                    raise ArgumentError(
                        f"{type(self).__name__} optimizes Parameters; got {type(p).__name__}."
                    )
                if id(p) in seen:
                    raise ParameterError(
                        f"{p.name!r} appears twice in {type(self).__name__}'s parameters; each "
                        "parameter may belong to one group only."
                    )
                seen.add(id(p))
            full = {**self.defaults, **{k: v for k, v in group.items() if k != "params"}}
            self._check_options(full)
            self.param_groups.append({"params": members, **full})
        if not seen:
            raise ArgumentError(f"{type(self).__name__} got an empty parameter list.")
        self.state: dict[int, dict[str, Any]] = {}  # id(parameter) -> its state

    def _check_options(self, options: dict[str, Any]) -> None:
        raise NotImplementedError

    def parameters(self) -> list[Parameter]:
        """Every parameter, group by group, in the order the groups list them."""
        return [p for group in self.param_groups for p in group["params"]]

    def zero_grad(self) -> None:
        """Set every parameter's ``.grad`` to None (torch's default, set_to_none=True)."""
        for p in self.parameters():
            p.grad = None

    def _gradients(self) -> dict[int, np.ndarray]:
        """Each parameter's gradient, checked (shape, finite) before anything is updated."""
        grads = {}
        for p in self.parameters():
            if p.grad is None:
                continue
            g = np.asarray(p.grad, dtype=np.float64)
            if g.shape != p.shape:
                raise ShapeError(f"{p.name}: gradient shape {g.shape} differs from {p.shape}.")
            if not np.all(np.isfinite(g)):
                raise ArgumentError(
                    f"{type(self).__name__}.step: the gradient of {p.name!r} holds NaN or ±inf; "
                    "no parameter was changed. Lower the learning rate or clip gradients."
                )
            grads[id(p)] = g
        return grads

    def state_dict(self) -> dict[str, Any]:
        """{'state': {index: {name: value}}, 'param_groups': [{options, 'params': [index]}]}."""
        index = {id(p): i for i, p in enumerate(self.parameters())}
        state = {
            index[key]: {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in s.items()}
            for key, s in self.state.items()
        }
        groups = []
        for group in self.param_groups:
            options = {k: v for k, v in group.items() if k != "params"}
            groups.append({**options, "params": [index[id(p)] for p in group["params"]]})
        return {"state": dict(sorted(state.items())), "param_groups": groups}

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        """Restore options and state; a mapping that does not fit changes nothing."""
        params = self.parameters()
        try:
            groups, state = state_dict["param_groups"], state_dict["state"]
        except (KeyError, TypeError) as error:
            raise ParameterError(
                f"{type(self).__name__}.load_state_dict needs 'state' and 'param_groups'; got "
                f"{state_dict!r:.80}."
            ) from error
        sizes = [len(g["params"]) for g in self.param_groups]
        theirs = [len(g.get("params", ())) for g in groups]
        if sizes != theirs:
            raise ParameterError(
                f"{type(self).__name__}.load_state_dict: this optimizer's groups hold {sizes} "
                f"parameters; the state dict's hold {theirs}."
            )
        new_options = []
        for group in groups:
            options = {k: v for k, v in group.items() if k != "params"}
            full = {**self.defaults, **options}
            if set(full) != set(self.defaults):
                raise ParameterError(
                    f"{type(self).__name__}.load_state_dict: unknown group options "
                    f"{sorted(set(full) - set(self.defaults))}."
                )
            self._check_options(full)
            new_options.append(full)
        new_state: dict[int, dict[str, Any]] = {}
        for key, entry in state.items():
            i = int(key)
            if not 0 <= i < len(params):
                raise ParameterError(
                    f"{type(self).__name__}.load_state_dict: state for parameter {i}, but there "
                    f"are {len(params)} parameters."
                )
            p = params[i]
            new_state[id(p)] = self._checked_state(p, entry)
        for group, options in zip(self.param_groups, new_options, strict=True):
            group.update(options)
        self.state = new_state

    def _checked_state(self, p: Parameter, entry: Mapping[str, Any]) -> dict[str, Any]:
        """One parameter's state from a state dict, with every buffer's shape checked."""
        names = self.state_names()
        if set(entry) != set(names):
            raise ParameterError(
                f"{type(self).__name__} state of {p.name!r} needs exactly {sorted(names)}; got "
                f"{sorted(entry)}."
            )
        checked: dict[str, Any] = {}
        for name in names:
            value = entry[name]
            if name == "step":
                checked[name] = _number(value, f"state of {p.name!r}: step")
                continue
            array = np.array(value, dtype=np.float64)
            if array.shape != p.shape:
                raise ShapeError(
                    f"{type(self).__name__} state {name!r} of {p.name!r} must have shape "
                    f"{p.shape}; got {array.shape}."
                )
            checked[name] = array
        return checked

    def state_names(self) -> tuple[str, ...]:
        """The names of the per-parameter state entries."""
        raise NotImplementedError


class SGD(Optimizer):
    """g ← ∇ + λθ;  b ← μb + (1 − τ)g (b₁ = g);  θ ← θ − η·(g + μb if nesterov else b)."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        momentum: float = 0.0,
        dampening: float = 0.0,
        weight_decay: float = 0.0,
        nesterov: bool = False,
    ) -> None:
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "dampening": dampening,
            "weight_decay": weight_decay,
            "nesterov": nesterov,
        }
        super().__init__(params, defaults)

    def __repr__(self) -> str:
        group = {k: v for k, v in self.param_groups[0].items() if k != "params"}
        return f"SGD({group})"

    def _check_options(self, options: dict[str, Any]) -> None:
        for label in ("lr", "momentum", "dampening", "weight_decay"):
            options[label] = _number(options[label], f"SGD {label}")
        options["nesterov"] = as_flag(options["nesterov"], "SGD nesterov")
        if options["nesterov"] and (options["momentum"] <= 0 or options["dampening"] != 0):
            raise ArgumentError(
                "SGD with nesterov=True needs momentum > 0 and dampening = 0; got momentum "
                f"{options['momentum']}, dampening {options['dampening']}."
            )

    def state_names(self) -> tuple[str, ...]:
        return ("momentum_buffer",)

    def step(self) -> None:
        """One update of every parameter that has a gradient."""
        grads = self._gradients()
        for group in self.param_groups:
            lr, mu, tau = group["lr"], group["momentum"], group["dampening"]
            decay, nesterov = group["weight_decay"], group["nesterov"]
            for p in group["params"]:
                if id(p) not in grads:
                    continue
                g = grads[id(p)]
                if decay:
                    g = g + decay * p.value
                if mu:
                    state = self.state.get(id(p))
                    if state is None:
                        buffer = g.copy()
                    else:
                        buffer = mu * state["momentum_buffer"] + (1.0 - tau) * g
                    self.state[id(p)] = {"momentum_buffer": buffer}
                    g = g + mu * buffer if nesterov else buffer
                p.value = p.value - lr * g


class AdamW(Optimizer):
    """θ ← θ(1 − ηλ);  m̂ = m/(1 − β₁ᵗ), v̂ = v/(1 − β₂ᵗ);  θ ← θ − η m̂ / (√v̂ + ε)."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
    ) -> None:
        super().__init__(
            params, {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay}
        )

    def __repr__(self) -> str:
        group = {k: v for k, v in self.param_groups[0].items() if k != "params"}
        return f"AdamW({group})"

    def _check_options(self, options: dict[str, Any]) -> None:
        for label in ("lr", "eps", "weight_decay"):
            options[label] = _number(options[label], f"AdamW {label}")
        betas = options["betas"]
        if not isinstance(betas, tuple | list) or len(betas) != 2:
            raise ArgumentError(f"AdamW betas must be a pair (β₁, β₂); got {betas!r}.")
        options["betas"] = tuple(
            _number(b, f"AdamW beta{i + 1}", below=1.0) for i, b in enumerate(betas)
        )

    def state_names(self) -> tuple[str, ...]:
        return ("step", "exp_avg", "exp_avg_sq")

    def step(self) -> None:
        """One update of every parameter that has a gradient (torch.optim.AdamW, amsgrad off)."""
        grads = self._gradients()
        for group in self.param_groups:
            lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
            decay = group["weight_decay"]
            for p in group["params"]:
                if id(p) not in grads:
                    continue
                g = grads[id(p)]
                state = self.state.get(id(p))
                if state is None:
                    state = {
                        "step": 0.0,
                        "exp_avg": np.zeros(p.shape),
                        "exp_avg_sq": np.zeros(p.shape),
                    }
                t = state["step"] + 1.0
                m = beta1 * state["exp_avg"] + (1.0 - beta1) * g
                v = beta2 * state["exp_avg_sq"] + (1.0 - beta2) * (g * g)
                self.state[id(p)] = {"step": t, "exp_avg": m, "exp_avg_sq": v}
                step_size = lr / (1.0 - beta1**t)
                denominator = np.sqrt(v) / math.sqrt(1.0 - beta2**t) + eps
                p.value = p.value * (1.0 - lr * decay) - step_size * (m / denominator)
