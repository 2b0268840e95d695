"""The gradient-check report: one case per registered op, all passing, none missing."""

import dataclasses

import numpy as np
import pytest

from llm_from_scratch.autodiff import OPS, Tensor
from llm_from_scratch.autodiff.report import (
    TABLE_NOISE_BOUND,
    MissingCaseError,
    gradcheck_cases,
    gradcheck_rows,
    gradcheck_table_markdown,
    missing_cases,
)


def test_every_registered_op_has_a_case():
    assert missing_cases() == []
    assert set(gradcheck_cases()) == set(OPS)


def test_each_case_actually_exercises_its_op():
    """The case's function records its op on the tape (a case cannot test the wrong op)."""
    for name, case in gradcheck_cases().items():
        out = case.fn(*[Tensor(x, requires_grad=True) for x in case.inputs])
        assert out.op_name == name, name


def test_rows_cover_every_op_in_registration_order_and_pass():
    rows = gradcheck_rows()
    assert [r.op for r in rows] == list(OPS)
    for row in rows:
        assert row.passed, row
        assert row.max_abs_error <= TABLE_NOISE_BOUND  # the bound Chapter 1's table prints


def test_broadcasting_and_repeated_index_cases_are_present():
    cases = gradcheck_cases()
    assert cases["add"].inputs[0].shape != cases["add"].inputs[1].shape
    assert cases["matmul"].inputs[0].ndim == 3
    assert min(np.abs(cases["relu"].inputs[0]).ravel()) >= 0.2
    assert min(cases["log"].inputs[0].ravel()) > 0


def test_cases_are_deterministic_per_seed():
    a, b, c = gradcheck_cases(0), gradcheck_cases(0), gradcheck_cases(1)
    for name in a:
        for x, y in zip(a[name].inputs, b[name].inputs, strict=True):
            assert np.array_equal(x, y)
    assert not np.array_equal(a["add"].inputs[0], c["add"].inputs[0])


def test_an_op_without_a_case_fails_loudly(monkeypatch):
    monkeypatch.setitem(OPS, "brand_new_op", object())
    assert missing_cases() == ["brand_new_op"]
    with pytest.raises(MissingCaseError, match=r"no case for \['brand_new_op'\]"):
        gradcheck_rows()


def test_markdown_table():
    rows = gradcheck_rows()
    table = gradcheck_table_markdown(rows)
    lines = table.splitlines()
    assert len(lines) == 2 + len(OPS)
    assert lines[0].startswith("| op | input shapes |")
    assert "| `matmul` | [2, 2, 3], [3, 2] | [2, 2, 2] |" in table
    assert all(line.count(" | ") == 5 for line in lines[2:])  # no stray cell separators
    assert all("| below 1e-8 | yes |" in line for line in lines[2:])  # noise shown as its bound


def test_markdown_table_shows_the_value_of_a_row_above_the_bound():
    row = gradcheck_rows()[0]
    loud = dataclasses.replace(row, max_abs_error=3e-4, passed=False)
    assert "| 3.0e-04 | **no** |" in gradcheck_table_markdown([loud])
