"""Serve the built book on 127.0.0.1 and drive Debian's Chromium through Playwright."""

import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.error import URLError
from urllib.parse import urlsplit
from urllib.request import urlopen

import pytest
from playwright.sync_api import Browser, Page, Request

from tests.browser.session import close_contexts, shared_browser

ROOT = Path(__file__).resolve().parents[2]
# BOOK_HTML points the tests at another build (e.g. `jupyter-book build . --path-output DIR`
# puts it in DIR/_build/html); screenshots go beside that html folder, in screenshots/.
HTML = Path(os.environ.get("BOOK_HTML", ROOT / "_build" / "html")).resolve()
SCREENSHOTS = HTML.parent / "screenshots"
BUILD_COMMAND = "bash tools/install_and_build.sh"
MATH = "span.math, div.math"
REDIRECT = re.compile(r'<meta http-equiv="refresh"', re.IGNORECASE)
WIDGET_VIEW = 'script[type="application/vnd.jupyter.widget-view+json"]'
# Installed before a page's own scripts: counts the page's timers shorter than 500 ms (the quiet
# window of Playwright's "networkidle") that have not fired yet, so settle waits for the work
# they start. (Sphinx's search pulses its "Searching" dots every 500 ms while it runs.)
SHORT_TIMERS = """(() => {
  const open = new Set();
  const { setTimeout: set, clearTimeout: clear } = window;
  window.setTimeout = function (callback, delay, ...rest) {
    const handle = set.call(window, (...args) => {
      open.delete(handle);
      return typeof callback === "function" ? callback(...args) : Function(callback)();
    }, delay, ...rest);
    if (!(Number(delay) >= 500)) open.add(handle);
    return handle;
  };
  window.clearTimeout = function (handle) {
    open.delete(handle);
    return clear.call(window, handle);
  };
  Object.defineProperty(window, "lfsShortTimers", { get: () => open.size });
})()"""


def built_pages() -> list[str]:
    """Every HTML page of the built book, relative to _build/html (theme templates excluded)."""
    pages = [
        path.relative_to(HTML).as_posix()
        for path in HTML.rglob("*.html")
        if path.relative_to(HTML).parts[0] not in {"_static", "_sources", "_images"}
    ]
    # Without a build, one placeholder keeps the tests (and their clear failure) from vanishing.
    return sorted(pages) or ["book-not-built"]


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="session")
def site() -> Iterator[str]:
    """Base URL of _build/html served by a thread on a free port of 127.0.0.1."""
    if not (HTML / "index.html").is_file():
        pytest.fail(
            f"{HTML}/index.html is missing: build the book first with "
            f"`{BUILD_COMMAND}` (see README), then run `pytest --nbval` again."
        )
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(QuietHandler, directory=str(HTML)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/"
    server.shutdown()
    server.server_close()
    thread.join()


# Module scope, on the process's one Chromium (tests/browser/session.py): each module's contexts
# are closed at its end, as if it had had a browser of its own.
@pytest.fixture(scope="module")
def browser(request: pytest.FixtureRequest) -> Iterator[Browser]:
    browser = shared_browser(request.config)
    yield browser
    close_contexts(browser)


@dataclass
class Visit:
    """What one page did while it loaded: every problem as a readable line."""

    page: Page
    site: str
    problems: list[str] = field(default_factory=list)
    pending: set[Request] = field(default_factory=set)  # requests sent, not yet answered
    watching: bool = False

    def watch(self) -> None:
        host = urlsplit(self.site).netloc
        self.watching = True
        self.page.add_init_script(SHORT_TIMERS)
        self.page.on("request", lambda request: self._request(request, host))
        self.page.on("requestfinished", lambda request: self.pending.discard(request))
        self.page.on("requestfailed", self._failed)
        self.page.on(
            "response",
            lambda response: (
                response.status >= 400
                and self.problems.append(f"HTTP {response.status}: {response.url}")
            ),
        )
        self.page.on(
            "console",
            lambda message: (
                message.type == "error"
                and self.problems.append(f"console error: {message.text} at {message.location}")
            ),
        )
        self.page.on("pageerror", lambda error: self.problems.append(f"page error: {error}"))

    def _request(self, request: Request, host: str) -> None:
        self.pending.add(request)
        parts = urlsplit(request.url)
        if parts.scheme in {"data", "blob", "about"}:
            return
        if parts.netloc != host:
            self.problems.append(f"request to another host: {request.url}")

    def _failed(self, request: Request) -> None:
        self.pending.discard(request)
        self.problems.append(f"request failed: {request.url} ({request.failure})")


@pytest.fixture
def visit(browser: Browser, site: str) -> Iterator[Visit]:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, service_workers="block")
    page = context.new_page()
    page.set_default_timeout(20_000)
    tracker = Visit(page, site)
    tracker.watch()
    yield tracker
    context.close()


