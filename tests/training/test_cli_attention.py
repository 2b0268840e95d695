"""--kv-heads, --window and --qk-norm: saved in the config, the log and the checkpoints, refused
when they do not fit, and the run's model built with them."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from llm_from_scratch.errors import ArgumentError
from llm_from_scratch.random import SplitMix64
from llm_from_scratch.train import main
from llm_from_scratch.training import TrainConfig
from llm_from_scratch.training.checkpoint import load_checkpoint
from llm_from_scratch.training.loop import build_model
from llm_from_scratch.training.runs import load_run

TINY = [
    "--steps", "2", "--context", "8", "--model-width", "8", "--num-heads", "4",
    "--hidden-width", "16", "--num-layers", "1", "--vocab-size", "8", "--min-half-length", "2",
    "--max-half-length", "4", "--batch-size", "2", "--eval-every", "1", "--eval-batches", "1",
    "--warmup-steps", "0", "--checkpoint-every", "1", "--no-progress",
]  # fmt: skip


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(list(argv))
    return status, out.getvalue(), err.getvalue()


def test_flags_reach_the_model_config_log_and_checkpoints(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    flags = ["--kv-heads", "2", "--window", "3", "--qk-norm"]
    status, _, err = _run(*TINY, *flags, "--output", str(folder))
    assert status == 0, err
    config = json.loads((folder / "config.json").read_text())
    assert (config["kv_heads"], config["window"], config["qk_norm"]) == (2, 3, True)
    assert json.loads((folder / "log.json").read_text())["config"] == config
    run = load_run(folder)
    attention = run.model.blocks[0].attention
    assert (attention.num_kv_heads, attention.window, attention.qk_norm) == (2, 3, True)
    assert attention.key.weight.shape == (8, 2 * 2)  # [D, G·d_h], d_h = 8 / 4
    for name in ("model.npz", "checkpoint.npz"):
        model = build_model(TrainConfig(**config), 8, SplitMix64(0))
        info = load_checkpoint(folder / name, model)
        assert info.extra == {"attention": {"kv_heads": 2, "window": 3, "qk_norm": True}}
    status, out, err = _run(*TINY, *flags, "--output", str(folder), "--resume")
    assert status == 0 and "finished at step 2" in out, err


def test_default_runs_record_nothing_new(tmp_path: Path) -> None:
    """Runs without the flags write the config keys and checkpoints they always wrote."""
    folder = tmp_path / "run"
    assert _run(*TINY, "--output", str(folder))[0] == 0
    config = json.loads((folder / "config.json").read_text())
    assert not {"kv_heads", "window", "qk_norm"} & set(config)
    info = load_checkpoint(
        folder / "model.npz", build_model(TrainConfig(**config), 8, SplitMix64(0))
    )
    assert info.extra == {}
    stored = TrainConfig.from_json(Path("book/runs/induction/config.json"))
    assert stored.kv_heads == 0 and stored.window == 0 and stored.qk_norm is False


@pytest.mark.parametrize(
    ("flags", "match"),
    [
        (["--kv-heads", "3"], "kv_heads G must divide num_heads H = 4"),
        (["--kv-heads", "-1"], "kv_heads must be ≥ 0"),
        (["--window", "-2"], "window must be ≥ 0"),
        (["--window", "9"], "window must be at most context = 8"),
        (["--window", "1.5"], "invalid int value"),
        (["--qk-norm", "yes"], "unrecognized arguments"),
    ],
)
def test_refusals_are_one_line_and_create_nothing(
    tmp_path: Path, flags: list[str], match: str
) -> None:
    folder = tmp_path / "run"
    status, _, err = _run(*TINY, *flags, "--output", str(folder))
    assert status == 2 and match in err and len(err.strip().splitlines()) == 1, err
    assert not folder.exists()


def test_config_values_are_typed() -> None:
    with pytest.raises(ArgumentError, match="qk_norm must be true or false"):
        TrainConfig(qk_norm=1)
    with pytest.raises(ArgumentError, match="kv_heads must be int"):
        TrainConfig(kv_heads=2.0)
    assert TrainConfig(num_heads=4, kv_heads=4).attention_options()["num_kv_heads"] == 4


def test_resume_with_other_attention_settings_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    assert _run(*TINY, "--window", "3", "--output", str(folder))[0] == 0
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    status, _, err = _run(*TINY, "--window", "2", "--output", str(folder), "--resume")
    assert status == 2 and "another config" in err and "window 3 → 2" in err, err
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    # a checkpoint saved by another window is refused on load even without the log's help
    config = TrainConfig(**json.loads((folder / "config.json").read_text())).replace(window=2)
    model = build_model(config, 8, SplitMix64(0))
    info = load_checkpoint(folder / "model.npz", model)
    with pytest.raises(ArgumentError, match="attention settings"):
        config.check_attention_record(info.extra, "model.npz")
