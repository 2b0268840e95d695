"""Every page on a phone (390 px) and a desktop (1280 px), in the light and the dark theme.

Every page loads offline with its math typeset and its images loaded (a full-page screenshot of
each goes to _build/screenshots/), and axe-core finds no serious or critical violation on it (it
runs the rules whose violations are rated serious or critical); the
highlighted code's text keeps WCAG's 4.5:1 contrast in both themes; no page scrolls sideways; the
figure zoom opens centred on the screen; figure text (PNG figures and the sliders' SVG frames) is
at least 9 CSS px as shown on a phone and 11 px on a desktop.

Each page is opened once per screen width. On the desktop the load checks and axe run first, in
the light theme; then each width is measured in the light theme, switched to the dark one in
place (as the theme's own switch does) and measured again. Every check reads those visits, so a
page costs two loads, not one per check (pytest-xdist keeps one page's checks in one worker).

The code's contrast is measured by the book's own WCAG check (conftest.LOW_CONTRAST, the one the
widgets' theme test uses), in the light and the dark theme, rather than by axe's color-contrast
rule: Pygments gives every token a span, about half of a chapter's elements, and axe spent most
of a page's run on them (1.9 of 3.1 s on Chapter 2), in the light theme only. axe's rule still
checks every other text on the page, the code blocks' own text included.
"""

from collections.abc import Iterator
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest
from playwright.sync_api import Browser, BrowserContext
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from llm_from_scratch.figures.style import legibility_of

from .conftest import (
    FIGURE_IMAGES,
    HTML,
    LOW_CONTRAST,
    MATH,
    REDIRECT,
    SCREENSHOTS,
    ZOOM_MARKED,
    Visit,
    built_pages,
    settle,
)

SCREENS = {
    "phone-light": (390, "light"),
    "phone-dark": (390, "dark"),
    "desktop-light": (1280, "light"),
    "desktop-dark": (1280, "dark"),
}
MIN_TEXT = {390: 9.0, 1280: 11.0}  # CSS px, the smallest figure text as shown
SERVED = [p for p in built_pages() if (HTML / p).is_file()]
# A redirect stub (the site's index.html) shows the page it sends the reader to, which has its
# own entry here: the stub is checked for landing there, offline, not measured a second time.
REDIRECTS = [p for p in SERVED if REDIRECT.search((HTML / p).read_text(encoding="utf-8"))]
PAGES = [p for p in SERVED if p not in REDIRECTS]
LOADED = "desktop-light"  # the screen whose visit runs the load checks and axe
AXE = "_static/vendor/axe-core/axe.min.js"  # vendored from npm by tools/vendor_web_assets.py
BLOCKING = {"serious", "critical"}
CODE_TOKENS = "div.highlight pre > span"  # Pygments' token spans, in code cells and outputs
MIN_CONTRAST = 4.5  # WCAG 2 AA for normal-size text, axe's threshold for the same text
# axe on the page as loaded, its color-contrast rule on everything but the code tokens, and only
# the rules that can report a serious or critical violation. axe reports every violation of a
# rule at the rule's own impact (its _finalizeRuleResult), so a moderate or minor rule never
# reports one this test fails on; skipping them saves about a fifth of axe's time per page.
AXE_RUN = f"""async () => {{
  axe.configure({{rules: [{{id: "color-contrast", selector: "*:not({CODE_TOKENS})"}}]}});
  const unrated = axe._audit.rules.filter((rule) => !rule.impact).map((rule) => rule.id);
  if (unrated.length) throw new Error(`axe rules without an impact: ${{unrated}}`);
  const blocking = new Set({sorted(BLOCKING)!r});
  const quiet = axe._audit.rules.filter((rule) => !blocking.has(rule.impact));
  const rules = Object.fromEntries(quiet.map((rule) => [rule.id, {{enabled: false}}]));
  return (await axe.run(document, {{rules, resultTypes: ["violations"]}})).violations;
}}"""
VENDOR_HINT = "(`npm ci && python tools/vendor_web_assets.py` fills web/static/vendor/)"

