"""The capacity slider's frames: the dashed line at the capacity, readable text, theme colours."""

import math
import re
import xml.etree.ElementTree as ET

import numpy as np

from llm_from_scratch.figures.moe import (
    DROPPED_COLOUR,
    REROUTED_COLOUR,
    capacity_frames,
    capacity_sweep,
)

SVG = "{http://www.w3.org/2000/svg}"
# Four tokens, two experts, top-1: every token prefers e0, so small capacities overflow, and the
# largest factors' capacities (ceil(3.0 * 4 / 2) = 6 and 4) reach above the tallest bar (4).
PROBABILITIES = np.array([[0.9, 0.1], [0.8, 0.2], [0.7, 0.3], [0.6, 0.4]])
FACTORS = [0.5, 1.0, 1.5, 2.0, 3.0]


def panels(frame: str) -> list[ET.Element]:
    svgs = re.findall(r"<svg xmlns=.*?</svg>", frame)
    return [ET.fromstring(svg) for svg in svgs]


def rects(svg: ET.Element, kind: str) -> list[ET.Element]:
    return [r for r in svg.iter(f"{SVG}rect") if r.get("class") == kind]


def test_capacity_line_height_is_the_capacity_on_the_bars_scale() -> None:
    frames = capacity_frames(PROBABILITIES, 1, FACTORS)
    sweep = capacity_sweep(PROBABILITIES, 1, FACTORS, "drop")
    capacities = [capacity for _, capacity, _ in sweep]
    assert capacities == [math.ceil(f * 4 / 2) for f in FACTORS] == [1, 2, 3, 4, 6]
    line_heights = []
    for frame, capacity in zip(frames, capacities, strict=True):
        for svg in panels(frame):
            kept = rects(svg, "kept")
            # Scale from the bars themselves: a kept bar of count c is c units tall.
            baseline = max(float(r.get("y")) + float(r.get("height")) for r in kept)
            sweep_load = next(load for _, cap, load in sweep if cap == capacity)
            unit = float(kept[0].get("height")) / int(sweep_load.kept_own[0])
            (line,) = [x for x in svg.iter(f"{SVG}line") if x.get("class") == "capacity"]
            height = (baseline - float(line.get("y1"))) / unit  # coordinates have 0.1 px steps
            assert math.isclose(height, capacity, abs_tol=0.05), (capacity, height)
            line_heights.append(height)
            # The line stays below the title band: the title's baseline plus its descent.
            title = next(svg.iter(f"{SVG}text"))
            assert float(line.get("y1")) > float(title.get("y")) + 4
    # Capacities 4 and 6 are distinct lines (before the fix both were clipped to the tallest bar).
    assert len(set(line_heights)) == len(set(capacities))


def test_frame_text_is_at_least_11px_and_uses_the_page_colour() -> None:
    for frame in capacity_frames(PROBABILITIES, 1, FACTORS):
        assert "white" not in frame and "#fff" not in frame.lower()
        for svg in panels(frame):
            for text in svg.iter(f"{SVG}text"):
                assert float(text.get("font-size")) >= 11, ET.tostring(text)
                assert text.get("fill") == "currentColor"


def test_rerouted_bars_hatched_light_blue_dropped_vermillion() -> None:
    frame = capacity_frames(PROBABILITIES, 1, [0.5], policies=("drop", "next"))[0]
    drop, reroute = panels(frame)
    patterns = {
        p.get("id"): p.find(f"{SVG}rect").get("fill") for p in frame_patterns(drop, reroute)
    }
    assert len(patterns) == 4  # ids unique across the two panels of one frame
    rerouted = rects(reroute, "rerouted")
    assert rerouted, "the next policy reroutes an overflowing token at capacity 1"
    for svg, kind, colour in [(reroute, "rerouted", REROUTED_COLOUR), (drop, "dropped", None)]:
        for rect in rects(svg, kind):
            target = re.fullmatch(r"url\(#(.+)\)", rect.get("fill")).group(1)
            assert patterns[target] == (colour or DROPPED_COLOUR)
    assert REROUTED_COLOUR == "#56B4E9"  # Okabe-Ito sky blue: the prose's "light blue"


def frame_patterns(*svgs: ET.Element) -> list[ET.Element]:
    return [p for svg in svgs for p in svg.iter(f"{SVG}pattern")]
