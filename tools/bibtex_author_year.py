"""Sphinx extension: bibliography labels that read like the book's author-year citations.

Chapters cite as [Vaswani et al., 2017]; pybtex's `plain` style would list that entry as [20].
This registers the pybtex style `author_year` (`plain` formatting, author-year labels), chosen
in _config.yml with `bibtex_default_style: author_year`.
"""

from collections import Counter
from string import ascii_lowercase

from pybtex.plugin import register_plugin
from pybtex.style.formatting.plain import Style as PlainStyle
from pybtex.style.labels import BaseLabelStyle


def surname(person) -> str:
    return " ".join(person.prelast_names + person.last_names).replace("{", "").replace("}", "")


class AuthorYearLabels(BaseLabelStyle):
    """`Ba et al., 2016`, `Glorot and Bengio, 2010`; `2017a`, `2017b` when two would clash."""

    def format_labels(self, sorted_entries):
        labels = [self.format_label(entry) for entry in sorted_entries]
        counts, seen = Counter(labels), Counter()
        for label in labels:
            if counts[label] > 1:
                seen[label] += 1
                label += ascii_lowercase[seen[label] - 1]
            yield label

    @staticmethod
    def format_label(entry) -> str:
        people = entry.persons.get("author") or entry.persons.get("editor") or []
        names = [surname(person) for person in people] or [entry.fields.get("title", "?")]
        if len(names) == 1:
            who = names[0]
        elif len(names) == 2:
            who = f"{names[0]} and {names[1]}"
        else:
            who = f"{names[0]} et al."
        return f"{who}, {entry.fields.get('year', 'n.d.')}"


class AuthorYearStyle(PlainStyle):
    default_label_style = AuthorYearLabels


def setup(app):
    register_plugin("pybtex.style.formatting", "author_year", AuthorYearStyle)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
