"""Figures and tables for the mixture-of-experts chapter, each from values the package computed.

Every chart has a pure data function (tested) and a drawing function (smoke-tested):

- :func:`router_view` / :func:`router_figure`: router probabilities per token, the top-k
  experts marked, and the renormalised gates written on the chosen bars;
- :func:`expert_load` / :func:`load_figure`: requests, kept (own and rerouted-in) and dropped
  assignments per expert against the capacity line, one panel per overflow policy, as the
  ledger of :func:`~llm_from_scratch.nn.moe.assign_capacity` counted them;
- :func:`importance_vs_work` / :func:`importance_figure`: gate mass (importance) beside the
  number of assignments each expert receives, with the CV² that
  :func:`~llm_from_scratch.nn.moe.importance_loss` computes;
- :func:`routing_rows` / :func:`routing_table`: a Markdown table of a small batch: each token's
  probabilities, choices, gates and the expert that served (or dropped) each choice;
- :func:`capacity_sweep`, :func:`load_bars` and :func:`capacity_frames`: the frames of the
  capacity-factor slider, small inline SVG bar charts of kept and dropped assignments.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ArgumentError, ShapeError
from ..nn.moe import (
    Ledger,
    RoutingReport,
    assign_capacity,
    capacity_from_factor,
    dense_gates,
    importance_loss,
    ranked_experts,
    top_k_gates,
)
from ..validate import as_float_array
from .style import INK, MUTED, PALETTE, BookFigure, new_figure

__all__ = [
    "Bar",
    "ExpertLoad",
    "ImportanceVsWork",
    "RouterView",
    "RoutingRow",
    "capacity_frames",
    "capacity_sweep",
    "expert_load",
    "importance_figure",
    "importance_vs_work",
    "load_bars",
    "load_figure",
    "load_from_report",
    "load_svg",
    "router_figure",
    "router_view",
    "routing_rows",
    "routing_table",
]

KEPT_COLOUR = PALETTE.blue
REROUTED_COLOUR = PALETTE.sky_blue
DROPPED_COLOUR = PALETTE.vermillion
SELECTED_COLOUR = PALETTE.blue
UNSELECTED_COLOUR = "#BBBBBB"
IMPORTANCE_COLOUR = PALETTE.orange
WORK_COLOUR = PALETTE.bluish_green


def _matrix(name: str, values: object) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim == 1:
        array = array[None, :]
    if array.ndim != 2 or array.shape[1] == 0:
        raise ShapeError(
            f"{name} must be [tokens, experts] (or one token [experts]); got shape {array.shape}."
        )
    return array


# --- router probabilities with the selection ------------------------------------------------


@dataclass(frozen=True)
class RouterView:
    """What the router did for each token: probabilities, the chosen k and their gates."""

    probabilities: np.ndarray  # (N, E)
    selected: np.ndarray  # (N, k) chosen experts, best first
    chosen: np.ndarray  # (N, E) True where an expert is among the token's top k
    gates: np.ndarray  # (N, E) renormalised gate, 0 where not chosen
    kept_mass: np.ndarray  # (N,) Σ of the chosen probabilities (the renormaliser)

    @property
    def k(self) -> int:
        return int(self.selected.shape[1])


def router_view(probabilities: object, k: int) -> RouterView:
    """Top-k selection of ``probabilities`` [N, E] (or [E]) through :func:`top_k_gates`."""
    p = _matrix("probabilities", probabilities)
    selected, gates = top_k_gates(p, k)
    num_experts = p.shape[1]
    chosen = (selected[..., None] == np.arange(num_experts)).any(axis=-2)  # (N, E)
    dense = dense_gates(selected, gates, num_experts)
    mass = np.where(chosen, p, 0.0).sum(axis=-1)
    return RouterView(p, selected, chosen, dense, mass)


def router_figure(
    view: RouterView,
    *,
    token_labels: Sequence[str] | None = None,
    width: float | None = None,
) -> BookFigure:
    """One panel per token: probability bars, chosen experts coloured, gates written on them."""
    tokens, num_experts = view.probabilities.shape
    labels = (
        list(token_labels) if token_labels is not None else [f"token {n}" for n in range(tokens)]
    )
    if len(labels) != tokens:
        raise ArgumentError(f"token_labels needs {tokens} labels; got {len(labels)}.")
    columns = min(tokens, 3)  # three panels a row keep the figure inside the 672 px column
    rows = -(-tokens // columns)
    fig, grid = new_figure(
        width or (2.05 * columns + 0.3),
        2.2 * rows + 0.5,
        nrows=rows,
        ncols=columns,
        squeeze=False,
        sharey=True,
    )
    axes = list(grid.ravel())
    for ax in axes[tokens:]:
        fig.delaxes(ax)
    experts = np.arange(num_experts)
    top = max(1.0, float(view.probabilities.max()) * 1.25)
    for n, ax in enumerate(axes[:tokens]):
        colours = [SELECTED_COLOUR if c else UNSELECTED_COLOUR for c in view.chosen[n]]
        ax.bar(experts, view.probabilities[n], color=colours, edgecolor=INK, linewidth=0.6)
        for e in experts[view.chosen[n]]:
            ax.annotate(  # the gate alone ("g" is in the title): two neighbours never collide
                f"{view.gates[n, e]:.2f}",
                xy=(e, view.probabilities[n, e]),
                xytext=(0, 3),
                textcoords="offset points",
                ha="center",
                fontsize=9,  # as large as the tick labels
            )
        ax.set_title(f"{labels[n]}: mass {view.kept_mass[n]:.2f}", fontsize=9)
        ax.set_xticks(experts, [f"e{e}" for e in experts])
        ax.set_ylim(0.0, top)
    for ax in grid[:, 0]:
        ax.set_ylabel("router probability")
    fig.suptitle(
        f"top-{view.k} choices (blue), each with its renormalised gate g above it", fontsize=10
    )
    fig.tight_layout()
    return fig


# --- load against capacity --------------------------------------------------------------------


@dataclass(frozen=True)
class ExpertLoad:
    """Per-expert bookkeeping of one routing batch against a capacity."""

    requested: np.ndarray  # (E,) choices naming this expert
    kept_own: np.ndarray  # (E,) of those, served by this expert
    rerouted_in: np.ndarray  # (E,) choices of other experts served here instead
    dropped: np.ndarray  # (E,) choices naming this expert that nobody served
    capacity: int | None

    @property
    def kept(self) -> np.ndarray:
        """Assignments this expert processes: its own plus the rerouted ones."""
        return self.kept_own + self.rerouted_in

    @property
    def rerouted_out(self) -> np.ndarray:
        """Choices naming this expert that another expert served."""
        return self.requested - self.kept_own - self.dropped

    @property
    def overflow(self) -> np.ndarray:
        """Requests beyond the capacity: max(requested − capacity, 0) (zero with no capacity)."""
        if self.capacity is None:
            return np.zeros_like(self.requested)
        return np.maximum(self.requested - self.capacity, 0)


def expert_load(ledger: Ledger | RoutingReport, capacity: int | None) -> ExpertLoad:
    """The ledger's own counts (``assign_capacity``), kept split into own and rerouted-in."""
    if not isinstance(ledger, Ledger | RoutingReport):
        raise ArgumentError(
            f"expert_load reads the counts of a Ledger (nn.moe.assign_capacity) or a "
            f"RoutingReport (a MixtureOfExperts forward); got {type(ledger).__name__}."
        )
    return ExpertLoad(
        requested=ledger.assigned,
        kept_own=ledger.kept - ledger.rerouted,
        rerouted_in=ledger.rerouted,
        dropped=ledger.dropped,
        capacity=capacity,
    )


