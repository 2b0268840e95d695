"""The right-hand contents highlight names the section being read, long sections included.

Bootstrap's ScrollSpy highlighted nothing (or the entry before) while a section more than about
four window heights tall was read; web/static/theme-fixes.js replaces it with a rule of the
scroll position alone (the last heading past a reading line near the top of the window).
Desktop width, where the contents column is shown; motion reduced, so jumps are instant.
"""

from playwright.sync_api import Page

from .conftest import Visit, settle

CHAPTER = "book/06-multi-head-attention.html"  # several sections longer than 4 windows
WINDOW_HEIGHT = 900  # the visit fixture's viewport
# Each entry of the contents column: its hash and its section's height in CSS px.
ENTRIES = """() => [...document.querySelectorAll('.bd-toc-nav a.nav-link[href^="#"]')].map(
  (link) => [link.hash, document.getElementById(decodeURIComponent(link.hash.slice(1)))
    .getBoundingClientRect().height])"""
# The most deeply nested highlighted entry (its parents are highlighted too).
CURRENT = """() => { const active = document.querySelectorAll('.bd-toc-nav a.nav-link.active');
  return active.length ? active[active.length - 1].hash : null; }"""
HIGHLIGHTED = (
    "() => [...document.querySelectorAll('.bd-toc-nav a.nav-link.active')].map(a => a.hash)"
)
HEADING = """(hash) => document.getElementById(decodeURIComponent(hash.slice(1)))
  .querySelector(':scope > h2, :scope > h3, :scope > h4')"""
TO_HEADING = f"(hash) => ({HEADING})(hash).scrollIntoView()"
HEADING_TOP = f"(hash) => ({HEADING})(hash).getBoundingClientRect().top"
FRAMES = "() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))"


def open_chapter(visit: Visit) -> Page:
    visit.page.emulate_media(reduced_motion="reduce")
    settle(visit, CHAPTER)
    return visit.page


def test_a_long_section_is_highlighted_at_its_heading_and_while_it_is_read(visit: Visit) -> None:
    page = open_chapter(visit)
    long = [hash for hash, height in page.evaluate(ENTRIES) if height > 4 * WINDOW_HEIGHT]
    assert long, f"{CHAPTER} has no section taller than 4 windows: pick a chapter that has"
    for hash in long:
        page.evaluate(TO_HEADING, hash)  # where following its contents entry leaves it
        page.evaluate(FRAMES)
        assert page.evaluate(CURRENT) == hash, (
            f"with the heading of {hash} at the top, the contents highlight "
            f"{page.evaluate(HIGHLIGHTED)}"
        )
        page.mouse.move(640, WINDOW_HEIGHT / 2)  # over the article, not a sidebar
        page.mouse.wheel(0, 2 * WINDOW_HEIGHT)  # further into the section
        page.wait_for_function(f"(hash) => ({HEADING_TOP})(hash) < 0", arg=hash)
        page.evaluate(FRAMES)
        assert hash in page.evaluate(HIGHLIGHTED), (
            f"two windows into {hash}, the contents highlight {page.evaluate(HIGHLIGHTED)}"
        )
    assert not visit.problems, "\n".join(visit.problems)


def test_following_each_contents_entry_highlights_that_entry(visit: Visit) -> None:
    page = open_chapter(visit)
    for hash, _ in page.evaluate(ENTRIES):
        page.locator(f'.bd-toc-nav a.nav-link[href="{hash}"]').click()
        page.wait_for_function("(hash) => location.hash === hash", arg=hash)
        page.evaluate(FRAMES)
        assert page.evaluate(CURRENT) == hash, (
            f"after following {hash}, the contents highlight {page.evaluate(HIGHLIGHTED)}"
        )
    assert not visit.problems, "\n".join(visit.problems)
