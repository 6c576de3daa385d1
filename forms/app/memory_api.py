"""Memory's use cases for its owner: what the HTTP routes, the fact editor page and the demo's
in-process editor all call, so each transport only parses, calls and renders.

``MemoryApi`` holds the fact store, the vocabulary, the decay policy, the deployment's switch
(``FORMWORK_MEMORY``) and a clock. Every method takes the principal a verified credential
carries (a JWT's, or a page session's): never one a request names.

* **Is memory on** (``enabled``, ``require_on``): the deployment's switch and the principal's.
  Off refuses a statement and a confirmation (``memory_off``) before anything is planned.
* **Is the key known** (``well_formed``, ``known``): a dotted lowercase name (``bad_request``),
  of the vocabulary (``unknown_fact_key``), both with the keys it likely meant.
* **The fact write loop** (``state``, ``correct``, ``confirm``, ``delete``): the plan on the
  key's head, appended compare-and-set through ``forms.app.facts.write_fact`` (an attempt of
  the one commit loop, ``forms.app.loop``, within the ``commits`` policy every aggregate's
  loop shares). With
  ``replay`` (an idempotency key: the page renders one into each of its forms), the key goes
  into the revision's source (``Source.ref``) in the same write, and the store refuses a
  write whose key is already in the key's history (``FactStore`` promise 7), which is then
  not applied again (``None``): a resent post applies once, found by its write as a tool
  call's id is.
* **Reads** (``lines``, ``read``, ``export``, ``settings``) and **the switch** (``switch``):
  the bodies of ``forms.surface.facts``, which the API answers with.

A refusal is raised as ``FactRefused`` (its ``code``, ``message``, ``hint``,
``did_you_mean``); nothing is written by any. What status a code gets is the transport's.

This module imports ``forms.memory``: load it when memory is first used, as its callers do.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import groupby
from typing import Any

from forms.app.facts import FactPlan, Written, write_fact
from forms.app.loop import CommitPolicy
from forms.errors import CallRecorded, NotFound, SizeLimit, ToolError, TooManyConflicts
from forms.memory import (
    DecayPolicy,
    FactHistory,
    FactKey,
    MemorySettings,
    Refusal,
    Source,
    Statement,
    Vocabulary,
    plan_confirmation,
    plan_deletion,
    plan_statement,
)
from forms.memory.derivations import DEFAULT_DERIVATIONS
from forms.memory.vocabulary import KEY_MAX_LENGTH, KEY_PATTERN
from forms.storage.facts import REPLAY_PREFIX, FactStore
from forms.surface.facts import fact_body, fact_lines, revision_body, settings_body


class FactRefused(ToolError):
    """A use case refused: nothing was written. ``code`` is one of the planner's refusal codes
    (``forms.memory.Refusal``) or ``bad_request``, ``unknown_fact_key``, ``no_fact``,
    ``memory_off``, ``invalid_request``, ``invalid_period``, ``busy``, ``size_limit``."""

    def __init__(
        self,
        code: str,
        message: str,
        hint: str | None = None,
        did_you_mean: Sequence[str] = (),
    ) -> None:
        super().__init__(message, hint, did_you_mean)
        self.code = code


@dataclass(frozen=True, slots=True)
class MemoryApi:
    """Memory's use cases on ``facts``; ``deployment`` is ``FORMWORK_MEMORY``. Every part is
    given (the App's: ``formwork.application.App.memory_api``), none a default of its own."""

    facts: FactStore
    vocabulary: Vocabulary
    policy: DecayPolicy
    deployment: bool
    clock: Callable[[], datetime]
    commits: CommitPolicy
    """The one ``CommitPolicy`` of every aggregate's loop (``forms.app.loop``): it bounds the
    retries of a key that keeps moving."""

    # ------------------------------------------------------------------ the switch

    def enabled(self, principal: str) -> bool:
        """Whether memory is on for the deployment and for ``principal``."""
        return self.deployment and self.facts.settings(principal).enabled

    def require_on(self, principal: str) -> None:
        """``memory_off`` unless memory is on for the deployment and for the principal."""
        if not self.deployment:
            raise FactRefused("memory_off", "memory is off in this deployment: no fact is recorded")
        if not self.facts.settings(principal).enabled:
            raise FactRefused(
                "memory_off",
                "your memory is off: no fact is recorded",
                hint='turn it on with PUT /memory/settings {"enabled": true}',
            )

    def settings(self, principal: str) -> dict[str, Any]:
        """The principal's switch as stored, and the deployment's."""
        return settings_body(self.facts.settings(principal), deployment=self.deployment)

    def switch(self, principal: str, enabled: bool) -> dict[str, Any]:
        """Turn memory on or off for ``principal``; the switch as stored."""
        self.facts.put_settings(principal, MemorySettings(enabled=enabled, changed_at=self.clock()))
        return self.settings(principal)

    # ------------------------------------------------------------------ keys

    def well_formed(self, key: str) -> None:
        """``bad_request`` when ``key`` is not a dotted lowercase name, with the keys it likely
        meant."""
        if len(key) <= KEY_MAX_LENGTH and re.fullmatch(KEY_PATTERN, key):
            return
        raise FactRefused(
            "bad_request",
            f"fact key {key[:60]!r} is not a dotted lowercase name such as 'person.height_cm' "
            f"(at most {KEY_MAX_LENGTH} characters)",
            did_you_mean=self.vocabulary.did_you_mean(key[:200]),
        )

    def known(self, key: str) -> FactKey:
        """The vocabulary's key: ``bad_request`` when malformed, ``unknown_fact_key`` when the
        vocabulary has none."""
        self.well_formed(key)
        if key in self.vocabulary:
            return self.vocabulary.get(key)
        raise FactRefused(
            "unknown_fact_key",
            f"unknown fact key {key!r}",
            hint="use a key of the memory vocabulary",
            did_you_mean=self.vocabulary.did_you_mean(key),
        )

    def no_fact(self, key: str) -> FactRefused:
        """The one refusal for a fact that is not the principal's, whatever the reason."""
        likely = () if key in self.vocabulary else self.vocabulary.did_you_mean(key)
        return FactRefused("no_fact", f"no fact {key} is in force", did_you_mean=likely)

    # ------------------------------------------------------------------ writes

    def state(
        self,
        principal: str,
        key: str,
        *,
        value: Any = None,
        words: str | None = None,
        source: Source | None = None,
        stated_at: datetime | None = None,
        valid_from: datetime | None = None,
        valid_until: datetime | None = None,
        correction: bool = False,
        replay: str | None = None,
    ) -> Written | None:
        """State a fact (or correct the one in force): the key known, memory on, then the
        write loop. None: ``replay`` was applied already."""
        known = self.known(key)
        self.require_on(principal)
        now = self.clock()
        if stated_at is not None and stated_at > now:
            raise FactRefused(
                "invalid_request",
                "stated_at is in the future: it says when the user said it",
                "leave it out for now, or send the time of the conversation it comes from",
            )
        said = Statement(
            key=known.key,
            value=value,
            words=words,
            source=_replayable(source or Source(kind="api"), replay),
            stated_at=stated_at,
            valid_from=valid_from,
            valid_until=valid_until,
            correction=correction,
        )
        return self._write(
            principal,
            known.key,
            lambda head: plan_statement(said, head, vocabulary=self.vocabulary, now=now),
            replay,
        )

    def correct(self, principal: str, key: str, text: str, *, replay: str | None) -> Written | None:
        """Correct the fact in force with what a person typed: the words, when a derivation
        rule reads them (``5'8"``, ``72 kg``: the fact keeps the words and the rule), else the
        value as typed (the key's type checks it). A new revision; the old one is kept."""
        unit = self.known(key).unit
        derived = DEFAULT_DERIVATIONS.derive(text, unit) is not None
        return self.state(
            principal,
            key,
            value=None if derived else text,
            words=text if derived else None,
            correction=True,
            replay=replay,
        )

    def confirm(self, principal: str, key: str, *, replay: str | None = None) -> Written | None:
        """The fact in force is still right: its age starts again."""
        self.well_formed(key)
        self.require_on(principal)
        now = self.clock()
        source = _replayable(Source(kind="api"), replay)
        return self._write(
            principal,
            key,
            lambda head: plan_confirmation(head, source=source, now=now),
            replay,
        )

    def delete(self, principal: str, key: str, *, replay: str | None = None) -> Written | None:
        """Forget the key: recall never returns it; earlier revisions' content is erased in
        the same write. Allowed with memory off."""
        self.well_formed(key)
        now = self.clock()
        source = _replayable(Source(kind="api"), replay)
        return self._write(
            principal,
            key,
            lambda head: plan_deletion(head, source=source, now=now),
            replay,
        )

    def _write(
        self, principal: str, key: str, plan: FactPlan, replay: str | None
    ) -> Written | None:
        """``write_fact`` on the key's head; its outcomes as ``FactRefused``: a refusal as it
        is, a revision that cannot apply to the head (its period) ``invalid_period``, a key
        that kept moving ``busy``, a fact past one stored item ``size_limit``. With ``replay``
        (kept in the revision's source, in the same write), None when a revision of the key
        already carries it: the store refuses the append (``CallRecorded``), so two copies of
        one post, racing or not, apply once and a copy costs what a write does."""
        head = self.facts.head(principal, key)
        try:
            written = write_fact(
                self.facts,
                principal,
                key,
                plan,
                head=head,
                policy=self.commits,
            )
        except CallRecorded:
            return None
        except ValueError as cannot:
            raise FactRefused("invalid_period", str(cannot)) from None
        except TooManyConflicts as busy:
            raise FactRefused("busy", busy.message, hint="send the request again") from None
        except SizeLimit as big:  # can never be stored as it is
            raise FactRefused(big.code, big.message, hint=big.hint) from None
        if isinstance(written, Refusal):
            if replay is not None and self._carries(principal, key, replay):
                return None  # the first copy applied: what it changed refuses this one
            if written.code == "no_fact":
                raise self.no_fact(key)
            raise FactRefused(written.code, written.message, written.hint, written.did_you_mean)
        return written

    def _carries(self, principal: str, key: str, replay: str) -> bool:
        """Whether a revision of ``key`` carries ``replay`` (read only for a refused plan)."""
        try:
            revisions = self.facts.history(principal, key)
        except NotFound:
            return False
        return any(revision.source.ref == REPLAY_PREFIX + replay for revision in revisions)

    # ------------------------------------------------------------------ reads

    def lines(self, principal: str) -> dict[str, Any]:
        """Every fact in force, each with its decay class, age and what recall would do with
        it now (``forms.surface.facts.fact_lines``: recall's own planner)."""
        on = self.enabled(principal)
        now = self.clock()
        facts = self.facts.current(principal, now)
        return {
            "memory_enabled": on,
            "facts": fact_lines(facts, self.vocabulary, self.policy, on=on, now=now),
        }

    def read(self, principal: str, key: str, as_of: datetime | None = None) -> dict[str, Any]:
        """One key: the fact in force (as recall reads it now), its timeline and every
        revision; with ``as_of``, what was believed at that system time."""
        self.well_formed(key)
        try:
            revisions = self.facts.history(principal, key)
        except NotFound:
            raise self.no_fact(key) from None
        history = FactHistory(revisions)
        head = history.head()
        now = self.clock()
        current = head.at(now) if head is not None else None  # as recall reads it now
        on = self.enabled(principal) if current is not None else False
        vocabulary = self.vocabulary
        lines = fact_lines([current] if current else [], vocabulary, self.policy, on=on, now=now)
        body: dict[str, Any] = {
            "key": key,
            "current": lines[0] if lines else None,
            "timeline": [fact_body(vocabulary, period) for period in history.timeline(as_of=as_of)],
            "history": [revision_body(revision) for revision in revisions],
        }
        if as_of is not None:
            believed = history.as_of(as_of)
            body["as_of"] = as_of.isoformat()
            body["believed"] = fact_body(vocabulary, believed) if believed is not None else None
        return body

    def export(self, principal: str) -> dict[str, Any]:
        """Everything memory holds of ``principal``: the settings, every key ever stated with
        the fact in force (None once deleted) and every revision."""
        now = self.clock()
        heads = {head.key: head for head in self.facts.heads(principal)}
        keys = []
        for key, group in groupby(self.facts.export(principal), key=lambda revision: revision.key):
            head = heads.get(key)
            current = head.at(now) if head is not None else None  # as recall reads it now
            keys.append(
                {
                    "key": key,
                    "current": fact_body(self.vocabulary, current) if current is not None else None,
                    "history": [revision_body(revision) for revision in group],
                }
            )
        return {
            "principal": principal,
            "exported_at": now.isoformat(),
            "settings": self.settings(principal),
            "facts": keys,
        }


def _replayable(source: Source, replay: str | None) -> Source:
    """``source`` carrying ``replay`` as its ref, when there is one."""
    return source if replay is None else Source(kind=source.kind, ref=REPLAY_PREFIX + replay)


__all__ = ["REPLAY_PREFIX", "FactRefused", "MemoryApi", "Written"]
