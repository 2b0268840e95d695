"""Optimizers with the semantics of ``torch.optim``: SGD (momentum optional) and AdamW.

Each holds ``param_groups`` (a list of dicts: ``params`` plus hyper-parameters such as ``lr``,
which a schedule may rewrite between steps) and per-parameter ``state``. ``step`` reads each
parameter's ``.grad`` (parameters without one are skipped, as in torch) and updates ``.value``
in place of the old array; ``state_dict`` / ``load_state_dict`` copy everything a resumed run
needs, keyed by the parameter's position in the groups, as torch does.

A step is all or nothing: the options are checked again (a schedule may have written a NaN or
negative rate into a group), every new value and moment is computed first, and if any is not a
finite float64 (AdamW's squared gradient beyond 1.8e308, a weight that would overflow) the step
raises and no parameter or state changes. The arithmetic of an ordinary step is torch's, operation
for operation.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from ..errors import ArgumentError, ParameterError, ShapeError
from ..nn.module import Parameter
from ..validate import as_flag, as_float_array, as_real, received

#: Below this ε, a second moment that has underflowed (|g| ≲ 1e-154, v subnormal) could carry a
#: rounding error in √v larger than ε·2⁻⁵²; such a step is refused rather than made silently wrong.
TINY_EPS = 2.0**-460
_SMALLEST_NORMAL = float(np.finfo(np.float64).tiny)  # 2⁻¹⁰²²


def _finite(entry: float | np.ndarray) -> bool:
    """Whether a step count (float) or an array holds no NaN or ±inf: isfinite, then all."""
    # math.isfinite and the array's own all() skip np.all's dispatch: a few µs per parameter
    # per step, for each gradient, moment and new value the optimisers check
    if isinstance(entry, float):
        return math.isfinite(entry)
    return bool(np.isfinite(entry).all())


def _number(
    value: Any,
    label: str,
    *,
    low: float = 0.0,
    below: float | None = None,
    positive: bool = False,
    error: type[ArgumentError] = ArgumentError,
) -> float:
    if positive:
        number = as_real(value, label, positive=True, error=error)
    else:
        number = as_real(value, label, minimum=low, error=error)
    if below is not None and number >= below:
        raise error(f"{label} must be below {below:g}; got {value!r}.")
    return number


def _parameter_list(value: Any, owner: str) -> list[Any]:
    """The items of an iterable of parameters (not a bare tensor, a mapping or a string)."""
    if isinstance(value, Parameter) or hasattr(value, "requires_grad"):
        raise ArgumentError(
            f"{owner} takes an iterable of Parameters (or of group dicts); got one tensor, "
            f"{received(value)}. Wrap it in a list: [{getattr(value, 'name', 'p')}]."
        )
    if isinstance(value, Mapping | str | bytes) or not isinstance(value, Iterable):
        raise ArgumentError(
            f"{owner} takes an iterable of Parameters or a list of dicts each with a 'params' "
            f"entry; got {received(value)}"
            + (" (one group: wrap the dict in a list)." if isinstance(value, Mapping) else ".")
        )
    return list(value)


def _state_index(key: Any, owner: str) -> int:
    """A state-dict key: a parameter's position, as an int or a string of digits."""
    if isinstance(key, str) and key.isdigit():
        return int(key)
    if isinstance(key, bool | np.bool_) or not isinstance(key, int | np.integer):
        raise ParameterError(
            f"{owner}.load_state_dict: state keys are parameter positions (integers); got {key!r}."
        )
    return int(key)


