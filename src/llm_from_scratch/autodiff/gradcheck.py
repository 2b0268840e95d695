"""Central finite differences against reverse mode, over every entry of every input.

A check fails when any entry differs by more than ``atol``, and also when any entry of either
Jacobian is NaN or ±inf: a non-finite derivative is never a pass, and the report names the first
one. numpy's floating-point warnings are silenced while the function runs (the non-finite entries
they would announce are reported instead). ``gradcheck_parameters`` puts back every parameter's
value and the caller's ``.grad`` whatever happens, even when ``loss()`` raises mid-check.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ArgumentError, ShapeError
from ..validate import as_float_array, as_real, received
from .tensor import Tensor


@dataclass(frozen=True)
class GradcheckResult:
    """How far reverse-mode Jacobians are from central differences, and where the worst is."""

    name: str
    passed: bool
    max_abs_error: float
    max_rel_error: float
    worst_input: int
    worst_output_index: tuple[int, ...]
    worst_input_index: tuple[int, ...]
    analytic: float
    numeric: float
    step: float
    atol: float
    nonfinite: int = 0  # Jacobian entries (reverse or central) that are NaN or ±inf

    @property
    def message(self) -> str:
        """A one-paragraph account naming the op, the input and both derivatives."""
        verdict = "passed" if self.passed else "FAILED"
        where = (
            f"input {self.worst_input}, entry {self.worst_input_index}, output entry "
            f"{self.worst_output_index}: reverse {self.analytic:.9g}, central {self.numeric:.9g}."
        )
        if self.nonfinite:
            return (
                f"gradcheck {verdict} for {self.name}: {self.nonfinite} Jacobian entr"
                f"{'y is' if self.nonfinite == 1 else 'ies are'} not finite (NaN or ±inf; step "
                f"{self.step:g}); the first at {where}"
            )
        return (
            f"gradcheck {verdict} for {self.name}: max |reverse − central| = "
            f"{self.max_abs_error:.3e} (atol {self.atol:g}, step {self.step:g}); worst at {where}"
        )

    def __str__(self) -> str:
        return self.message


def _tolerances(step: Any, atol: Any) -> tuple[float, float]:
    """step and atol as positive finite floats (NaN or inf would make every check pass)."""
    step = as_real(step, "gradcheck's step", allow_nan=True, finite=False)
    atol = as_real(atol, "gradcheck's atol", allow_nan=True, finite=False)
    if not (math.isfinite(step) and step > 0 and math.isfinite(atol) and atol > 0):
        raise ArgumentError(
            f"gradcheck needs a positive finite step and atol; got step={step}, atol={atol}. "
            "Try step=1e-6, atol=1e-6."
        )
    return step, atol


def _call(fn: Callable[..., Any], tensors: Sequence[Tensor]) -> Tensor:
    out = fn(*tensors)
    if not isinstance(out, Tensor):
        raise ArgumentError(
            f"gradcheck's function must return a Tensor; it returned {received(out)}."
        )
    return out


def _arrays(inputs: Sequence[Any]) -> list[np.ndarray]:
    if not isinstance(inputs, list | tuple):
        raise ArgumentError(
            f"gradcheck takes a list of input arrays; got {received(inputs)}. Write [x] for one."
        )
    if not inputs:
        raise ArgumentError(f"gradcheck needs at least one input array; got {inputs!r}.")
    return [as_float_array(x, "A gradcheck input") for x in inputs]  # fresh copies


def jacobians(fn: Callable[..., Tensor], inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Reverse-mode Jacobians d out / d input_i, each of shape out.shape + input_i.shape."""
    leaves = [Tensor(x, requires_grad=True) for x in _arrays(inputs)]
    out = _call(fn, leaves)
    result = [np.zeros(out.shape + leaf.shape) for leaf in leaves]
    for flat in range(out.size):
        index = np.unravel_index(flat, out.shape)
        seed = np.zeros(out.shape)
        seed[index] = 1.0
        for leaf in leaves:
            leaf.grad = None
        if out.requires_grad:
            out.backward(seed, retain_graph=True)
        for i, leaf in enumerate(leaves):
            if leaf.grad is not None:
                result[i][index] = leaf.grad
    return result


def numeric_jacobians(
    fn: Callable[..., Tensor], inputs: Sequence[np.ndarray], step: float = 1e-6
) -> list[np.ndarray]:
    """Central differences (f(x + h) − f(x − h)) / 2h, one entry of one input at a time."""
    step, _ = _tolerances(step, 1.0)
    base = _arrays(inputs)
    out_shape = _call(fn, [Tensor(x) for x in base]).shape
    result = []
    for i, x in enumerate(base):
        jac = np.zeros(out_shape + x.shape)
        for flat in range(x.size):
            index = np.unravel_index(flat, x.shape)
            values = []
            for sign in (1.0, -1.0):
                moved = [b.copy() for b in base]
                moved[i][index] += sign * step
                values.append(_call(fn, [Tensor(m) for m in moved]).value)
            jac[(..., *index)] = (values[0] - values[1]) / (2.0 * step)
        result.append(jac)
    return result


