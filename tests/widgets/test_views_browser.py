"""The JavaScript views in Chromium: typed and picked answers, keyboard use, feedback, sliders.

Each view is mounted the way anywidget mounts it (the module string imported from a blob URL,
``render({model, el})`` with a model holding the Python-computed state), without a kernel.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from llm_from_scratch.widgets import (
    precomputed_slider,
    predict_choice,
    predict_explain,
    predict_number,
    predict_shape,
)
from tests.browser.session import close_contexts, shared_browser

HARNESS = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>widget views</title></head>
<body><main id="root"></main>
<script type="module">
window.keysSeenByPage = 0;
document.addEventListener("keydown", () => { window.keysSeenByPage += 1; });
window.mount = async (esm, css, state) => {
  const style = document.createElement("style");
  style.textContent = css;
  document.head.append(style);
  const url = URL.createObjectURL(new Blob([esm], { type: "text/javascript" }));
  const module = await import(url);
  const listeners = {};
  const model = {
    saved: [],
    get: (key) => state[key],
    set: (key, value) => { state[key] = value; },
    save_changes() { this.saved.push(state.index); },
    on: (name, fn) => { (listeners[name] ??= []).push(fn); },
    off: (name, fn) => { listeners[name] = (listeners[name] ?? []).filter((f) => f !== fn); },
  };
  const el = document.createElement("section");
  el.dataset.host = String(document.querySelectorAll("[data-host]").length);
  document.getElementById("root").append(el);
  await module.default.render({ model, el });
  (window.models ??= []).push(model);
  return el.dataset.host;
};
</script></body></html>"""


