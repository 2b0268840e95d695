"""Text traces: a layer's forward and backward pass written line by line, then read back.

Every trace follows one pattern, and its figures are drawn from the end of it::

    evidence = linear_evidence(X, W, b, G)           # run the layer: exact values
    trace = linear_layers_trace(evidence)            # write them: TRACE linear-layers-v1
    traced = read_linear_trace(str(trace))           # read them back: the same type, 6 decimals
    projection_figure(traced)                        # figures take only the evidence type

- :mod:`.format`: the text format (:class:`Trace`, :func:`parse_trace`, :class:`Record`,
  :func:`fixed` ...) and :func:`trace_gaps`, which compares an exact and a traced record;
- :mod:`.linear`: ``TRACE linear-layers-v1`` and :class:`LinearEvidence`;
- :mod:`.swiglu`: ``TRACE swiglu-feed-forward-v1`` and :class:`GatedEvidence`.

This package sits above :mod:`llm_from_scratch.nn` (it runs the layers) and below
:mod:`llm_from_scratch.figures` (which draws the evidence).
"""

from .format import (
    DECIMALS,
    TRACE_TOLERANCE,
    Record,
    Trace,
    fixed,
    fixed_list,
    format_value,
    parse_trace,
    read_records,
    shape_text,
    trace_gaps,
)
from .linear import LinearEvidence, linear_evidence, linear_layers_trace, read_linear_trace
from .swiglu import (
    GatedEvidence,
    central_differences,
    gated_evidence,
    read_swiglu_trace,
    swiglu_trace,
)

__all__ = [
    "DECIMALS",
    "TRACE_TOLERANCE",
    "GatedEvidence",
    "LinearEvidence",
    "Record",
    "Trace",
    "central_differences",
    "fixed",
    "fixed_list",
    "format_value",
    "gated_evidence",
    "linear_evidence",
    "linear_layers_trace",
    "parse_trace",
    "read_linear_trace",
    "read_records",
    "read_swiglu_trace",
    "shape_text",
    "swiglu_trace",
    "trace_gaps",
]
