"""A principal's facts as the memory API answers them: the JSON of a fact, of a revision, of a
statement's outcome, and of a listed fact with what recall would do with it now.

``formwork.aws.memory_routes`` answers with these over HTTP, and the demo's in-process fact editor
(``examples/demo/fact_editor.py``) with the very same, so the two cannot drift. A fact and a
revision carry one record (value, words, derivation, source, each time they have in ISO 8601;
a key is absent for what they lack); a listed fact adds its decay class, its age and what
recall would do with it at ``now``: ``forms.memory.plan_recall`` on a field of the key's own
type, so the list cannot disagree with recall.

Nothing of memory is imported with this module (``fact_lines`` loads the recall planner on
its first call), so the Lambda routes that import it keep a cold start free of memory.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from forms.memory import (
        DecayPolicy,
        Derivation,
        Fact,
        FactHead,
        FactRevision,
        MemorySettings,
        Vocabulary,
    )

REFUSAL_STATUS = {
    "unknown_fact_key": 404,
    "no_fact": 404,
    "not_stored": 422,
    "no_value": 422,
    "no_rule": 422,
    "invalid_value": 422,
    "words_disagree": 422,
    "invalid_period": 422,
}
"""The HTTP status of each ``forms.memory.Refusal`` code: 404 for a key the vocabulary lacks
or a fact not in force, 422 for a statement the key's rules refuse."""

_TIMES = ("stated_at", "confirmed_at", "valid_from", "valid_until", "recorded_at")


def fact_body(vocabulary: Vocabulary, fact: Fact) -> dict[str, Any]:
    """A fact, with its key's label and the value as people read it."""
    key = vocabulary.get(fact.key) if fact.key in vocabulary else None
    body: dict[str, Any] = {"key": fact.key}
    if key is not None:
        body["label"] = key.label
    if fact.value is not None:
        body["value"] = fact.value
        body["shown"] = key.show(fact.value) if key is not None else str(fact.value)
    body.update(_record(fact))
    body["revision"] = fact.revision
    if fact.erased:
        body["erased"] = True
    return body


def revision_body(revision: FactRevision) -> dict[str, Any]:
    """A revision of a key's history (``erased`` always said: its content may be gone)."""
    body: dict[str, Any] = {"key": revision.key, "seq": revision.seq, "change": revision.change}
    if revision.value is not None:
        body["value"] = revision.value
    body.update(_record(revision))
    body["erased"] = revision.erased
    return body


def changed(vocabulary: Vocabulary, appended: FactRevision, after: FactHead) -> dict[str, Any]:
    """A statement's or confirmation's answer: the change, and the fact in force after it."""
    assert after.fact is not None  # a statement or confirmation leaves a fact in force
    return {
        "key": appended.key,
        "change": appended.change,
        "revision": appended.seq,
        **_content(None, appended.derivation),
        "fact": fact_body(vocabulary, after.fact),
    }


def settings_body(stored: MemorySettings, *, deployment: bool) -> dict[str, Any]:
    """A principal's switch as stored, and the deployment's (``FORMWORK_MEMORY``)."""
    return {
        "enabled": stored.enabled,
        "changed_at": stored.changed_at.isoformat() if stored.changed_at else None,
        "deployment_enabled": deployment,
    }


def fact_lines(
    facts: Sequence[Fact],
    vocabulary: Vocabulary,
    policy: DecayPolicy,
    *,
    on: bool,
    now: datetime,
) -> list[dict[str, Any]]:
    """Each fact with its decay class, age and what recall would do with it at ``now`` (with
    memory ``on``; off, nothing)."""
    from forms.memory import RecallField, RecallPlan, plan_recall  # noqa: PLC0415 (first use)

    fields = [
        RecallField(fact.key, fact.key, vocabulary.get(fact.key).type)
        for fact in facts
        if fact.key in vocabulary
    ]
    plan = (
        plan_recall(fields, facts, vocabulary=vocabulary, policy=policy, now=now)
        if on
        else RecallPlan()
    )
    skipped = {skip.field_id: skip.reason for skip in plan.skipped}
    lines = []
    for fact in facts:
        line = fact_body(vocabulary, fact)
        if fact.key in vocabulary:
            line["decay"] = vocabulary.get(fact.key).decay.value
        line["age_days"] = max(now - fact.last_seen, timedelta(0)).days
        recalled = plan.fills.get(fact.key) or plan.offers.get(fact.key)
        if recalled is not None:
            line["use"] = "fill" if fact.key in plan.fills else "offer"
            line["note"] = recalled.note()
        else:
            line["use"] = "none"
            line["reason"] = "memory_off" if not on else skipped.get(fact.key, "unknown_key")
        lines.append(line)
    return lines


def _record(said: Fact | FactRevision) -> dict[str, Any]:
    """What a fact and a revision both carry: words, derivation, source, and each time they
    have, in ISO 8601."""
    body = _content(said.words, said.derivation)
    body["source"] = said.source.model_dump(exclude_none=True)
    for name in _TIMES:
        at: datetime | None = getattr(said, name)
        if at is not None:
            body[name] = at.isoformat()
    return body


def _content(words: str | None, derivation: Derivation | None) -> dict[str, Any]:
    content: dict[str, Any] = {}
    if words is not None:
        content["words"] = words
    if derivation is not None:
        content["derivation"] = {"rule": derivation.rule, "words": derivation.words}
    return content