def _compare(
    name: str,
    reverse: Sequence[np.ndarray],
    central: Sequence[np.ndarray],
    input_ndims: Sequence[int],
    step: float,
    atol: float,
) -> GradcheckResult:
    """The verdict: the first non-finite entry if there is one, else the largest difference."""
    worst: tuple[float, int, int, np.ndarray] | None = None  # (error, input, flat index, r)
    nonfinite = 0
    max_rel = 0.0
    for i, (r, c) in enumerate(zip(reverse, central, strict=True)):
        if r.size == 0:
            continue
        bad = ~(np.isfinite(r) & np.isfinite(c))
        if bad.any():
            nonfinite += int(bad.sum())
            if worst is None or math.isfinite(worst[0]):  # the first non-finite entry wins
                worst = (math.inf, i, int(np.argmax(bad)), r)
            continue
        diff = np.abs(r - c)
        flat = int(np.argmax(diff))
        scale = np.maximum(np.maximum(np.abs(c), np.abs(r)), 1e-12)
        max_rel = max(max_rel, float(np.max(diff / scale)))
        if worst is None or (math.isfinite(worst[0]) and diff.flat[flat] >= worst[0]):
            worst = (float(diff.flat[flat]), i, flat, r)
    if worst is None:  # every Jacobian is empty: nothing to compare
        return GradcheckResult(name, True, 0.0, 0.0, 0, (), (), 0.0, 0.0, step, atol)
    error, i, flat, r = worst
    full = np.unravel_index(flat, r.shape)
    out_ndim = r.ndim - input_ndims[i]
    return GradcheckResult(
        name=name,
        passed=nonfinite == 0 and error <= atol,
        max_abs_error=error,
        max_rel_error=math.inf if nonfinite else max_rel,
        worst_input=i,
        worst_output_index=tuple(int(k) for k in full[:out_ndim]),
        worst_input_index=tuple(int(k) for k in full[out_ndim:]),
        analytic=float(r.flat[flat]),
        numeric=float(central[i].flat[flat]),
        step=step,
        atol=atol,
        nonfinite=nonfinite,
    )


def gradcheck(
    fn: Callable[..., Tensor],
    inputs: Sequence[Any],
    step: float = 1e-6,
    atol: float = 1e-6,
    name: str | None = None,
) -> GradcheckResult:
    """Compare every entry of every reverse-mode Jacobian with central differences."""
    step, atol = _tolerances(step, atol)
    arrays = _arrays(inputs)
    with np.errstate(all="ignore"):  # a NaN or inf fails the check by name instead
        if name is None:
            probe = _call(fn, [Tensor(a, requires_grad=True) for a in arrays])
            name = probe.op_name or getattr(fn, "__name__", "function")
            if name == "<lambda>":
                name = "function"
        reverse = jacobians(fn, arrays)
        central = numeric_jacobians(fn, arrays, step)
    return _compare(name, reverse, central, [a.ndim for a in arrays], step, atol)


def gradcheck_parameters(
    loss: Callable[[], Tensor],
    parameters: Sequence[Tensor],
    step: float = 1e-6,
    atol: float = 1e-6,
    name: str = "parameters",
) -> GradcheckResult:
    """Reverse-mode gradients of a scalar ``loss()`` w.r.t. leaf parameters vs central differences.

    Each parameter's value is nudged by ±step (a new array, never an in-place edit) and put
    back, so modules can be checked through their own forward pass without rebuilding them.
    Values and the caller's ``.grad`` are restored even if ``loss()`` raises.
    """
    step, atol = _tolerances(step, atol)
    parameters = list(parameters)
    for p in parameters:
        if not isinstance(p, Tensor) or not p.is_leaf:
            raise ArgumentError(
                f"gradcheck_parameters checks leaf tensors (parameters); got {received(p)}."
            )
    values = [p.value for p in parameters]
    grads = [p.grad for p in parameters]
    try:
        with np.errstate(all="ignore"):  # a NaN or inf fails the check by name instead
            for p in parameters:
                p.grad = None
            out = _scalar_loss(loss)
            if out.requires_grad:
                out.backward()
            analytic = [np.zeros(p.shape) if p.grad is None else p.grad.copy() for p in parameters]

            def loss_at(*nudged: Tensor) -> Tensor:  # the parameters' values set, loss() read
                for p, t in zip(parameters, nudged, strict=True):
                    p.value = t.value
                return _scalar_loss(loss)

            central = [  # d loss / d p, the loss's one entry dropped from each Jacobian
                jac.reshape(v.shape)
                for jac, v in zip(numeric_jacobians(loss_at, values, step), values, strict=True)
            ]
    finally:
        for p, value, grad in zip(parameters, values, grads, strict=True):
            p.value, p.grad = value, grad
    return _compare(name, analytic, central, [v.ndim for v in values], step, atol)


def _scalar_loss(loss: Callable[[], Tensor]) -> Tensor:
    out = loss()
    if not isinstance(out, Tensor) or out.size != 1:
        raise ShapeError(
            f"gradcheck_parameters needs loss() to return a one-element Tensor; got "
            f"{received(out)}. Reduce it first, e.g. (...).sum()."
        )
    return out
