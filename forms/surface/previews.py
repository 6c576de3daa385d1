"""A step's preview derived from its labels: what a step collects, in a few words, when its
author wrote none (the status line's ``later:`` line and the outline show it)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from functools import lru_cache

from forms.compiled import CompiledField
from forms.surface.plain import inline

PREVIEW_LABELS = 3
PREVIEW_CHARS = 48


def cased_preview(labels: Iterable[str]) -> str:
    """The first few of ``labels`` (at most ``PREVIEW_LABELS``, within ``PREVIEW_CHARS``), as
    a preview shows them (``cased``), and ``…`` when some are left out. Reads no more of
    ``labels`` than it needs (a step of a hundred fields costs what one of four does)."""
    shown: list[str] = []
    length = 0
    for text in labels:
        if not shown:
            if len(text) > PREVIEW_CHARS:
                return text[: PREVIEW_CHARS - 1].rstrip() + "…"
        elif len(shown) == PREVIEW_LABELS or length + 2 + len(text) > PREVIEW_CHARS:
            shown.append("…")  # a label left out
            break
        length += len(text) + (2 if shown else 0)
        shown.append(text)
    return ", ".join(shown)


@lru_cache(maxsize=4_096)
def cased(label: str) -> str:
    """A label as a preview shows it (memoised: the same few are shown on every call)."""
    return _natural_case(inline(label))


def _natural_case(label: str) -> str:
    """``Departure date`` reads ``departure date`` mid-sentence; ``EU VAT number`` and
    ``iPhone model`` keep their case (only a plain capitalised first word is lowered)."""
    first = label.split(" ", 1)[0]
    if len(first) > 1 and first[0].isupper() and not any(c.isupper() for c in first[1:]):
        return label[0].lower() + label[1:]
    return label


def fixed_preview(offered: Sequence[CompiledField]) -> str | None:
    """The preview derived from the labels of ``offered`` (a step's fields the agent is asked,
    in order) when no answer can change it, for a step that applies: the labels it reads are
    all of fields with no condition of their own, which apply whenever their step does. None
    when it could read past them, to a field an answer may turn off."""
    plain: list[str] = []
    for field in offered:
        if field.when is not None:
            break
        plain.append(cased(field.label))
    read_past = False

    def labels() -> Iterator[str]:
        nonlocal read_past
        yield from plain
        read_past = True  # the preview asked for a label after them

    preview = cased_preview(labels())
    return None if read_past and len(plain) < len(offered) else preview
