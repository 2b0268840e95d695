"""Figures as a reader sees them: full size on click (text sizes as shown: test_screens.py)."""

import pytest
from playwright.sync_api import Browser

from .conftest import (
    FIGURE_IMAGES,
    HTML,
    SCREENSHOTS,
    ZOOM_MARKED,
    Visit,
    built_pages,
    settle,
)

PAGES = [p for p in built_pages() if (HTML / p).is_file() and "<img" in (HTML / p).read_text()]


def test_a_scaled_down_figure_opens_at_full_size(browser: Browser, site: str) -> None:
    # On a phone every figure wider than the screen is scaled down.
    context = browser.new_context(viewport={"width": 390, "height": 800})
    page = context.new_page()
    page.set_default_timeout(20_000)
    visit = Visit(page, site)
    visit.watch()  # the open requests settle waits for
    settle(visit, PAGES[-1])
    page.wait_for_function(ZOOM_MARKED, arg=FIGURE_IMAGES)  # sized by the figure's text
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