# Width and geometry of the page; the shown size of every figure image and of the text in the
# sliders' SVG frames (font size times the SVG's scale).
MEASURE = """(images) => {
  const root = document.documentElement;
  const figures = [...document.querySelectorAll(images)].map((image) => ({
    src: image.src, width: image.getBoundingClientRect().width,
  }));
  const svgText = [];
  document.querySelectorAll(".lfs-slider__frame svg").forEach((svg) => {
    const box = svg.viewBox.baseVal;
    const scale = box && box.width ? svg.getBoundingClientRect().width / box.width : 1;
    svg.querySelectorAll("text").forEach((text) => {
      const size = parseFloat(getComputedStyle(text).fontSize) * scale;
      svgText.push([text.textContent, size]);
    });
  });
  return {
    scrollWidth: root.scrollWidth, clientWidth: root.clientWidth, innerWidth: window.innerWidth,
    figures, svgText,
  };
}"""
# The theme's own switch sets both attributes (and stores the choice); wait for the repaint.
SWITCH_THEME = """async (mode) => {
  document.documentElement.dataset.mode = mode;
  document.documentElement.dataset.theme = mode;
  await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
}"""
# Where the zoom viewer, its Close button and its image sit once opened.
ZOOM = """() => {
  const dialog = document.querySelector("dialog.lfs-zoom");
  const rect = (node) => { const r = node.getBoundingClientRect();
    return { left: r.left, right: r.right, top: r.top, bottom: r.bottom, width: r.width }; };
  const frame = dialog.querySelector(".lfs-zoom__frame");
  return { open: dialog.open, dialog: rect(dialog), close: rect(dialog.querySelector("button")),
    image: rect(dialog.querySelector("img")), frame: rect(frame),
    scrollLeft: frame.scrollLeft, innerWidth: window.innerWidth, innerHeight: window.innerHeight };
}"""


@dataclass
class Seen:
    """What one page showed on one screen."""

    geometry: dict[str, Any]
    zoom: dict[str, Any] | None
    problems: list[str] = field(default_factory=list)
    loading: list[str] = field(default_factory=list)  # images, math, requests, console (desktop)
    axe: list[str] = field(default_factory=list)  # serious or critical violations (desktop)
    code: list[str] = field(default_factory=list)  # code text below MIN_CONTRAST (desktop)


@dataclass
class Screen:
    context: BrowserContext
    visit: Visit
    width: int
    seen: dict[tuple[str, str], Seen] = field(default_factory=dict)


@pytest.fixture(scope="module")
def screens(browser: Browser, site: str) -> Iterator[dict[str, Screen]]:
    """One browser page per screen and theme, reused for every book page (opened lazily)."""
    opened: dict[str, Screen] = {}

    def factory(width: int) -> Screen:
        if width not in opened:
            phone = width < 600
            context = browser.new_context(
                viewport={"width": width, "height": 844 if phone else 900},
                is_mobile=phone,  # a phone's layout viewport grows with a too-wide page
                has_touch=phone,
                device_scale_factor=2 if phone else 1,
                color_scheme="light",
                service_workers="block",
            )
            context.add_init_script("localStorage.setItem('mode', 'light')")
            page = context.new_page()
            page.set_default_timeout(20_000)
            visit = Visit(page, site)
            visit.watch()
            opened[width] = Screen(context, visit, width)
        return opened[width]

    yield factory  # type: ignore[misc]
    for screen in opened.values():
        screen.context.close()


def seen(screens: Any, name: str, path: str) -> Seen:
    """Open ``path`` once per width; measure it and open its first zoomable figure, per theme."""
    width, theme = SCREENS[name]
    screen: Screen = screens(width)
    if (path, theme) in screen.seen:
        return screen.seen[path, theme]
    visit = screen.visit
    visit.problems.clear()
    settle(visit, path)
    page = visit.page
    loading, axe = (load_checks(visit, path), run_axe(visit)) if width == 1280 else ([], [])
    if page.locator(FIGURE_IMAGES).count():
        # figure-zoom.js marks each figure once it has read the figure's text sizes (a build
        # without it fails the text-size test below, not here).
        with suppress(PlaywrightTimeoutError):
            page.wait_for_function(ZOOM_MARKED, arg=FIGURE_IMAGES, timeout=10_000)
    for mode in ("light", "dark"):
        page.evaluate(SWITCH_THEME, mode)
        geometry = page.evaluate(MEASURE, FIGURE_IMAGES)
        code = page.evaluate(LOW_CONTRAST, [CODE_TOKENS, MIN_CONTRAST]) if width == 1280 else []
        zoom = None
        zoomable = page.locator("img.lfs-zoomable:visible")  # not one in a collapsed cell
        if zoomable.count():
            zoomable.first.scroll_into_view_if_needed()
            try:
                zoomable.first.click(timeout=5_000)
                page.locator("dialog.lfs-zoom").wait_for(state="visible", timeout=5_000)
                zoom = page.evaluate(ZOOM)
                page.keyboard.press("Escape")
            except PlaywrightTimeoutError as error:
                zoom = {"failed": str(error).splitlines()[0]}
        screen.seen[path, mode] = Seen(geometry, zoom, list(visit.problems), loading, axe, code)
    return screen.seen[path, theme]


