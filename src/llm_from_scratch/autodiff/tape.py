"""Reading a tape: every tensor a result was computed from, and how many of each op it records."""

from __future__ import annotations

from ..errors import ArgumentError, GraphReleasedError
from ..validate import received
from .tensor import Tensor

__all__ = ["recorded_ops", "walk_tape"]


def walk_tape(root: Tensor) -> list[Tensor]:
    """Every tensor on root's tape, each after its inputs (iterative depth-first post-order)."""
    if not isinstance(root, Tensor):
        raise ArgumentError(f"walk_tape reads the tape of a Tensor; got {received(root)}.")
    order: list[Tensor] = []
    seen: set[int] = set()
    stack: list[tuple[Tensor, bool]] = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        if node.is_released:
            raise GraphReleasedError(
                "This tape reaches a tensor whose entry backward() already released (shape "
                f"{node.shape}). Call backward(..., retain_graph=True) to keep the tape, or "
                "read it before calling backward."
            )
        stack.append((node, True))
        for parent in reversed(node.inputs):  # reversed: the first input is visited first
            if id(parent) not in seen:
                stack.append((parent, False))
    return order


def recorded_ops(root: Tensor) -> dict[str, int]:
    """How many entries of each op root's tape holds (op name → count, in order of first use)."""
    counts: dict[str, int] = {}
    for tensor in walk_tape(root):
        if tensor.op_name is not None:
            counts[tensor.op_name] = counts.get(tensor.op_name, 0) + 1
    return counts
