"""What a write plans before it is committed: who writes (``Author``), the plan itself
(``FillPlan``: field changes and a per-field account), what a refused or unknown id looks like,
and what one answer may be (``check_value_size``, ``is_blank``). The moves that fill plans are
``forms.operations``; like them, nothing here touches storage, the clock or ids.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, NamedTuple, get_args

from forms.compiled import CompiledForm
from forms.instance import FieldChange, Revision, Source
from forms.marked import SealedList, all_fields
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


class _NoEntries(dict[str, Any]):
    """The empty map a plan's part holds until something is noted in it: one for every plan
    (``FillPlan``), so every change is refused (``FillPlan.put`` makes the part a map of its
    own first). Compares, serialises and prints as ``{}``."""

    __slots__ = ()

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("a plan's empty part is shared: note into it with FillPlan.put")

    __setitem__ = __delitem__ = __ior__ = clear = pop = popitem = setdefault = update = _refuse


NO_ENTRIES: dict[str, Any] = _NoEntries()
NO_ITEMS: list[Any] = SealedList()
"""The empty parts every plan starts with (``empty_plan``): a write notes into two or three
of its eleven, so the others are not made (``FillPlan.add`` and ``put`` make a part a list or
map of its own when the first entry is noted; the hot path in ``forms.operations`` spells
that out for the parts most writes note into)."""


def _no_entries() -> dict[str, Any]:
    return NO_ENTRIES


def _no_items() -> list[Any]:
    return NO_ITEMS


@dataclass(slots=True)
class FillPlan:
    """What a fill will do, field by field, before it is committed. A part nothing was noted
    into is the shared ``NO_ITEMS`` or ``NO_ENTRIES``, which refuse changes: note with ``add``
    and ``put`` (or, on the hot path, replace the part on the first entry)."""

    changes: dict[str, FieldChange] = field(default_factory=_no_entries)
    captured: list[str] = field(default_factory=_no_items)
    unchanged: list[str] = field(default_factory=_no_items)
    rejected: list[ValueRejection] = field(default_factory=_no_items)
    unknown: list[Unknown] = field(default_factory=_no_items)
    resolved: dict[str, str] = field(default_factory=_no_entries)
    replaced: dict[str, Any] = field(default_factory=_no_entries)
    """Fields whose earlier answer this write replaces, with that earlier answer."""
    coerced: dict[str, dict[str, Any]] = field(default_factory=_no_entries)
    """Fields whose value came in another unambiguous encoding: ``{"sent": "yes", "stored":
    true}``, what the call carried and what was validated and kept (see ``FieldType.accept``)."""
    declined: list[str] = field(default_factory=_no_items)
    """Fields this call declined ("prefers not to say", or "no preference"), among captured."""
    confirmed: list[str] = field(default_factory=_no_items)
    """Fields whose answer from memory this call confirmed (the same value sent again): the
    answer is the writer's now, among captured."""
    dismissed: list[str] = field(default_factory=_no_items)
    """Fields whose offer from memory this call dropped (``clear_memory``): nothing was
    written to them; the offer is no longer shown."""

    def add(self, part: str, item: Any) -> None:
        """Append ``item`` to the list ``part`` (``rejected``, ``unknown``, ...)."""
        held = getattr(self, part)
        if held is NO_ITEMS:
            setattr(self, part, [item])
        else:
            held.append(item)

    def put(self, part: str, key: str, value: Any) -> None:
        """Set ``key`` to ``value`` in the map ``part`` (``resolved``, ``coerced``, ...)."""
        held = getattr(self, part)
        if held is NO_ENTRIES:
            setattr(self, part, {key: value})
        else:
            held[key] = value


def empty_plan() -> FillPlan:
    """``FillPlan()``, made without its dataclass ``__init__`` (which calls a factory per
    field): every write plans one. ``tests/unit/test_write_shortcuts.py`` holds it to
    ``FillPlan()``."""
    plan = _new_plan(FillPlan)
    plan.changes = plan.resolved = plan.replaced = plan.coerced = NO_ENTRIES
    plan.captured = plan.unchanged = plan.rejected = plan.unknown = NO_ITEMS
    plan.declined = plan.confirmed = plan.dismissed = NO_ITEMS
    return plan


_new_plan = object.__new__


SCALARS = frozenset({str, int, float, bool, type(None)})
TEXT = frozenset({str, type(None)})
SOURCES = frozenset(get_args(Source))
"""A revision whose value's type is in ``SCALARS`` (validated JSON), whose author's actor
and tool call are in ``TEXT`` and source in ``SOURCES``, and whose time is a ``datetime``
is built without validation (``forms.operations._stage``); anything else is validated, and
refused, as it always was."""


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


REVISION_FIELDS = all_fields(Revision)
CHANGE_FIELDS = all_fields(FieldChange)
"""The fields sets shared by the revisions and changes ``forms.operations._stage`` builds with
``forms.marked.built``'s four slot sets spelled out (``built``'s own sets)."""
