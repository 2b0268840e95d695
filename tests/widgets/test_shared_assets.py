"""A page's widget state keeps each view module and stylesheet once (web/book_assets.py)."""

from __future__ import annotations

import json

from llm_from_scratch.widgets import precomputed_slider, predict_number, predict_shape
from web.book_assets import SHARED_KEY, _script_body, share_widget_assets


def page_state(*widgets: object) -> dict:
    """The widget-state document myst-nb embeds: model id -> {model_name, state}."""
    return {
        "version_major": 2,
        "version_minor": 0,
        "state": {w.model_id: {"model_name": "AnyModel", "state": w.get_state()} for w in widgets},
    }


def test_each_module_and_stylesheet_is_stored_once_and_named_by_every_model() -> None:
    widgets = [
        predict_number("a?", 1.0, reason="r."),
        predict_shape("b?", (2, 3), reason="r."),
        precomputed_slider("k", [1, 2], ["<b>1</b>", "<b>2</b>"]),
    ]
    document = page_state(*widgets)
    shared = share_widget_assets(document)
    table = shared[SHARED_KEY]
    # Two modules (predict, slider) and one stylesheet, whatever the number of widgets.
    assert sorted(table.values()) == sorted({widgets[0]._esm, widgets[2]._esm, widgets[0]._css})
    for widget in widgets:
        state = shared["state"][widget.model_id]["state"]
        assert table[state["_esm"]] == widget._esm
        assert table[state["_css"]] == widget._css
        original = document["state"][widget.model_id]["state"]
        assert {k: v for k, v in state.items() if k not in ("_esm", "_css")} == {
            k: v for k, v in original.items() if k not in ("_esm", "_css")
        }
    assert len(json.dumps(shared)) < len(json.dumps(document)) * 0.5


def test_the_shared_state_stays_safe_inside_a_script_element() -> None:
    widget = predict_number("Is `</script>` text?", 1.0, reason="</script>")
    body = _script_body(json.dumps(share_widget_assets(page_state(widget))))
    assert "</script>" not in body
    assert json.loads(body)["state"][widget.model_id]["state"]["spec"]["reason"] == "</script>"
