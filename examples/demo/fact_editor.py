"""The user's fact editor in this process: the ``/memory`` routes' answers without HTTP.

``InProcessFactEditor`` does what ``functions/memory_routes.py`` does, with the same parts
and without the request: ``forms.app.facts.write_fact`` (the routes' write loop: plan on the
key's head, append compare-and-set, plan again on a lost race) with ``forms.memory``'s
``plan_statement``, ``plan_recall`` for what recall would do with each fact, ``FactHistory``
for the timeline and what was believed at a system time.

Each method answers ``(status, body)`` as its route does (``docs/http-api.md``, Memory), with
the deployment's switch on, so the demo prints the same lines over either transport. The
bodies are built here rather than by ``functions.memory_bodies``, which would load the Lambda
layer into the in-process demo; ``tests/unit/test_demo_output.py`` checks that both answer the
same requests alike.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from pydantic import ValidationError

from forms.app.facts import write_fact
from forms.errors import NotFound, TooManyConflicts
from forms.memory import (
    DecayPolicy,
    Fact,
    FactHistory,
    FactRevision,
    MemorySettings,
    RecallField,
    RecallPlan,
    Refusal,
    Source,
    Statement,
    Vocabulary,
    plan_recall,
    plan_statement,
)
from forms.storage.facts import FactStore

ATTEMPTS = 5
"""Appends tried on a key that keeps moving (``functions.memory_routes.ATTEMPTS``)."""

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
"""The status the routes answer each ``Refusal`` code with (``functions.memory_bodies``)."""

Answer = tuple[int, dict[str, Any]]


class InProcessFactEditor:
    """The memory routes' behaviour on ``facts``, with ``vocabulary``, ``policy`` and
    ``clock`` the service's; every method takes the principal a verified token would carry."""

    def __init__(
        self,
        facts: FactStore,
        vocabulary: Vocabulary,
        policy: DecayPolicy,
        clock: Callable[[], datetime],
    ) -> None:
        self.facts = facts
        self.vocabulary = vocabulary
        self.policy = policy
        self.clock = clock

    def state_fact(self, principal: str, key: str, body: Mapping[str, Any]) -> Answer:
        """``PUT /memory/facts/{key}``."""
        if key not in self.vocabulary:
            return _refused(
                404,
                "unknown_fact_key",
                f"unknown fact key {key!r}",
                hint="use a key of the memory vocabulary",
                likely=self.vocabulary.did_you_mean(key),
            )
        if not self.facts.settings(principal).enabled:
            return _refused(
                409,
                "memory_off",
                "your memory is off: no fact is recorded",
                hint='turn it on with PUT /memory/settings {"enabled": true}',
            )
        try:
            said = Statement.model_validate({**body, "key": key, "source": Source(kind="api")})
        except ValidationError as invalid:
            return _refused(422, "invalid_request", str(invalid.errors()[0]["msg"]))
        now = self.clock()
        head = self.facts.head(principal, key)
        try:
            written = write_fact(
                self.facts,
                principal,
                key,
                lambda head: plan_statement(said, head, vocabulary=self.vocabulary, now=now),
                head=head,
                attempts=ATTEMPTS,
            )
        except ValueError as cannot:  # the revision cannot apply to the head (its period)
            return _refused(422, "invalid_period", str(cannot))
        except TooManyConflicts as busy:
            return _refused(409, "busy", busy.message, hint="send the request again")
        if isinstance(written, Refusal):
            status = REFUSAL_STATUS.get(written.code, 422)
            return _refused(
                status, written.code, written.message, written.hint, written.did_you_mean
            )
        revision, after = written.revision, written.head
        assert after.fact is not None  # a statement leaves a fact in force
        answer: dict[str, Any] = {"key": key, "change": revision.change, "revision": revision.seq}
        answer.update(_content(None, revision))
        answer["fact"] = self._fact(after.fact)
        return 200, answer

    def read_fact(self, principal: str, key: str, as_of: datetime | None = None) -> Answer:
        """``GET /memory/facts/{key}[?as_of=...]``."""
        try:
            revisions = self.facts.history(principal, key)
        except NotFound:
            likely = () if key in self.vocabulary else self.vocabulary.did_you_mean(key)
            return _refused(404, "no_fact", f"no fact {key} is in force", likely=likely)
        history = FactHistory(revisions)
        head = history.head()
        now = self.clock()
        current = head.at(now) if head is not None else None
        on = current is not None and self.facts.settings(principal).enabled
        body: dict[str, Any] = {
            "key": key,
            "current": self._lines([current], on=on, now=now)[0] if current else None,
            "timeline": [self._fact(period) for period in history.timeline(as_of=as_of)],
            "history": [_revision(revision) for revision in revisions],
        }
        if as_of is not None:
            believed = history.as_of(as_of)
            body["as_of"] = as_of.isoformat()
            body["believed"] = self._fact(believed) if believed is not None else None
        return 200, body

    def list_facts(self, principal: str) -> Answer:
        """``GET /memory/facts``."""
        on = self.facts.settings(principal).enabled
        now = self.clock()
        lines = self._lines(self.facts.current(principal, now), on=on, now=now)
        return 200, {"memory_enabled": on, "facts": lines}

    def switch_memory(self, principal: str, enabled: bool) -> Answer:
        """``PUT /memory/settings``."""
        self.facts.put_settings(principal, MemorySettings(enabled=enabled, changed_at=self.clock()))
        stored = self.facts.settings(principal)
        changed = stored.changed_at.isoformat() if stored.changed_at else None
        return 200, {"enabled": stored.enabled, "changed_at": changed, "deployment_enabled": True}

    def _lines(self, facts: Sequence[Fact], *, on: bool, now: datetime) -> list[dict[str, Any]]:
        """Each fact with its decay class, age and what recall would do with it at ``now``:
        the recall plan of a field of the key's own type, as the list route gives it."""
        fields = [
            RecallField(fact.key, fact.key, self.vocabulary.get(fact.key).type)
            for fact in facts
            if fact.key in self.vocabulary
        ]
        plan = (
            plan_recall(fields, facts, vocabulary=self.vocabulary, policy=self.policy, now=now)
            if on
            else RecallPlan()
        )
        skipped = {skip.field_id: skip.reason for skip in plan.skipped}
        lines = []
        for fact in facts:
            line = self._fact(fact)
            if fact.key in self.vocabulary:
                line["decay"] = self.vocabulary.get(fact.key).decay.value
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

    def _fact(self, fact: Fact) -> dict[str, Any]:
        known = self.vocabulary.get(fact.key) if fact.key in self.vocabulary else None
        body: dict[str, Any] = {"key": fact.key}
        if known is not None:
            body["label"] = known.label
        if fact.value is not None:
            body["value"] = fact.value
            body["shown"] = known.show(fact.value) if known is not None else str(fact.value)
        body.update(_content(fact.words, fact))
        body["source"] = fact.source.model_dump(exclude_none=True)
        body.update(_times(fact))
        body["revision"] = fact.revision
        if fact.erased:
            body["erased"] = True
        return body