def load_from_report(report: RoutingReport) -> ExpertLoad:
    """:func:`expert_load` for a :class:`RoutingReport` of the mixture, at its capacity."""
    return expert_load(report, report.capacity)


def load_figure(loads: Mapping[str, ExpertLoad]) -> BookFigure:
    """Per policy: kept (own + rerouted-in) inside the requested outline, overflow above the
    capacity outlined in vermillion, dropped beside."""
    if not loads:
        raise ArgumentError("load_figure needs at least one labelled ExpertLoad.")
    fig, grid = new_figure(
        3.1 * len(loads) + 0.3, 3.2, ncols=len(loads), squeeze=False, sharey=True
    )
    top = max(
        max(int(v.requested.max()), int(v.kept.max()), v.capacity or 0) for v in loads.values()
    )
    for ax, (label, load) in zip(grid[0], loads.items(), strict=True):
        experts = np.arange(len(load.requested))
        ax.bar(experts - 0.2, load.kept_own, 0.4, color=KEPT_COLOUR, label="kept (own choice)")
        ax.bar(
            experts - 0.2,
            load.rerouted_in,
            0.4,
            bottom=load.kept_own,
            color=REROUTED_COLOUR,
            hatch="//",
            edgecolor=INK,
            linewidth=0.4,
            label="kept (rerouted here)",
        )
        ax.bar(
            experts + 0.2,
            load.dropped,
            0.4,
            color=DROPPED_COLOUR,
            hatch="xx",
            edgecolor=INK,
            linewidth=0.4,
            label="dropped",
        )
        ax.bar(
            experts - 0.2,
            load.requested,
            0.4,
            fill=False,
            edgecolor=INK,
            linewidth=1.0,
            linestyle="--",
            label="requested",
        )
        over = load.overflow > 0  # a zero-height outline would still draw a line
        ax.bar(
            experts[over] - 0.2,
            load.overflow[over],
            0.4,
            bottom=np.minimum(load.requested, load.capacity or 0)[over],
            fill=False,
            edgecolor=DROPPED_COLOUR,
            linewidth=2.2,
            label="overflow (requests above capacity)",
        )
        if load.capacity is not None:
            ax.axhline(load.capacity, color=MUTED, ls="--", lw=1.2, label="capacity")
        ax.set_xticks(experts, [f"e{e}" for e in experts])
        ax.set_title(label, fontsize=10)
        ax.set_ylim(0, top + 1)
        ax.yaxis.get_major_locator().set_params(integer=True)
    grid[0, 0].set_ylabel("assignments")
    legend: dict[str, Any] = {}
    for ax in grid[0]:
        for handle, name in zip(*ax.get_legend_handles_labels(), strict=True):
            legend.setdefault(name, handle)
    fig.legend(list(legend.values()), list(legend), loc="lower center", ncol=3, fontsize=8)
    fig.tight_layout(rect=(0, 0.16, 1, 1))
    return fig