@pytest.fixture(scope="module")
def browser(request: pytest.FixtureRequest) -> Iterator[Any]:
    """Debian's Chromium, headless: the test process's one instance (tests/browser/session.py)."""
    browser = shared_browser(request.config)
    yield browser
    close_contexts(browser)


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh page with the harness; fails the test on any console error or page error."""
    page = browser.new_page()
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.set_content(HARNESS)
    yield page
    page.close()
    assert not errors, errors


def mount(page: Any, widget: Any) -> Any:
    """Render ``widget``'s view from its synced state; return the host element's locator."""
    state = widget.get_state()
    host = page.evaluate(
        "([esm, css, state]) => mount(esm, css, state)", [state["_esm"], state["_css"], state]
    )
    return page.locator(f'[data-host="{host}"]')


def lines(locator: Any) -> list[str]:
    """The visible text of ``locator``, one entry per non-blank line."""
    return [line for line in locator.inner_text().splitlines() if line.strip()]


def test_number_right_wrong_and_invalid_by_keyboard_and_button(page: Any) -> None:
    view = mount(page, predict_number("What is y0?", 5.5, reason="2 * 2 + 1.5."))
    box = view.get_by_role("textbox", name="What is y0?")
    feedback = view.get_by_role("status")
    assert feedback.get_attribute("aria-live") == "polite"
    box.fill("11/2")
    box.press("Enter")
    assert lines(feedback) == ["\u2713 Right. The answer is 5.5.", "Why: 2 * 2 + 1.5."]
    assert feedback.get_attribute("data-status") == "correct"
    box.fill("6")
    view.get_by_role("button", name="Check").click()
    assert lines(feedback) == ["\u2717 Not quite. Try again, or show the answer."]
    box.fill("1,,2")
    box.press("Enter")
    assert feedback.inner_text() == (
        "! There is an empty entry between commas; remove the extra comma."
    )
    assert feedback.get_attribute("data-status") == "invalid"
    assert page.evaluate("window.keysSeenByPage") == 0  # keys stay inside the widget


def test_a_wrong_answer_gets_a_second_try_then_the_answer(page: Any) -> None:
    view = mount(page, predict_number("What is y0?", 5.5, reason="2 * 2 + 1.5."))
    box = view.get_by_role("textbox", name="What is y0?")
    feedback = view.get_by_role("status")
    box.fill("-5.5")
    box.press("Enter")
    assert lines(feedback) == [
        "\u2717 Not quite: the sign is flipped. Try again, or show the answer."
    ]
    assert feedback.get_attribute("data-status") == "retry"
    assert "5.5." not in feedback.inner_text().replace("-5.5", "")
    for typo in ["abc", "", "5..5"]:  # unreadable input is not a try
        box.fill(typo)
        box.press("Enter")
        assert feedback.get_attribute("data-status") == "invalid", typo
    box.fill("11")
    view.get_by_role("button", name="Check").click()
    assert lines(feedback) == [
        "\u2717 Not quite: that is twice the answer. The answer is 5.5.",
        "Why: 2 * 2 + 1.5.",
    ]
    assert feedback.get_attribute("data-status") == "wrong"
    box.fill("5.5")
    box.press("Enter")
    assert feedback.get_attribute("data-status") == "correct"


def test_show_the_answer_whenever_the_reader_asks(page: Any) -> None:
    view = mount(page, predict_shape("Shape of `y`?", (4, 7, 3), reason="Last axis changes."))
    feedback = view.get_by_role("status")
    view.get_by_role("button", name="Show the answer").click()
    assert lines(feedback) == ["\u2192 The shape is (4, 7, 3).", "Why: Last axis changes."]
    assert feedback.get_attribute("data-status") == "revealed"
    box = view.get_by_role("textbox", name="Shape of y?")
    box.fill("4, 3, 7")
    box.press("Enter")
    assert lines(feedback) == [
        "\u2717 Not quite: axes 1 and 2 are swapped, as in a transposed shape. "
        "Try again, or show the answer."
    ]


def test_the_view_hides_the_details_reveal_beside_it(page: Any) -> None:
    # In the book and in JupyterLab the view and its <details> reveal share one output area.
    widget = predict_number("What is y0?", 5.5, reason="r.")
    page.evaluate(
        """(html) => {
          const area = document.createElement("div");
          area.className = "cell_output";
          area.innerHTML = html;
          document.getElementById("root").append(area);
        }""",
        widget.reveal()._repr_html_(),
    )
    assert page.locator("details.lfs-reveal").is_visible()  # no view yet: scripts may be off
    mount(page, widget)
    page.evaluate(
        """() => document.querySelector("#root > .cell_output")
          .prepend(document.querySelector("[data-host]"))"""
    )
    assert not page.locator("details.lfs-reveal").is_visible()


def test_shape_accepts_the_usual_spellings(page: Any) -> None:
    view = mount(page, predict_shape("Shape of `y`?", (4, 7, 3), reason="Last axis changes."))
    box = view.get_by_role("textbox", name="Shape of y?")
    assert view.locator(".lfs-predict__question code").inner_text() == "y"
    for text in ["[4, 7, 3]", "4,7,3", "(4, 7, 3)", "4 7 3"]:
        box.fill(text)
        box.press("Enter")
        assert view.get_by_role("status").get_attribute("data-status") == "correct", text


def test_choice_by_radio_and_check(page: Any) -> None:
    view = mount(
        page,
        predict_choice(
            "Which axis?", ["rows", "columns"], "columns", reason="Softmax runs along dim=-2."
        ),
    )
    feedback = view.get_by_role("status")
    view.get_by_role("button", name="Check").click()
    assert feedback.inner_text() == "! Pick an option first, then press Check."
    group = view.get_by_role("group", name="Which axis?")
    group.get_by_role("radio", name="rows").check()
    view.get_by_role("button", name="Check").click()
    assert feedback.inner_text() == "\u2717 Not quite. Try again, or show the answer."
    view.get_by_role("button", name="Check").click()
    assert feedback.inner_text().startswith("\u2717 Not quite. The answer is columns.")
    group.get_by_role("radio", name="columns").check()
    group.get_by_role("radio", name="columns").press("Enter")
    assert feedback.get_attribute("data-status") == "correct"


def test_explain_needs_text_then_shows_the_model_answer(page: Any) -> None:
    view = mount(page, predict_explain("Why scale?", "To keep the variance near one."))
    box = view.get_by_role("textbox", name="Why scale?")
    feedback = view.get_by_role("status")
    box.fill("   ")
    view.get_by_role("button", name="Check").click()
    assert feedback.inner_text() == "! Write your explanation first, then press Check."
    box.fill("Dot products grow with the width.")
    box.press("Control+Enter")
    assert view.locator(".lfs-predict__model").inner_text() == "To keep the variance near one."
    assert feedback.get_attribute("data-status") == "revealed"


def test_two_widgets_on_one_page_keep_separate_state(page: Any) -> None:
    first = mount(page, predict_number("First?", 1.0, reason="r."))
    second = mount(page, predict_choice("Second?", ["a", "b"], "a", reason="r."))
    first.get_by_role("textbox", name="First?").fill("1")
    first.get_by_role("textbox", name="First?").press("Enter")
    second.get_by_role("radio", name="b").check()
    second.get_by_role("button", name="Check").click()
    assert first.get_by_role("status").get_attribute("data-status") == "correct"
    assert second.get_by_role("status").get_attribute("data-status") == "retry"


def test_slider_swaps_precomputed_frames(page: Any) -> None:
    frames = [f"<table><tr><td>frame {i}</td></tr></table>" for i in range(3)]
    view = mount(page, precomputed_slider("temperature", [0.5, 1.0, 2.0], frames, initial_index=1))
    slider = view.get_by_role("slider", name="temperature")
    assert view.locator(".lfs-slider__frame").inner_text() == "frame 1"
    assert slider.get_attribute("aria-valuetext") == "1"
    slider.press("ArrowRight")
    assert view.locator(".lfs-slider__frame").inner_text() == "frame 2"
    assert view.locator("output").inner_text() == "2"
    assert page.evaluate("window.models[0].saved") == [2]
    slider.press("Home")
    assert view.locator(".lfs-slider__frame").inner_text() == "frame 0"
