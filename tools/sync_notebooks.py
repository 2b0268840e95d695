"""Re-execute every chapter and write its paired notebook: `python tools/sync_notebooks.py`.

Each MyST Markdown notebook `book/*.md` (a file with a jupytext header) is the source of truth.
This command converts it with jupytext, runs it top to bottom in a fresh `python3` kernel
(working directory `book/`, as in the book build and in nbval), writes `book/<same name>.ipynb`
with its outputs, and rewrites the `.md` in jupytext's canonical form with the kernel's
`language_info` in its header. JupyterLab writes the kernel's `kernelspec` and `language_info`
into every notebook it opens, saves numbers as a browser writes them (256.0 as 256) and a `.md`
in that canonical form, so with all of these stored as it writes them, opening and saving a
chapter changes nothing (tests/test_jupyterlab_forms.py,
tests/browser/test_jupyterlab_roundtrip.py). The result is deterministic: cell ids come from
cell positions, no execution timestamps are kept, and widget model ids are renumbered, so an
unchanged chapter re-syncs to byte-identical files. Pass file names to sync only some chapters:
`python tools/sync_notebooks.py book/02-linear-layers.md`.

Numbers in prose are ``{eval}`glued["key:spec"]` `` roles (tools/live_prose.py). After the last
cell has run, the kernel evaluates every Markdown cell's expressions, as JupyterLab with
jupyterlab-myst does after "Run All", and each cell stores the results in its
``user_expressions`` metadata in that extension's format, so a reader opening the notebook sees
the numbers before running anything (the `.md` keeps none of this metadata).
"""

import re
import sys
import uuid
from pathlib import Path

import jupytext
import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"
SYNC_COMMAND = "python tools/sync_notebooks.py"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
MODEL_ID = re.compile(r"(?<![0-9a-f])[0-9a-f]{32}(?![0-9a-f])")
KERNEL = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
EVAL_ROLE = re.compile(r"\{eval\}`([^`]*)`")
USER_EXPRESSIONS = "user_expressions"  # jupyterlab-myst's Markdown cell metadata key


def chapter_sources(book: Path = BOOK) -> list[Path]:
    """Every MyST notebook in `book/`: the Markdown files whose front matter names jupytext."""
    return sorted(md for md in book.glob("*.md") if is_notebook(md))


def is_notebook(md: Path) -> bool:
    text = md.read_text(encoding="utf-8")
    return text.startswith("---\n") and "\njupytext:" in text.split("\n---\n", 1)[0]


def paired_path(md: Path) -> Path:
    return md.with_suffix(".ipynb")


def read_source(md: Path) -> nbformat.NotebookNode:
    """The chapter as jupytext reads it, with stable cell ids and only the kernel metadata."""
    notebook = jupytext.read(md, fmt="md:myst")
    notebook.metadata = nbformat.from_dict({"kernelspec": KERNEL})
    for index, cell in enumerate(notebook.cells):
        cell.id = f"cell-{index}"
    return notebook


def execute(notebook: nbformat.NotebookNode, workdir: Path) -> nbformat.NotebookNode:
    client = NotebookClient(
        notebook,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(workdir)}},
        record_timing=False,
        store_widget_state=True,
    )
    with client.setup_kernel():
        client.execute(cleanup_kc=False)  # the kernel stays up for the prose's expressions
        evaluate_prose(client, notebook)
    return notebook


def prose_expressions(source: str) -> list[str]:
    """A Markdown cell's ``{eval}`` expressions in order, repeats kept (as jupyterlab-myst)."""
    return EVAL_ROLE.findall(source)


def evaluate_prose(client: NotebookClient, notebook: nbformat.NotebookNode) -> None:
    """Store each Markdown cell's ``{eval}`` results in its ``user_expressions`` metadata.

    One execute request per cell with no code and the cell's expressions, after every code cell
    has run: what jupyterlab-myst sends when a reader runs the notebook, stored as it stores the
    reply. An expression that fails stops the sync: the prose would show an error.
    """
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "markdown":
            continue
        cell.metadata.pop(USER_EXPRESSIONS, None)
        expressions = prose_expressions(cell.source)
        if not expressions:
            continue
        request = {str(number): text for number, text in enumerate(expressions)}
        msg_id = client.kc.execute("", store_history=False, user_expressions=request)
        reply = client.wait_for_reply(msg_id)
        results = reply["content"].get(USER_EXPRESSIONS, {}) if reply else {}
        stored = []
        for number, text in enumerate(expressions):
            result = results.get(str(number), {"status": "error", "evalue": "no reply"})
            if result.get("status") != "ok":
                raise RuntimeError(
                    f"Markdown cell {index}: {{eval}}`{text}` failed in the kernel: "
                    f"{result.get('ename', '')}: {result.get('evalue', '')}"
                )
            stored.append({"expression": text, "result": result})
        cell.metadata[USER_EXPRESSIONS] = stored


