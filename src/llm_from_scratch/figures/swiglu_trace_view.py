"""The SwiGLU diagram drawn from its text trace: ``TRACE swiglu-feed-forward-v1`` read back.

``swiglu_trace`` prints a forward line and a backward line per position, the three shared
weight gradients and the independence probe. :func:`evidence_from_trace` parses that text into a
:class:`~llm_from_scratch.nn.swiglu_trace.GatedEvidence`, so the branch table and the gradient
figure of :mod:`llm_from_scratch.figures.swiglu` can be drawn from the trace itself, at the six
decimals the trace keeps. The trace records the probe's output only at the observed position;
the other rows of ``Y_after`` are ``nan`` (the independence figure needs the in-memory record).
"""

from __future__ import annotations

import numpy as np

from ..errors import ArgumentError
from ..nn.swiglu_trace import TRACE_NAME, GatedEvidence
from ..traces import Record, parse_trace

__all__ = ["evidence_from_trace"]

FORWARD = {"X": "input", "A": "gate-pre", "S": "gate-silu", "U": "up", "H": "gated", "Y": "output"}
BACKWARD = {
    "G": "upstream",
    "dH": "gated-gradient",
    "dA": "gate-gradient",
    "dU": "up-gradient",
    "dX": "input-gradient",
}


def _shape(text: str) -> tuple[int, ...]:
    inner = text.strip("[]")
    return tuple(int(n) for n in inner.split(",")) if inner else ()


def _rows(records: list[Record], key: str) -> np.ndarray:
    """One row per position, in the order of the trace's ``position=`` fields."""
    ordered = sorted(records, key=lambda r: int(r.fields["position"]))
    return np.stack([r.numbers(key) for r in ordered])


def evidence_from_trace(text: str) -> GatedEvidence:
    """Rebuild the forward stages, gradients and probe fields from a SwiGLU trace's text."""
    name, records = parse_trace(text)
    if name != TRACE_NAME:
        raise ArgumentError(f"evidence_from_trace reads TRACE {TRACE_NAME}; got TRACE {name}.")
    by_kind: dict[str, list[Record]] = {}
    for record in records:
        by_kind.setdefault(record.kind, []).append(record)
    missing = [
        kind
        for kind in ("FIXTURE", "POSITION-FORWARD", "POSITION-BACKWARD", "PARAMETER-GRADIENT")
        if kind not in by_kind
    ]
    if missing or "INDEPENDENCE" not in by_kind:
        raise ArgumentError(
            f"A SwiGLU trace needs FIXTURE, POSITION-FORWARD, POSITION-BACKWARD, "
            f"PARAMETER-GRADIENT and INDEPENDENCE lines; missing {missing or ['INDEPENDENCE']}."
        )
    fixture = by_kind["FIXTURE"][0].fields
    forward = {k: _rows(by_kind["POSITION-FORWARD"], v) for k, v in FORWARD.items()}
    backward = {k: _rows(by_kind["POSITION-BACKWARD"], v) for k, v in BACKWARD.items()}
    grads = [
        r.numbers("values").reshape(_shape(r.fields["shape"]))
        for r in by_kind["PARAMETER-GRADIENT"]
    ]
    names = tuple(r.fields["name"] for r in by_kind["PARAMETER-GRADIENT"])
    if len(grads) != 3:
        raise ArgumentError(
            f"A SwiGLU trace has three PARAMETER-GRADIENT lines; got {len(grads)}."
        )
    probe = by_kind["INDEPENDENCE"][0]
    observed = int(probe.fields["observed-position"])
    y_after = np.full_like(forward["Y"], np.nan)
    y_after[observed] = probe.numbers("after")
    return GatedEvidence(
        parameter_names=(names[0], names[1], names[2]),
        parameter_count=int(fixture["parameter-count"]),
        **forward,
        **backward,
        dW_gate=grads[0],
        dW_up=grads[1],
        dW_down=grads[2],
        changed_position=int(probe.fields["changed-position"]),
        replacement=probe.numbers("replacement-input"),
        Y_after=y_after,
    )
