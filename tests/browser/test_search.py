"""Search results quote the sentence that matched, not the page's contents list.

Sphinx's searchtools.js takes each snippet from the text of the result page's
`[role="main"]` element; the pinned theme marks none (empty snippets), and newer releases mark
<main>, whose text starts with the print-only contents list. web/static/theme-fixes.js gives
it the article instead.
"""

import re

from .conftest import HTML, Visit, settle

CHAPTER = "book/06-multi-head-attention.html"
WORD = "pencil"  # appears once in the chapter's opening paragraph
SENTENCE = "tokens small enough to follow with a pencil"
TOC_ENTRY = re.compile(r'class="reference internal nav-link" href="#[^"]+">([^<]+)</a>')


def words(text: str) -> str:
    return " ".join(text.split())


def test_snippet_quotes_the_matching_sentence(visit: Visit) -> None:
    source = (HTML / CHAPTER).read_text(encoding="utf-8")
    assert SENTENCE in words(re.sub(r"<[^>]+>", " ", source)), (
        f"{CHAPTER} no longer says {SENTENCE!r}: pick another word from its body for this test"
    )
    entries = TOC_ENTRY.findall(source)[:3]
    warnings: list[str] = []
    visit.page.on(
        "console", lambda message: message.type == "warning" and warnings.append(message.text)
    )
    page = visit.page
    settle(visit, f"search.html?q={WORD}")
    # searchtools.js fetches each result page for its snippet, then reports that it finished.
    page.wait_for_function(
        "() => document.querySelector('.search-summary')?.textContent.includes('finished')"
    )
    result = page.locator("#search-results li", has=page.locator(f'a[href*="{CHAPTER}"]'))
    assert result.count() == 1, f"searching for {WORD!r} did not list {CHAPTER}"
    assert result.locator("p.context").count() == 1, f"the result for {CHAPTER} has no snippet"
    snippet = words(result.locator("p.context").inner_text())
    assert SENTENCE in snippet, f"the snippet for {CHAPTER} does not quote the match: {snippet!r}"
    shown = [entry for entry in entries if words(entry) in snippet]
    assert not shown, f"the snippet shows the contents list ({shown}): {snippet!r}"
    assert not [text for text in warnings if "Sphinx search" in text], warnings
    assert not visit.problems, "\n".join(visit.problems)


def article_text(path: str) -> str:
    """The article's words as the page shows them, without code cells (tags dropped)."""
    source = (HTML / path).read_text(encoding="utf-8")
    article = source[source.find("<article") : source.find("</article>")]
    article = re.sub(r'<div class="cell_input.*?</pre></div>\s*</div>', " ", article, flags=re.S)
    return words(re.sub(r"<[^>]+>", " ", article))


def test_search_matches_whole_words_and_quotes_prose(visit: Visit) -> None:
    query = "RoPE"
    starts_a_word = re.compile(r"(?<![\w])rope", re.IGNORECASE)
    inside_a_word = [  # pages where "rope" only appears inside longer words ("property")
        path
        for path in (str(p.relative_to(HTML)) for p in (HTML / "book").glob("*.html"))
        if "rope" in article_text(path).lower() and not starts_a_word.search(article_text(path))
    ]
    assert inside_a_word, "no page has 'rope' only inside a word: the test would prove nothing"
    page = visit.page
    settle(visit, f"search.html?q={query}")
    page.wait_for_function(
        "() => document.querySelector('.search-summary')?.textContent.includes('finished')"
    )
    results = page.locator("#search-results li")
    assert results.count(), f"searching for {query!r} found nothing"
    listed = [
        results.nth(i).locator("a").first.get_attribute("href") for i in range(results.count())
    ]
    wrong = [path for path in inside_a_word if any(path in href for href in listed)]
    assert not wrong, f"{query!r} listed pages where it only appears inside words: {wrong}"
    for i in range(results.count()):
        snippet = words(results.nth(i).locator("p.context").inner_text())
        assert starts_a_word.search(snippet), f"snippet without the word: {snippet!r}"
        assert "glue(" not in snippet and "import " not in snippet, f"code in: {snippet!r}"
    assert not visit.problems, "\n".join(visit.problems)