# --- importance against assigned work ---------------------------------------------------------


@dataclass(frozen=True)
class ImportanceVsWork:
    """Gate mass per expert beside the number of assignments per expert, and the CV² of each."""

    importance: np.ndarray  # (E,) Σ_tokens gate
    assigned: np.ndarray  # (E,) number of tokens that chose the expert

    @property
    def importance_share(self) -> np.ndarray:
        return self.importance / self.importance.sum()

    @property
    def assigned_share(self) -> np.ndarray:
        return self.assigned / self.assigned.sum()

    @property
    def importance_cv2(self) -> float:
        """CV² of the importance: the balancing penalty, ``nn.moe.importance_loss``."""
        return importance_loss(self.importance).item()

    @property
    def assigned_cv2(self) -> float:
        """The same statistic on the assignment counts (``importance_loss`` of the counts)."""
        return importance_loss(self.assigned).item()


def importance_vs_work(importance: object, assigned: object) -> ImportanceVsWork:
    """Gate mass I_e and assignment counts per expert, as nn counted them.

    ``importance`` [E] is a RoutingReport's ``importance`` (or Σ over tokens of
    ``nn.moe.dense_gates``); ``assigned`` [E] is a Ledger's or RoutingReport's ``assigned``.
    """
    gate_mass = as_float_array(importance, "importance", finite=True, error=ShapeError)
    counts = np.asarray(assigned)
    if gate_mass.ndim != 1 or counts.shape != gate_mass.shape or counts.dtype.kind not in "iu":
        raise ShapeError(
            f"importance and assigned must be [E] vectors of the same shape, assigned holding "
            f"integer counts; got {gate_mass.shape} and {counts.shape} ({counts.dtype})."
        )
    return ImportanceVsWork(gate_mass, counts.astype(np.int64))


