"""Every widget kind reads in the light and the dark theme: text contrast and a screenshot each."""

import json
import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page

from .conftest import HTML, LOW_CONTRAST, SCREENSHOTS, WIDGET_VIEW, Visit, built_pages, settle

STATE = re.compile(
    r'<script type="application/vnd.jupyter.widget-state\+json">(.*?)</script>', re.DOTALL
)
VIEW = re.compile(
    r'<script type="application/vnd.jupyter.widget-view\+json">(.*?)</script>', re.DOTALL
)


def widget_kinds() -> dict[str, tuple[str, str]]:
    """kind -> (page, model id) of its first view: predict kinds by spec, sliders by class."""
    found: dict[str, tuple[str, str]] = {}
    for path in built_pages():
        text = (HTML / path).read_text(encoding="utf-8") if (HTML / path).is_file() else ""
        state = STATE.search(text)
        if not state:
            continue
        models = json.loads(state.group(1))["state"]
        for view in VIEW.finditer(text):
            model_id = json.loads(view.group(1))["model_id"]
            model = models[model_id]["state"]
            spec = model.get("spec")
            if spec:
                kind = spec["kind"]
            elif "frames" in model and "value_texts" in model:  # a PrecomputedSlider
                kind = f"slider-{path.split('/')[-1].removesuffix('.html')}"  # each one
            else:
                continue
            found.setdefault(kind, (path, model_id))
    return found


KINDS = widget_kinds()
MARK_OUTPUT = """([views, modelId]) => {
  document.querySelectorAll(".cell_output[data-under-test]")
    .forEach((output) => delete output.dataset.underTest);  // an earlier test's mark
  const view = [...document.querySelectorAll(views)]
    .find((script) => JSON.parse(script.textContent).model_id === modelId);
  view.closest(".cell_output").dataset.underTest = "";
}"""


def themed_mode(page: Page) -> str:
    return page.evaluate("() => localStorage.getItem('mode')")


@pytest.fixture(scope="module")
def theme_pages(browser: Browser, site: str) -> Iterator[dict[str, Visit]]:
    """One browser page per theme for the module; a book page is loaded once per theme.

    The widget kinds live on a few pages, so consecutive kinds on one page share its load: each
    test marks and answers its own widget, which leaves the others as they were.
    """
    visits: dict[str, Visit] = {}
    contexts = []
    for mode in ("light", "dark"):
        context = browser.new_context(
            viewport={"width": 1280, "height": 900},
            color_scheme=mode,
            service_workers="block",
        )
        # The theme's own switch stores the reader's choice here; "auto" follows color_scheme.
        context.add_init_script(f"localStorage.setItem('mode', '{mode}')")
        page = context.new_page()
        page.set_default_timeout(20_000)
        visits[mode] = Visit(page, site)
        visits[mode].watch()
        contexts.append(context)
    yield visits
    for context in contexts:
        context.close()


@pytest.fixture(params=["light", "dark"])
def themed(request: pytest.FixtureRequest, theme_pages: dict[str, Visit]) -> Visit:
    """The theme's page, with the book page of the test's widget kind loaded (once per theme)."""
    visit = theme_pages[request.param]
    path = KINDS[request.node.callspec.params["kind"]][0]
    if not visit.page.url.endswith("/" + path):
        visit.problems.clear()
        settle(visit, path)
    return visit


# Code as Pygments writes it (token spans in a <pre>) on the dark theme's code background: one
# token too faint for 4.5:1, one fine, one faint but hidden; an icon at 3:1 that assistive
# technology skips (its threshold is 3:1).
PLANTED = """<div class="highlight" style="background: rgb(41, 49, 61)"><pre>
<span style="color: rgb(51, 51, 51)">faint</span> <span style="color: white">clear</span>
<span style="color: rgb(51, 51, 51); display: none">hidden</span></pre></div>
<p style="background: white"><span aria-hidden="true" style="color: rgb(148, 148, 148)">i</span>
</p>"""


def test_the_contrast_check_reports_faint_text_only(browser: Browser) -> None:
    page = browser.new_page()
    page.set_content(PLANTED)
    low = page.evaluate(LOW_CONTRAST, ["div.highlight pre > span, p > span", 4.5])
    page.close()
    assert len(low) == 1 and '"faint"' in low[0], low


def test_the_book_has_every_widget_kind() -> None:
    predict = {"number", "vector", "shape", "choice", "explain"}
    assert predict <= set(KINDS) and any(kind.startswith("slider-") for kind in KINDS), KINDS


@pytest.mark.parametrize("kind", sorted(KINDS, key=lambda kind: (KINDS[kind][0], kind)))  # by page
def test_widget_reads_in_both_themes(themed: Visit, kind: str) -> None:
    path, model_id = KINDS[kind]
    page = themed.page
    theme = page.evaluate("() => document.documentElement.dataset.theme")
    assert theme == themed_mode(page), "the page did not take the reader's colour scheme"
    page.evaluate(MARK_OUTPUT, [WIDGET_VIEW, model_id])
    output = page.locator(".cell_output[data-under-test]")
    root = output.locator(".lfs-predict, .lfs-slider").first
    root.scroll_into_view_if_needed()
    if kind.startswith("slider-"):
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        output.locator("input[type=range]").press("Home")  # the first frame: the smallest value
        output.screenshot(path=SCREENSHOTS / f"widget-{kind}-{theme}-first.png")
        output.locator("input[type=range]").press("End")  # the last frame: the largest value
    elif kind == "choice":
        output.locator("input[type=radio]").first.check()
        output.get_by_role("button", name="Check").click()
    else:
        output.locator(".lfs-predict__input").fill("1" if kind != "explain" else "no idea")
        output.get_by_role("button", name="Check").click()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    output.screenshot(path=SCREENSHOTS / f"widget-{kind}-{theme}.png")
    low = page.evaluate(LOW_CONTRAST, [root.element_handle(), 4.5])
    assert not low, f"{kind} on {path} ({theme}): text below 4.5:1 contrast\n" + "\n".join(low)
    assert not themed.problems, "\n".join(themed.problems)
