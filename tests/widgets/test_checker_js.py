"""The browser's checker (the bundled ES module anywidget loads) agrees with the Python one."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from llm_from_scratch.widgets import check
from llm_from_scratch.widgets._assets import predict_esm
from llm_from_scratch.widgets.checker import answer, parse_number

from .cases import CASES, MISTAKES, NUMBER, SHAPE, SPECS, fuzz_cases

NODE = shutil.which("node")
# Imports the bundle from a file and answers one JSON list of [spec, text, tries] on stdin (text
# null: the "Show the answer" verdict).
RUNNER = """
import { pathToFileURL } from "node:url";
const mod = await import(pathToFileURL(process.env.BUNDLE).href);
let input = "";
for await (const chunk of process.stdin) input += chunk;
const verdicts = JSON.parse(input).map(([spec, text, tries]) =>
  text === null ? mod.answer(spec) : mod.check(spec, text, tries));
process.stdout.write(JSON.stringify(verdicts));
"""
Case = tuple[dict[str, Any], str | None, int]


def run_js(bundle: Path, pairs: list[Case]) -> list[dict[str, str]]:
    """Verdicts of the JavaScript check for each (spec, text, tries), as dicts."""
    if NODE is None:
        pytest.fail("node is missing: install Node.js (the book's install step needs it for npm).")
    result = subprocess.run(
        [NODE, "--input-type=module", "-e", RUNNER],
        input=json.dumps(pairs),
        capture_output=True,
        text=True,
        env={"BUNDLE": str(bundle), "PATH": "/usr/bin:/bin"},
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The exact module string the widgets ship, written where node can import it."""
    path = tmp_path_factory.mktemp("esm") / "predict.mjs"
    path.write_text(predict_esm(), encoding="utf-8")
    return path


def _compare(bundle: Path, pairs: list[tuple[dict[str, Any], str]], tries: int = 0) -> None:
    """Every JavaScript verdict equals the Python verdict, status and message."""
    _compare_cases(bundle, [(spec, text, tries) for spec, text in pairs])


def _compare_cases(bundle: Path, cases: list[Case]) -> None:
    js = run_js(bundle, cases)
    python = [
        dataclasses.asdict(answer(spec) if text is None else check(spec, text, tries))
        for spec, text, tries in cases
    ]
    mismatches = [
        f"{spec['kind']} {text!r} (tries={tries}): python {p} / javascript {j}"
        for (spec, text, tries), p, j in zip(cases, python, js, strict=True)
        if p != j
    ]
    assert not mismatches, "\n".join(mismatches)


@pytest.mark.parametrize("tries", [0, 1])
def test_js_agrees_on_the_case_table(bundle: Path, tries: int) -> None:
    _compare(bundle, [(spec, text) for spec, text, _ in CASES], tries)


def test_js_agrees_on_what_kind_of_wrong_and_on_show_the_answer(bundle: Path) -> None:
    _compare_cases(
        bundle,
        [(spec, text, tries) for spec, text, tries, _ in MISTAKES]
        + [(spec, None, 0) for spec in SPECS],
    )


@pytest.mark.parametrize("tries", [0, 1])
def test_js_agrees_on_random_texts(bundle: Path, tries: int) -> None:
    _compare(bundle, fuzz_cases(3000, seed=tries), tries)


def test_bundle_is_one_module_without_imports(bundle: Path) -> None:
    source = bundle.read_text(encoding="utf-8")
    assert not [line for line in source.splitlines() if line.startswith("import ")]
    assert "export default { render };" in source


# Parses each token with the bundle's parseNumber (the pattern alone, without the input cap).
PARSE_RUNNER = """
import { pathToFileURL } from "node:url";
const mod = await import(pathToFileURL(process.env.BUNDLE).href);
let input = "";
for await (const chunk of process.stdin) input += chunk;
process.stdout.write(JSON.stringify(JSON.parse(input).map((t) => mod.parseNumber(t))));
"""


def test_js_number_pattern_is_linear_on_100k_digit_tokens(bundle: Path) -> None:
    # The old pattern took 9.5 s for 80k digits in the browser; node would hit the timeout.
    tokens = ["1" * 100_000 + "x", "1" * 100_000 + ".5x", "." + "1" * 100_000 + "e"]
    result = subprocess.run(
        [NODE or "node", "--input-type=module", "-e", PARSE_RUNNER],
        input=json.dumps(tokens),
        capture_output=True,
        text=True,
        env={"BUNDLE": str(bundle), "PATH": "/usr/bin:/bin"},
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    js = json.loads(result.stdout)
    python = [dataclasses.asdict(parse_number(token)) for token in tokens]
    assert js == python
    assert all(v["status"] == "invalid" for v in js)


def test_js_agrees_on_huge_and_invisible_inputs(bundle: Path) -> None:
    pairs = [
        (NUMBER, "5" * 100_000),
        (NUMBER, "\U0001f600" * 2000),
        (NUMBER, "\U0001f600" * 2001),
        (SHAPE, "\U0001f600\u200b(4, 7, 3)"),
        *[(NUMBER, f"5{chr(c)}.5") for c in (*range(0, 32), *range(0x7F, 0xA1), 0xAD, 0x34F)],
        *[
            (NUMBER, f"5.5{chr(c)}")
            for c in (0x61C, *range(0x1680, 0x1681), *range(0x180B, 0x1810))
        ],
        *[(NUMBER, f"5.5{chr(c)}") for c in range(0x2000, 0x2070)],
        *[(NUMBER, f"{chr(c)}5.5") for c in (0x202F, 0x205F, 0x3000, 0xFE63, 0xFF0D, 0xFEFF)],
        *[(NUMBER, f"{chr(c)}5,5") for c in range(0x2010, 0x2016)],
        *[(SHAPE, f"{prefix}([4, 7, 3])") for prefix in ("torch.Size", "Size", "torch.", "size")],
    ]
    _compare(bundle, pairs)
