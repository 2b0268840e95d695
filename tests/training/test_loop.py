"""The training loop: resume after Ctrl-C equals an uninterrupted run; the command's files."""

from __future__ import annotations

import json
import math
import os
import signal

import numpy as np
import pytest

from llm_from_scratch.errors import ArgumentError
from llm_from_scratch.train import main
from llm_from_scratch.training import AdamW, TrainConfig
from llm_from_scratch.training.loop import train
from llm_from_scratch.training.tasks import InductionTask

TINY = {
    "task": "induction",
    "vocab_size": 8,
    "context": 12,
    "min_half_length": 3,
    "max_half_length": 6,
    "model_width": 16,
    "num_layers": 1,
    "num_heads": 2,
    "hidden_width": 32,
    "steps": 8,
    "batch_size": 4,
    "lr": 0.01,
    "min_lr": 0.001,
    "warmup_steps": 2,
    "eval_every": 4,
    "eval_batches": 2,
    "checkpoint_every": 3,
}


def _config(tmp_path, name: str) -> TrainConfig:
    return TrainConfig(**TINY, output=str(tmp_path / name))


def _interrupt_after(step_index: int):
    def hook(step: int, loss: float) -> None:
        if step == step_index:
            raise KeyboardInterrupt

    return hook


def test_resume_after_interrupt_gives_the_same_losses(tmp_path) -> None:
    whole = train(_config(tmp_path, "whole"), progress=False)
    assert whole.steps_done == 8 and not whole.interrupted and len(whole.losses) == 8
    config = _config(tmp_path, "parts")
    cut = train(config, progress=False, on_step=_interrupt_after(4))
    assert cut.interrupted and cut.steps_done == 5 and len(cut.losses) == 5
    resumed = train(config, resume=True, progress=False)
    assert resumed.steps_done == 8 and not resumed.interrupted
    np.testing.assert_allclose(resumed.losses, whole.losses, rtol=1e-12, atol=0)
    assert [e["step"] for e in resumed.evals] == [0, 4, 8]
    np.testing.assert_allclose(
        [e["repeated_half_loss"] for e in resumed.evals],
        [e["repeated_half_loss"] for e in whole.evals],
        rtol=1e-12,
    )
    log = json.loads((tmp_path / "parts" / "log.json").read_text())
    assert [s["interrupted"] for s in log["segments"]] == [True, False]
    assert [r["step"] for r in log["steps"]] == list(range(8))


def test_sigint_during_the_update_waits_for_the_step_to_finish(tmp_path, monkeypatch) -> None:
    whole = train(_config(tmp_path, "whole"), progress=False)
    original = AdamW.step
    calls = []

    def step_then_ctrl_c(self) -> None:
        calls.append(1)
        if len(calls) == 3:
            os.kill(os.getpid(), signal.SIGINT)  # arrives mid-update: held until the step ends
        original(self)

    monkeypatch.setattr(AdamW, "step", step_then_ctrl_c)
    config = _config(tmp_path, "sigint")
    cut = train(config, progress=False)
    assert cut.interrupted and cut.steps_done == 3
    monkeypatch.setattr(AdamW, "step", original)
    resumed = train(config, resume=True, progress=False)
    np.testing.assert_allclose(resumed.losses, whole.losses, rtol=1e-12, atol=0)


def test_sigint_outside_the_update_abandons_the_step(tmp_path) -> None:
    def ctrl_c(step: int, loss: float) -> None:
        if step == 1:
            os.kill(os.getpid(), signal.SIGINT)

    cut = train(_config(tmp_path, "abandon"), progress=False, on_step=ctrl_c)
    assert cut.interrupted and cut.steps_done == 2


def test_the_first_loss_is_about_ln_v_and_training_lowers_it(tmp_path) -> None:
    config = _config(tmp_path, "learn").replace(steps=40, eval_every=40, lr=0.02)
    result = train(config, progress=False)
    first, last = result.evals[0]["repeated_half_loss"], result.evals[-1]["repeated_half_loss"]
    assert abs(first - math.log(8)) < 1.0
    assert last < first - 0.3


