"""A reader can reach other chapters and the page's sections at desktop and phone widths."""

from collections.abc import Iterator
from functools import cache

import pytest
from playwright.sync_api import Browser, Locator, Page

from .conftest import HTML, SCREENSHOTS, Visit, built_pages, settle, wait_for_motion

DESKTOP, PHONE = 1280, 390
PRIMARY, SECONDARY = ".bd-sidebar-primary", ".bd-sidebar-secondary"
# A page's contents list, and the notebook web/book_assets.py adds to its download menu.
PAGE_MARKS = ('<nav class="bd-toc-nav page-toc"', '<meta name="lfs:notebook"')
# True when a reader can see and click the element: rendered, not hidden, inside the viewport
# and not covered (the topmost element at its centre is the element or one of its children).
SEEN = """(node) => {
  const style = getComputedStyle(node);
  const box = node.getBoundingClientRect();
  if (style.visibility !== "visible" || style.display === "none" || Number(style.opacity) === 0)
    return false;
  if (box.width < 1 || box.height < 1) return false;
  const x = box.left + Math.min(box.width / 2, 20), y = box.top + Math.min(box.height / 2, 10);
  if (x < 0 || y < 0 || x >= innerWidth || y >= innerHeight) return false;
  const top = document.elementFromPoint(x, y);
  return top !== null && (node === top || node.contains(top));
}"""


@cache  # each of the module's seven page loads asks; the build does not change meanwhile
def chapter_page() -> str:
    """The shortest page with a contents list and a notebook to download.

    The chapter list, the contents list and the download menu come from the theme's one page
    template, the same on every page; a short page loads in a fraction of a long chapter's time.
    """
    pages = [
        path
        for path in built_pages()
        if path.startswith("book/")
        and (HTML / path).is_file()
        and all(mark in (HTML / path).read_text(encoding="utf-8") for mark in PAGE_MARKS)
    ]
    if not pages:
        pytest.fail(f"no page in {HTML} has a contents list and a notebook: build the book first")
    return min(pages, key=lambda path: (HTML / path).stat().st_size)


@pytest.fixture(params=[DESKTOP, PHONE], ids=["desktop", "phone"])
def reader(request: pytest.FixtureRequest, browser: Browser, site: str) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": request.param, "height": 900})
    page = context.new_page()
    page.set_default_timeout(10_000)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    visit = Visit(page, site)
    visit.watch()  # the open requests settle waits for
    settle(visit, chapter_page())
    yield page
    assert not errors, "\n".join(errors)
    context.close()


def seen(locator: Locator) -> bool:
    return bool(locator.evaluate(SEEN))


def visible_button(page: Page, selector: str) -> Locator:
    """The one button matching ``selector`` a reader can see and press."""
    buttons = page.locator(selector)
    shown = [buttons.nth(i) for i in range(buttons.count()) if seen(buttons.nth(i))]
    assert len(shown) == 1, f"{len(shown)} visible {selector} buttons (of {buttons.count()})"
    return shown[0]


def first_link(page: Page, sidebar: str) -> Locator:
    return page.locator(f"{sidebar} nav a").first


def test_menu_button_opens_the_chapter_list(reader: Page) -> None:
    page, width = reader, reader.viewport_size["width"]
    other_chapter = page.locator(f"{PRIMARY} nav a[href$='.html']:not(.current)").first
    if width == DESKTOP:
        # Desktop: the list is shown; the menu button collapses it and brings it back.
        assert seen(other_chapter), "the chapter list should be visible on a desktop screen"
        visible_button(page, ".primary-toggle").click()
        wait_for_motion(page)  # the theme's slide-out transition
        assert not seen(other_chapter), "the menu button did not collapse the chapter list"
        visible_button(page, ".primary-toggle").click()
    else:
        # Phone: the list is a drawer, closed until the menu button opens it.
        assert not seen(other_chapter), "the chapter drawer should start closed on a phone"
        visible_button(page, ".primary-toggle").click()
    wait_for_motion(page)
    assert seen(other_chapter), "the menu button did not open the chapter list"
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SCREENSHOTS / f"navigation-menu-{width}px.png")
    target = other_chapter.get_attribute("href")
    other_chapter.click()
    page.wait_for_url(lambda url: url.split("#")[0].endswith(target.split("/")[-1]))


def test_contents_button_opens_the_section_list(reader: Page) -> None:
    page, width = reader, reader.viewport_size["width"]
    section = first_link(page, SECONDARY)
    assert section.count(), "the page has no contents list"
    if width == PHONE:
        assert not seen(section), "the contents drawer should start closed on a phone"
        visible_button(page, ".secondary-toggle").click()
        wait_for_motion(page)
    # On a desktop the contents list is shown beside the page without a button.
    assert seen(section), "the page's contents list is not visible"
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SCREENSHOTS / f"navigation-contents-{width}px.png")
    anchor = section.get_attribute("href")
    section.click()
    page.wait_for_url(lambda url: url.endswith(anchor))


def test_one_search_control(reader: Page) -> None:
    search = reader.locator(".search-button__button, input[type='search']")
    shown = [search.nth(i) for i in range(search.count()) if seen(search.nth(i))]
    assert len(shown) == 1, f"{len(shown)} visible search controls"


# The download menu is the same at every width: checked on the desktop only.
@pytest.mark.parametrize("reader", [DESKTOP], ids=["desktop"], indirect=True)
def test_download_menu_offers_the_executed_notebook(reader: Page) -> None:
    page = reader
    page.locator(".dropdown-download-buttons button.dropdown-toggle").click()
    items = page.locator(".dropdown-download-buttons .dropdown-item")
    labels = [items.nth(i).inner_text().strip() for i in range(items.count())]
    assert ".md" in labels and ".ipynb" in labels, labels
    link = items.nth(labels.index(".ipynb"))
    assert link.is_visible()
    response = page.request.get(link.evaluate("(a) => a.href"))
    assert response.ok, response.status
    notebook = response.json()
    assert notebook["nbformat"] == 4 and notebook["cells"], "not a notebook"
    outputs = [cell.get("outputs") for cell in notebook["cells"] if cell["cell_type"] == "code"]
    assert any(outputs), "the notebook carries no outputs"
