"""Checkpoints: exact round trip, atomic writes, and refusals that change nothing."""

from __future__ import annotations

import numpy as np
import pytest

import llm_from_scratch.training.checkpoint as checkpoint_module
from llm_from_scratch.errors import ArgumentError, ParameterError, ShapeError
from llm_from_scratch.nn.decoder import Decoder
from llm_from_scratch.random import SplitMix64
from llm_from_scratch.training import SGD, AdamW, cross_entropy, load_checkpoint, save_checkpoint


def _model(width: int = 8, layers: int = 1, seed: int = 0) -> Decoder:
    return Decoder(11, width, layers, 2, 2 * width, rng=SplitMix64(seed))


def _trained(model: Decoder) -> AdamW:
    """An optimizer with state: one AdamW step on a fixed batch."""
    opt = AdamW(model.parameters(), lr=0.01)
    ids = np.arange(12).reshape(2, 6) % 11
    cross_entropy(model(ids), np.roll(ids, -1, axis=1)).backward()
    opt.step()
    return opt


def _snapshot(model: Decoder, opt: AdamW) -> tuple[dict, dict]:
    return model.state_dict(), opt.state_dict()


def _assert_same(a: tuple[dict, dict], b: tuple[dict, dict]) -> None:
    assert list(a[0]) == list(b[0])
    for name in a[0]:
        np.testing.assert_array_equal(a[0][name], b[0][name])
    assert a[1]["param_groups"] == b[1]["param_groups"]
    assert a[1]["state"].keys() == b[1]["state"].keys()
    for i, entry in a[1]["state"].items():
        for key, value in entry.items():
            np.testing.assert_array_equal(value, b[1]["state"][i][key])


def test_round_trip_restores_model_optimizer_step_and_generator(tmp_path) -> None:
    model = _model()
    opt = _trained(model)
    rng = SplitMix64(42)
    rng.next_u64()
    saved = _snapshot(model, opt)
    path = save_checkpoint(
        tmp_path / "run" / "c.npz", model, opt, step=7, rng=rng, extra={"note": "x"}
    )
    other, other_rng = _model(seed=9), SplitMix64(0)
    other_opt = AdamW(other.parameters(), lr=0.5)
    info = load_checkpoint(path, other, other_opt, rng=other_rng)
    assert (info.step, info.rng_state, info.extra) == (7, rng.state, {"note": "x"})
    assert other_rng.state == rng.state
    _assert_same(_snapshot(other, other_opt), saved)
    with np.load(path, allow_pickle=False) as archive:  # no pickle anywhere in the file
        assert all(archive[name].dtype != object for name in archive.files)


def test_a_crash_mid_write_leaves_the_old_checkpoint(tmp_path, monkeypatch) -> None:
    model = _model()
    opt = _trained(model)
    path = save_checkpoint(tmp_path / "c.npz", model, opt, step=1)
    old = path.read_bytes()

    def crash(handle, arrays) -> None:
        handle.write(b"PK\x03\x04 half an archive")
        raise OSError("disk full (simulated)")

    monkeypatch.setattr(checkpoint_module, "_write_archive", crash)
    model.embedding.weight.value = model.embedding.weight.value + 1.0
    with pytest.raises(OSError, match="simulated"):
        save_checkpoint(path, model, opt, step=2)
    assert path.read_bytes() == old
    assert [p.name for p in tmp_path.iterdir()] == ["c.npz"]  # no temporary file left behind
    with pytest.raises(OSError, match="simulated"):
        save_checkpoint(tmp_path / "new.npz", model, opt, step=2)
    assert not (tmp_path / "new.npz").exists()


def test_wrong_shape_refused_naming_the_first_tensor_and_nothing_changes(tmp_path) -> None:
    source = _model(width=8)
    path = save_checkpoint(tmp_path / "c.npz", source, _trained(source), step=3)
    target = _model(width=12, seed=1)
    opt = _trained(target)
    rng = SplitMix64(5)
    before = _snapshot(target, opt)
    with pytest.raises(ShapeError, match=r"'decoder\.embedding\.weight', shape \(11, 12\)"):
        load_checkpoint(path, target, opt, rng=rng)
    _assert_same(_snapshot(target, opt), before)
    assert rng.state == SplitMix64(5).state


def test_wrong_model_refused_and_nothing_changes(tmp_path) -> None:
    source = _model(layers=1)
    path = save_checkpoint(tmp_path / "c.npz", source, _trained(source), step=3)
    deeper = _model(layers=2, seed=1)
    opt = _trained(deeper)
    before = _snapshot(deeper, opt)
    with pytest.raises(ParameterError, match=r"first mismatch at 'decoder\.blocks\.1\."):
        load_checkpoint(path, deeper, opt)
    _assert_same(_snapshot(deeper, opt), before)
    shallow_source = _model(layers=2)
    path2 = save_checkpoint(tmp_path / "d.npz", shallow_source, step=0)
    with pytest.raises(ParameterError, match="a tensor the model does not have"):
        load_checkpoint(path2, _model(layers=1))


def test_optimizer_mismatch_refused_and_model_unchanged(tmp_path) -> None:
    model = _model()
    path = save_checkpoint(tmp_path / "c.npz", model, _trained(model), step=3)
    target = _model(seed=4)
    sgd = SGD(target.parameters(), lr=0.1)
    weights = target.state_dict()
    with pytest.raises(ParameterError, match="holds AdamW state"):
        load_checkpoint(path, target, sgd)
    for name, value in target.state_dict().items():
        np.testing.assert_array_equal(value, weights[name])
    bare = save_checkpoint(tmp_path / "bare.npz", model, step=0)
    with pytest.raises(ArgumentError, match="no optimizer state"):
        load_checkpoint(bare, target, AdamW(target.parameters()))
    with pytest.raises(ArgumentError, match="no generator state"):
        load_checkpoint(bare, target, rng=SplitMix64(0))


def test_unreadable_files_and_bad_arguments(tmp_path) -> None:
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"not a zip")
    with pytest.raises(ArgumentError, match="not a readable checkpoint"):
        load_checkpoint(junk, _model())
    plain = tmp_path / "plain.npz"
    np.savez(plain, meta=np.array('{"format": "other"}'))
    with pytest.raises(ArgumentError, match=r"is not a llm_from_scratch\.checkpoint/1"):
        load_checkpoint(plain, _model())
    with pytest.raises(ArgumentError, match="no checkpoint"):
        load_checkpoint(tmp_path / "missing.npz", _model())
    with pytest.raises(ArgumentError, match=r"\.npz"):
        save_checkpoint(tmp_path / "c.pt", _model(), step=0)
    with pytest.raises(ArgumentError, match="JSON"):
        save_checkpoint(tmp_path / "c.npz", _model(), step=0, extra={"x": object()})
    assert not (tmp_path / "c.npz").exists()