# Every formula typeset, every widget view rendered (anywidget-lite.js renders each view into a
# .widget-subarea placed before its script), every image finished, every web font loaded.
TYPESET = f"""() => [...document.querySelectorAll('{MATH}')]
  .every((math) => math.querySelector('mjx-container'))"""
RENDERED = "(views) => document.querySelectorAll('.widget-subarea > *').length >= views"
IMAGES_DONE = "() => [...document.images].every((image) => image.complete)"
FONTS_DONE = "() => document.fonts.status === 'loaded'"
# Over two animation frames: how many resources the page added, and how many short timers are
# still to fire at the end (-1 without the timer count: a page opened before Visit.watch).
BUSY = """async () => {
  const count = () => performance.getEntriesByType('resource').length;
  const before = count();
  await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
  return [count() - before, window.lfsShortTimers ?? -1];
}"""
# Two frames for a style change to start its transitions, then every finite animation and
# transition on the page to its end (an infinite one never ends: it is not waited for).
MOTION_DONE = """async () => {
  await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
  const finite = document.getAnimations()
    .filter((animation) => animation.effect?.getComputedTiming().endTime !== Infinity);
  await Promise.all(finite.map((animation) => animation.finished.catch(() => null)));
  await new Promise((done) => requestAnimationFrame(done));
}"""
FIGURE_IMAGES = ".bd-article .cell_output img, .bd-article figure img"
# figure-zoom.js marks each figure image once it has read the figure's text sizes.
ZOOM_MARKED = """(images) => [...document.querySelectorAll(images)]
  .every((image) => image.dataset.lfsLegible)"""
# Contrast of every text element inside `roots` (an element, or a selector for every element it
# matches) against the colour actually behind it (the first opaque background among its
# ancestors, blended with translucent ones). WCAG 2 formula.
LOW_CONTRAST = """([roots, minimum]) => {
  const parse = (c) => {
    const m = c.match(/rgba?\\(([^)]+)\\)/);
    if (!m) return null;
    const [r, g, b, a = 1] = m[1].split(/[ ,/]+/).filter(Boolean).map(Number);
    return [r, g, b, a];
  };
  const over = (top, under) => top.slice(0, 3).map((v, i) => v * top[3] + under[i] * (1 - top[3]))
    .concat([1]);
  const background = (node) => {
    const layers = [];
    for (let n = node; n && n.nodeType === 1; n = n.parentElement) {
      const c = parse(getComputedStyle(n).backgroundColor);
      if (c && c[3] > 0) { layers.push(c); if (c[3] >= 1) break; }
    }
    let colour = [255, 255, 255, 1];
    for (const layer of layers.reverse()) colour = over(layer, colour);
    return colour;
  };
  const lum = (c) => {
    const [r, g, b] = c.slice(0, 3).map((v) => {
      v /= 255;
      return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const ratio = (a, b) => (Math.max(lum(a), lum(b)) + 0.05) / (Math.min(lum(a), lum(b)) + 0.05);
  const bad = [];
  const texts = [];
  for (const root of typeof roots === "string" ? document.querySelectorAll(roots) : [roots]) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let t = walker.nextNode(); t; t = walker.nextNode()) texts.push(t);
  }
  for (const t of texts) {
    const node = t.parentElement;
    if (!t.textContent.trim() || !node.getClientRects().length) continue;
    const style = getComputedStyle(node);
    if (style.visibility !== "visible") continue;
    const svg = node instanceof SVGElement;
    let fg = parse(svg ? style.fill : style.color);
    if (!fg) continue;
    if (svg) fg[3] *= Number(style.fillOpacity);
    const bg = background(svg ? node.ownerSVGElement.parentElement : node);
    const value = ratio(over(fg, bg), bg);
    // A decorative icon hidden from assistive technology (its words say the same) is a graphic:
    // WCAG's non-text minimum, 3:1.
    const needed = node.closest("[aria-hidden=true]") ? 3 : minimum;
    if (value < needed)
      bad.push(`${value.toFixed(2)}: "${t.textContent.trim().slice(0, 40)}" ` +
               `(${svg ? style.fill : style.color} on rgb(${bg.slice(0, 3).map(Math.round)}))`);
  }
  return bad;
}"""

