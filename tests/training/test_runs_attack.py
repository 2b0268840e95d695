"""Stored runs under attack (issue 28): a damaged run folder is refused with a package error."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from llm_from_scratch.errors import ArgumentError, FromScratchError
from llm_from_scratch.train import main
from llm_from_scratch.training import load_run

TINY = [
    "--steps", "1", "--context", "8", "--model-width", "8", "--num-heads", "2",
    "--hidden-width", "16", "--num-layers", "1", "--vocab-size", "8", "--min-half-length", "2",
    "--max-half-length", "4", "--batch-size", "2", "--eval-batches", "1", "--warmup-steps", "0",
    "--no-progress",
]  # fmt: skip


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("runs") / "run"
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert main([*TINY, "--output", str(folder)]) == 0
    return folder


def _log(change: Any) -> Any:
    def apply(folder: Path) -> None:
        log = json.loads((folder / "log.json").read_text())
        change(log)
        (folder / "log.json").write_text(json.dumps(log))

    return apply


@pytest.mark.parametrize(
    "damage",
    [
        lambda f: (f / "log.json").write_text("not json"),
        lambda f: (f / "log.json").write_bytes(b"\xff\xfe"),
        lambda f: (f / "log.json").write_text("[1]"),
        _log(lambda log: log.pop("task")),
        _log(lambda log: log["task"].pop("vocab_size")),
        _log(lambda log: log["task"].update(vocab_size="8")),
        _log(lambda log: log["task"].update(vocab_size=0)),
        _log(lambda log: log["task"].update(vocab_size=9)),
        _log(lambda log: log["task"].update(characters=3)),
        _log(lambda log: log["task"].update(characters="abc")),
        lambda f: (f / "config.json").write_text('{"steps": "1"}'),
        lambda f: (f / "model.npz").write_bytes(b"torn"),
        lambda f: (f / "model.npz").unlink(),
    ],
)
def test_a_damaged_run_folder_is_refused(finished: Path, tmp_path: Path, damage: Any) -> None:
    folder = tmp_path / "copy"
    shutil.copytree(finished, folder)
    assert load_run(folder).step == 1
    damage(folder)
    with pytest.raises(FromScratchError):
        load_run(folder)


@pytest.mark.parametrize("folder", [3, None, "a\0b", ["x"]])
def test_load_run_refuses_what_is_not_a_path(folder: Any) -> None:
    with pytest.raises(ArgumentError):
        load_run(folder)
