"""Modules: stable parameter names and order, clone identity, state dicts that load exactly."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from llm_from_scratch.autodiff import Tensor
from llm_from_scratch.errors import ArgumentError, ParameterError, ShapeError, WidthError
from llm_from_scratch.nn import Linear, Module, Parameter
from llm_from_scratch.nn.module import as_tensor, check_part
from llm_from_scratch.random import SplitMix64


class TwoLayer(Module):
    def __init__(self, name: str = "mlp") -> None:
        super().__init__(name)
        rng = SplitMix64(1)
        self.first = Linear(2, 3, name=f"{name}.first", rng=rng)
        self.scale = Parameter(np.ones(3), f"{name}.scale")
        self.second = Linear(3, 1, bias=False, name=f"{name}.second", rng=rng)

    def forward(self, x):
        return self.second(self.first(x) * self.scale)


def test_named_parameters_follow_forward_order():
    names = [n for n, _ in TwoLayer().named_parameters()]
    assert names == ["mlp.first.weight", "mlp.first.bias", "mlp.scale", "mlp.second.weight"]
    assert TwoLayer().parameter_count == 6 + 3 + 3 + 3


def test_duplicate_parameter_names_are_rejected():
    model = TwoLayer()
    with pytest.raises(ParameterError, match=r"already has 'mlp\.first\.weight'"):
        model.again = Linear(2, 3, name="mlp.first", rng=SplitMix64(0))
    assert "again" not in [n.split(".")[1] for n, _ in model.named_parameters()]


def test_shallow_copy_shares_parameter_objects():
    model = TwoLayer()
    clone = copy.copy(model)
    for (_, a), (_, b) in zip(model.named_parameters(), clone.named_parameters(), strict=True):
        assert a is b


def test_state_dict_round_trip_and_zero_grad():
    model = TwoLayer()
    state = model.state_dict()
    state["mlp.scale"] = np.array([1.0, 2.0, 3.0])
    model.load_state_dict(state)
    np.testing.assert_array_equal(model.scale.value, [1.0, 2.0, 3.0])
    model(np.ones((4, 2))).sum().backward()
    assert model.first.weight.grad is not None
    model.zero_grad()
    assert all(p.grad is None for p in model.parameters())


def test_bad_state_dicts_change_nothing():
    model = TwoLayer()
    before = model.state_dict()
    bad_shape = {**before, "mlp.scale": np.ones(4), "mlp.first.bias": np.full(3, 7.0)}
    with pytest.raises(ShapeError, match=r"mlp.scale has shape \(3,\); got \(4,\)"):
        model.load_state_dict(bad_shape)
    with pytest.raises(ParameterError, match=r"unknown \['extra'\], missing \['mlp.scale'\]"):
        model.load_state_dict(
            {**{k: v for k, v in before.items() if k != "mlp.scale"}, "extra": 1.0}
        )
    for name, value in model.state_dict().items():
        np.testing.assert_array_equal(value, before[name])


def test_module_names_must_be_dotted_identifiers():
    with pytest.raises(ArgumentError, match="non-empty dotted string"):
        Module("a..b")


def test_a_clone_gets_its_own_registry():
    model = TwoLayer()
    clone = copy.copy(model)
    clone.extra = Parameter(np.zeros(2), "mlp.extra")
    assert "mlp.extra" not in [n for n, _ in model.named_parameters()]
    assert "mlp.extra" in [n for n, _ in clone.named_parameters()]


def test_as_tensor_keeps_a_tensor_with_its_graph_and_copies_arrays():
    x = Tensor([1.0, 2.0], requires_grad=True)
    y = x * 2.0
    assert as_tensor(y, "input") is y  # the tape stays attached
    data = np.array([1.0, np.nan])
    wrapped = as_tensor(data, "input")
    data[0] = 5.0
    assert wrapped.value[0] == 1.0 and not wrapped.requires_grad  # a constant copy
    with pytest.raises(ShapeError, match="input must be a rectangular array"):
        as_tensor([[1.0], [2.0, 3.0]], "input", error=ShapeError)


def test_check_part_names_the_part_the_width_and_why():
    layer = Linear(2, 3, rng=SplitMix64(0))
    check_part(Linear(3, 3, rng=SplitMix64(0)), "branch", 3, "because a residual adds it")
    with pytest.raises(ArgumentError, match=r"^branch must be a Module; got int\.$"):
        check_part(3, "branch", 3, "because a residual adds it")
    with pytest.raises(WidthError) as info:
        check_part(layer, "branch", 3, "because a residual adds it")
    assert str(info.value).startswith(
        "branch must read and return the model width 3, because a residual adds it; got "
    )
    assert str(info.value).endswith("reading 2 and returning 3. Build it for width 3.")


def test_from_parameters_builds_through_the_same_build_without_drawing():
    rng = SplitMix64(3)
    drawn = Linear(2, 3, name="p", rng=rng)
    state = rng.state
    copy_ = Linear.from_parameters(drawn.weight.value, drawn.bias.value, name="p")
    assert rng.state == state
    assert repr(copy_) == repr(drawn) and copy_.state_dict().keys() == drawn.state_dict().keys()


class Nested(Module):
    def __init__(self) -> None:
        super().__init__("outer")
        self.inner = TwoLayer("outer.inner")
        self.last = Linear(1, 1, name="outer.last", rng=SplitMix64(2))


def test_modules_lists_the_tree_each_module_before_its_children_in_forward_order():
    nested = Nested()
    names = [m.name for m in nested.modules()]
    assert names == [
        "outer",
        "outer.inner",
        "outer.inner.first",
        "outer.inner.second",
        "outer.last",
    ]
    assert [m.name for m in Linear(2, 2, rng=SplitMix64(3)).modules()] == ["linear"]
