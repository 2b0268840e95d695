"""The op table and registration: every registered op brings its own example, and passes."""

import dataclasses

import numpy as np
import pytest

from llm_from_scratch.autodiff import OPS, Example, Tensor, gradcheck, op
from llm_from_scratch.autodiff.report import (
    TABLE_NOISE_BOUND,
    example_inputs,
    gradcheck_rows,
    gradcheck_table_markdown,
)
from llm_from_scratch.errors import ArgumentError, TapeError


@pytest.mark.parametrize("name", list(OPS))
def test_each_op_matches_central_differences_on_its_registered_example(name):
    example = OPS[name].example
    inputs = example_inputs(name, example)
    result = gradcheck(example.call, inputs, step=1e-6, atol=1e-6, name=name)
    assert result.passed, result.message
    assert result.max_abs_error <= TABLE_NOISE_BOUND  # the bound Chapter 1's table prints


@pytest.mark.parametrize("name", list(OPS))
def test_each_example_records_its_own_op_and_has_a_vjp(name):
    """An example cannot test the wrong op: its result was recorded by that op."""
    example = OPS[name].example
    out = example.call(*[Tensor(x, requires_grad=True) for x in example_inputs(name, example)])
    assert out.op_name == name
    assert callable(OPS[name].backward)


def test_rows_cover_every_op_in_registration_order_and_pass():
    rows = gradcheck_rows()
    assert [r.op for r in rows] == list(OPS)
    assert all(row.passed for row in rows)


def test_example_domains_keep_inputs_where_the_op_is_smooth():
    relu_in = example_inputs("relu", OPS["relu"].example)[0]
    log_in = example_inputs("log", OPS["log"].example)[0]
    assert np.abs(relu_in).min() >= 0.2 and log_in.min() >= 0.5
    add_in = example_inputs("add", OPS["add"].example)
    assert add_in[0].shape != add_in[1].shape  # a broadcast operand


def test_example_inputs_are_deterministic_per_seed_and_differ_between_ops():
    add = OPS["add"].example
    assert np.array_equal(example_inputs("add", add)[0], example_inputs("add", add)[0])
    assert not np.array_equal(example_inputs("add", add, 1)[0], example_inputs("add", add)[0])
    assert not np.array_equal(example_inputs("add", add)[0], example_inputs("mul", add)[0])


@pytest.fixture
def scratch_ops():
    """Ops registered by a test are removed again, whatever the test does."""
    before = dict(OPS)
    yield
    for name in set(OPS) - set(before):
        del OPS[name]
        if name in vars(Tensor):
            delattr(Tensor, name)


def _cube_example():
    return Example(lambda a: OPS["cube_for_test"](a), ((2,),), "cube")


def test_one_registration_adds_the_op_to_the_table_the_tests_and_tensor(scratch_ops):
    @op(example=_cube_example(), method=True, name="cube_for_test")
    def cube(x):
        """x³"""
        return x**3

    @cube.vjp
    def _(grad, _out, x):
        return 3.0 * x**2 * grad

    assert gradcheck_rows()[-1].op == "cube_for_test" and gradcheck_rows()[-1].passed
    t = Tensor([2.0], requires_grad=True)
    t.cube_for_test().backward(np.ones(1))
    assert t.grad.tolist() == [12.0]
    assert Tensor.cube_for_test.__doc__ == "x³"


def test_an_op_without_a_vjp_is_refused_by_name_when_recorded(scratch_ops):
    @op(example=_cube_example(), name="cube_for_test")
    def cube(x):
        return x**3

    assert cube(np.ones(2)).value.tolist() == [1.0, 1.0]  # nothing to record: fine
    with pytest.raises(TapeError, match=r"'cube_for_test' has no VJP.*@cube_for_test\.vjp"):
        cube(Tensor([1.0], requires_grad=True))


def test_an_op_without_an_example_is_refused_at_registration(scratch_ops):
    with pytest.raises(ArgumentError, match=r"'needs_example' needs example=Example"):

        @op(name="needs_example")
        def _(x):
            return x

    assert "needs_example" not in OPS


def test_rerunning_the_cell_that_defines_an_op_replaces_it(scratch_ops):
    for exponent in (2.0, 3.0):  # the same definition twice, as a re-run notebook cell does

        @op(example=_cube_example(), name="cube_for_test")
        def cube(x, exponent=exponent):
            return x**exponent

    assert OPS["cube_for_test"] is cube
    assert cube(np.array([2.0])).value.tolist() == [8.0]


def test_a_different_function_under_a_taken_name_is_refused(scratch_ops):
    def add(x, y):
        return x + y

    with pytest.raises(TapeError, match=r"An op named 'add' is already registered"):
        op(add, example=OPS["add"].example)
    assert OPS["add"].forward.__module__.endswith("elementwise")


def test_a_vjp_returning_too_few_shares_is_refused(scratch_ops):
    @op(example=_cube_example(), name="cube_for_test")
    def pair(x, y):
        return x * y

    @pair.vjp
    def _(grad, _out, x, y):
        return (grad * y,)

    x = Tensor([1.0], requires_grad=True)
    with pytest.raises(TapeError, match=r"returned 1 gradient shares for 2 inputs"):
        pair(x, x).backward(np.ones(1))


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
