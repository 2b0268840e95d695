"""``precision.glue`` writes exactly what ``myst_nb.glue`` writes, for every kind of value.

The package writes myst-nb's glue output itself (importing myst-nb's glue module costs a kernel
about a second); the book build reads that output with myst-nb, so the two must not drift.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from IPython import display as ipython_display
from IPython.display import HTML, Markdown
from myst_nb.ext import glue as myst_glue_module

from llm_from_scratch import precision

VALUES = [
    1.5,
    0.1 + 0.2,  # rounded first, by both
    np.float64(2.0) / 3,
    7,
    -0.0,
    "text",
    [1.0, 2.5],
    np.arange(4.0),
    Markdown("**bold**"),
    HTML("<b>x</b>"),
    None,
]


def captured(monkeypatch: pytest.MonkeyPatch, owner: Any, glue: Any, *args: Any) -> list[Any]:
    """The (positional, keyword) arguments of every display call ``glue(*args)`` makes."""
    calls: list[Any] = []
    monkeypatch.setattr(
        owner,
        "ipy_display" if owner is myst_glue_module else "display",
        lambda *a, **k: calls.append((a, k)),
    )
    glue(*args)
    return calls


@pytest.mark.parametrize("display", [False, True])
@pytest.mark.parametrize("value", VALUES, ids=[type(v).__name__ for v in VALUES])
def test_glue_displays_what_myst_nb_glue_displays(
    monkeypatch: pytest.MonkeyPatch, value: Any, display: bool
) -> None:
    ours = captured(monkeypatch, ipython_display, precision.glue, "key", value, display)
    theirs = captured(
        monkeypatch,
        myst_glue_module,
        myst_glue_module.glue,
        "key",
        precision.rounded(value),
        display,
    )
    assert ours == theirs, f"glue('key', {value!r}, display={display}) differs from myst-nb's"
    assert len(ours) == 1


def test_the_prefix_is_myst_nbs() -> None:
    assert precision.GLUE_PREFIX == myst_glue_module.GLUE_PREFIX
