"""``python -m benchmarks`` refuses what it does not know before it times or stores anything."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import generation, hub, train_step
from benchmarks.__main__ import main

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
MAINS = {"": main, "train-step": train_step.main, "generation": generation.main, "hub": hub.main}


def stored() -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in RESULTS.glob("*.json")}


@pytest.mark.parametrize(
    ("case", "args", "message"),
    [
        ("", ["--bogus"], "unrecognized arguments: --bogus"),
        ("", ["nonsense"], "invalid choice: 'nonsense'"),
        ("train-step", ["--case", "tiny"], "invalid choice: 'tiny'"),
        ("train-step", ["--profile"], "expected one argument"),
        ("generation", ["--repeats", "3"], "unrecognized arguments: --repeats 3"),
        ("hub", ["--steps"], "unrecognized arguments: --steps"),
    ],
)
def test_an_unknown_flag_stops_the_run_and_stores_nothing(case, args, message, capsys):
    before = stored()
    with pytest.raises(SystemExit) as stop:
        MAINS[case](args)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert message in err
    assert f"usage: python -m benchmarks{' ' + case if case else ''} " in err
    assert stored() == before


@pytest.mark.parametrize("case", list(MAINS))
def test_help_prints_the_flags_and_times_nothing(case, capsys):
    before = stored()
    with pytest.raises(SystemExit) as stop:
        MAINS[case](["--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    assert "--quick" in out
    assert f"usage: python -m benchmarks{' ' + case if case else ''} " in out
    assert stored() == before


def test_a_case_gets_the_flags_that_follow_it_on_the_real_command_line():
    before = stored()
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks", "train-step", "--bogus"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert "python -m benchmarks train-step: error: unrecognized arguments: --bogus" in (
        result.stderr
    )
    assert stored() == before
