"""What a write plans before it is committed: who writes (``Author``), the plan itself
(``FillPlan``: field changes and a per-field account), what a refused or unknown id looks like,
and what one answer may be (``check_value_size``, ``is_blank``). The moves that fill plans are
``forms.operations``; like them, nothing here touches storage, the clock or ids.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple, get_args

from forms.compiled import CompiledForm
from forms.instance import FieldChange, Revision, RevisionKind, Source
from forms.marked import built
from forms.schema import Accepted, json_depth

MAX_VALUE_BYTES = 16_384
"""A single answer, as compact JSON. Forms collect answers, not documents."""
MAX_VALUE_DEPTH = 6
"""Nesting of lists/objects inside one answer."""
MAX_PATCH_FIELDS = 100
"""Fields in one fill."""

DECIDERS = frozenset({"approver", "operator", "migration"})
"""Sources that may write a field declared ``decided_by_approver``."""

RETRACT_HINT = 'to clear an answer, call form_revise with action "retract"; never write "" or null'


class Author(NamedTuple):
    """Who is writing: the provenance stamped on every revision of this call. A named tuple
    (immutable, and built at a fraction of a frozen dataclass's cost): one per write call."""

    source: Source
    actor: str | None = None
    tool_call_id: str | None = None


@dataclass(frozen=True, slots=True)
class ValueRejection:
    field: str
    message: str
    hint: str | None


@dataclass(frozen=True, slots=True)
class Unknown:
    sent: str
    did_you_mean: tuple[str, ...]


_NO_VALUE: Any = object()
"""``unknown_id``'s default: the id came without a value (a decline)."""


def unknown_id(form: CompiledForm, sent: str, value: Any = _NO_VALUE) -> Unknown:
    """An id naming no field: what was sent (cut to 64 characters) and the fields it most
    likely meant. Only fields the agent may write are offered and, when a value came with the
    id, only those whose type takes it: ``incident_kind: "premises"`` is not offered
    ``incident_date``. A suggestion the value would be refused under costs a round trip, or
    invites the wrong field when followed blindly."""
    shown = sent if len(sent) <= 64 else sent[:63] + "…"
    offered = [c for c in form.suggest_fields(sent[:128], 6) if form.fields[c].offered]
    if value is not _NO_VALUE and not is_blank(value):
        offered = [c for c in offered if isinstance(form.fields[c].type.accept(value), Accepted)]
    return Unknown(shown, tuple(offered[:3]))


@dataclass(slots=True)
class FillPlan:
    """What a fill will do, field by field, before it is committed."""

    changes: dict[str, FieldChange] = field(default_factory=dict)
    captured: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    rejected: list[ValueRejection] = field(default_factory=list)
    unknown: list[Unknown] = field(default_factory=list)
    resolved: dict[str, str] = field(default_factory=dict)
    replaced: dict[str, Any] = field(default_factory=dict)
    """Fields whose earlier answer this write replaces, with that earlier answer."""
    coerced: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Fields whose value came in another unambiguous encoding: ``{"sent": "yes", "stored":
    true}``, what the call carried and what was validated and kept (see ``FieldType.accept``)."""
    declined: list[str] = field(default_factory=list)
    """Fields this call declined ("prefers not to say", or "no preference"), among captured."""
    confirmed: list[str] = field(default_factory=list)
    """Fields whose answer from memory this call confirmed (the same value sent again): the
    answer is the writer's now, among captured."""
    dismissed: list[str] = field(default_factory=list)
    """Fields whose offer from memory this call dropped (``clear_memory``): nothing was
    written to them; the offer is no longer shown."""


def empty_plan() -> FillPlan:
    """``FillPlan()``, made without its dataclass ``__init__`` (which calls a factory per
    field): every write plans one. ``tests/unit/test_write_shortcuts.py`` holds it to
    ``FillPlan()``."""
    plan = _new_plan(FillPlan)
    plan.changes = {}
    plan.captured = []
    plan.unchanged = []
    plan.rejected = []
    plan.unknown = []
    plan.resolved = {}
    plan.replaced = {}
    plan.coerced = {}
    plan.declined = []
    plan.confirmed = []
    plan.dismissed = []
    return plan


_new_plan = object.__new__


def new_revision(
    kind: RevisionKind, value: Any, author: Author, now: datetime, prev: int
) -> Revision:
    """A new entry; not validated again when every part already has its type (a scalar of
    validated JSON, a known source, a time), so anything else is refused as it always was."""
    source, actor, tool_call_id = author  # one unpacking, where each field is a read
    parts = {
        "kind": kind,
        "value": value,
        "by": source,
        "actor": actor,
        "tool_call_id": tool_call_id,
        "at": now,
        "prev": prev,
        "note": None,
    }
    if (
        type(value) in _SCALARS
        and source in _SOURCES
        and type(actor) in _TEXT
        and type(tool_call_id) in _TEXT
        and type(now) is datetime
    ):
        return built(Revision, parts)
    return Revision(**parts)


_SCALARS = frozenset({str, int, float, bool, type(None)})
_TEXT = frozenset({str, type(None)})
_SOURCES = frozenset(get_args(Source))


_COMPACT = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
SHORT_TEXT = MAX_VALUE_BYTES // 6 - 2
"""Text this long or shorter fits whatever it holds (a character takes at most six bytes of
JSON, as an escape), so its size needs no encoding to check."""


def check_value_size(value: object) -> str | None:
    """Why ``value`` is too large or deep to store as one answer, or None when it fits."""
    kind = type(value)
    if (
        value is None
        or kind is bool
        or kind is float
        or (kind is str and len(value) <= SHORT_TEXT)  # type: ignore[arg-type]
        or (kind is int and value.bit_length() < 10_000)  # type: ignore[attr-defined]
    ):
        return None  # a scalar that fits: nothing nests, nothing to measure
    try:
        encoded = _COMPACT.encode(value)
    except (TypeError, ValueError):
        return "the value is not plain JSON"
    if len(encoded.encode()) > MAX_VALUE_BYTES:
        return f"the value is over {MAX_VALUE_BYTES} bytes of JSON"
    if json_depth(value) > MAX_VALUE_DEPTH:
        return f"the value nests deeper than {MAX_VALUE_DEPTH} levels"
    return None


def is_blank(value: object) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())