class Optimizer:
    """Base: parameter groups, per-parameter state, zero_grad and the state-dict round trip."""

    defaults: dict[str, Any]

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any]) -> None:
        owner = type(self).__name__
        if type(self).state_names is Optimizer.state_names:
            raise ArgumentError(
                f"{owner} is the optimizers' base class and updates nothing; use SGD or AdamW."
            )
        if not isinstance(defaults, Mapping):
            raise ArgumentError(f"{owner} defaults must be a dict; got {received(defaults)}.")
        items = _parameter_list(params, owner)
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
            unknown = sorted(set(group) - set(defaults) - {"params"}, key=str)
            if unknown:
                raise ArgumentError(
                    f"{type(self).__name__} parameter groups accept {sorted(defaults)}; got "
                    f"unknown options {unknown}."
                )
            members = _parameter_list(group["params"], f"{owner} group 'params'")
            for p in members:
                if not isinstance(p, Parameter):
                    raise ArgumentError(
                        f"{type(self).__name__} optimizes Parameters; got {received(p)}."
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
            raise ArgumentError(
                f"{owner} got an empty parameter list ({received(params)}); pass the model's "
                "parameters, e.g. model.parameters()."
            )
        self.state: dict[int, dict[str, Any]] = {}  # id(parameter) -> its state

    def _check_options(self, options: dict[str, Any]) -> None:
        raise ArgumentError(f"{type(self).__name__} does not define its options' checks.")

    def _recheck_options(self) -> None:
        """Check every group's options again: a schedule may have rewritten them since."""
        for group in self.param_groups:
            options = {k: v for k, v in group.items() if k != "params"}
            if set(options) != set(self.defaults):
                raise ArgumentError(
                    f"{type(self).__name__}.step: a parameter group must hold exactly the options "
                    f"{sorted(self.defaults)}; got {sorted(options, key=str)}. No parameter was "
                    "changed."
                )
            self._check_options(options)
            group.update(options)

    def _commit(self, updates: list[tuple[Parameter, dict[str, Any], np.ndarray]]) -> None:
        """Write the staged values and states, after checking every one of them is finite."""
        for p, state, value in updates:
            for name, entry in state.items():
                if not _finite(entry):
                    raise ArgumentError(
                        f"{type(self).__name__}.step: {p.name!r}'s {name} would leave the "
                        "float64 range (above 1.8e308); no parameter was changed. Clip the "
                        "gradient norm (clip_grad_norm) or lower the learning rate."
                    )
            if not _finite(value):
                raise ArgumentError(
                    f"{type(self).__name__}.step: the new value of {p.name!r} would leave the "
                    "float64 range (above 1.8e308); no parameter was changed. Lower the "
                    "learning rate or the weight decay."
                )
        for p, state, value in updates:
            if state:
                self.state[id(p)] = state
            p.value = value

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
            g = p.grad
            if type(g) is not np.ndarray or g.dtype != np.float64:
                g = as_float_array(g, f"{type(self).__name__}.step: the gradient of {p.name!r}")
            if g.shape != p.shape:
                raise ShapeError(f"{p.name}: gradient shape {g.shape} differs from {p.shape}.")
            if not _finite(g):
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
        owner = type(self).__name__
        if not (
            isinstance(state_dict, Mapping)
            and isinstance(state_dict.get("param_groups"), list | tuple)
            and isinstance(state_dict.get("state"), Mapping)
            and all(isinstance(g, Mapping) for g in state_dict["param_groups"])
        ):
            raise ParameterError(
                f"{owner}.load_state_dict needs a mapping with 'state' (a dict) and "
                f"'param_groups' (a list of dicts); got {state_dict!r:.80}."
            )
        groups, state = state_dict["param_groups"], state_dict["state"]
        for group in groups:
            listed = group.get("params", ())
            if not isinstance(listed, list | tuple):
                raise ParameterError(
                    f"{owner}.load_state_dict: each group's 'params' lists parameter positions; "
                    f"got {listed!r:.60}."
                )
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
                    f"{sorted(set(full) - set(self.defaults), key=str)}."
                )
            self._check_options(full)
            new_options.append(full)
        new_state: dict[int, dict[str, Any]] = {}
        for key, entry in state.items():
            i = _state_index(key, owner)
            if not 0 <= i < len(params):
                raise ParameterError(
                    f"{type(self).__name__}.load_state_dict: state for parameter {i}, but there "
                    f"are {len(params)} parameters."
                )
            p = params[i]
            if id(p) in new_state:
                raise ParameterError(
                    f"{owner}.load_state_dict: the state of parameter {i} is given twice."
                )
            if not isinstance(entry, Mapping):
                raise ParameterError(
                    f"{owner}.load_state_dict: the state of parameter {i} must be a dict of "
                    f"{sorted(self.state_names())}; got {received(entry)}."
                )
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
                f"{sorted(entry, key=str)}."
            )
        checked: dict[str, Any] = {}
        for name in names:
            value = entry[name]
            label = f"{type(self).__name__} state of {p.name!r}: {name}"
            if name == "step":
                step = _number(value, label, error=ParameterError)
                if not step.is_integer():
                    raise ParameterError(
                        f"{label} must be a whole number of steps; got {value!r}."
                    )
                checked[name] = step
                continue
            array = as_float_array(value, label, finite=True, error=ParameterError)
            if name == "exp_avg_sq" and array.size and array.min() < 0:
                raise ParameterError(
                    f"{label} is a running mean of squares, so it cannot be negative; got "
                    f"{received(value)} whose smallest entry is {float(array.min())!r}."
                )
            if array.shape != p.shape:
                raise ShapeError(
                    f"{type(self).__name__} state {name!r} of {p.name!r} must have shape "
                    f"{p.shape}; got {array.shape}."
                )
            checked[name] = array
        return checked

    def state_names(self) -> tuple[str, ...]:
        """The names of the per-parameter state entries."""
        raise ArgumentError(f"{type(self).__name__} does not name its state entries.")


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
        self._recheck_options()
        grads = self._gradients()
        updates = []
        with np.errstate(over="ignore", invalid="ignore"):  # overflow is refused in _commit
            for group in self.param_groups:
                lr, mu, tau = group["lr"], group["momentum"], group["dampening"]
                decay, nesterov = group["weight_decay"], group["nesterov"]
                for p in group["params"]:
                    if id(p) not in grads:
                        continue
                    g = grads[id(p)]
                    if decay:
                        g = g + decay * p.value
                    new_state = {}
                    if mu:
                        state = self.state.get(id(p))
                        if state is None:
                            buffer = g.copy()
                        else:
                            buffer = mu * state["momentum_buffer"] + (1.0 - tau) * g
                        new_state = {"momentum_buffer": buffer}
                        g = g + mu * buffer if nesterov else buffer
                    updates.append((p, new_state, p.value - lr * g))
        self._commit(updates)


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
        for label in ("lr", "weight_decay"):
            options[label] = _number(options[label], f"AdamW {label}")
        options["eps"] = _number(options["eps"], "AdamW eps", positive=True)
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
        self._recheck_options()
        grads = self._gradients()
        updates = []
        with np.errstate(over="ignore", invalid="ignore"):  # overflow is refused below
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
                    self._check_moments(p, g, m, v, eps)
                    step_size = lr / (1.0 - beta1**t)
                    denominator = np.sqrt(v) / math.sqrt(1.0 - beta2**t) + eps
                    value = p.value * (1.0 - lr * decay) - step_size * (m / denominator)
                    updates.append((p, {"step": t, "exp_avg": m, "exp_avg_sq": v}, value))
        self._commit(updates)

    def _check_moments(
        self, p: Parameter, g: np.ndarray, m: np.ndarray, v: np.ndarray, eps: float
    ) -> None:
        """Refuse a second moment that float64 cannot hold (g² overflows) or hold precisely."""
        if not _finite(v):
            peak = float(np.max(np.abs(g)))
            raise ArgumentError(
                f"AdamW.step: the gradient of {p.name!r} has an entry of magnitude {peak:.3g}, "
                "whose square (the second moment) exceeds float64's 1.8e308: |g| must stay below "
                "1.3e154. No parameter was changed. Clip the gradient norm (clip_grad_norm) "
                "first, or scale the loss down."
            )
        if eps < TINY_EPS and np.any((v < _SMALLEST_NORMAL) & (m != 0.0)):
            raise ArgumentError(
                f"AdamW.step: the second moment of {p.name!r} has underflowed below float64's "
                f"normal range (2.2e-308) where the first moment is not zero, and eps = {eps:.3g}"
                f" is too small (below {TINY_EPS:.3g}) to hide the rounding of √v there. No "
                "parameter was changed. Use a larger eps or scale the loss up."
            )