def importance_figure(data: Mapping[str, ImportanceVsWork]) -> BookFigure:
    """Per case: importance share beside assignment share for every expert."""
    if not data:
        raise ArgumentError("importance_figure needs at least one labelled case.")
    fig, grid = new_figure(3.1 * len(data) + 0.3, 3.2, ncols=len(data), squeeze=False, sharey=True)
    for ax, (label, case) in zip(grid[0], data.items(), strict=True):
        experts = np.arange(len(case.importance))
        ax.bar(
            experts - 0.2,
            case.importance_share,
            0.4,
            color=IMPORTANCE_COLOUR,
            label="share of gate mass (importance)",
        )
        ax.bar(
            experts + 0.2,
            case.assigned_share,
            0.4,
            color=WORK_COLOUR,
            hatch="..",
            edgecolor=INK,
            linewidth=0.4,
            label="share of assignments (work)",
        )
        ax.axhline(1.0 / len(experts), color=MUTED, ls=":", lw=1.0, label="even share")
        ax.set_xticks(experts, [f"e{e}" for e in experts])
        ax.set_title(
            f"{label}\nCV² importance {case.importance_cv2:.3f}, work {case.assigned_cv2:.3f}",
            fontsize=9,
        )
        ax.set_ylim(0, 1.0)
    grid[0, 0].set_ylabel("share of the batch")
    handles, names = grid[0, 0].get_legend_handles_labels()
    fig.legend(handles, names, loc="lower center", ncol=3, fontsize=8)
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    return fig


# --- a routing table --------------------------------------------------------------------------


@dataclass(frozen=True)
class RoutingRow:
    """One token of a routing batch."""

    token: int
    label: str
    probabilities: tuple[float, ...]
    choices: tuple[tuple[int, float, int], ...]  # (requested expert, gate, serving expert or −1)


def routing_rows(
    report: RoutingReport, probabilities: object, labels: Sequence[str] | None = None
) -> list[RoutingRow]:
    """Rows of a routing table from a mixture's report and the router probabilities [N, E]."""
    p = _matrix("probabilities", probabilities).reshape(-1, len(report.kept))
    tokens = report.selected.shape[0]
    if p.shape[0] != tokens:
        raise ShapeError(f"probabilities hold {p.shape[0]} tokens; the report holds {tokens}.")
    names = list(labels) if labels is not None else [str(n) for n in range(tokens)]
    if len(names) != tokens:
        raise ArgumentError(f"labels needs {tokens} entries; got {len(names)}.")
    return [
        RoutingRow(
            token=n,
            label=names[n],
            probabilities=tuple(float(x) for x in p[n]),
            choices=tuple(
                (int(e), float(g), int(s))
                for e, g, s in zip(
                    report.selected[n], report.gates[n], report.placement[n], strict=True
                )
            ),
        )
        for n in range(tokens)
    ]