def _revision(revision: FactRevision) -> dict[str, Any]:
    body: dict[str, Any] = {"key": revision.key, "seq": revision.seq, "change": revision.change}
    if revision.value is not None:
        body["value"] = revision.value
    body.update(_content(revision.words, revision))
    body["source"] = revision.source.model_dump(exclude_none=True)
    body.update(_times(revision))
    body["erased"] = revision.erased
    return body


def _content(words: str | None, of: Fact | FactRevision) -> dict[str, Any]:
    content: dict[str, Any] = {}
    if words is not None:
        content["words"] = words
    if of.derivation is not None:
        content["derivation"] = {"rule": of.derivation.rule, "words": of.derivation.words}
    return content


def _times(of: Fact | FactRevision) -> dict[str, str]:
    times = {
        "stated_at": of.stated_at,
        "confirmed_at": of.confirmed_at,
        "valid_from": of.valid_from,
        "valid_until": of.valid_until,
        "recorded_at": of.recorded_at,
    }
    return {name: at.isoformat() for name, at in times.items() if at is not None}


def _refused(
    status: int, code: str, message: str, hint: str | None = None, likely: Sequence[str] = ()
) -> Answer:
    """A refusal as the routes answer it: nothing was written."""
    body: dict[str, Any] = {"error": code, "message": message}
    if hint:
        body["hint"] = hint
    if likely:
        body["did_you_mean"] = list(likely)
    return status, body
