"""Memory's marks: the hedge a value from memory cannot carry itself, in what the agent reads.

What memory filled and nobody confirmed, and what it offers for the agent to ask about, while
each still stands (``Recollection.stands``) on a field that applies: the status line gets a
line for each kind, in memory's own words (``forms.memory``'s ``Fill.note`` and
``Offer.note``), and a field's row a ``memory`` entry. A form memory did nothing for shows
nothing, and costs nothing.

A context default (a locale, a time zone or a currency taken from a claim of the caller's
verified token when the form started) is kept the same way, as a ``fill``, so it is confirmed,
cleared and undone like memory's; its key says where it came from (``claim:person.locale``,
``from_account``), and it is told apart: ``from your account``, with no date (the token
carries it on every call, nobody said it on a day).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from forms.compiled import CompiledForm
from forms.evaluation import Evaluation
from forms.instance import FormInstance, Recollection
from forms.surface.plain import inline

_FILLED = "from memory, unconfirmed (resend once confirmed): "
_OFFERED = "from memory, confirm: "
_ACCOUNT = "from your account, unconfirmed (resend once confirmed): "

CLAIM_PREFIX = "claim:"
"""How a ``Recollection.key`` starts when the value came from the caller's verified claims
(``claim:person.locale``) rather than from a stored fact."""


def from_account(recollection: Recollection) -> bool:
    """Whether the value came from the caller's verified claims (a context default)."""
    return recollection.key.startswith(CLAIM_PREFIX)


def standing(form: CompiledForm, instance: FormInstance, ev: Evaluation) -> dict[str, Recollection]:
    """What memory filled or offered that still stands, on fields that apply, in definition
    order: the fills nobody confirmed (their revision still in force) and the offers nobody
    answered (nothing written to the field since)."""
    recalled = instance.state.recalled
    if not recalled or instance.state.status != "open":
        return {}
    return {
        f: recalled[f]
        for f in form.memory_fields
        if f in recalled and ev.fields[f].applies and recalled[f].stands(instance.field(f))
    }


def memory_lines(form: CompiledForm, instance: FormInstance, ev: Evaluation) -> list[str]:
    """The status line's lines for memory: the unconfirmed fills, the offers, then the
    unconfirmed values from the caller's account."""
    marks = standing(form, instance, ev)
    if not marks:
        return []
    lines: list[str] = []
    for use, account, head in (
        ("fill", False, _FILLED),
        ("offer", False, _OFFERED),
        ("fill", True, _ACCOUNT),
    ):
        told = [
            recalled_note(form.fields[f].label, r)
            for f, r in marks.items()
            if r.use == use and from_account(r) == account
        ]
        if told:
            lines.append(head + " · ".join(told))
    return lines


_UNIT = re.compile(r"\s*\([^()]*\)\s*$")


def short_label(label: str) -> str:
    """A label without its closing parenthesis (``Weight`` for ``Weight (kg)``): the value
    shown beside it carries its unit."""
    return _UNIT.sub("", label) or label


def recalled_note(label: str, recollection: Recollection) -> str:
    """``Weight 70 kg, said 2026-09-03``; a derived value says so: ``Height 173 cm (derived
    from “5'8"”), said 2026-09-03`` (the words of ``forms.memory``'s notes); a value from the
    caller's account has no date: ``Locale en-GB``. On one line (``inline``)."""
    text = f"{inline(short_label(label))} {inline(recollection.shown)}"
    if from_account(recollection):
        return text
    if recollection.derived_from:
        text += f" (derived from “{inline(recollection.derived_from)}”)"
    return f"{text}, {recollection.when()}"


def memory_mark(recollection: Recollection) -> str:
    """What a field's row says of its value from memory (or from the caller's account)."""
    if from_account(recollection):
        return "from your account; unconfirmed"
    derived = recollection.derived_from
    derived = f"derived from “{inline(derived)}”, " if derived else ""
    if recollection.use == "fill":
        return f"from memory, {derived}{recollection.when()}; unconfirmed"
    shown = inline(recollection.shown)
    return f"offered from memory: {shown}, {derived}{recollection.when()}; ask to confirm"


def late_clause(offered: Sequence[str]) -> str:
    """What a call says when it delivered a recall owed since the form started (memory's
    read came after the start's deadline): the fields memory now offers, by id. Offers only,
    never fills: the user may have answered since, so each value is theirs to confirm."""
    return f"memory answered late and offers {len(offered)} to confirm ({', '.join(offered)})"
