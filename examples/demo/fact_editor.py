"""The user's fact editor in this process: the ``/memory`` routes' answers without HTTP.

``InProcessFactEditor`` does what ``functions/memory_routes.py`` does, with the same parts
and without the request: ``forms.app.facts.write_fact`` (the routes' write loop: plan on the
key's head, append compare-and-set, plan again on a lost race) with ``forms.memory``'s
``plan_statement``, ``plan_recall`` for what recall would do with each fact, ``FactHistory``
for the timeline and what was believed at a system time.

Each method answers ``(status, body)`` as its route does (``docs/http-api.md``, Memory), with
the deployment's switch on, so the demo prints the same lines over either transport. The
bodies are the routes' own (``forms.surface.facts``, which needs no Lambda layer);
``tests/unit/test_demo_output.py`` checks that both answer the same requests alike.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from forms.app.facts import write_fact
from forms.errors import NotFound, TooManyConflicts
from forms.memory import (
    DecayPolicy,
    Fact,
    FactHistory,
    MemorySettings,
    Refusal,
    Source,
    Statement,
    Vocabulary,
    plan_statement,
)
from forms.storage.facts import FactStore
from forms.surface.facts import (
    REFUSAL_STATUS,
    changed,
    fact_body,
    fact_lines,
    revision_body,
)

ATTEMPTS = 5
"""Appends tried on a key that keeps moving (``functions.memory_routes.ATTEMPTS``)."""

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
        return 200, changed(self.vocabulary, written.revision, written.head)

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
            "timeline": [
                fact_body(self.vocabulary, period) for period in history.timeline(as_of=as_of)
            ],
            "history": [revision_body(revision) for revision in revisions],
        }
        if as_of is not None:
            believed = history.as_of(as_of)
            body["as_of"] = as_of.isoformat()
            body["believed"] = (
                fact_body(self.vocabulary, believed) if believed is not None else None
            )
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
        return fact_lines(facts, self.vocabulary, self.policy, on=on, now=now)


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
