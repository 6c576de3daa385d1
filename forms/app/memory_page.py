"""The fact editor's view model: a principal's memory as the person reads it.

``memory_page`` reads what ``forms.app.memory_api.MemoryApi`` reads (the switch, the facts in
force as recall reads them now, every revision) and says, for each fact: the value, the words
the person said and whether the value was worked out from them (a derivation rule), when and
where it was said (a conversation, the API, this page), its decay class and how long it stands
unasked (the decay policy's windows from when it was last said or confirmed), and what the next
form would do with it. That last is ``forms.surface.facts.fact_lines``, which is recall's own
planner (``plan_recall``) on a field of the key's type: the page cannot disagree with a form.

What it returns is plain data (frozen dataclasses of strings), so the HTML shell renders it
without knowing memory. Text is passed as stored: escaping is the template engine's.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from itertools import groupby
from typing import Any

from forms.app.memory_api import REPLAY_PREFIX, MemoryApi
from forms.memory import DecayClass, Fact, FactRevision
from forms.memory.decay import FOREVER
from forms.surface.facts import fact_lines

DECAY_TEXT: dict[str, str] = {
    "never": "true once, true always",
    "years": "changes rarely",
    "months": "changes now and then",
    "steps": "changes without notice",
    "weeks": "drifts quietly",
}
"""What each decay class means, in words (``forms.memory.decay``)."""

REASON_TEXT: dict[str, str] = {
    "memory_off": "Not used: your memory is off.",
    "too_old": "Not used: it is too old to be used without asking you again.",
    "not_valid_now": "Not used now: the period it holds for is not today.",
    "not_stored": "Not used: facts like this are never kept.",
}
"""Why the next form would not use a fact, in words (``forms.memory.recall.SkipReason``)."""

CHANGE_TEXT: dict[str, str] = {
    "stated": "Said",
    "corrected": "Corrected",
    "confirmed": "Confirmed",
    "deleted": "Deleted",
}


@dataclass(frozen=True, slots=True)
class FactRevisionView:
    change: str
    value: str | None
    words: str | None
    at: str
    source: str


@dataclass(frozen=True, slots=True)
class FactView:
    key: str
    label: str
    value: str
    words: str | None
    derived: str | None
    """How the value was worked out from the words (None: taken as given)."""
    said_at: str | None
    confirmed_at: str | None
    source: str
    decay: str
    decay_text: str
    stands: str
    """How long the fact stands unasked, in words."""
    use: str
    """``fill``, ``offer`` or ``none``: what the next form would do with it."""
    use_text: str
    history: tuple[FactRevisionView, ...]


@dataclass(frozen=True, slots=True)
class MemoryPage:
    enabled: bool
    """The principal's switch."""
    deployment: bool
    """The deployment's switch (``FORMWORK_MEMORY``): off, nothing is recalled for anyone."""
    changed_at: str
    """When the switch was last set, ISO 8601 (empty: never): a switch post carries it, so a
    resent one applies once."""
    facts: tuple[FactView, ...]


def memory_page(api: MemoryApi, principal: str) -> MemoryPage:
    """``principal``'s memory as the fact editor shows it."""
    stored = api.facts.settings(principal)
    on = api.deployment and stored.enabled
    now = api.clock()
    facts = api.facts.current(principal, now)
    lines = fact_lines(facts, api.vocabulary, api.policy, on=on, now=now)
    histories = {
        key: tuple(group)
        for key, group in groupby(api.facts.export(principal), key=lambda rev: rev.key)
    }
    views = tuple(
        _fact(api, fact, line, histories.get(fact.key, ()))
        for fact, line in zip(facts, lines, strict=True)
    )
    return MemoryPage(
        enabled=stored.enabled,
        deployment=api.deployment,
        changed_at=stored.changed_at.isoformat() if stored.changed_at else "",
        facts=tuple(sorted(views, key=lambda view: view.label.lower())),
    )


def _fact(
    api: MemoryApi, fact: Fact, line: dict[str, Any], history: tuple[FactRevision, ...]
) -> FactView:
    known = api.vocabulary.get(fact.key) if fact.key in api.vocabulary else None
    decay = known.decay.value if known is not None else ""
    derived = None
    if fact.derivation is not None:
        derived = f"Worked out from your words by the rule {fact.derivation.rule}."
    return FactView(
        key=fact.key,
        label=known.label if known is not None else fact.key,
        value=str(line.get("shown", "")),
        words=fact.words,
        derived=derived,
        said_at=_day(fact.stated_at),
        confirmed_at=_day(fact.confirmed_at),
        source=_source(fact.source.kind, fact.source.ref),
        decay=decay,
        decay_text=DECAY_TEXT.get(decay, ""),
        stands=_stands(api, known.decay if known is not None else None, fact.last_seen),
        use=str(line["use"]),
        use_text=_use(line),
        history=tuple(_revision(api, revision) for revision in history),
    )


def _use(line: dict[str, Any]) -> str:
    if line["use"] == "fill":
        return "The next form that asks for it is filled in with it (marked, until you confirm)."
    if line["use"] == "offer":
        return "The next form only offers it: the agent asks you whether it is still right."
    return REASON_TEXT.get(str(line.get("reason")), "Not used by forms.")


def _stands(api: MemoryApi, decay: DecayClass | None, last_seen: datetime) -> str:
    """How long a fact last said or confirmed at ``last_seen`` stands unasked, by the policy's
    windows (the ones ``plan_recall`` judges it by)."""
    rule = api.policy.rule(decay) if decay is not None else None
    if rule is None:
        return "Never used by forms."
    fill, offer = rule.fill_within, rule.offer_within
    if fill == FOREVER:
        return "Filled in without asking, always."
    parts = []
    if fill is not None:
        parts.append(f"Filled in without asking until {_until(last_seen, fill)}")
    else:
        parts.append("Never filled in without asking")
    if offer == FOREVER:
        parts.append("offered after that, always")
    elif offer is not None:
        parts.append(f"offered until {_until(last_seen, offer)}")
    return "; ".join(parts) + ". Confirming it starts again."


def _until(start: datetime, window: timedelta) -> str:
    return f"{start + window:%Y-%m-%d}"


def _revision(api: MemoryApi, revision: FactRevision) -> FactRevisionView:
    known = api.vocabulary.get(revision.key) if revision.key in api.vocabulary else None
    shown = None
    if revision.value is not None:
        shown = known.show(revision.value) if known is not None else str(revision.value)
    return FactRevisionView(
        change=CHANGE_TEXT.get(revision.change, revision.change),
        value="(erased)" if revision.erased else shown,
        words=revision.words,
        at=f"{revision.recorded_at:%Y-%m-%d %H:%M} UTC",
        source=_source(revision.source.kind, revision.source.ref),
    )


def _source(kind: str, ref: str | None) -> str:
    """Where a fact came from, in words."""
    if ref is not None and ref.startswith(REPLAY_PREFIX):
        return "on this page"
    if kind == "conversation":
        return f"in conversation {ref}" if ref else "in a conversation"
    if kind == "tool_call":
        return "by the agent"
    return "through the chat app"


def _day(moment: datetime | None) -> str | None:
    return None if moment is None else f"{moment:%Y-%m-%d}"


__all__ = ["FactRevisionView", "FactView", "MemoryPage", "memory_page"]