def renumber_widget_models(text: str, model_ids: list[str], name: str) -> str:
    """Replace each random widget model id by one derived from the chapter name and its order."""
    renamed = {
        model_id: uuid.uuid5(uuid.NAMESPACE_URL, f"{name}:{index}").hex
        for index, model_id in enumerate(model_ids)
    }
    return MODEL_ID.sub(lambda match: renamed.get(match.group(), match.group()), text)


def merge_streams(outputs: list) -> list:
    """Join consecutive stream outputs of one name: the kernel may split one print in two."""
    merged: list = []
    for output in outputs:
        previous = merged[-1] if merged else None
        if (
            previous is not None
            and output.get("output_type") == "stream"
            and previous.get("output_type") == "stream"
            and previous.get("name") == output.get("name")
        ):
            previous["text"] = previous["text"] + output["text"]
        else:
            merged.append(output)
    return merged


def whole_floats_as_ints(node: object) -> None:
    """Store every whole-number float in ``node`` as an int, in place, as JupyterLab saves it.

    A browser's JSON has one number type: the widget answer 256.0 the kernel wrote comes back
    from a JupyterLab save as 256, so a notebook holding it changes when saved without edits.
    (JavaScript writes magnitudes from 1e21 in exponent form, which stays a float.)
    """
    if isinstance(node, dict):
        entries = list(node.items())
    elif isinstance(node, list):
        entries = list(enumerate(node))
    else:
        return
    for key, value in entries:
        if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
            node[key] = int(value)
        else:
            whole_floats_as_ints(value)


def serialise(notebook: nbformat.NotebookNode, name: str) -> str:
    for cell in notebook.cells:
        cell.metadata.pop("execution", None)
        if cell.cell_type == "code":
            cell.outputs = merge_streams(cell.outputs)
    # Widget models in the order the kernel created them (nbformat sorts keys when writing).
    widget_state = notebook.metadata.get("widgets", {}).get(WIDGET_STATE, {})
    model_ids = list(widget_state.get("state", {}))
    text = renumber_widget_models(nbformat.writes(notebook), model_ids, name)
    renamed = nbformat.reads(text, as_version=4)
    whole_floats_as_ints(renamed)
    text = nbformat.writes(renamed)  # re-sorts the renamed keys
    nbformat.validate(nbformat.reads(text, as_version=4))
    return text if text.endswith("\n") else text + "\n"


def sorted_keys(value: object) -> object:
    """``value`` with every mapping's keys in sorted order (nested), for a stable YAML header."""
    if isinstance(value, dict):
        return {key: sorted_keys(value[key]) for key in sorted(value)}
    return value


def header_text(md: Path, language_info: dict) -> str:
    """``md`` in jupytext's canonical MyST form, its header holding ``language_info``.

    JupyterLab gives a notebook without `language_info` a placeholder as soon as it loads, then
    the kernel's own: a `.md` chapter whose header lacks it is marked modified on open. Jupytext
    drops that key from a `.md` unless the header's `notebook_metadata_filter` names it. Its
    `cell_metadata_filter` keeps the Markdown cells' ``user_expressions`` out of the `.md`.
    """
    notebook = jupytext.read(md)
    notebook.metadata["language_info"] = sorted_keys(language_info)  # as nbformat writes it
    header = notebook.metadata.setdefault("jupytext", {})
    kept = [key for key in header.get("notebook_metadata_filter", "").split(",") if key]
    if "language_info" not in kept:
        header["notebook_metadata_filter"] = ",".join([*kept, "language_info"])
    # Running a chapter opened as a notebook fills its Markdown cells' user_expressions
    # (jupyterlab-myst); the `.md` never stores them, so saving it after a run changes nothing.
    cell_filter = [key for key in header.get("cell_metadata_filter", "").split(",") if key]
    if f"-{USER_EXPRESSIONS}" not in cell_filter:
        header["cell_metadata_filter"] = ",".join([*cell_filter, f"-{USER_EXPRESSIONS}"])
    return jupytext.writes(notebook, fmt="md:myst")


def rewrite_header(md: Path, language_info: dict) -> bool:
    """Write ``md`` as JupyterLab would save it (see header_text); True if that changed it."""
    text = header_text(md, language_info)
    if text == md.read_text(encoding="utf-8"):
        return False
    md.write_text(text, encoding="utf-8")
    return True


def sync(md: Path) -> Path:
    notebook = execute(read_source(md), md.parent)
    target = paired_path(md)
    target.write_text(serialise(notebook, md.stem), encoding="utf-8")
    if rewrite_header(md, notebook.metadata.language_info):
        print(f"  rewrote {md.name} as JupyterLab saves it (canonical form, kernel header)")
    return target


def main(argv: list[str]) -> None:
    sources = [Path(arg).resolve() for arg in argv] or chapter_sources()
    for md in sources:
        if not is_notebook(md):
            sys.exit(f"{md} has no jupytext header: it is not a MyST notebook.")
        print(f"executing {md.relative_to(ROOT)} ...", flush=True)
        written = sync(md)
        print(f"  wrote {written.relative_to(ROOT)}", flush=True)
    if not sources:
        print("no MyST notebooks in book/")


if __name__ == "__main__":
    main(sys.argv[1:])
