"""Sphinx extension: ``{eval}`glued["key:spec"]` `` in a chapter's prose pastes a glued value.

A chapter's prose shows its numbers with ``{eval}`glued["loss_value:.6f"]` ``. In JupyterLab,
jupyterlab-myst evaluates that expression in the kernel, where ``glued``
(``llm_from_scratch.precision.glued``) formats the value the chapter glued, so the sentence
follows a fixture edit. In the book build (``execute_notebooks: force``) this role replaces
myst-nb's ``{eval}``, which needs ``execute_notebooks: inline`` and evaluates at the point of the
prose, not after the whole notebook as JupyterLab does: it pastes the glued value exactly as
``{glue:text}`loss_value:.6f` `` does (myst-nb's own role, same HTML), from the glue record that
nbval compares. Any other expression is a build warning (an error under ``--warningiserror``):
every number a reader sees must come from a glue record, so nbval checks it.

Listed in `_config.yml` after ``myst_nb`` (tools/ is on ``sys.path`` through
``local_extensions``).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from docutils import nodes
from myst_nb.core.variables import create_warning
from myst_nb.ext.glue.roles import PasteTextRole

if TYPE_CHECKING:
    from sphinx.application import Sphinx

# glued["key"] or glued['key:.6f']: the only expression prose may evaluate.
GLUED = re.compile(r"""^\s*glued\[(?P<quote>["'])(?P<spec>[^"'\\]+)(?P=quote)\]\s*$""")


def glued_spec(expression: str) -> str | None:
    """``'key:spec'`` for ``glued["key:spec"]``, None for any other expression."""
    match = GLUED.match(expression)
    return match.group("spec") if match else None


class GluedEvalRole(PasteTextRole):
    """``{eval}`glued["key:spec"]` ``: the glued text, as ``{glue:text}`key:spec` ``."""

    def run(self) -> tuple[list[nodes.Node], list[nodes.system_message]]:
        spec = glued_spec(self.text)
        if spec is None:
            message = (
                f'{{eval}}`{self.text}`: prose may only evaluate glued["key"] or '
                'glued["key:spec"], a value glued with llm_from_scratch.precision.glue'
            )
            return [], [create_warning(message, self.document, self.line, subtype="eval")]
        self.text = spec
        return super().run()


def setup(app: Sphinx) -> dict[str, Any]:
    app.setup_extension("myst_nb")  # registers myst-nb's {eval}, replaced here
    app.add_role("eval", GluedEvalRole(), override=True)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
