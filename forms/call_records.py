"""Tool-call records: what a store keeps of a write tool call (``CallRecord``), and what a
write hands it to keep (``NewCall``), under the call's id, in the same all-or-nothing write.

A ``NewCall``'s record may be made when the store first reads it (``NewCall.deferred``): a
store reads it only for a write it is about to make, so a write that loses its
compare-and-set, or finds the id taken, never makes it (``forms.app.loop``). Importable from
``forms.instance`` too.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, Generic, TypeVar, cast

from pydantic import JsonValue
from pydantic_core import CoreSchema, core_schema

from forms.field_log import Frozen

__all__ = ["CallRecord", "NewCall", "Once"]

T = TypeVar("T")


class Once(Generic[T]):
    """A value ``make()`` makes on the first call, once: every later call answers the same
    value, and the maker (with what it closed over) is dropped. A call's deferred record here,
    and its deferred result (``forms.app.calls.Rendering``)."""

    __slots__ = ("_make", "_value")

    def __init__(self, make: Callable[[], T]) -> None:
        self._make: Callable[[], T] | None = make
        self._value: T | None = None

    @classmethod
    def made(cls, value: T) -> Once[T]:
        """A value already made."""
        once: Once[T] = cls.__new__(cls)
        once._make, once._value = None, value
        return once

    @property
    def is_made(self) -> bool:
        return self._make is None

    def __call__(self) -> T:
        make = self._make
        if make is not None:
            self._value = make()
            self._make = None
        return cast("T", self._value)  # made by now


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
    """A call to record with a create or a commit, under its tool-call id: its ``record``
    given, or made when a store first reads it (``deferred``), which a store does only for a
    write it is about to make. A write that loses its compare-and-set, or finds the id taken,
    never makes the record (``forms.app.loop``: the result is rendered after the commit
    decision). Read-only by convention (slots, no setters used).

    ``record_json`` is the record as JSON text, what a store keeps: ``record``'s
    ``model_dump_json()``, or the same text made without the model (``deferred``'s ``text``)."""

    __slots__ = ("_record", "_text", "call_id")

    def __init__(
        self,
        *,
        call_id: str,
        record: CallRecord | Once[CallRecord],
        text: Once[str] | None = None,
    ) -> None:
        self.call_id = call_id
        self._record = record if isinstance(record, Once) else Once.made(record)
        self._text = text

    @classmethod
    def deferred(
        cls, call_id: str, make: Callable[[], CallRecord], text: Callable[[], str] | None = None
    ) -> NewCall:
        """A call whose record ``make()`` makes on the first read of ``record``, once; and
        ``text()``, when given, its JSON text on the first ``record_json()`` (the same text
        as the record's ``model_dump_json()``, made without the model)."""
        return cls(call_id=call_id, record=Once(make), text=None if text is None else Once(text))

    @property
    def record(self) -> CallRecord:
        return self._record()

    def record_json(self) -> str:
        """``record.model_dump_json()``: the text a store keeps and reads back (stored
        records of either way read the same: the text is the same)."""
        if self._text is not None:
            return self._text()
        return self._record().model_dump_json()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, NewCall):
            return NotImplemented
        return self.call_id == other.call_id and self.record == other.record

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        made = repr(self._record()) if self._record.is_made else "<not made yet>"
        return f"NewCall(call_id={self.call_id!r}, record={made})"

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> CoreSchema:
        """Checked as itself in a model's field (``Commit.call``), dumped as its two parts."""
        dump = core_schema.plain_serializer_function_ser_schema(
            lambda call: {"call_id": call.call_id, "record": call.record}
        )
        return core_schema.is_instance_schema(cls, serialization=dump)
