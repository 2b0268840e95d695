"""Checkpoints under attack (issue 28): every load is all-or-nothing, every save loads back.

* A checkpoint whose tensors, optimizer state, step, generator state or metadata is wrong in
  any way is refused with a package error, and the model, the optimizer and the generator it
  was loaded into are exactly as they were (hypothesis draws the corruption).
* ``save_checkpoint`` refuses what ``load_checkpoint`` would refuse, and writes nothing then.
* Whatever hypothesis draws as an argument, a call either works or raises a package error.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from llm_from_scratch.errors import ArgumentError, FromScratchError, ParameterError
from llm_from_scratch.nn.decoder import Decoder
from llm_from_scratch.random import SplitMix64
from llm_from_scratch.training import SGD, AdamW, cross_entropy, load_checkpoint, save_checkpoint

FEW = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def _model(seed: int = 0) -> Decoder:
    return Decoder(7, 4, 1, 2, 8, rng=SplitMix64(seed))


def _trained(model: Decoder) -> AdamW:
    """An AdamW with state: one step on a fixed batch."""
    opt = AdamW(model.parameters(), lr=0.01)
    ids = np.arange(10).reshape(2, 5) % 7
    cross_entropy(model(ids), np.roll(ids, -1, axis=1)).backward()
    opt.step()
    opt.zero_grad()
    return opt


def _state(model: Decoder, opt: Any, rng: SplitMix64) -> tuple[Any, ...]:
    """Everything a load could change, as plain comparable values."""
    weights = {k: v.tobytes() for k, v in model.state_dict().items()}
    if opt is None:
        return weights, None, rng.state
    sd = opt.state_dict()
    state = {
        i: {k: np.asarray(v).tobytes() for k, v in entry.items()}
        for i, entry in sd["state"].items()
    }
    return weights, (state, repr(sd["param_groups"])), rng.state


def _rewrite(path: Path, arrays: dict[str, np.ndarray], meta: Any) -> None:
    """The archive at ``path`` with these arrays and this (JSON) metadata, written by numpy."""
    np.savez(path, meta=np.array(json.dumps(meta)), **arrays)


def _parts(path: Path) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    with np.load(path, allow_pickle=False) as archive:
        arrays = {name: archive[name] for name in archive.files}
    return arrays, json.loads(str(arrays.pop("meta")[()]))


@pytest.fixture
def saved(tmp_path: Path) -> Path:
    model = _model()
    return save_checkpoint(tmp_path / "c.npz", model, _trained(model), step=5, rng=SplitMix64(3))


def _targets() -> tuple[Decoder, AdamW, SplitMix64]:
    model = _model(seed=9)
    return model, _trained(model), SplitMix64(11)


def _refused_untouched(path: Path, *, error: type = FromScratchError, **kwargs: Any) -> None:
    """Loading ``path`` raises ``error`` and leaves model, optimizer and generator unchanged."""
    model, opt, rng = _targets()
    use_opt = kwargs.pop("optimizer", True)
    before = _state(model, opt, rng)
    with pytest.raises(error):
        load_checkpoint(path, model, opt if use_opt else None, rng=rng, **kwargs)
    assert _state(model, opt, rng) == before


# --- the examples the issue names ---------------------------------------------------------------


def test_a_numpy_generator_is_refused_before_the_weights_change(saved: Path) -> None:
    model, _, _ = _targets()
    weights = {k: v.tobytes() for k, v in model.state_dict().items()}
    with pytest.raises(ArgumentError, match="SplitMix64"):
        load_checkpoint(saved, model, rng=np.random.default_rng())  # type: ignore[arg-type]
    assert {k: v.tobytes() for k, v in model.state_dict().items()} == weights


@pytest.mark.parametrize(
    "change",
    [
        lambda m: m.pop("step"),
        lambda m: m.update(extra=[1, 2]),
        lambda m: m.update(extra="x"),
        lambda m: m.update(step=1.7),
        lambda m: m.update(step=1.0),
        lambda m: m.update(step=-1),
        lambda m: m.update(step=True),
        lambda m: m.update(step="5"),
        lambda m: m.update(rng_state="-1"),
        lambda m: m.update(rng_state="-000000000000001"),
        lambda m: m.update(rng_state="12345"),
        lambda m: m.update(rng_state=5),
        lambda m: m.update(rng_state="0" * 17),
        lambda m: m.pop("model"),
        lambda m: m.update(model=[]),
        lambda m: m.update(surprise=1),
        lambda m: m.update(optimizer="AdamW"),
        lambda m: m["optimizer"].update(param_groups="all"),
        lambda m: m["optimizer"]["param_groups"][0].update(params=[0, 0]),
        lambda m: m["optimizer"]["param_groups"][0].update(lr=float("nan")),
    ],
)
def test_bad_metadata_is_refused_and_nothing_changes(saved: Path, change: Any) -> None:
    arrays, meta = _parts(saved)
    change(meta)
    _rewrite(saved, arrays, meta)
    _refused_untouched(saved)
    _refused_untouched(saved, optimizer=False)


def test_optimizer_options_the_optimizer_refuses_change_nothing(saved: Path) -> None:
    arrays, meta = _parts(saved)
    meta["optimizer"]["param_groups"][0]["betas"] = [0.9]
    _rewrite(saved, arrays, meta)
    _refused_untouched(saved)


def test_step_one_point_seven_is_not_read_as_one(saved: Path) -> None:
    arrays, meta = _parts(saved)
    meta["step"] = 1.7
    _rewrite(saved, arrays, meta)
    with pytest.raises(ParameterError, match=r"1\.7"):
        load_checkpoint(saved, _model())


@pytest.mark.parametrize(
    ("entry", "value"),
    [
        ("model/decoder.embedding.weight", np.nan),
        ("model/decoder.embedding.weight", np.inf),
        ("optimizer/0/exp_avg", np.nan),
        ("optimizer/0/exp_avg_sq", np.nan),
        ("optimizer/0/exp_avg_sq", -1.0),
        ("optimizer/0/exp_avg_sq", np.inf),
        ("optimizer/0/step", 1.7),
        ("optimizer/0/step", -1.0),
        ("optimizer/0/step", np.nan),
    ],
)
def test_bad_tensors_are_refused_and_nothing_changes(
    saved: Path, entry: str, value: float
) -> None:
    arrays, meta = _parts(saved)
    array = arrays[entry].astype(np.float64)
    array.reshape(-1)[0] = value
    arrays[entry] = array
    _rewrite(saved, arrays, meta)
    _refused_untouched(saved)


@pytest.mark.parametrize(
    "change",
    [
        lambda a: a.update({"surprise": np.zeros(2)}),
        lambda a: a.update({"optimizer/x/step": np.array(1.0)}),
        lambda a: a.update({"optimizer/99/step": np.array(1.0)}),
        lambda a: a.update({"optimizer/0/momentum": np.zeros(2)}),
        lambda a: a.pop("optimizer/0/exp_avg"),
        lambda a: a.update({"optimizer/0/step": np.ones(3)}),
        lambda a: a.update({"optimizer/0/exp_avg": np.zeros(3)}),
        lambda a: a.update({"model/decoder.embedding.weight": np.array([["a"] * 4] * 7)}),
        lambda a: a.update({"model/decoder.embedding.weight": np.ones((7, 4), complex)}),
        lambda a: a.update({"model/decoder.embedding.weight": np.ones((7, 4), bool)}),
    ],
)
def test_bad_archive_entries_are_refused_and_nothing_changes(saved: Path, change: Any) -> None:
    arrays, meta = _parts(saved)
    change(arrays)
    _rewrite(saved, arrays, meta)
    _refused_untouched(saved)


def test_a_meta_entry_that_is_not_a_string_is_refused(saved: Path) -> None:
    arrays, _ = _parts(saved)
    np.savez(saved, meta=np.zeros(3), **arrays)
    _refused_untouched(saved)
    np.savez(saved, meta=np.array(["{}", "{}"]), **arrays)
    _refused_untouched(saved)


def test_a_nan_tensor_with_optimizer_leaves_the_optimizer_as_it_was(saved: Path) -> None:
    arrays, meta = _parts(saved)
    last = [k for k in arrays if k.startswith("model/")][-1]  # checked after everything else
    arrays[last] = np.full_like(arrays[last], np.nan)
    _rewrite(saved, arrays, meta)
    _refused_untouched(saved, error=ParameterError)


def test_wrong_argument_types_are_refused(saved: Path) -> None:
    model, opt, _ = _targets()
    with pytest.raises(ArgumentError):
        load_checkpoint(saved, "model", opt)  # type: ignore[arg-type]
    with pytest.raises(ArgumentError):
        load_checkpoint(saved, model, "adam")  # type: ignore[arg-type]
    with pytest.raises(ArgumentError):
        load_checkpoint(123, model)  # type: ignore[arg-type]
    with pytest.raises(ArgumentError):
        load_checkpoint(str(saved) + "\0", model)
    with pytest.raises(ArgumentError):
        save_checkpoint(saved, model, opt, step=1, rng=np.random.default_rng())  # type: ignore
    with pytest.raises(ArgumentError):
        save_checkpoint(saved, model, "adam", step=1)  # type: ignore[arg-type]
    with pytest.raises(ArgumentError):
        save_checkpoint(saved, model, step=1.0)  # type: ignore[arg-type]


# --- save refuses what it could not load back ----------------------------------------------------


@pytest.mark.parametrize(
    "extra",
    [[1, 2], "x", 3, {1: 2}, {"t": (1, 2)}, {"x": float("nan")}, {"x": math.inf}, {"x": {2: 1}}],
)
def test_save_refuses_extras_it_could_not_load_back(tmp_path: Path, extra: Any) -> None:
    with pytest.raises(ArgumentError, match="extra"):
        save_checkpoint(tmp_path / "c.npz", _model(), step=0, extra=extra)
    assert list(tmp_path.iterdir()) == []


def test_save_refuses_a_nan_parameter_or_optimizer_state(tmp_path: Path) -> None:
    model = _model()
    opt = _trained(model)
    first = model.parameters()[0]
    opt.state[id(first)]["exp_avg_sq"] = -opt.state[id(first)]["exp_avg_sq"] - 1.0
    with pytest.raises(ParameterError, match="exp_avg_sq"):
        save_checkpoint(tmp_path / "c.npz", model, opt, step=1)
    first.value = np.full(first.shape, np.nan)
    with pytest.raises(ParameterError, match="NaN"):
        save_checkpoint(tmp_path / "d.npz", model, step=1)
    assert list(tmp_path.iterdir()) == []


@FEW
@given(
    extra=st.recursive(
        st.none()
        | st.booleans()
        | st.integers(-(2**60), 2**60)
        | st.text(max_size=5)
        | st.floats(allow_nan=False, allow_infinity=False),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
        max_leaves=6,
    ),
    step=st.integers(0, 2**63),
    seed=st.integers(0, 2**64 - 1),
)
def test_whatever_save_accepts_loads_back_exactly(
    tmp_path: Path, extra: Any, step: int, seed: int
) -> None:
    model = _model()
    opt = SGD(model.parameters(), lr=0.1, momentum=0.5)
    rng = SplitMix64(seed)
    path = save_checkpoint(tmp_path / "c.npz", model, opt, step=step, rng=rng, extra={"e": extra})
    other = _model(seed=1)
    other_rng = SplitMix64(0)
    info = load_checkpoint(path, other, SGD(other.parameters(), lr=0.2), rng=other_rng)
    assert (info.step, info.rng_state, info.extra) == (step, seed, {"e": extra})
    assert other_rng.state == seed


# --- random corruption ---------------------------------------------------------------------------

junk = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    st.lists(st.integers(-3, 3), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


@FEW
@given(data=st.data())
def test_any_corrupted_metadata_field_is_refused_or_loads_the_same(saved: Path, data: Any) -> None:
    arrays, meta = _parts(saved)
    path = saved.with_name("x.npz")
    field_path = data.draw(
        st.sampled_from(
            [
                ("step",),
                ("rng_state",),
                ("extra",),
                ("format",),
                ("model",),
                ("model", "class"),
                ("model", "parameters"),
                ("optimizer",),
                ("optimizer", "class"),
                ("optimizer", "param_groups"),
            ]
        )
    )
    value = data.draw(junk)
    holder = meta
    for key in field_path[:-1]:
        holder = holder[key]
    holder[field_path[-1]] = value
    _rewrite(path, arrays, meta)
    model, opt, rng = _targets()
    before = _state(model, opt, rng)
    try:
        info = load_checkpoint(path, model, opt, rng=rng)
    except FromScratchError:
        assert _state(model, opt, rng) == before
        return
    # accepted: then the value was a valid one, and it was read exactly
    assert isinstance(info.step, int) and not isinstance(info.step, bool) and info.step >= 0
    assert isinstance(info.extra, dict)
    assert info.rng_state is None or 0 <= info.rng_state < 2**64


@FEW
@given(
    entry=st.sampled_from(
        [
            "model/decoder.embedding.weight",
            "optimizer/0/exp_avg",
            "optimizer/0/exp_avg_sq",
            "optimizer/0/step",
            "optimizer/3/exp_avg_sq",
        ]
    ),
    value=st.floats(allow_nan=True, allow_infinity=True),
)
def test_any_tensor_value_is_refused_or_loaded_exactly(
    saved: Path, entry: str, value: float
) -> None:
    arrays, meta = _parts(saved)
    array = arrays[entry].astype(np.float64)
    array.reshape(-1)[0] = value
    arrays[entry] = array
    path = saved.with_name("y.npz")
    _rewrite(path, arrays, meta)
    model, opt, rng = _targets()
    before = _state(model, opt, rng)
    valid = math.isfinite(value)
    if entry.endswith("exp_avg_sq"):
        valid = valid and value >= 0
    if entry.endswith("step"):
        valid = valid and value >= 0 and value == int(value)
    if not valid:
        with pytest.raises(FromScratchError):
            load_checkpoint(path, model, opt, rng=rng)
        assert _state(model, opt, rng) == before
        return
    load_checkpoint(path, model, opt, rng=rng)
    if entry.startswith("model/"):
        assert model.state_dict()[entry[len("model/") :]].reshape(-1)[0] == value
    else:
        index, name = entry.split("/")[1:]
        assert (
            float(np.asarray(opt.state_dict()["state"][int(index)][name]).reshape(-1)[0]) == value
        )
