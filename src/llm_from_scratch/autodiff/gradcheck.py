"""Central finite differences against reverse mode, over every entry of every input."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ArgumentError
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

    @property
    def message(self) -> str:
        """A one-paragraph account naming the op, the input and both derivatives."""
        verdict = "passed" if self.passed else "FAILED"
        return (
            f"gradcheck {verdict} for {self.name}: max |reverse − central| = "
            f"{self.max_abs_error:.3e} (atol {self.atol:g}, step {self.step:g}); worst at input "
            f"{self.worst_input}, entry {self.worst_input_index}, output entry "
            f"{self.worst_output_index}: reverse {self.analytic:.9g}, central {self.numeric:.9g}."
        )

    def __str__(self) -> str:
        return self.message


def jacobians(fn: Callable[..., Tensor], inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Reverse-mode Jacobians d out / d input_i, each of shape out.shape + input_i.shape."""
    leaves = [Tensor(x, requires_grad=True) for x in inputs]
    out = fn(*leaves)
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
    base = [np.array(x, dtype=np.float64) for x in inputs]
    out_shape = fn(*[Tensor(x) for x in base]).shape
    result = []
    for i, x in enumerate(base):
        jac = np.zeros(out_shape + x.shape)
        for flat in range(x.size):
            index = np.unravel_index(flat, x.shape)
            values = []
            for sign in (1.0, -1.0):
                moved = [b.copy() for b in base]
                moved[i][index] += sign * step
                values.append(fn(*[Tensor(m) for m in moved]).value)
            jac[(..., *index)] = (values[0] - values[1]) / (2.0 * step)
        result.append(jac)
    return result


def gradcheck(
    fn: Callable[..., Tensor],
    inputs: Sequence[Any],
    step: float = 1e-6,
    atol: float = 1e-6,
    name: str | None = None,
) -> GradcheckResult:
    """Compare every entry of every reverse-mode Jacobian with central differences."""
    if step <= 0 or atol <= 0:
        raise ArgumentError(f"gradcheck needs positive step and atol; got {step}, {atol}.")
    arrays = [np.array(x.value if isinstance(x, Tensor) else x, dtype=np.float64) for x in inputs]
    if name is None:
        probe = fn(*[Tensor(a, requires_grad=True) for a in arrays])
        name = probe.op_name or getattr(fn, "__name__", "function")
        if name == "<lambda>":
            name = "function"
    reverse = jacobians(fn, arrays)
    central = numeric_jacobians(fn, arrays, step)
    worst = (0.0, 0.0, 0, (), (), 0.0, 0.0)
    for i, (r, c) in enumerate(zip(reverse, central, strict=True)):
        if r.size == 0:
            continue
        diff = np.abs(r - c)
        flat = int(np.argmax(diff))
        if diff.flat[flat] >= worst[0]:
            out_ndim = r.ndim - arrays[i].ndim
            full = np.unravel_index(flat, r.shape)
            rel = float(diff.flat[flat] / max(abs(c.flat[flat]), abs(r.flat[flat]), 1e-300))
            worst = (
                float(diff.flat[flat]),
                rel,
                i,
                tuple(int(k) for k in full[:out_ndim]),
                tuple(int(k) for k in full[out_ndim:]),
                float(r.flat[flat]),
                float(c.flat[flat]),
            )
    max_rel = max(
        (
            float(np.max(np.abs(r - c) / np.maximum(np.maximum(np.abs(c), np.abs(r)), 1e-12)))
            for r, c in zip(reverse, central, strict=True)
            if r.size
        ),
        default=0.0,
    )
    return GradcheckResult(
        name=name,
        passed=worst[0] <= atol,
        max_abs_error=worst[0],
        max_rel_error=max_rel,
        worst_input=worst[2],
        worst_output_index=worst[3],
        worst_input_index=worst[4],
        analytic=worst[5],
        numeric=worst[6],
        step=step,
        atol=atol,
    )


def gradcheck_parameters(
    loss: Callable[[], Tensor],
    parameters: Sequence[Tensor],
    step: float = 1e-6,
    atol: float = 1e-6,
    name: str = "parameters",
) -> GradcheckResult:
    """Reverse-mode gradients of a scalar ``loss()`` w.r.t. leaf parameters vs central differences.

    Each parameter's value is nudged in place by ±step and restored, so modules can be checked
    through their own forward pass without rebuilding them.
    """
    for p in parameters:
        p.grad = None
    loss().backward()
    analytic = [np.zeros(p.shape) if p.grad is None else p.grad.copy() for p in parameters]
    worst = (0.0, 0, (), 0.0, 0.0)
    max_rel = 0.0
    for i, p in enumerate(parameters):
        base = p.value
        for index in np.ndindex(base.shape):
            values = []
            for sign in (1.0, -1.0):
                moved = base.copy()
                moved[index] += sign * step
                p.value = moved
                values.append(float(loss().value))
            p.value = base
            numeric = (values[0] - values[1]) / (2.0 * step)
            error = abs(analytic[i][index] - numeric)
            scale = max(abs(numeric), abs(analytic[i][index]), 1e-12)
            max_rel = max(max_rel, error / scale)
            if error >= worst[0]:
                worst = (
                    error,
                    i,
                    tuple(int(k) for k in index),
                    float(analytic[i][index]),
                    numeric,
                )
    for p in parameters:
        p.grad = None
    return GradcheckResult(
        name=name,
        passed=worst[0] <= atol,
        max_abs_error=worst[0],
        max_rel_error=max_rel,
        worst_input=worst[1],
        worst_output_index=(),
        worst_input_index=worst[2],
        analytic=worst[3],
        numeric=worst[4],
        step=step,
        atol=atol,
    )
