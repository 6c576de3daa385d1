"""Remembering what the user says: answers to fields that declare a fact key, as facts.

After a write call's commit, ``answers_to_remember`` reads from it the values the agent wrote
to such fields (what memory filled, an executor patched, a webhook seeded or an undo restored
is not the user stating a fact). ``record`` then writes each to the fact store, on memory's
worker (``forms.app.memory.MemoryCall.remember``), in order:

1. the principal's switch, unless the call already read it (memory off: nothing is written);
2. the key's head (or the one the call's recall read);
3. a **confirmation** (``plan_confirmation``: the fact's ``confirmed_at`` is now, its age
   starts again) when the answer is the value memory filled or offered and the period it came
   from is still the one in force now (the one holding now, which need not be the latest: a
   move planned for next month stays planned); otherwise a **statement** of the value
   (``plan_statement``, ``source: conversation``, stated at the time of the answer's commit),
   which is itself a confirmation when it repeats the value holding now, and closes the old
   value's period when it differs;
4. the revision is written by ``forms.app.facts.write_fact`` (the one commit loop): a
   refusal (a value the key's type refuses; a ``do_not_store`` key, which no field can
   declare) writes nothing and is counted; a lost compare-and-set is planned again once on
   the head the store hands back (``RECORD_ATTEMPTS``), then the answer is given up on
   (``busy``, logged and counted like any failure).

Every failure is logged and counted, per answer, and never reaches the tool call.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from forms.compiled import CompiledForm
from forms.instance import FieldChange, FormInstance, Recollection

if TYPE_CHECKING:
    from forms.memory.facts import FactHead, FactRevision, Source
    from forms.memory.statements import Refusal
    from forms.memory.vocabulary import Vocabulary
    from forms.storage.facts import FactStore

_log = logging.getLogger("formwork")

RECORDED = "MemoryFactRecorded"
CONFIRMED = "MemoryFactConfirmed"
REFUSED = "MemoryFactRefused"
"""An answer the fact store does not take (a value the key's type refuses, say)."""
RECORD_FAILED = "MemoryRecordFailed"

RECORD_ATTEMPTS = 2
"""Appends tried per answer: a race lost to another writer is planned again once; a key that
keeps moving is given up on (``MemoryRecordFailed``)."""


@dataclass(frozen=True, slots=True)
class Answer:
    """A user's answer to a field that declares a fact key: what memory records. ``confirms``
    is what memory filled or offered there, when the answer is that very value."""

    field_id: str
    key: str
    value: Any
    confirms: Recollection | None = None


def answers_to_remember(
    form: CompiledForm, before: FormInstance, changes: Mapping[str, FieldChange]
) -> tuple[Answer, ...]:
    """The answers an agent's commit (or the person's, on their page) wrote to fields that
    declare a fact key, in definition order (``before``: the instance it was planned on)."""
    answers = []
    for field_id in form.memory_fields:
        change = changes.get(field_id)
        if change is None or not change.append:
            continue
        revision = change.append[-1]
        if revision.kind != "value" or revision.by not in ("agent", "user"):
            continue
        key = form.fields[field_id].memory
        assert key is not None
        recollection = before.state.recalled.get(field_id)
        confirms = (
            recollection
            if recollection is not None
            and recollection.value == revision.value
            and recollection.stands(before.field(field_id))
            else None
        )
        answers.append(Answer(field_id, key, revision.value, confirms))
    return tuple(answers)


def record(
    facts: FactStore,
    *,
    principal: str,
    conversation_id: str,
    answers: tuple[Answer, ...],
    heads: tuple[FactHead, ...] | None,
    now: datetime,
    vocabulary: Callable[[], Vocabulary],
    count: Callable[[str], None],
) -> None:
    """Write ``answers`` to ``principal``'s memory as said at ``now``, if it is on. ``heads``:
    what the call already read of it (None: nothing, so the switch is read first)."""
    from forms.memory.facts import Source  # noqa: PLC0415 (memory loads on first use)

    if heads is None and not facts.settings(principal).enabled:
        return
    known: dict[str, FactHead | None] = {head.key: head for head in heads or ()}
    source = Source(kind="conversation", ref=conversation_id[:200])
    for answer in answers:
        try:
            _record_one(facts, principal, answer, known, source, now, vocabulary, count)
        except Exception as exc:
            _log.warning(
                "memory: recording %s failed (%s: %s)", answer.key, type(exc).__name__, exc
            )
            count(RECORD_FAILED)


def _record_one(
    facts: FactStore,
    principal: str,
    answer: Answer,
    heads: dict[str, FactHead | None],
    source: Source,
    now: datetime,
    vocabulary: Callable[[], Vocabulary],
    count: Callable[[str], None],
) -> None:
    from forms.app.facts import Written, write_fact  # noqa: PLC0415 (memory loads on first use)

    if answer.key not in heads:
        heads[answer.key] = facts.head(principal, answer.key)
    written = write_fact(
        facts,
        principal,
        answer.key,
        lambda head: _planned(answer, head, source, now, vocabulary),
        head=heads[answer.key],
        attempts=RECORD_ATTEMPTS,
    )
    if not isinstance(written, Written):
        _log.info("memory: %s not recorded: %s", answer.key, written.code)
        count(REFUSED)
        return
    heads[answer.key] = written.head
    count(CONFIRMED if written.revision.change == "confirmed" else RECORDED)


def _planned(
    answer: Answer,
    head: FactHead | None,
    source: Source,
    now: datetime,
    vocabulary: Callable[[], Vocabulary],
) -> FactRevision | Refusal:
    from forms.memory.statements import (  # noqa: PLC0415 (memory loads on first use)
        Refusal,
        Statement,
        plan_confirmation,
        plan_statement,
    )

    confirms = answer.confirms
    if confirms is not None:
        # the period the value was recalled from, if it is still the one a confirmation now
        # renews: Lyon while a move to Berlin is planned is confirmed, and Berlin stays
        confirmation = plan_confirmation(
            head, source=source, now=now, revision=confirms.fact_revision
        )
        if not isinstance(confirmation, Refusal):
            return confirmation
    if not isinstance(answer.value, str | int | float | bool):
        return Refusal(code="invalid_value", message=f"{answer.key}: not one value")
    statement = Statement(key=answer.key, value=answer.value, source=source, stated_at=now)
    return plan_statement(statement, head, vocabulary=vocabulary(), now=now)