def test_command_writes_config_log_and_checkpoints(tmp_path, capsys) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**TINY, "output": str(tmp_path / "cli")}))
    assert main(["--config", str(path), "--no-progress", "--steps", "4"]) == 0
    out = capsys.readouterr().out
    assert "finished at step 4" in out and "tokens/s" in out
    folder = tmp_path / "cli"
    assert sorted(p.name for p in folder.iterdir()) == [
        "checkpoint.npz",
        "config.json",
        "log.json",
        "model.npz",
    ]
    assert json.loads((folder / "config.json").read_text())["steps"] == 4
    log = json.loads((folder / "log.json").read_text())
    assert len(log["steps"]) == 4 and log["final"]["baseline"] == pytest.approx(math.log(8))
    assert main(["--config", str(path), "--no-progress", "--lr", "-1"]) == 2
    assert "min_lr ≤ lr" in capsys.readouterr().err


def test_config_and_resume_refusals(tmp_path) -> None:
    with pytest.raises(ArgumentError, match="task must be one of"):
        TrainConfig(task="music")
    with pytest.raises(ArgumentError, match="model_width must be int"):
        TrainConfig(model_width=1.5)
    with pytest.raises(ArgumentError, match="unknown config settings"):
        TrainConfig().replace(width=3)
    with pytest.raises(ArgumentError, match="resume=True needs"):
        train(_config(tmp_path, "never"), resume=True, progress=False)
    config = _config(tmp_path, "other")
    train(config, progress=False, stop_at=2)
    with pytest.raises(ArgumentError, match="another config"):
        train(config.replace(lr=0.02), resume=True, progress=False)
    with pytest.raises(ArgumentError, match="stop_at"):
        train(config, progress=False, stop_at=9)


def test_ctrl_c_during_an_evaluation_is_evaluated_again_on_resume(tmp_path, monkeypatch) -> None:
    whole = train(_config(tmp_path, "whole"), progress=False)
    original = InductionTask.evaluate
    calls = []

    def evaluate_then_ctrl_c(self, model):
        calls.append(1)
        if len(calls) == 2:  # the evaluation after step 4
            raise KeyboardInterrupt
        return original(self, model)

    monkeypatch.setattr(InductionTask, "evaluate", evaluate_then_ctrl_c)
    config = _config(tmp_path, "eval-cut")
    cut = train(config, progress=False)
    assert cut.interrupted and cut.steps_done == 4 and [e["step"] for e in cut.evals] == [0]
    monkeypatch.setattr(InductionTask, "evaluate", original)
    resumed = train(config, resume=True, progress=False)
    assert [e["step"] for e in resumed.evals] == [0, 4, 8]
    np.testing.assert_allclose(resumed.losses, whole.losses, rtol=1e-12, atol=0)
    np.testing.assert_allclose(
        [e["repeated_half_loss"] for e in resumed.evals],
        [e["repeated_half_loss"] for e in whole.evals],
        rtol=1e-12,
    )


def test_command_ctrl_c_saves_and_exits_with_130(tmp_path, monkeypatch, capsys) -> None:
    original = AdamW.step
    calls = []

    def step_then_ctrl_c(self) -> None:
        calls.append(1)
        if len(calls) == 2:
            os.kill(os.getpid(), signal.SIGINT)
        original(self)

    monkeypatch.setattr(AdamW, "step", step_then_ctrl_c)
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**TINY, "output": str(tmp_path / "cli")}))
    assert main(["--config", str(path), "--no-progress"]) == 130
    assert "interrupted at step 2" in capsys.readouterr().out
    monkeypatch.setattr(AdamW, "step", original)
    assert main(["--config", str(path), "--no-progress", "--resume"]) == 0
    log = json.loads((tmp_path / "cli" / "log.json").read_text())
    assert [s["last_step"] for s in log["segments"]] == [2, 8]


def test_command_ctrl_c_before_the_loop_exits_cleanly(tmp_path, monkeypatch, capsys) -> None:
    def interrupted(config, split=None):
        raise KeyboardInterrupt

    monkeypatch.setattr("llm_from_scratch.training.loop.make_task", interrupted)
    assert main(["--output", str(tmp_path / "x"), "--no-progress", "--warmup-steps", "0"]) == 130
    assert "nothing new was saved" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()
