"""Reading a tape: the walk lists inputs before consumers; the op counts match the expression."""

from __future__ import annotations

import numpy as np
import pytest

from llm_from_scratch.autodiff import Tensor, recorded_ops, walk_tape
from llm_from_scratch.errors import GraphReleasedError


def running_example():
    x, w, b = (Tensor(v, requires_grad=True) for v in (0.5, -1.0, 0.25))
    return x, w, b, ((x * w) + b).tanh() * x


def test_recorded_ops_counts_each_entry_once():
    *_, loss = running_example()
    assert recorded_ops(loss) == {"mul": 2, "add": 1, "tanh": 1}


def test_walk_lists_every_tensor_once_after_its_inputs():
    x, _, _, loss = running_example()
    order = walk_tape(loss)
    assert len(order) == 7 and len({id(t) for t in order}) == 7  # x, w, b and four results
    position = {id(t): i for i, t in enumerate(order)}
    for t in order:
        assert all(position[id(p)] < position[id(t)] for p in t.inputs)
    assert order[-1] is loss and order[0] is x


def test_a_leaf_has_an_empty_tape():
    leaf = Tensor(np.ones(2), requires_grad=True)
    assert recorded_ops(leaf) == {}


def test_a_released_tape_cannot_be_read():
    *_, loss = running_example()
    loss.backward()
    with pytest.raises(GraphReleasedError, match="retain_graph=True"):
        recorded_ops(loss)
