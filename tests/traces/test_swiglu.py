"""TRACE swiglu-feed-forward-v1 (S12): the gated evidence, its eleven lines, the text read back.

The literals are the seed's numbers (seed-facts.md, six decimals, compared within 5e-7), never
values produced by the code under test.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from llm_from_scratch.autodiff import Tensor
from llm_from_scratch.errors import ArgumentError, ShapeError
from llm_from_scratch.nn import SwiGLU
from llm_from_scratch.random import SplitMix64
from llm_from_scratch.traces import (
    TRACE_TOLERANCE,
    GatedEvidence,
    central_differences,
    gated_evidence,
    parse_trace,
    read_swiglu_trace,
    swiglu_trace,
    trace_gaps,
)
from tests.swiglu_seed import (
    A_SEED,
    DA_SEED,
    DH_SEED,
    DU_SEED,
    DW_DOWN_SEED,
    DW_GATE_SEED,
    DW_UP_SEED,
    DX_SEED,
    H_SEED,
    S_SEED,
    U_SEED,
    W_DOWN,
    W_GATE,
    W_UP,
    Y_SEED,
    G,
    X,
)


def known() -> SwiGLU:
    return SwiGLU.from_parameters(W_GATE, W_UP, W_DOWN)


def close(actual, expected, tol: float = TRACE_TOLERANCE) -> None:
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected, float), rtol=0, atol=tol)


@pytest.fixture
def evidence() -> GatedEvidence:
    return gated_evidence(known(), X, G)


@pytest.fixture
def traced(evidence) -> GatedEvidence:
    return read_swiglu_trace(str(swiglu_trace(evidence)))


# --- the evidence --------------------------------------------------------------------------------


def test_evidence_leaves_the_callers_layer_untouched():
    layer = known()
    gated_evidence(layer, X, G)
    assert all(p.grad is None for p in layer.parameters())


def test_evidence_records_the_probe_exactly(evidence):
    """S7: rewriting position 0 leaves position 1's output bit for bit."""
    assert evidence.changed_position == 0 and evidence.observed_position == 1
    assert list(evidence.unchanged) == [False, True] and evidence.independent
    assert np.array_equal(evidence.Y_after[1], evidence.Y[1])


def test_evidence_rejects_inputs_it_cannot_trace():
    with pytest.raises(ShapeError, match=r"x must be \[T, d_in\] with T >= 2"):
        gated_evidence(known(), [[1.0, 0.0]], [[1.0, 0.0]])
    with pytest.raises(ShapeError, match=r"upstream gradient must have the output's shape"):
        gated_evidence(known(), X, [[1.0, 0.0]])
    with pytest.raises(ArgumentError, match="changed_position must index"):
        gated_evidence(known(), X, G, changed_position=2)
    with pytest.raises(ShapeError, match=r"replacement input must have shape \(2,\)"):
        gated_evidence(known(), X, G, replacement=[0.0])


def test_central_differences_match_the_seed_gradients():
    """S10: central differences (step 1e-6) of X and every weight, within 3e-6."""
    numeric = central_differences(known(), X, G, step=1e-6)
    assert list(numeric) == ["X", "ffn.gate.weight", "ffn.up.weight", "ffn.down.weight"]
    close(numeric["X"], DX_SEED, 3e-6)
    close(numeric["ffn.gate.weight"], DW_GATE_SEED, 3e-6)
    close(numeric["ffn.up.weight"], DW_UP_SEED, 3e-6)
    close(numeric["ffn.down.weight"], DW_DOWN_SEED, 3e-6)


# --- the text ------------------------------------------------------------------------------------


def test_trace_has_eleven_lines_in_order(evidence):
    """S12: BEGIN, FIXTURE, POSITION-FORWARD ×2, POSITION-BACKWARD ×2, PARAMETER-GRADIENT ×3,
    INDEPENDENCE, END."""
    text = str(swiglu_trace(evidence))
    lines = text.splitlines()
    assert len(lines) == 11
    assert lines[0] == "TRACE swiglu-feed-forward-v1 BEGIN"
    assert lines[-1] == "TRACE swiglu-feed-forward-v1 END"
    name, records = parse_trace(text)
    assert name == "swiglu-feed-forward-v1"
    assert [r.kind for r in records] == [
        "FIXTURE",
        "POSITION-FORWARD",
        "POSITION-FORWARD",
        "POSITION-BACKWARD",
        "POSITION-BACKWARD",
        "PARAMETER-GRADIENT",
        "PARAMETER-GRADIENT",
        "PARAMETER-GRADIENT",
        "INDEPENDENCE",
    ]
    assert lines[1] == (
        "FIXTURE name=known-position-wise-swiglu model-width=2 hidden-width=3 output-width=2 "
        "bias=false parameter-count=18 input-shape=[2,2] branch-shape=[2,3] "
        "output-shape=[2,2] upstream-shape=[2,2]"
    )
    assert lines[-2] == (
        "INDEPENDENCE changed-position=0 replacement-input=[0.000000,0.000000] "
        "observed-position=1 before=[-0.268941,1.731059] after=[-0.268941,1.731059] "
        "unchanged=true outputs-after=[0.000000,0.000000,-0.268941,1.731059] "
        "unchanged-positions=[1]"
    )


