"""The book's table of contents, chapter files, intro map and bibliography agree."""

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"
CHAPTER = re.compile(r"^\d\d-[a-z0-9-]+$")
CITE = re.compile(r"\{cite(?::[a-z]+)?\}`([^`]+)`")
BIB_KEY = re.compile(r"^@\w+\{([^,\s]+),", re.MULTILINE)


def toc_files() -> list[str]:
    """Every `file:` of _toc.yml in order, root first, as paths without suffix."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]]
    for part in toc.get("parts", []):
        files += [chapter["file"] for chapter in part["chapters"]]
    return files


def chapter_files() -> list[str]:
    return sorted(f"book/{md.stem}" for md in BOOK.glob("*.md") if CHAPTER.match(md.stem))


def test_every_chapter_is_in_the_toc_and_every_toc_entry_exists() -> None:
    listed = toc_files()
    missing = [name for name in chapter_files() if name not in listed]
    assert not missing, f"chapters missing from _toc.yml (add `- file: NAME` lines): {missing}"
    absent = [name for name in listed if not (ROOT / f"{name}.md").is_file()]
    assert not absent, f"_toc.yml lists files that do not exist: {absent}"
    assert listed[0] == "book/intro" and listed[-1] == "book/references"


def test_chapters_are_listed_in_numeric_order() -> None:
    listed = [name for name in toc_files() if CHAPTER.match(name.removeprefix("book/"))]
    assert listed == sorted(listed), f"_toc.yml chapters out of order: {listed}"


def test_intro_links_every_existing_chapter() -> None:
    intro = (BOOK / "intro.md").read_text()
    unlinked = [
        name for name in chapter_files() if f"]({name.removeprefix('book/')}.md)" not in intro
    ]
    assert not unlinked, (
        f"book/intro.md should link these chapters in its chapter map: {unlinked} "
        "(write the title as [Title](NN-slug.md) once the chapter exists)"
    )


def test_every_cited_key_is_in_the_bibliography() -> None:
    keys = set(BIB_KEY.findall((BOOK / "references.bib").read_text()))
    cited = {
        (md.name, key.strip())
        for md in BOOK.glob("*.md")
        for group in CITE.findall(md.read_text())
        for key in group.split(",")
    }
    unknown = sorted(f"{name}: {key}" for name, key in cited if key not in keys)
    assert not unknown, f"citations with no entry in book/references.bib: {unknown}"


def test_bibliography_keys_are_unique() -> None:
    keys = BIB_KEY.findall((BOOK / "references.bib").read_text())
    assert len(keys) == len(set(keys)), sorted(key for key in keys if keys.count(key) > 1)


def test_chapter_titles_are_numbered_once() -> None:
    """A numbered toc part numbers its chapters, so a title written as `# 5. ...` shows `5. 5.`."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    numbered = [
        chapter["file"]
        for part in toc.get("parts", [])
        if part.get("numbered")
        for chapter in part["chapters"]
    ]
    twice = []
    for name in numbered:
        path = ROOT / f"{name}.md"
        title = next((line for line in path.read_text().splitlines() if line.startswith("# ")), "")
        if re.match(r"#\s+\d+\s*[.:)]?\s", title):
            twice.append(f"{name}.md: {title!r}")
    assert not twice, (
        "Sphinx numbers these chapters (numbered: true in _toc.yml); drop the number from the "
        "title, e.g. `# Linear layers`, then re-pair with `python tools/sync_notebooks.py`:\n"
        + "\n".join(twice)
    )
