"""Tool-call records: what makes a retried write call safe.

Every write tool's call is recorded under its tool-call id, per conversation (a builder call:
per chat, ``scoped_call_id``), whatever its outcome, by the store (``FormStore`` promise 5): in
the commit that applies it, or on its own.
This module holds the pieces that decide what a call is (its fingerprint), what is recorded for
it, and what a retry gets back: the first result within the replay window, a conflict for
other input under the id, an expiry after the window. A write's result is rendered once
(``Rendering``), when the store makes the record of the write it is about to make
(``deferred_call``) or when the caller answers: never for an attempt that lost its race.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import sys
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timedelta
from json.encoder import c_make_encoder, encode_basestring_ascii  # type: ignore[attr-defined]
from typing import NamedTuple

from pydantic_core import PydanticSerializationError, to_json

from forms.call_records import Once
from forms.errors import BadRequest, ToolCallConflict, ToolCallExpired, TooManyConflicts
from forms.instance import CallRecord, FormInstance, NewCall
from forms.marked import constructed
from forms.surface.results import Result, as_json
from forms.surface.tools import WRITES

DEFAULT_REPLAY_WINDOW = timedelta(hours=24)
"""How long a retried tool call gets its first result back; later it is ``tool_call_expired``."""
WRITE_TOOLS = WRITES
"""The tools whose calls are recorded (reads have no effect to repeat): the tools' list says
which (``forms.surface.tools.TOOLS``)."""
UNRECORDED = (TooManyConflicts, ToolCallConflict, ToolCallExpired)
"""Refusals that say nothing about the call itself: sending it again is the remedy, or it is
already someone else's. They are never recorded as the call's result."""


class CallId(NamedTuple):
    """A write tool call being answered: its tool, id, and the fingerprint of what was sent.
    ``recorded`` false: the call binds nothing (a builder call sent without a chat). A named
    tuple (immutable, built at a fraction of a frozen dataclass's cost): one per write call."""

    tool: str
    id: str
    fingerprint: str
    recorded: bool = True


def scoped_call_id(chat: str | None, call_id: str) -> str:
    """The id a builder call is recorded under: the chat's own ``<chat>/<call_id>``.

    Tool-call ids are unique within the chat that made them, not across chats (some model
    servers number them ``call_0``, ``call_1``, ... in every response), just as the form
    tools' ids are the conversation's. A valid id has no ``/``, so no chat's key can be
    another's. Without a chat, the id as sent."""
    return call_id if chat is None else f"{chat}/{call_id}"


def _canonical_encoder() -> Callable[[object, int], Iterable[str]]:
    """The chunks of ``json.dumps(..., sort_keys=True, default=str)``'s text, called with the
    value and 0: the same text, so the same digests as ever. Where the standard library has
    its C encoder, one is built once and reused (the encoder object rebuilds it on every
    call); without a check for circular values, which then end in a ``RecursionError``
    instead of a ``ValueError``, refused just the same."""
    if c_make_encoder is None:  # pragma: no cover - CPython always has it
        encoder = json.JSONEncoder(sort_keys=True, default=str)
        return lambda value, level: encoder.iterencode(value)
    chunks: Callable[[object, int], Iterable[str]] = c_make_encoder(
        None, str, encode_basestring_ascii, None, ": ", ", ", True, False, True
    )
    return chunks


_canonical = _canonical_encoder()


def _sha256_maker() -> Callable[[bytes], hashlib._Hash]:
    """CPython's own SHA-256 when the interpreter has it (the module ``hashlib`` falls back
    on: ``_sha2`` from Python 3.12, ``_sha256`` before), else ``hashlib.sha256``. The same
    digests; the built-in one is made without OpenSSL's digest context, about 2 µs less per
    write in a tool call, where OpenSSL's code is cold. Looked up by name, with the public
    one as the fallback, since the module is private to CPython (and may be left out of a
    build)."""
    try:
        module = importlib.import_module("_sha2" if sys.version_info >= (3, 12) else "_sha256")
        made: Callable[[bytes], hashlib._Hash] = module.sha256
    except (ImportError, AttributeError):
        return hashlib.sha256
    return made


_sha256 = _sha256_maker()


def fingerprint(tool: str, payload: object) -> str:
    """A digest of a call as the model sent it (before validation, so a refused input binds
    its id too): sha256 of its canonical JSON, the text of ``{"tool": tool, "input":
    payload}`` with sorted keys, written here around the input's text (``input`` sorts
    first) rather than encoded from a dict made for it: the same text, on every write.
    ``BadRequest`` for an input that is not JSON, or that holds a lone surrogate, which no
    record of the call could carry (``_holds_lone_surrogate``)."""
    try:
        text = "".join(_canonical(payload, 0))
    except (ValueError, TypeError, RecursionError):  # an integer past the digit limit, say
        raise BadRequest(
            "the input cannot be read as JSON", "send plain JSON values (numbers of sane size)"
        ) from None
    # the text is ASCII: a \ud escape is U+D000-U+DFFF (Hangul, half of a pair, or lone)
    if "\\ud" in text and _holds_lone_surrogate(payload):
        raise BadRequest(
            "the input holds a lone surrogate (a \\ud800-\\udfff escape without its pair), "
            "which is not text",
            "send the text as valid Unicode",
        )
    tail = _TAILS.get(tool)
    if tail is None:  # a tool not in the list: its name encoded here
        tail = f', "tool": {encode_basestring_ascii(tool)}}}'
    return _sha256(f'{{"input": {text}{tail}'.encode()).hexdigest()


def _holds_lone_surrogate(payload: object) -> bool:
    """Whether ``payload`` holds a lone surrogate (U+D800-U+DFFF) in a key or a text: no
    character, so no UTF-8 text (the call's record, a store's item) can carry it; a JSON
    parser gives one for a ``\\ud800`` escape without its pair. pydantic-core's serialiser
    refuses it, and nothing else here (other values become their text, as in the digest)."""
    try:
        to_json(payload, fallback=str)
    except PydanticSerializationError:
        return True
    return False


_TAILS = {tool: f', "tool": {encode_basestring_ascii(tool)}}}' for tool in WRITES}
"""What follows the input in a write tool's canonical text, its name encoded, made once."""


def new_call(call: CallId, result: Result, instance_id: str | None, now: datetime) -> NewCall:
    """The record of ``call`` answered with ``result``, to store with its commit."""
    return NewCall(call_id=call.id, record=_record(call, result, instance_id, now))


class _Deferred(NewCall):
    """A ``NewCall`` whose record and its text are each made on the first read, once, from
    the call's rendering: one object made on every write (where two makers and a ``Once``
    for each were four objects more). It keeps the call and the rendering after making
    both: a store reads the record at most once per write, and the object is dropped with
    the commit."""

    __slots__ = ("_call", "_instance_id", "_json", "_made", "_now", "_result")

    def __init__(
        self, call: CallId, result: Callable[[], Result], instance_id: str | None, now: datetime
    ) -> None:
        self.call_id = call.id
        self._call, self._result, self._instance_id, self._now = call, result, instance_id, now
        self._made: CallRecord | None = None
        self._json: str | None = None

    @property
    def record(self) -> CallRecord:
        if self._made is None:
            self._made = _record(self._call, self._result(), self._instance_id, self._now)
        return self._made

    def record_json(self) -> str:
        if self._json is None:
            self._json = record_json(self._call, self._result(), self._instance_id, self._now)
        return self._json

    def __repr__(self) -> str:
        made = "<not made yet>" if self._made is None else repr(self._made)
        return f"NewCall(call_id={self.call_id!r}, record={made})"


deferred_call: Callable[[CallId, Rendering, str | None, datetime], NewCall] = _Deferred
"""``new_call`` for a result not rendered yet: the record, and the result with it, is made
when the store reads it to write it, so an attempt that loses its compare-and-set, or finds
the id taken, renders nothing. Its JSON text is made without the model (``record_json``).
The class itself, called on every write: no function in front of it."""


def _record(call: CallId, result: Result, instance_id: str | None, now: datetime) -> CallRecord:
    """``as_json`` makes the result plain JSON (a copy that shares nothing with ``result``),
    so the record is built without validating it again."""
    return constructed(
        CallRecord,
        tool=call.tool,
        fingerprint=call.fingerprint,
        result=as_json(result),
        at=now,
        instance_id=instance_id,
    )


def record_json(call: CallId, result: Result, instance_id: str | None, now: datetime) -> str:
    """The text of ``_record(...).model_dump_json()``, in one pass, with no copy of the result
    and no model: pydantic-core's serialiser of the record's fields in their order, as the
    model's dump runs it for ``at`` and for plain JSON (infinities as ``null`` too). The
    record's copy of a result holding anything else (a decimal, a date, a key that is not
    text) is what this serialiser writes of it, read back (``as_json``), so its text is this
    text too, whatever the result holds: nothing is asked of the result first."""
    record = {
        "tool": call.tool,
        "fingerprint": call.fingerprint,
        "result": result,
        "at": now,
        "instance_id": instance_id,
    }
    return to_json(record, inf_nan_mode="null", fallback=str).decode()


class Rendering(Once[Result]):
    """A call's result, rendered by ``render()`` on the first call, once; every later call
    answers the same result. What a write's plan hands the commit loop instead of the result
    itself: the store renders it for the record of a write it is about to make, the caller
    for its answer after the loop, and an attempt that lost never renders it."""

    __slots__ = ()


def check_replay(call: CallId, record: CallRecord, now: datetime, window: timedelta) -> None:
    """Raise unless ``call`` may get ``record``'s result back: the same tool and input
    (else ``ToolCallConflict``), within ``window`` of the first call (else ``ToolCallExpired``:
    it is refused, never applied again)."""
    if record.tool != call.tool or record.fingerprint != call.fingerprint:
        raise ToolCallConflict(
            "this tool_call_id was already used for a different call",
            "use a new tool_call_id for a new call",
        )
    age = now - record.at
    if age > window:
        raise ToolCallExpired(
            f"this tool_call_id was used {duration(age)} ago, longer than the "
            f"{duration(window)} a retry is answered for; it was not applied again",
            "use a new tool_call_id for a new call; form_read shows what is saved",
        )


def caused_by(instance: FormInstance, fired: Sequence[str]) -> list[str]:
    """``fired`` and every outbox entry raised by their effects, transitively, in outbox order."""
    found = {k for k in fired if k in instance.state.outbox}
    grew = True
    while grew:
        grew = False
        for key, entry in instance.state.outbox.items():
            if key not in found and entry.cause in found:
                found.add(key)
                grew = True
    return [k for k in instance.state.outbox if k in found]


def duration(span: timedelta) -> str:
    seconds = int(span.total_seconds())
    if seconds >= 2 * 86_400:
        return f"{seconds // 86_400} days"
    if seconds >= 2 * 3_600:
        return f"{seconds // 3_600} hours"
    if seconds >= 120:
        return f"{seconds // 60} minutes"
    return f"{seconds} seconds"
