"""The error hierarchy: ten classes, each a ValueError or RuntimeError under FromScratchError."""

from __future__ import annotations

import inspect

import pytest

from llm_from_scratch import errors
from llm_from_scratch.errors import (
    ArgumentError,
    FromScratchError,
    GraphReleasedError,
    NoGradientError,
    ParameterError,
    RankError,
    ShapeError,
    TapeError,
    TokenError,
    WidthError,
)

PARENT = {
    ShapeError: (FromScratchError, ValueError),
    WidthError: (ShapeError,),
    RankError: (ShapeError,),
    ArgumentError: (FromScratchError, ValueError),
    ParameterError: (ArgumentError,),
    TokenError: (ArgumentError,),
    TapeError: (FromScratchError, RuntimeError),
    GraphReleasedError: (TapeError,),
    NoGradientError: (TapeError,),
}


def test_errors_module_defines_exactly_the_ten_classes() -> None:
    defined = {
        cls
        for _, cls in inspect.getmembers(errors, inspect.isclass)
        if cls.__module__ == errors.__name__
    }
    assert defined == {FromScratchError, *PARENT}


@pytest.mark.parametrize("cls", list(PARENT), ids=lambda cls: cls.__name__)
def test_each_class_has_its_parents_and_is_a_value_or_runtime_error(cls: type) -> None:
    assert cls.__bases__ == PARENT[cls]
    assert issubclass(cls, FromScratchError)
    assert issubclass(cls, ValueError) != issubclass(cls, RuntimeError)


@pytest.mark.parametrize("cls", [FromScratchError, *PARENT], ids=lambda cls: cls.__name__)
def test_each_class_has_a_one_line_docstring_and_takes_a_message(cls: type) -> None:
    assert cls.__doc__ and "\n" not in cls.__doc__.strip()
    assert str(cls("the rule; got x.")) == "the rule; got x."