def load_checks(visit: Visit, path: str) -> list[str]:
    """Save a full-page screenshot; every image that did not load and every untypeset formula."""
    page = visit.page
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    shot = SCREENSHOTS / f"{path.replace('/', '__')}.jpg"  # JPEG: a tall page encodes faster
    # Animations at their end state (the page has settled; ~20% faster than letting them run).
    page.screenshot(
        path=shot, full_page=True, type="jpeg", quality=85, animations="disabled", caret="initial"
    )
    unloaded = page.evaluate(
        "() => [...document.images].filter((image) => !(image.naturalWidth > 0))"
        ".map((image) => image.getAttribute('src'))"
    )
    problems = [f"image did not load: {src}" for src in unloaded]
    untypeset = page.evaluate(
        f"() => [...document.querySelectorAll('{MATH}')]"
        ".filter((math) => !math.querySelector('mjx-container')).length"
    )
    if untypeset:
        problems.append(f"{untypeset} math elements were not typeset by MathJax")
    problems += visit.problems  # requests, console errors while it loaded
    if any("/_static/vendor/" in problem for problem in problems):
        problems.append(VENDOR_HINT)
    return problems


def run_axe(visit: Visit) -> list[str]:
    """axe-core's serious and critical violations on the page as loaded, one line each."""
    visit.page.add_script_tag(url=visit.site + AXE)
    result = visit.page.evaluate(AXE_RUN)
    return [
        f"{v['impact']} {v['id']}: {v['help']} ({len(v['nodes'])}x), e.g. "
        + "; ".join(
            f"{node['target']} {node.get('failureSummary', '')[:160]!r}" for node in v["nodes"][:3]
        )
        for v in result
        if v["impact"] in BLOCKING
    ]


def served_file(url: str) -> Path:
    return HTML / unquote(urlsplit(url).path).lstrip("/")


@pytest.mark.parametrize("path", PAGES)
def test_page_loads_offline_and_renders(screens: Any, path: str) -> None:
    result = seen(screens, LOADED, path)
    assert not result.loading, f"{path}:\n" + "\n".join(result.loading)


@pytest.mark.parametrize("path", REDIRECTS)
def test_a_redirect_lands_offline_on_a_checked_page(screens: Any, path: str) -> None:
    visit = screens(1280).visit
    visit.problems.clear()
    settle(visit, path)  # waits for the redirect, then for the page it lands on
    landed = visit.page.url.removeprefix(visit.site)
    assert landed in PAGES, f"{path} sent the reader to {visit.page.url}, not a page of the book"
    assert not visit.problems, f"{path}:\n" + "\n".join(visit.problems)


def test_the_book_has_a_redirect_and_the_checks_see_it() -> None:
    """The site's root is a stub that sends the reader on (Jupyter Book's index.html)."""
    assert REDIRECTS == ["index.html"], REDIRECTS


@pytest.mark.parametrize("path", PAGES)
def test_no_serious_or_critical_axe_violations(screens: Any, path: str) -> None:
    result = seen(screens, LOADED, path)
    assert not result.axe, f"{path}:\n" + "\n".join(result.axe)


@pytest.mark.parametrize("name", [name for name in SCREENS if name.startswith("desktop")])
@pytest.mark.parametrize("path", PAGES)
def test_code_text_keeps_its_contrast(screens: Any, name: str, path: str) -> None:
    low = seen(screens, name, path).code
    shown = "\n".join(low[:8])
    assert not low, f"{path} ({name}): {len(low)} code texts below {MIN_CONTRAST}:1, e.g.\n{shown}"


@pytest.mark.parametrize("name", SCREENS)
@pytest.mark.parametrize("path", PAGES)
def test_no_page_scrolls_sideways(screens: Any, name: str, path: str) -> None:
    result = seen(screens, name, path)
    geometry = result.geometry
    assert geometry["innerWidth"] == SCREENS[name][0], (
        f"{path} ({name}): the layout viewport grew to {geometry['innerWidth']} px"
    )
    assert geometry["scrollWidth"] <= geometry["clientWidth"], (
        f"{path} ({name}) is {geometry['scrollWidth']} px wide on a "
        f"{geometry['clientWidth']} px screen"
    )
    assert not result.problems, "\n".join(result.problems)