def routing_table(rows: Sequence[RoutingRow], digits: int = 3) -> str:
    """A Markdown table: token, probabilities, then per choice "e → served (gate)" or dropped."""
    if not rows:
        raise ArgumentError("routing_table needs at least one row.")
    k = len(rows[0].choices)
    header = ["token", "router probabilities"] + [
        f"choice {j + 1}: expert (gate) → served by" for j in range(k)
    ]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        probs = ", ".join(f"{x:.{digits}f}" for x in row.probabilities)
        cells = [html.escape(row.label), f"({probs})"]
        for expert, gate, served in row.choices:
            if served < 0:
                where = "**dropped**"
            elif served == expert:
                where = f"e{served}"
            else:
                where = f"e{served} (rerouted)"
            cells.append(f"e{expert} ({gate:.{digits}f}) → {where}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


# --- the capacity-factor slider ---------------------------------------------------------------


def capacity_sweep(
    probabilities: object, k: int, factors: Sequence[float], overflow: str
) -> list[tuple[float, int, ExpertLoad]]:
    """For each factor: (factor, capacity ⌈factor·N·k/E⌉, the ledger's ExpertLoad)."""
    p = _matrix("probabilities", probabilities)
    tokens, num_experts = p.shape
    ranking = ranked_experts(p)
    sweep = []
    for factor in factors:
        capacity = capacity_from_factor(tokens, num_experts, k, factor)
        load = expert_load(assign_capacity(ranking, k, capacity, overflow), capacity)
        sweep.append((float(factor), capacity, load))
    return sweep


@dataclass(frozen=True)
class Bar:
    """One rectangle of an SVG bar chart, in SVG coordinates (y grows downwards)."""

    kind: str  # "kept", "rerouted" or "dropped"
    expert: int
    count: int
    x: float
    y: float
    width: float
    height: float


def load_bars(
    load: ExpertLoad,
    top: int,
    *,
    height: float = 120.0,
    bar_width: float = 14.0,
    group_width: float = 44.0,
    left: float = 28.0,
    baseline: float = 130.0,
) -> tuple[list[Bar], float | None]:
    """Rectangles (kept and rerouted stacked, dropped beside) and the capacity line's y.

    A count c is drawn ``c · height / top`` tall from ``baseline`` upwards.
    """
    if top <= 0:
        raise ArgumentError(f"top must be a positive count; got {top!r}.")
    unit = height / top
    bars = []
    for e in range(len(load.requested)):
        x0 = left + e * group_width
        stacked = 0
        for kind, count in (("kept", load.kept_own[e]), ("rerouted", load.rerouted_in[e])):
            h = int(count) * unit
            bars.append(
                Bar(
                    kind, e, int(count), x0, baseline - (stacked + int(count)) * unit, bar_width, h
                )
            )
            stacked += int(count)
        d = int(load.dropped[e])
        bars.append(
            Bar("dropped", e, d, x0 + bar_width + 2.0, baseline - d * unit, bar_width, d * unit)
        )
    line = None if load.capacity is None else baseline - min(load.capacity, top) * unit
    return bars, line


# Fills of the slider's SVG bars, the same code as :func:`load_figure`: kept solid blue,
# rerouted hatched light (sky) blue, dropped cross-hatched vermillion. The hatch lines are dark on
# an opaque fill, so bars read on light and dark pages alike; text, axis, outlines and the
# capacity line use ``currentColor``, the page's own text colour in either theme.
_HATCH_INK = "#222222"
_PATTERNS = {
    "rerouted": (REROUTED_COLOUR, "M0,6 L6,0 M-1,1 L1,-1 M5,7 L7,5"),
    "dropped": (DROPPED_COLOUR, "M0,6 L6,0 M-1,1 L1,-1 M5,7 L7,5 M0,0 L6,6 M-1,5 L1,7 M5,-1 L7,1"),
}
_HATCH_ID = "lfs-moe-hatch-"  # made unique per SVG by capacity_frames


def _bar_fill(kind: str) -> str:
    return KEPT_COLOUR if kind == "kept" else f"url(#{_HATCH_ID}{kind})"


def _hatch_defs() -> str:
    patterns = "".join(
        f'<pattern id="{_HATCH_ID}{kind}" width="6" height="6" patternUnits="userSpaceOnUse">'
        f'<rect width="6" height="6" fill="{colour}"/>'
        f'<path d="{path}" stroke="{_HATCH_INK}" stroke-width="1"/></pattern>'
        for kind, (colour, path) in _PATTERNS.items()
    )
    return f"<defs>{patterns}</defs>"


# Layout of one panel (SVG user units = CSS px when shown unscaled): the title on its own band,
# the bars below it, expert names and kept/dropped counts under the axis. Text is 11 px or more.
_TITLE_Y, _BARS_TOP, _BASELINE, _SVG_HEIGHT = 16.0, 34.0, 134.0, 178.0


def load_svg(load: ExpertLoad, top: int, title: str) -> str:
    """An inline SVG chart of :func:`load_bars` with expert labels and counts."""
    bars, line = load_bars(load, top, height=_BASELINE - _BARS_TOP, baseline=_BASELINE)
    experts = len(load.requested)
    width = 28.0 + 44.0 * experts + 8.0
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{_SVG_HEIGHT:.0f}" '
        f'viewBox="0 0 {width:.0f} {_SVG_HEIGHT:.0f}" style="margin-right:16px" role="img" '
        f'aria-label="{html.escape(title)}: kept '
        f"{', '.join(str(int(v)) for v in load.kept)}; dropped "
        f'{", ".join(str(int(v)) for v in load.dropped)}">',
        _hatch_defs(),
        f'<text x="4" y="{_TITLE_Y:.0f}" font-size="13" font-weight="600" '
        f'fill="currentColor">{html.escape(title)}</text>',
        f'<line x1="24" y1="{_BASELINE:.0f}" x2="{width - 4:.0f}" y2="{_BASELINE:.0f}" '
        f'stroke="currentColor"/>',
    ]
    for bar in bars:
        if bar.count == 0:
            continue
        parts.append(
            f'<rect class="{bar.kind}" x="{bar.x:.1f}" y="{bar.y:.1f}" width="{bar.width:.1f}" '
            f'height="{bar.height:.1f}" fill="{_bar_fill(bar.kind)}" stroke="currentColor" '
            f'stroke-width="0.75"/>'
        )
    for e in range(experts):
        x = 28.0 + 44.0 * e + 15.0
        parts.append(
            f'<text x="{x:.1f}" y="{_BASELINE + 16:.0f}" font-size="12" text-anchor="middle" '
            f'fill="currentColor">e{e}</text>'
        )
        parts.append(
            f'<text x="{x:.1f}" y="{_BASELINE + 32:.0f}" font-size="12" text-anchor="middle" '
            f'fill="currentColor" fill-opacity="0.8">'
            f"{int(load.kept[e])}/{int(load.dropped[e])}</text>"
        )
    if line is not None:
        parts.append(
            f'<line class="capacity" x1="24" y1="{line:.1f}" x2="{width - 4:.0f}" '
            f'y2="{line:.1f}" stroke="currentColor" stroke-width="1.5" stroke-dasharray="5 3"/>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _swatch(background: str, dashed: bool = False) -> str:
    """A 13 px legend key drawn like the bars (CSS hatching) or, dashed, like the capacity line."""
    if dashed:
        look = "height:0;border-top:2px dashed currentColor;vertical-align:4px"
    else:
        look = f"height:13px;border:1px solid currentColor;background:{background}"
    return (
        f'<span aria-hidden="true" style="display:inline-block;width:13px;{look};'
        'vertical-align:-2px"></span>'
    )


def _css_hatch(colour: str, crossed: bool) -> str:
    lines = f"{_HATCH_INK} 0 1px, transparent 1px 4px"
    hatch = f"repeating-linear-gradient(-45deg, {lines})"
    if crossed:
        hatch += f", repeating-linear-gradient(45deg, {lines})"
    return f"{hatch}, {colour}"


def capacity_frames(
    probabilities: object,
    k: int,
    factors: Sequence[float],
    policies: Sequence[str] = ("drop", "next"),
) -> list[str]:
    """One HTML frame per factor: an SVG per overflow policy and a sentence of totals."""
    sweeps = {policy: capacity_sweep(probabilities, k, factors, policy) for policy in policies}
    tokens = _matrix("probabilities", probabilities).shape[0]
    # One scale for every frame, tall enough for every bar and every capacity line, so moving
    # the slider moves the dashed line and never clips it at the tallest bar.
    top = max(
        max(int(load.requested.max()), int(load.kept.max()), int(capacity))
        for sweep in sweeps.values()
        for _, capacity, load in sweep
    )
    top = max(top, 1)
    frames = []
    for i, factor in enumerate(factors):
        capacity = sweeps[policies[0]][i][1]
        svgs, totals = [], []
        for j, policy in enumerate(policies):
            load = sweeps[policy][i][2]
            svg = load_svg(load, top, f'overflow "{policy}"')
            svgs.append(svg.replace(_HATCH_ID, f"{_HATCH_ID}f{i}p{j}-"))
            totals.append(
                f'"{policy}": {int(load.kept.sum())} kept, {int(load.dropped.sum())} dropped'
            )
        text = (
            f"<div>capacity factor {factor:g} → capacity <b>{capacity}</b> per expert "
            f"({tokens} tokens × k = {k} = {tokens * k} assignments). "
            f"{'; '.join(totals)}. Under each expert: kept/dropped. "
            f"{_swatch(KEPT_COLOUR)} kept (own choice), "
            f"{_swatch(_css_hatch(REROUTED_COLOUR, False))} kept (rerouted here), "
            f"{_swatch(_css_hatch(DROPPED_COLOUR, True))} dropped, "
            f"{_swatch('', dashed=True)} capacity.</div>"
        )
        frames.append(
            '<div class="moe-capacity-frame" style="padding:4px;'
            'border:1px solid color-mix(in srgb, currentColor 25%, transparent)">'
            f"{''.join(svgs)}{text}</div>"
        )
    return frames
