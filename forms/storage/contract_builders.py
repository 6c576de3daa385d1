"""Instances, revisions and commits built from explicit datetimes, for the storage contract
suites and any test that needs a stored instance (importable without pytest).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from pydantic import JsonValue, ValidationError

from forms.instance import (
    CallRecord,
    Commit,
    FieldChange,
    FieldHistory,
    FormInstance,
    HookState,
    InstanceState,
    NewCall,
    OutboxEntry,
    Rejection,
    Revision,
    Source,
)

T0 = datetime(2024, 5, 1, 9, 30, tzinfo=UTC)


def at(seconds: int) -> datetime:
    """A fixed instant ``seconds`` after ``T0``."""
    return T0 + timedelta(seconds=seconds)


def value_revision(
    value: JsonValue,
    when: datetime,
    *,
    prev: int = -1,
    by: Source = "agent",
    tool_call_id: str | None = None,
) -> Revision:
    """A ``value`` revision appended on top of cursor ``prev``."""
    return Revision(kind="value", value=value, by=by, tool_call_id=tool_call_id, at=when, prev=prev)


def seeded_log(values: Sequence[JsonValue], when: datetime) -> FieldHistory:
    """A log of ``values`` each written on top of the previous one, the last in force."""
    revisions = tuple(value_revision(v, when, prev=i - 1) for i, v in enumerate(values))
    return FieldHistory(revisions=revisions, cursor=len(revisions) - 1)


def busy_state(when: datetime) -> InstanceState:
    """A state with something in every container (hooks, outbox, rejections)."""
    return InstanceState(
        updated_at=when,
        hooks={"h1": HookState(holds=True, count=1)},
        outbox={"h1:1": OutboxEntry(key="h1:1", hook_id="h1", occurrence=1, created_at=when)},
        rejections=[Rejection(key="r1", hook_id="h2", message="too young", at=when)],
    )


def call(call_id: str, when: datetime = T0, *, tool: str = "form_fill", **result: Any) -> NewCall:
    """A tool call to record under ``call_id``."""
    record = CallRecord(
        tool=tool, fingerprint=f"fp-{call_id}", result={"ok": True, **result}, at=when
    )
    return NewCall(call_id=call_id, record=record)


def make_instance(
    instance_id: str = "inst-1",
    *,
    principal: str = "alice",
    conversation_id: str = "conv-1",
    created_at: datetime = T0,
    form_id: str = "intake",
    form_version: int = 1,
    history: Mapping[str, FieldHistory] | None = None,
    state: InstanceState | None = None,
) -> FormInstance:
    """A new instance (version 0); its state defaults to an empty one updated at creation."""
    return FormInstance(
        id=instance_id,
        form_id=form_id,
        form_version=form_version,
        principal=principal,
        conversation_id=conversation_id,
        created_at=created_at,
        history=dict(history or {}),
        state=state or InstanceState(updated_at=created_at),
    )


def append_values(
    instance: FormInstance,
    field_id: str,
    values: Sequence[JsonValue],
    when: datetime,
    *,
    state: InstanceState | None = None,
    tool_call_id: str | None = None,
) -> Commit:
    """A commit on top of ``instance`` appending ``values`` to one field, the last in force."""
    log = instance.field(field_id)
    prev, appended = log.cursor, []
    for offset, value in enumerate(values):
        appended.append(value_revision(value, when, prev=prev, tool_call_id=tool_call_id))
        prev = log.count + offset
    return Commit(
        instance_id=instance.id,
        expected_version=instance.version,
        fields={field_id: FieldChange(append=tuple(appended), cursor=prev)},
        state=state or instance.state.model_copy(update={"updated_at": when}),
    )


def move_cursor(instance: FormInstance, field_id: str, cursor: int, when: datetime) -> Commit:
    """A commit on top of ``instance`` that only moves one field's cursor (undo, redo)."""
    return Commit(
        instance_id=instance.id,
        expected_version=instance.version,
        fields={field_id: FieldChange(cursor=cursor)},
        state=instance.state.model_copy(update={"updated_at": when}),
    )


def dumped_revisions(log: FieldHistory) -> list[str]:
    """Each revision of ``log`` as its stored JSON, to compare logs byte for byte."""
    return [revision.model_dump_json() for revision in log.revisions]


class Committing(Protocol):
    """A store a test commits a new state on (every form store is one)."""

    def get(self, instance_id: str) -> FormInstance: ...
    def commit(self, commit: Commit) -> FormInstance: ...


def put_state(store: Committing, instance_id: str, state: InstanceState) -> None:
    """Commit ``state`` as the instance's, on the version stored now (no field changes)."""
    current = store.get(instance_id)
    store.commit(Commit(instance_id=instance_id, expected_version=current.version, state=state))


def page_ids(page: Any) -> list[str]:
    """The ids of a listing page's instances (an index's page), in order."""
    return [instance.id for instance in page.instances]


def attempted(*changes: Callable[[], object]) -> int:
    """Make each change a caller may try on an instance it holds, and count those refused
    (``TypeError``: a read-only container; ``ValidationError``: a frozen model). The promise
    is that none reaches the store: refused, or made on the caller's own copy."""
    refused = 0
    for change in changes:
        try:
            change()
        except (TypeError, ValidationError):
            refused += 1
    return refused
