"""The SwiGLU diagram read back from its text trace: the seed's numbers (S2-S4), six decimals."""

from __future__ import annotations

import matplotlib
import numpy as np
import pytest
from matplotlib.figure import Figure

from llm_from_scratch.errors import ArgumentError
from llm_from_scratch.figures.swiglu import (
    branch_rows,
    branch_table_figure,
    gradient_figure,
    gradient_panels,
)
from llm_from_scratch.figures.swiglu_trace_view import evidence_from_trace
from llm_from_scratch.nn import SwiGLU
from llm_from_scratch.nn.swiglu_trace import gated_evidence, swiglu_trace

matplotlib.use("Agg")

TRACE_TOL = 5e-7  # the trace prints six decimals


@pytest.fixture
def evidence():
    layer = SwiGLU.from_parameters(
        [[-1, 0, 1], [0, 1, -1]], [[1, 2, 3], [3, 2, 1]], [[1, 0], [0, 1], [1, -1]]
    )
    return gated_evidence(layer, [[1.0, 0.0], [0.0, 1.0]], [[1.0, 0.0], [0.0, 1.0]])


@pytest.fixture
def from_trace(evidence):
    return evidence_from_trace(str(swiglu_trace(evidence)))


def close(actual, expected):
    np.testing.assert_allclose(
        np.asarray(actual), np.asarray(expected, float), rtol=0, atol=TRACE_TOL
    )


def test_every_traced_field_matches_the_record_to_six_decimals(evidence, from_trace):
    for name in ("X", "A", "S", "U", "H", "Y", "G", "dH", "dA", "dU", "dX", "replacement"):
        close(getattr(from_trace, name), getattr(evidence, name))
    for name in ("dW_gate", "dW_up", "dW_down"):
        assert getattr(from_trace, name).shape == getattr(evidence, name).shape
        close(getattr(from_trace, name), getattr(evidence, name))
    assert from_trace.parameter_names == evidence.parameter_names
    assert from_trace.parameter_count == evidence.parameter_count == 18
    assert from_trace.changed_position == evidence.changed_position


def test_the_figures_numbers_from_the_trace_are_the_seed_facts(from_trace):
    rows = dict(branch_rows(from_trace))
    close(rows["h = SiLU(g) ⊙ u"], [[-0.268941, 0, 2.193176], [0, 1.462117, -0.268941]])
    close(rows["output Y_p = h W_2"], [[1.924234, -2.193176], [-0.268941, 1.731059]])
    panels = gradient_panels(from_trace)
    close(panels.local[0][2], [0.072329, 0, 2.783012])
    close(panels.local[1][4], [2.196612, 3.658729])
    close(from_trace.dW_gate, [[0.072329, 0, 2.783012], [0, 1.855341, -0.072329]])
    close(from_trace.dW_down, [[-0.268941, 0], [0, 1.462117], [2.193176, -0.268941]])


def test_only_the_observed_output_after_the_probe_is_in_the_trace(evidence, from_trace):
    observed = evidence.observed_position
    close(from_trace.Y_after[observed], evidence.Y_after[observed])
    others = np.arange(evidence.positions) != observed
    assert np.all(np.isnan(from_trace.Y_after[others]))


def test_figures_draw_from_the_trace(from_trace):
    assert isinstance(branch_table_figure(from_trace), Figure)
    assert isinstance(gradient_figure(from_trace), Figure)


def test_other_traces_and_incomplete_traces_are_refused(evidence):
    with pytest.raises(ArgumentError, match="swiglu-feed-forward-v1"):
        evidence_from_trace("TRACE linear-layers-v1 BEGIN\nTRACE linear-layers-v1 END\n")
    text = "".join(
        line + "\n"
        for line in str(swiglu_trace(evidence)).splitlines()
        if "INDEPENDENCE" not in line
    )
    with pytest.raises(ArgumentError, match="INDEPENDENCE"):
        evidence_from_trace(text)
