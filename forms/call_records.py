"""Tool-call records: what a store keeps of a write tool call (``CallRecord``), and what a
write hands it to keep (``NewCall``), under the call's id, in the same all-or-nothing write.

A ``NewCall``'s record may be made when the store first reads it
(``forms.app.calls.deferred_call``): a store reads it only for a write it is about to make,
so a write that loses its compare-and-set, or finds the id taken, never makes it
(``forms.app.loop``). Importable from ``forms.instance`` too.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, Generic, TypeVar

from pydantic import JsonValue
from pydantic_core import CoreSchema, core_schema

from forms.field_log import Frozen

__all__ = ["CallRecord", "NewCall", "Once"]

T = TypeVar("T")


class Once(Generic[T]):
    """A value ``make()`` makes on the first call, once: every later call answers the same
    value, and the maker (with what it closed over) is dropped. A call's deferred result
    (``forms.app.calls.Rendering``)."""

    __slots__ = ("_make", "_value")

    def __init__(self, make: Callable[[], T]) -> None:
        self._make: Callable[[], T] | None = make
        self._value: T | None = None

    def __call__(self) -> T:
        make = self._make
        if make is not None:
            self._value = make()
            self._make = None
        return self._value  # type: ignore[return-value]  # made by now (no cast: a call)


class CallRecord(Frozen):
    """A write tool call already answered in a conversation, so a retry of it returns the same
    result and applies nothing twice. Kept by the store per (principal, conversation), apart
    from instances: recording it is part of the commit (or create) that applies the call, and
    a call that changed nothing is recorded on its own (``FormStore.record_call``)."""

    tool: str
    fingerprint: str
    result: dict[str, JsonValue]
    at: datetime
    instance_id: str | None = None
    """The instance the call applied to, if any."""


class NewCall:
    """A call to record with a create or a commit, under its tool-call id, and its record.
    A write's record may instead be made when a store first reads it
    (``forms.app.calls.deferred_call``, a subclass), which a store does only for a write it
    is about to make: a write that loses its compare-and-set, or finds the id taken, never
    makes the record (``forms.app.loop``: the result is rendered after the commit decision).
    Read-only by convention (slots, no setters used).

    ``record_json`` is the record as JSON text, what a store keeps: ``record``'s
    ``model_dump_json()`` (the deferred kind makes the same text without the model)."""

    __slots__ = ("_record", "call_id")

    def __init__(self, *, call_id: str, record: CallRecord) -> None:
        self.call_id = call_id
        self._record = record

    @property
    def record(self) -> CallRecord:
        return self._record

    def record_json(self) -> str:
        """``record.model_dump_json()``: the text a store keeps and reads back (stored
        records of either kind read the same: the text is the same)."""
        return self._record.model_dump_json()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, NewCall):
            return NotImplemented
        return self.call_id == other.call_id and self.record == other.record

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"NewCall(call_id={self.call_id!r}, record={self._record!r})"

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> CoreSchema:
        """Checked as itself in a model's field (``Commit.call``), dumped as its two parts."""
        dump = core_schema.plain_serializer_function_ser_schema(
            lambda call: {"call_id": call.call_id, "record": call.record}
        )
        return core_schema.is_instance_schema(cls, serialization=dump)
