"""Figures as a reader sees them: smallest text at least 11 CSS px as shown, full size on click."""

from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from playwright.sync_api import Browser

from llm_from_scratch.figures.style import MIN_TEXT_PX, legibility_of

from .conftest import HTML, SCREENSHOTS, Visit, built_pages, settle

FIGURE_IMAGES = ".bd-article .cell_output img, .bd-article figure img"
PAGES = [p for p in built_pages() if (HTML / p).is_file() and "<img" in (HTML / p).read_text()]


def served_file(url: str) -> Path:
    return HTML / unquote(urlsplit(url).path).lstrip("/")


@pytest.mark.parametrize("path", PAGES)
def test_figure_text_is_at_least_11px_as_displayed(visit: Visit, path: str) -> None:
    settle(visit, path)
    shown = visit.page.evaluate(
        f"() => [...document.querySelectorAll('{FIGURE_IMAGES}')]"
        ".map((image) => [image.currentSrc, image.getBoundingClientRect().width])"
    )
    small = []
    for url, width in shown:
        record = legibility_of(served_file(url).read_bytes())
        if record is None:
            small.append(f"{url}: no text-size record (not drawn as a BookFigure)")
            continue
        displayed = record.smallest_text_px * min(1.0, width / record.width_px)
        if displayed < MIN_TEXT_PX:
            small.append(
                f"{Path(url).name}: {record.width_px:g} px figure shown {width:.0f} px wide, "
                f"smallest text {displayed:.1f} px"
            )
    assert not small, f"{path}: text below {MIN_TEXT_PX:g} px\n" + "\n".join(small)
    assert not visit.problems, "\n".join(visit.problems)


def test_a_scaled_down_figure_opens_at_full_size(browser: Browser, site: str) -> None:
    # On a phone every figure wider than the screen is scaled down.
    context = browser.new_context(viewport={"width": 390, "height": 800})
    page = context.new_page()
    page.set_default_timeout(20_000)
    page.goto(site + PAGES[-1], wait_until="networkidle")
    image = page.locator("img.lfs-zoomable").first
    assert image.count(), f"no scaled-down figure on {PAGES[-1]} at 390 px"
    full = image.evaluate("(i) => parseFloat(i.style.width) || Number(i.getAttribute('width'))")
    box = image.bounding_box()
    assert box["width"] < full
    natural = image.evaluate("(img) => img.naturalHeight / img.naturalWidth")
    assert box["height"] / box["width"] == pytest.approx(natural, rel=0.02), "squashed figure"
    image.scroll_into_view_if_needed()
    image.click()
    viewer = page.locator("dialog.lfs-zoom")
    assert viewer.is_visible()
    assert viewer.locator("img").bounding_box()["width"] == pytest.approx(full, abs=1)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SCREENSHOTS / "figure-full-size-390px.png")
    page.keyboard.press("Escape")
    assert not viewer.is_visible()
    assert page.url.endswith(PAGES[-1]), "the click left the page"
    # Keyboard alone: the figure's link (or the figure, announced as a button) takes focus and
    # Enter opens the viewer.
    focusable = image.evaluate("(img) => img.closest('a.reference') ? 'link' : 'image'")
    (image.locator("xpath=..") if focusable == "link" else image).focus()
    page.keyboard.press("Enter")
    assert viewer.is_visible()
    viewer.get_by_role("button", name="Close").click()
    assert not viewer.is_visible()
    context.close()
