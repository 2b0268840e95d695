"""Accessibility: the widgets can be reached and answered with the keyboard alone.

axe-core's check of every page runs in test_screens.py, on the visit the other page checks share.
"""

import json

import pytest
from playwright.sync_api import Page

from .conftest import HTML, WIDGET_VIEW, Visit, built_pages, settle

MAX_TABS = 400


def first_page_with(kind: str) -> str:
    for path in built_pages():
        text = (HTML / path).read_text(encoding="utf-8") if (HTML / path).is_file() else ""
        if f'"kind": "{kind}"' in text or (kind == "slider" and '"value_texts"' in text):
            return path
    pytest.fail(f"no page of the built book has a {kind} widget")


def tab_until(page: Page, test: str) -> None:
    """Press Tab until the focused element satisfies the JS predicate ``test``."""
    for _ in range(MAX_TABS):
        page.keyboard.press("Tab")
        if page.evaluate(f"() => {{ const el = document.activeElement; return {test}; }}"):
            return
    pytest.fail(f"{MAX_TABS} presses of Tab never reached an element where {test}")


SPEC_OF_FOCUSED_FORM = """(views) => {
  const form = document.activeElement.closest("form.lfs-predict");
  const state = 'script[type="application/vnd.jupyter.widget-state+json"]';
  const models = JSON.parse(document.querySelector(state).textContent).state;
  for (const view of document.querySelectorAll(views)) {
    const output = view.closest(".cell_output");
    if (output && output.contains(form))
      return models[JSON.parse(view.textContent).model_id].state.spec;
  }
  return null;
}"""


def test_number_question_by_keyboard_alone(visit: Visit) -> None:
    path = first_page_with("number")
    settle(visit, path)
    page = visit.page
    tab_until(page, "el.matches('.lfs-predict[data-kind=number] .lfs-predict__input')")
    spec = page.evaluate(SPEC_OF_FOCUSED_FORM, WIDGET_VIEW)
    page.keyboard.type(spec["answer_text"])
    page.keyboard.press("Enter")
    feedback = page.locator(".lfs-predict:focus-within .lfs-predict__feedback")
    assert feedback.get_attribute("data-status") == "correct", json.dumps(spec)
    # Tab moves on to the Check button, which Space also presses.
    page.keyboard.press("Tab")
    assert page.evaluate("() => document.activeElement.matches('.lfs-predict__check')")
    page.keyboard.press("Space")
    assert feedback.get_attribute("data-status") == "correct"
    assert not visit.problems, "\n".join(visit.problems)


def test_choice_question_by_keyboard_alone(visit: Visit) -> None:
    path = first_page_with("choice")
    settle(visit, path)
    page = visit.page
    tab_until(page, "el.matches('.lfs-predict[data-kind=choice] input[type=radio]')")
    spec = page.evaluate(SPEC_OF_FOCUSED_FORM, WIDGET_VIEW)
    options = spec["options"]
    answer = options.index(spec["answer_text"]) if spec["answer_text"] in options else None
    assert answer is not None, json.dumps(spec)
    page.keyboard.press("Space")  # selects the focused (first) option
    for _ in range(answer):
        page.keyboard.press("ArrowDown")  # arrows move the selection within the group
    page.keyboard.press("Tab")
    assert page.evaluate("() => document.activeElement.matches('.lfs-predict__check')")
    page.keyboard.press("Enter")
    feedback = page.locator(".lfs-predict:focus-within .lfs-predict__feedback")
    assert feedback.get_attribute("data-status") == "correct"
    assert not visit.problems, "\n".join(visit.problems)


def test_slider_by_keyboard_alone(visit: Visit) -> None:
    path = first_page_with("slider")
    settle(visit, path)
    page = visit.page
    tab_until(page, "el.matches('.lfs-slider input[type=range]')")
    before = page.evaluate("() => document.activeElement.closest('.lfs-slider').innerText")
    page.keyboard.press("ArrowRight")
    after = page.evaluate("() => document.activeElement.closest('.lfs-slider').innerText")
    assert after != before, "ArrowRight did not move the slider to another frame"
    assert not visit.problems, "\n".join(visit.problems)