@pytest.mark.parametrize("name", SCREENS)
@pytest.mark.parametrize("path", PAGES)
def test_figure_text_is_legible_as_shown(screens: Any, name: str, path: str) -> None:
    result = seen(screens, name, path)
    least = MIN_TEXT[SCREENS[name][0]]
    small = []
    for figure in result.geometry["figures"]:
        record = legibility_of(served_file(figure["src"]).read_bytes())
        assert record is not None, f"{figure['src']}: no text-size record"
        shown = record.smallest_text_px * min(1.0, figure["width"] / record.width_px)
        if shown < least - 0.01:
            small.append(f"{Path(figure['src']).name}: {shown:.1f} px at {figure['width']:.0f} px")
    small += [f"slider text {text!r}: {size:.1f} px" for text, size in result.geometry["svgText"]
              if size < least - 0.01]  # fmt: skip
    assert not small, f"{path} ({name}): figure text below {least:g} px\n" + "\n".join(small)


@pytest.mark.parametrize("name", SCREENS)
@pytest.mark.parametrize("path", PAGES)
def test_the_zoom_opens_centred(screens: Any, name: str, path: str) -> None:
    result = seen(screens, name, path)
    if result.zoom is None:
        if SCREENS[name][0] < 600 and result.geometry["figures"]:
            pytest.fail(f"{path} ({name}): no figure offers its full size on a phone")
        return  # every figure is shown whole: nothing to zoom
    zoom = result.zoom
    assert "failed" not in zoom, f"{path} ({name}): the figure did not open: {zoom}"
    width, height = zoom["innerWidth"], zoom["innerHeight"]
    assert zoom["open"]
    dialog, close, image, frame = zoom["dialog"], zoom["close"], zoom["image"], zoom["frame"]
    assert (dialog["left"], dialog["top"]) == (0, 0), f"{path} ({name}): viewer at {dialog}"
    assert dialog["right"] == pytest.approx(width, abs=1), f"{path} ({name}): {dialog}"
    assert dialog["bottom"] == pytest.approx(height, abs=1), f"{path} ({name}): {dialog}"
    assert close["left"] >= 0 and close["right"] <= width, f"{path} ({name}): Close at {close}"
    if image["width"] <= frame["width"] - 32:  # fits: centred between equal margins
        margins = image["left"] - frame["left"], frame["right"] - image["right"]
        assert margins[0] == pytest.approx(margins[1], abs=2), f"{path} ({name}): {margins}"
    else:  # wider than the screen: it opens at its left edge and pans from there
        assert zoom["scrollLeft"] == 0 and image["left"] >= frame["left"], f"{path}: {image}"


def test_phone_screenshots_of_a_wide_table_and_a_wide_figure(screens: Any) -> None:
    """The bug zoo's catalogue table and Fig. 6.2 on a phone, for a person to look at."""
    screen: Screen = screens(390)
    page = screen.visit.page
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    settle(screen.visit, "book/appendix-bug-zoo.html")
    table = page.locator(".bd-article table").first
    table.scroll_into_view_if_needed()
    assert table.evaluate("(t) => t.scrollWidth > t.clientWidth"), "the table fits: pick another"
    assert table.evaluate("(t) => getComputedStyle(t).overflowX") == "auto"
    page.screenshot(path=SCREENSHOTS / "phone-bug-zoo-table.png")
    settle(screen.visit, "book/06-multi-head-attention.html")
    figure = page.locator("#fig-attention-split-path")
    figure.scroll_into_view_if_needed()
    page.wait_for_function(
        "() => document.querySelector('#fig-attention-split-path img').dataset.lfsLegible"
    )
    page.screenshot(path=SCREENSHOTS / "phone-fig-6-2.png")
    screen.seen.clear()  # these visits measured nothing


# One violation axe rates critical (an image without a text alternative), one serious (faint
# text) and one moderate (content outside every landmark, axe's "region" rule).
PLANTED_AXE = """<!doctype html><html lang="en"><head><title>planted</title></head><body>
<main><h1>Planted</h1><p style="color: #bbb; background: #fff">faint text</p>
<img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" width="10" height="10"></main>
<div>outside every landmark</div></body></html>"""


def test_axe_runs_every_rule_that_can_fail_the_page(browser: Browser) -> None:
    page = browser.new_page()
    page.set_content(PLANTED_AXE)
    page.add_script_tag(path=str(HTML / AXE))
    everything = {
        v["id"]: v["impact"]
        for v in page.evaluate(
            "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
        )
    }
    run = {v["id"]: v["impact"] for v in page.evaluate(AXE_RUN)}
    page.close()
    assert everything.get("region") == "moderate", everything  # found when every rule runs
    assert run == {"color-contrast": "serious", "image-alt": "critical"}, run