QUIET_ROUNDS = 2  # consecutive checks with no request open and no resource added
QUIET_TIMEOUT = 20.0  # s: the pages' default timeout


def settle(visit: Visit, path: str) -> None:
    """Open the page and wait until its math, widgets, images, fonts and requests have finished.

    Explicit conditions instead of Playwright's "networkidle" (500 ms without traffic): the load
    event, each of the page's own end states, then no request open (every request the page sent
    answered or failed, tracked through Visit.watch's events, so each one has been checked), no
    timer shorter than 500 ms waiting to fire (the work one starts is waited for too) and no
    resource added over two animation frames, twice in a row.
    """
    page = visit.page
    assert visit.watching, "settle needs a watched Visit (call visit.watch() first)"
    page.goto(visit.site + path, wait_until="load")
    if REDIRECT.search((HTML / urlsplit(path).path).read_text(encoding="utf-8")):
        # A redirect stub (index.html): settle on the page it sends the reader to.
        page.wait_for_url(lambda url: not url.endswith("/" + path))
        page.wait_for_load_state("load")
    if page.locator(MATH).count():
        page.wait_for_function(TYPESET)
    views = page.locator(WIDGET_VIEW).count()
    if views:
        page.wait_for_function(RENDERED, arg=views)
    page.wait_for_function(IMAGES_DONE)
    page.wait_for_function(FONTS_DONE)
    wait_until_quiet(visit, path)
    page.wait_for_function(IMAGES_DONE)  # an image requested while it went quiet


def wait_for_motion(page: Page) -> None:
    """Wait until the transitions and animations a click or key press started have finished."""
    page.evaluate(MOTION_DONE)


def wait_until_quiet(visit: Visit, path: str) -> None:
    """Return once no request or short timer is open and no resource was added, QUIET_ROUNDS
    checks in a row."""
    deadline = time.monotonic() + QUIET_TIMEOUT
    quiet = 0
    while quiet < QUIET_ROUNDS:
        grew, timers = visit.page.evaluate(BUSY)  # also lets Playwright deliver the events
        assert timers >= 0, f"{path}: the page has no timer count (Visit.watch came after it)"
        quiet = quiet + 1 if not grew and not timers and not visit.pending else 0
        if quiet < QUIET_ROUNDS and time.monotonic() > deadline:
            open_urls = sorted(request.url for request in visit.pending)
            pytest.fail(
                f"{path}: {len(open_urls)} requests and {timers} timers shorter than 500 ms "
                f"still open {QUIET_TIMEOUT:g} s after the page loaded (a page must finish "
                f"loading): {open_urls[:5]}"
            )


def free_port() -> int:
    """A TCP port on loopback that nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def jupyterlab(folder: Path) -> Iterator[str]:
    """A real JupyterLab serving ``folder`` on loopback (no token, no news): yields its URL."""
    port = free_port()
    # `-m jupyterlab`, not `-m jupyter lab`: `jupyter` runs whichever `jupyter-lab` comes first
    # on PATH, which may belong to another environment (and start that one's kernel).
    server = subprocess.Popen(
        [
            sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root",
            f"--port={port}", "--ServerApp.ip=127.0.0.1", "--IdentityProvider.token=",
            "--ServerApp.password=", f"--ServerApp.root_dir={folder}",
            "--LabApp.news_url=None", "--LabApp.expose_app_in_browser=True",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/"
    try:
        wait_until_serving(server, url)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)


LAB_START_TIMEOUT = 120.0  # s: a readiness deadline, not a timed assertion


def wait_until_serving(server: subprocess.Popen, url: str) -> None:
    """Return once the server answers its status API (``GET api/status`` is 200)."""
    deadline = time.monotonic() + LAB_START_TIMEOUT
    while True:
        if server.poll() is not None:
            pytest.fail(f"JupyterLab exited with status {server.returncode} before serving {url}")
        try:
            with urlopen(url + "api/status", timeout=5) as response:
                if response.status == 200:
                    return
        except (URLError, OSError):
            pass  # not listening yet
        if time.monotonic() > deadline:
            pytest.fail(f"JupyterLab did not answer {url}api/status in {LAB_START_TIMEOUT:g} s")
        time.sleep(0.05)  # the interval between two polls of the condition


@pytest.fixture(scope="session")
def lab_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """One JupyterLab per test process: its URL and the folder it serves.

    Shared by the JupyterLab modules (the root conftest.py keeps them in one pytest-xdist
    worker); each copies its own chapter files in, under names the other does not use.
    """
    folder = tmp_path_factory.mktemp("jupyterlab")
    with jupyterlab(folder) as url:
        yield url, folder
