"""The training command under attack (issue 28): nothing lost, nothing half-done, one line.

* Whatever the flags, the config file or the output folder, the command either runs or exits
  with 2 and one line on stderr (never a traceback), and a refused command writes nothing: an
  existing run's files keep their bytes, a new folder is not created.
* A folder that holds a run is replaced only with ``--overwrite`` (which names what it removes)
  and continued only with ``--resume`` (whose log, config and checkpoint are checked first).
* Every file the command writes goes through a hidden temporary file and ``os.replace``; one a
  hard kill left behind is removed by the next run, which says so; Ctrl-C during a write exits
  130 and leaves no half-written file.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import llm_from_scratch.training.checkpoint as checkpoint_module
from llm_from_scratch.train import RUN_FILES, main
from llm_from_scratch.training import TrainConfig
from llm_from_scratch.training.atomic import leftover_temporaries, write_json_atomic

TINY = [
    "--steps", "2", "--context", "8", "--model-width", "8", "--num-heads", "2",
    "--hidden-width", "16", "--num-layers", "1", "--vocab-size", "8", "--min-half-length", "2",
    "--max-half-length", "4", "--batch-size", "2", "--eval-every", "1", "--eval-batches", "1",
    "--warmup-steps", "0", "--checkpoint-every", "1", "--no-progress",
]  # fmt: skip
FEW = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def _run(*argv: str) -> tuple[int, str, str]:
    """main(argv) in this process: (status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(list(argv))
    return status, out.getvalue(), err.getvalue()


def _command(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The real command in a subprocess."""
    return subprocess.run(
        [sys.executable, "-m", "llm_from_scratch.train", *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2] / "src")},
    )


def _files(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (hidden ones too) with its bytes."""
    if not folder.exists():
        return {}
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def _one_refusal_line(status: int, err: str) -> None:
    assert status == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err


@pytest.fixture
def run(tmp_path: Path) -> Path:
    """A finished tiny run."""
    status, _, err = _run(*TINY, "--output", str(tmp_path / "run"))
    assert status == 0, err
    return tmp_path / "run"


# --- data is never lost --------------------------------------------------------------------------


def test_grad_clip_zero_on_an_existing_run_changes_no_file(run: Path) -> None:
    before = _files(run)
    for flags in (
        ["--grad-clip", "0"],
        ["--grad-clip", "0", "--overwrite"],
        ["--resume", "--grad-clip", "-1"],
    ):
        status, _, err = _run(*TINY, "--output", str(run), *flags)
        _one_refusal_line(status, err)
        assert "grad_clip" in err
        assert _files(run) == before


def test_an_existing_run_is_replaced_only_with_overwrite(run: Path) -> None:
    before = _files(run)
    status, _, err = _run(*TINY, "--output", str(run), "--seed", "5")
    _one_refusal_line(status, err)
    assert "already holds a run" in err and "--overwrite" in err and "--resume" in err
    assert _files(run) == before
    status, _, err = _run(*TINY, "--output", str(run), "--overwrite", "--resume")
    _one_refusal_line(status, err)
    assert _files(run) == before
    status, _, err = _run(*TINY, "--output", str(run), "--seed", "5", "--overwrite")
    assert status == 0, err
    assert "--overwrite" in err and "config.json" in err and "checkpoint.npz" in err
    assert json.loads((run / "config.json").read_text())["seed"] == 5
    assert json.loads((run / "log.json").read_text())["config"]["seed"] == 5


def test_overwrite_removes_what_the_new_run_would_not_write(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    status, _, err = _run(*TINY, "--output", str(folder), "--steps", "1")
    assert status == 0, err
    (folder / "corpus.json").write_text("{}")  # an earlier book run's corpus
    status, _, err = _run(*TINY, "--output", str(folder), "--overwrite")
    assert status == 0, err
    assert "corpus.json" in err
    assert sorted(p.name for p in folder.iterdir()) == sorted(RUN_FILES[:4])


@pytest.mark.parametrize(
    "where",
    ["file/sub", "file", "x" * 300, "ok/" + "y" * 256 + "/z"],
)
def test_unwritable_outputs_are_one_line_and_create_nothing(tmp_path: Path, where: str) -> None:
    (tmp_path / "file").write_text("a regular file")
    before = _files(tmp_path)
    status, _, err = _run(*TINY, "--output", str(tmp_path / where))
    _one_refusal_line(status, err)
    assert _files(tmp_path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


@pytest.mark.parametrize(
    "flags",
    [
        ["--context", "100000000"],
        ["--batch-size", "100000", "--context", "1000"],
        ["--vocab-size", "100000000"],
        ["--eval-batches", "10000000000"],
        ["--model-width", "100000", "--num-heads", "1"],
        ["--steps", str(2**70)],
    ],
)
def test_sizes_that_cannot_fit_are_one_line_and_create_nothing(
    tmp_path: Path, flags: list[str]
) -> None:
    status, _, err = _run(*TINY, "--output", str(tmp_path / "big"), *flags)
    _one_refusal_line(status, err)
    assert not (tmp_path / "big").exists()


@pytest.mark.parametrize(
    "case",
    [["--output", "file/sub"], ["--output", "n" * 300], ["--context", "100000000"]],
)
def test_the_command_itself_never_shows_a_traceback(tmp_path: Path, case: list[str]) -> None:
    (tmp_path / "file").write_text("x")
    done = _command(*TINY, "--output", "run", *case, cwd=tmp_path)
    _one_refusal_line(done.returncode, done.stderr)
    assert done.stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


@pytest.mark.parametrize(
    "flags",
    [
        ["--stepz", "3"],
        ["--steps", "x"],
        ["--steps"],
        ["--lr", "nan"],
        ["--lr", "inf"],
        ["--lr", "0"],
        ["--beta2", "1"],
        ["--weight-decay", "-0.1"],
        ["--seed", "-1"],
        ["--seed", str(2**64)],
        ["--output", ""],
        ["--positions", "learned"],
        ["--norm", "batch"],
        ["--ffn", "relu"],
        ["--num-heads", "3"],
        ["--max-half-length", "5"],
        ["--min-half-length", "1"],
        ["--task", "music"],
        ["--task", "book", "--book-dir", "/nonexistent-folder"],
        ["--validation-fraction", "1"],
        ["--warmup-steps", "3"],
        ["--st", "3"],  # abbreviations are not guessed
        ["--resume"],
    ],
)
def test_bad_flags_are_one_line_and_create_nothing(tmp_path: Path, flags: list[str]) -> None:
    status, out, err = _run(*TINY, "--output", str(tmp_path / "run"), *flags)
    _one_refusal_line(status, err)
    assert out == ""
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    "text",
    [
        '{"steps": "3"}',
        '{"steps": 3.0}',
        '{"steps": true}',
        '{"stepz": 3}',
        '{"steps": 3, "steps": 4}',
        '{"lr": NaN}',
        '{"lr": Infinity}',
        '{"lr": 1e999}',
        '{"output": null}',
        "[1, 2]",
        '{"steps": 3',
        "",
        '{"task": {"name": "book"}}',
    ],
)
def test_bad_config_files_are_one_line_and_create_nothing(tmp_path: Path, text: str) -> None:
    path = tmp_path / "c.json"
    path.write_text(text)
    status, _, err = _run("--config", str(path), *TINY, "--output", str(tmp_path / "run"))
    _one_refusal_line(status, err)  # a flag setting the same key does not excuse the file
    assert not (tmp_path / "run").exists()


def test_a_config_file_that_is_not_utf8_or_not_a_file(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_bytes(b'{"task": "\xff"}')
    for config in (str(path), str(tmp_path), str(tmp_path / "missing.json")):
        status, _, err = _run("--config", config, *TINY, "--output", str(tmp_path / "run"))
        _one_refusal_line(status, err)
    assert not (tmp_path / "run").exists()


def test_flags_complete_a_config_file_before_it_is_checked(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"context": 8, "steps": 1}))  # half-lengths come from flags
    status, _, err = _run("--config", str(path), *TINY[4:], "--output", str(tmp_path / "r"))
    assert status == 0, err


# --- resume is checked before anything is written ------------------------------------------------


def _edit_log(run: Path, change: Any) -> None:
    log = json.loads((run / "log.json").read_text())
    change(log)
    (run / "log.json").write_text(json.dumps(log))


@pytest.mark.parametrize(
    "damage",
    [
        lambda r: (r / "log.json").write_text("garbage"),
        lambda r: (r / "log.json").write_text("[]"),
        lambda r: (r / "log.json").unlink(),
        lambda r: (r / "checkpoint.npz").unlink(),
        lambda r: (r / "checkpoint.npz").write_bytes(b"PK\x03\x04 torn"),
        lambda r: _edit_log(r, lambda log: log.update(steps=[{"loss": 1.0}])),
        lambda r: _edit_log(r, lambda log: log.update(evals="none")),
        lambda r: _edit_log(r, lambda log: log.pop("task")),
        lambda r: _edit_log(r, lambda log: log["config"].update(lr=0.5)),
        lambda r: _edit_log(r, lambda log: log.update(format="other")),
        lambda r: (r / "config.json").write_text(json.dumps({"steps": 99})),
    ],
)
def test_a_damaged_run_is_refused_on_resume_and_left_as_it_is(run: Path, damage: Any) -> None:
    damage(run)
    before = _files(run)
    status, _, err = _run(*TINY, "--output", str(run), "--resume")
    _one_refusal_line(status, err)
    assert _files(run) == before


def test_a_checkpoint_past_the_last_step_is_refused_on_resume(run: Path) -> None:
    from llm_from_scratch.random import SplitMix64
    from llm_from_scratch.training.checkpoint import load_checkpoint, save_checkpoint
    from llm_from_scratch.training.loop import build_model, build_optimizer

    config = TrainConfig().replace(**json.loads((run / "config.json").read_text()))
    model = build_model(config, 8, SplitMix64(0))
    optimizer = build_optimizer(config, model)
    rng = SplitMix64(0)
    load_checkpoint(run / "checkpoint.npz", model, optimizer, rng=rng)
    save_checkpoint(run / "checkpoint.npz", model, optimizer, step=9, rng=rng)
    before = _files(run)
    status, _, err = _run(*TINY, "--output", str(run), "--resume")
    _one_refusal_line(status, err)
    assert "past steps" in err and _files(run) == before


def test_resume_continues_a_run_cut_short(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    status, _, err = _run(*TINY, "--output", str(folder))
    assert status == 0, err
    status, out, err = _run(*TINY, "--output", str(folder), "--resume")
    assert status == 0 and "finished at step 2" in out, err


# --- atomic writes, hard kills and Ctrl-C --------------------------------------------------------


def test_every_file_the_command_writes_goes_through_a_hidden_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    renames: list[tuple[str, str]] = []
    original = os.replace

    def recording(source: Any, target: Any) -> None:
        renames.append((Path(source).name, Path(target).name))
        original(source, target)

    monkeypatch.setattr(os, "replace", recording)
    folder = tmp_path / "run"
    status, _, err = _run(*TINY, "--output", str(folder))
    assert status == 0, err
    written = {p.name for p in folder.iterdir()}
    assert written == set(RUN_FILES[:4])
    assert written <= {target for _, target in renames}
    for source, target in renames:
        assert source.startswith(f".{target}.") and source.endswith(".tmp")


def test_leftovers_of_a_hard_kill_are_removed_and_reported(run: Path) -> None:
    leftovers = [".log.json.abcd1234.tmp", ".checkpoint.npz.zz_12345.tmp", ".config.json.abcdefgh"]
    for name in leftovers:
        (run / name).write_bytes(b"half a write")
    (run / ".notes.tmp").write_text("someone else's")
    (run / ".log.json.toolongrandom.tmp").write_text("not ours")
    status, _, err = _run(*TINY, "--output", str(run), "--resume")
    assert status == 0, err
    for name in leftovers:
        assert not (run / name).exists() and name in err
    assert (run / ".notes.tmp").exists() and (run / ".log.json.toolongrandom.tmp").exists()


def test_a_refused_run_leaves_leftovers_alone(run: Path) -> None:
    (run / ".log.json.abcd1234.tmp").write_bytes(b"half")
    status, _, err = _run(*TINY, "--output", str(run), "--lr", "-1")
    _one_refusal_line(status, err)
    assert (run / ".log.json.abcd1234.tmp").exists()


def test_ctrl_c_in_the_middle_of_a_checkpoint_write_leaves_no_half_file(
    run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = (run / "checkpoint.npz").read_bytes()

    def interrupted(handle: Any, arrays: Any) -> None:
        handle.write(b"PK\x03\x04 half an archive")
        raise KeyboardInterrupt

    monkeypatch.setattr(checkpoint_module, "_write_archive", interrupted)
    status, _, err = _run(*TINY, "--output", str(run), "--overwrite")
    assert status == 130
    assert len(err.strip().splitlines()) == 2  # what --overwrite removed, then the interruption
    assert "whole" in err.strip().splitlines()[-1]
    assert not leftover_temporaries(run, RUN_FILES)
    assert not (run / "checkpoint.npz").exists() or (run / "checkpoint.npz").read_bytes() != old


def test_unexpected_errors_are_one_line_with_a_non_zero_status(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr("llm_from_scratch.training.loop.train", broken)
    status, _, err = _run(*TINY, "--output", str(tmp_path / "run"))
    assert status == 1 and err.strip().splitlines() == ["error: RuntimeError: boom second line"]
    assert not (tmp_path / "run").exists()

    def full(*args: Any, **kwargs: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("llm_from_scratch.training.loop.train", full)
    status, _, err = _run(*TINY, "--output", str(tmp_path / "run"))
    assert status == 1 and len(err.strip().splitlines()) == 1 and "No space" in err


def test_write_json_atomic_refuses_before_creating_a_file(tmp_path: Path) -> None:
    from llm_from_scratch.errors import ArgumentError

    for data in ({"x": object()}, {1j: 2}):
        with pytest.raises(ArgumentError):
            write_json_atomic(tmp_path / "a.json", data)
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(ArgumentError):
        write_json_atomic(tmp_path / "a.json", loop)
    with pytest.raises(ArgumentError):
        write_json_atomic(3, {})  # type: ignore[arg-type]
    with pytest.raises(ArgumentError):
        write_json_atomic(tmp_path / "a.json", {}, ensure_ascii="yes")  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []


# --- random attacks ------------------------------------------------------------------------------

FLAG_NAMES = [f.name for f in __import__("dataclasses").fields(TrainConfig) if f.name != "output"]
values = st.one_of(
    st.integers(-3, 24).map(str),
    st.sampled_from(["0", "1e-3", "nan", "inf", "-inf", str(10**12), str(2**64), "", "x", "1.5"]),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.text(max_size=6),
)


def _attempt(folder: Path, argv: list[str]) -> None:
    """Runs or refuses in one line; a refusal creates nothing, a failed run leaves whole files."""
    status, _, err = _run(*argv, "--output", str(folder))
    assert "Traceback" not in err
    if status == 0:
        assert set(RUN_FILES[:4]) <= {p.name for p in folder.iterdir()}
        return
    _one_refusal_line(status, err)
    if folder.exists():  # a run that started, then diverged (a huge lr): whole files only
        assert "NaN or inf" in err or "NaN or ±inf" in err, err
        assert not leftover_temporaries(folder, RUN_FILES)
        json.loads((folder / "config.json").read_text())


def _bounded(name: str, value: Any) -> bool:
    """False for a steps count that would make the test long (a valid, slow run)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return True
    return name != "steps" or not number > 12


@FEW
@given(flag=st.sampled_from(FLAG_NAMES), value=values)
def test_any_one_flag_value_runs_or_is_refused_in_one_line(flag: str, value: str) -> None:
    assume(_bounded(flag, value))
    root = Path(tempfile.mkdtemp())
    try:
        _attempt(root / "run", [*TINY, "--" + flag.replace("_", "-"), value])
    finally:
        shutil.rmtree(root)


tiny_settings = {
    "steps": 1, "context": 8, "model_width": 8, "num_heads": 2, "hidden_width": 16,
    "num_layers": 1, "vocab_size": 8, "min_half_length": 2, "max_half_length": 4,
    "batch_size": 2, "eval_batches": 1, "warmup_steps": 0,
}  # fmt: skip
junk = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 12),
    st.sampled_from([10**12, 10**20, 2**63, 2**64, -(2**64)]),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=4),
    st.lists(st.integers(), max_size=2),
)


@FEW
@given(key=st.sampled_from([*FLAG_NAMES, "surprise"]), value=junk)
def test_any_config_file_entry_runs_or_is_refused_in_one_line(key: str, value: Any) -> None:
    assume(_bounded(key, value))
    root = Path(tempfile.mkdtemp())
    try:
        path = root / "c.json"
        path.write_text(json.dumps({**tiny_settings, key: value}))
        _attempt(root / "run", ["--config", str(path), "--no-progress"])
    finally:
        shutil.rmtree(root)


@FEW
@given(extra=st.lists(st.sampled_from(["--resume", "--overwrite", "--grad-clip", "0", "-1"])))
def test_flag_combinations_on_an_existing_run_never_lose_it(extra: list[str]) -> None:
    root = Path(tempfile.mkdtemp())
    try:
        folder = root / "run"
        assert _run(*TINY, "--output", str(folder))[0] == 0
        before = _files(folder)
        status, _, err = _run(*TINY, "--output", str(folder), *extra)
        assert "Traceback" not in err
        if status != 0:
            _one_refusal_line(status, err)
            assert _files(folder) == before
        else:
            assert "--resume" in extra or "--overwrite" in extra
            assert np.isfinite(json.loads((folder / "log.json").read_text())["final"]["baseline"])
    finally:
        shutil.rmtree(root)


# --- the book task -------------------------------------------------------------------------------

PROSE = "The quick brown fox jumps over the lazy dog, and then it naps in the sun. " * 8


def _book(tmp_path: Path, text: str | bytes = PROSE) -> list[str]:
    """Flags for a book run on one tiny chapter in tmp_path/book."""
    folder = tmp_path / "book"
    folder.mkdir(exist_ok=True)
    path = folder / "01-x.md"
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return [*TINY, "--task", "book", "--book-dir", str(folder), "--vocab-size", "64"]


def test_a_book_run_whose_corpus_was_damaged_is_refused_on_resume(tmp_path: Path) -> None:
    flags = _book(tmp_path)
    folder = tmp_path / "run"
    status, _, err = _run(*flags, "--output", str(folder))
    assert status == 0, err
    assert (folder / "corpus.json").is_file()
    for damage in (b"\xff\xfe", b"{}", b"[1]"):
        (folder / "corpus.json").write_bytes(damage)
        before = _files(folder)
        status, _, err = _run(*flags, "--output", str(folder), "--resume")
        _one_refusal_line(status, err)
        assert _files(folder) == before


@pytest.mark.parametrize("text", [b"\xff\xfe not UTF-8", "too short", "---\ntitle: x\n---\n"])
def test_a_book_that_cannot_feed_the_run_is_refused_before_writing(
    tmp_path: Path, text: str | bytes
) -> None:
    status, _, err = _run(*_book(tmp_path, text), "--output", str(tmp_path / "run"))
    _one_refusal_line(status, err)
    assert not (tmp_path / "run").exists()


def test_a_step_larger_than_memory_is_refused_before_writing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = TrainConfig().replace(**json.loads(json.dumps(_tiny_dict())))
    need = config.peak_bytes(8)
    monkeypatch.setattr("llm_from_scratch.train.physical_memory", lambda: need - 1)
    status, _, err = _run(*TINY, "--output", str(tmp_path / "run"))
    _one_refusal_line(status, err)
    assert "GiB" in err and not (tmp_path / "run").exists()
    monkeypatch.setattr("llm_from_scratch.train.physical_memory", lambda: need)
    assert _run(*TINY, "--output", str(tmp_path / "run"))[0] == 0


def _tiny_dict() -> dict[str, Any]:
    """TINY's settings as a dict (the flag names with underscores)."""
    pairs = [a for a in TINY if a != "--no-progress"]
    return {k[2:].replace("-", "_"): int(v) for k, v in zip(pairs[::2], pairs[1::2], strict=True)}


def test_help_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    assert "--overwrite" in capsys.readouterr().out
