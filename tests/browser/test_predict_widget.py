"""A predict-then-check question in the static book: a second try, the answer, bad input."""

import pytest

from .conftest import HTML, SCREENSHOTS, WIDGET_VIEW, Visit, built_pages, settle

WIDGET_CLASS = "llm_from_scratch.widgets.predict.PredictThenCheck"

# Marks the first shape or number question on the page, its view and its <details> reveal;
# returns that question's spec, read from the widget state embedded in the page.
MARK_QUESTION = """(viewSelector) => {
  const state = 'script[type="application/vnd.jupyter.widget-state+json"]';
  const models = JSON.parse(document.querySelector(state).textContent).state;
  for (const view of document.querySelectorAll(viewSelector)) {
    const spec = models[JSON.parse(view.textContent).model_id].state.spec;
    if (!spec || !["shape", "number"].includes(spec.kind)) continue;
    view.previousElementSibling.querySelector("form.lfs-predict").dataset.underTest = "";
    view.parentElement.querySelector("details.lfs-reveal").dataset.underTest = "";
    return spec;
  }
  return null;
}"""


def page_with_questions() -> str:
    for path in built_pages():
        if (HTML / path).is_file() and WIDGET_CLASS in (HTML / path).read_text():
            return path
    pytest.fail(f"no page of the built book embeds a {WIDGET_CLASS} widget")


def wrong_answer(spec: dict) -> str:
    if spec["kind"] == "shape":
        return ", ".join(str(length + 1) for length in spec["answer"])
    return str(spec["answer"] + 10 * spec["tolerance"] + 1)


def test_a_wrong_answer_gets_a_second_try_then_the_answer(visit: Visit) -> None:
    path = page_with_questions()
    settle(visit, path)
    page = visit.page
    spec = page.evaluate(MARK_QUESTION, WIDGET_VIEW)
    assert spec, f"{path} has no shape or number question to answer"
    form = page.locator("form.lfs-predict[data-under-test]")
    field, feedback = form.locator(".lfs-predict__input"), form.locator(".lfs-predict__feedback")
    reason = feedback.locator(".lfs-predict__reason")

    # The first wrong try: another try, no answer, no reason. Mistyping is not a try.
    for typed, status in [(wrong_answer(spec), "retry"), ("abc", "invalid"), ("", "invalid")]:
        field.fill(typed)
        form.get_by_role("button", name="Check").click()
        assert feedback.get_attribute("data-status") == status, f"{typed!r} on {path}"
        assert "Traceback" not in feedback.inner_text()
        assert not reason.count()
    assert field.is_editable()
    # The second wrong try shows the answer and why.
    field.fill(wrong_answer(spec))
    field.press("Enter")
    assert feedback.get_attribute("data-status") == "wrong"
    assert spec["answer_text"] in feedback.inner_text()
    assert reason.is_visible()
    field.fill(spec["answer_text"])
    form.get_by_role("button", name="Check").click()
    assert feedback.get_attribute("data-status") == "correct"
    assert reason.is_visible()

    # The view's own button replaces the <details> reveal, which stays for pages run without
    # scripts.
    reveal = page.locator("details.lfs-reveal[data-under-test]")
    assert reveal.count() == 1 and not reveal.is_visible()
    form.get_by_role("button", name="Show the answer").click()
    assert feedback.get_attribute("data-status") == "revealed"
    assert spec["answer_text"] in feedback.inner_text()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    form.locator("xpath=ancestor::div[contains(@class, 'cell_output')]").screenshot(
        path=SCREENSHOTS / "predict-then-check-answered.png"
    )
    assert not visit.problems, "\n".join(visit.problems)
