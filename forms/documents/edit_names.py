"""The names a draft's rules and checkpoints give that name nothing, and what they likely meant.

A refusal that names an unknown id carries the ids it likely meant as data, in
``did_you_mean`` (``EditError``), as ``not_found`` does: a rule reading a field that is not
there (``invalid_rule``), a ``set`` of one, a message placeholder, a jump to a step that is
not there. The sentence says it in words too, as the compiler does; this is the list a model
can act on without reading it. Candidates are ranked by ``forms.suggest`` against each field's
id, label and aliases (each step's id and title).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from forms.documents.model import (
    Divider,
    FailAction,
    FieldDoc,
    FormDocument,
    Heading,
    Paragraph,
)
from forms.documents.rules import reads
from forms.suggest import rank

_PLACEHOLDER = re.compile(r"\{([a-z][a-z0-9_]*)\}")


def _named(document: FormDocument) -> Iterator[tuple[str, str]]:
    """("field" or "step", name) for every name ``document``'s rules and actions give."""
    rules: list[Any] = [s.when for s in document.steps]
    rules += [i.when for i in _fields(document)]
    rules += [c.when for c in document.checkpoints]
    for rule in rules:
        if rule is not None:
            yield from (("field", n) for n in reads(rule))
    for checkpoint in document.checkpoints:
        for action in checkpoint.then:
            if action.action == "set":
                yield "field", action.field
            elif action.action == "jump":
                yield "step", action.step
            elif isinstance(action, FailAction):
                yield from (("field", n) for n in _PLACEHOLDER.findall(action.message))


def _fields(document: FormDocument) -> Iterator[FieldDoc]:
    for step in document.steps:
        for item in step.items:
            if not isinstance(item, Heading | Paragraph | Divider):
                yield item


def spellings(document: FormDocument) -> dict[str, Mapping[str, Sequence[str]]]:
    """Each field's and step's spellings (id, label or title, aliases), by what they are."""
    fields = {i.id: (i.id, i.label, *i.aliases) for i in _fields(document)}
    steps = {s.id: (s.id, s.title) for s in document.steps}
    return {"field": fields, "step": steps}


def unknown_names(document: FormDocument) -> list[tuple[str, str]]:
    """("field" or "step", name) for each name ``document`` gives that is neither, in order."""
    known = spellings(document)
    found: list[tuple[str, str]] = []
    for what, name in _named(document):
        if name not in known[what] and (what, name) not in found:
            found.append((what, name))
    return found


def likely_meant(
    document: FormDocument, names: Sequence[tuple[str, str]], limit: int = 5
) -> list[str]:
    """The ids of ``document`` the unknown ``names`` most likely meant, best first."""
    known = spellings(document)
    close: list[str] = []
    for what, name in names:
        close += [c for c in suggest(name, known[what]) if c not in close]
    return close[:limit]


def suggest(name: str, candidates: Mapping[str, Sequence[str]]) -> list[str]:
    """The candidates ``name`` likely meant: ``forms.suggest``'s ranking, else the closest id
    by spelling (what the compiler's message names: ``did you mean 'two'?`` for ``tow``)."""
    return rank(name, candidates) or difflib.get_close_matches(name, list(candidates), n=1)


def new_unknown_names(before: FormDocument | None, after: FormDocument) -> list[str]:
    """What the unknown names ``after`` gives and ``before`` did not likely meant."""
    had = set(unknown_names(before)) if before is not None else set()
    return likely_meant(after, [n for n in unknown_names(after) if n not in had])


def meant_by_rule(document: FormDocument, rule: Any) -> list[str]:
    """What the fields ``rule`` reads that ``document`` does not have likely meant."""
    known = spellings(document)["field"]
    names = [("field", n) for n in reads(rule) if n not in known]
    return likely_meant(document, names)