def test_trace_values_are_the_seed_values(evidence):
    """S12 with S2-S4: every forward, backward and weight-gradient field of the text."""
    _, records = parse_trace(str(swiglu_trace(evidence)))
    forward = records[1:3]
    backward = records[3:5]
    for p in (0, 1):
        close(forward[p].numbers("input"), X[p])
        close(forward[p].numbers("gate-pre"), A_SEED[p])
        close(forward[p].numbers("gate-silu"), S_SEED[p])
        close(forward[p].numbers("up"), U_SEED[p])
        close(forward[p].numbers("gated"), H_SEED[p])
        close(forward[p].numbers("output"), Y_SEED[p])
        close(backward[p].numbers("upstream"), G[p])
        close(backward[p].numbers("gated-gradient"), DH_SEED[p])
        close(backward[p].numbers("gate-gradient"), DA_SEED[p])
        close(backward[p].numbers("up-gradient"), DU_SEED[p])
        close(backward[p].numbers("input-gradient"), DX_SEED[p])
    expected = {
        "ffn.gate.weight": ("[2,3]", DW_GATE_SEED),
        "ffn.up.weight": ("[2,3]", DW_UP_SEED),
        "ffn.down.weight": ("[3,2]", DW_DOWN_SEED),
    }
    for record in records[5:8]:
        shape, values = expected[record.fields["name"]]
        assert record.fields["shape"] == shape
        close(record.numbers("values"), np.ravel(values))
    independence = records[8]
    assert independence.fields["changed-position"] == "0"
    assert independence.fields["observed-position"] == "1"
    assert independence.fields["unchanged"] == "true"
    close(independence.numbers("replacement-input"), [0, 0], 0)
    close(independence.numbers("before"), [-0.268941, 1.731059])
    close(independence.numbers("after"), [-0.268941, 1.731059])


# --- the text read back --------------------------------------------------------------------------


def test_every_traced_field_matches_the_record_to_six_decimals(evidence, traced):
    """S12: the evidence read from the text is the record within 5e-7, field by field."""
    gaps = trace_gaps(evidence, traced)
    assert max(gaps.values()) <= TRACE_TOLERANCE, gaps
    assert traced.parameter_names == ("ffn.gate.weight", "ffn.up.weight", "ffn.down.weight")
    assert traced.parameter_count == evidence.parameter_count == 18
    assert list(traced.unchanged) == [False, True] and traced.independent


def test_evidence_read_from_the_trace_holds_the_seed_values(traced):
    """S2-S4, S7 as the figures receive them: from the text, not from the record."""
    close(traced.H, H_SEED)
    close(traced.Y, Y_SEED)
    close(traced.dA, DA_SEED)
    close(traced.dX, DX_SEED)
    close(traced.dW_gate, DW_GATE_SEED)
    close(traced.dW_down, DW_DOWN_SEED)
    close(traced.Y_after, [[0.0, 0.0], Y_SEED[1]])
    close(traced.replacement, [0.0, 0.0], 0)


def test_trace_round_trip_equals_the_layers_own_outputs():
    """Arrays → trace text → evidence equals the layer's forward, backward and probe to 5e-7."""
    rng = SplitMix64(7)
    layer = SwiGLU(3, 4, 5, rng=rng)
    x, g = rng.normal((3, 3)), rng.normal((3, 5))
    traced = read_swiglu_trace(str(swiglu_trace(gated_evidence(layer, x, g, changed_position=2))))
    stages = layer.forward_with_intermediates(Tensor(x))
    leaf = Tensor(x, requires_grad=True)
    layer(leaf).backward(g)
    for name in ("A", "S", "U", "H", "Y"):
        close(getattr(traced, name), getattr(stages, name).value)
    close(traced.dX, leaf.grad)
    assert list(traced.weight_gradients) == [name for name, _ in layer.named_parameters()]
    for name, parameter in layer.named_parameters():
        close(traced.weight_gradients[name], parameter.grad)
    changed = x.copy()
    changed[2] = 0.0
    close(traced.Y_after, layer(changed).value)
    assert list(traced.unchanged) == [True, True, False]


@given(
    positions=st.integers(2, 4),
    widths=st.tuples(st.integers(1, 3), st.integers(1, 4), st.integers(1, 3)),
    seed=st.integers(0, 2**32),
)
def test_every_field_survives_the_text_to_the_trace_precision(positions, widths, seed):
    """Exact evidence and the evidence read from its trace differ by at most 5e-7 anywhere."""
    rng = SplitMix64(seed)
    layer = SwiGLU(*widths, rng=rng)
    x, g = rng.normal((positions, widths[0])), rng.normal((positions, widths[2]))
    exact = gated_evidence(layer, x, g, changed_position=positions - 1)
    gaps = trace_gaps(exact, read_swiglu_trace(str(swiglu_trace(exact))))
    assert max(gaps.values()) <= TRACE_TOLERANCE, {
        k: v for k, v in gaps.items() if v > TRACE_TOLERANCE
    }


def test_other_traces_and_incomplete_traces_are_refused(evidence):
    with pytest.raises(ArgumentError, match="swiglu-feed-forward-v1"):
        read_swiglu_trace("TRACE linear-layers-v1 BEGIN\nTRACE linear-layers-v1 END\n")
    lines = str(swiglu_trace(evidence)).splitlines()
    without_probe = "".join(line + "\n" for line in lines if "INDEPENDENCE" not in line)
    with pytest.raises(ArgumentError, match="needs INDEPENDENCE lines"):
        read_swiglu_trace(without_probe)
    one_gradient_short = "".join(line + "\n" for line in lines if "ffn.up.weight" not in line)
    with pytest.raises(ArgumentError, match="three PARAMETER-GRADIENT lines"):
        read_swiglu_trace(one_gradient_short)
