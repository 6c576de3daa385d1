"""How large one stored item may be: one limit, measured the same way by every adapter.

DynamoDB refuses an item past 400 KB (attribute names and values, in UTF-8 bytes), and every
aggregate is stored as JSON text in a few items (``docs/dynamodb.md``). So that a write that
can never land is refused before it is tried, as data the caller can act on, and so that the
in-memory adapter refuses exactly what DynamoDB's would, each adapter measures what it is
about to store with the functions here and refuses past ``ITEM_LIMIT`` with ``SizeLimit``
(nothing is stored). ``ITEM_LIMIT`` counts the JSON an item holds; the 50 KB below DynamoDB's
limit is room for the keys, the attribute names and the few small attributes beside it.

What is measured, per aggregate:

* a **draft**: the edit in force (its whole document, as JSON) and the redo path, which its
  head item holds; the edit log's entry holds the same edit;
* an **instance**: the least its home item holds, whatever the adapter keeps beside it
  (``instance_bytes``): its identity, its state (statuses, outbox, rejections, recollections)
  and each written field's place in its log; answers in force are kept in the home item only
  as far as they fit, and each revision must fit an item of its own;
* a **fact**: its head (the fact in force, with its periods) and the revision appended;
* a **published version**: its document, as JSON;
* a **call record**: the result a retry gets back.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from operator import itemgetter
from typing import Any

from pydantic import BaseModel, TypeAdapter

from forms.errors import SizeLimit
from forms.instance import FormInstance, HookState, InstanceState
from forms.marked import Marked, Sealed, built

ITEM_LIMIT = 350_000
"""Bytes of JSON one stored item may hold (DynamoDB takes 400 KB with its keys and names)."""

_IDENTITY = 256
"""Bytes an instance's identity takes besides its ids (keys, dates, numbers, names)."""
_PLACE = 64
"""Bytes a field's place in its log takes besides its id: ``{"cursor":…,"count":…,"redo":…,
"entries":{}}`` and the separators around it, for logs of up to a million entries."""

WHAT = {
    "draft": "The draft",
    "instance": "The form's record",
    "revision": "One answer",
    "fact": "The fact",
    "published_version": "The published version",
    "call_record": "The call's result",
}
"""How a message names each item ``SizeLimit.item`` names."""

HINTS = {
    "draft": "Make the form smaller: shorten long labels, help texts and option lists, remove "
    "fields, or split it into two forms. The draft is as it was before this call.",
    "instance": "Send shorter answers, or clear answers that are not needed; if this keeps "
    "happening, tell the person the form cannot hold more.",
    "revision": "Send a shorter answer.",
    "fact": "State a shorter value, or delete the fact and state it again.",
    "published_version": "Make the draft smaller (shorten long labels, help texts and option "
    "lists, remove fields, or split the form), then publish again.",
    "call_record": "Send the call in smaller parts.",
}


def text_bytes(text: str) -> int:
    """The UTF-8 length of ``text``, without encoding it when it is ASCII."""
    return len(text) if text.isascii() else len(text.encode())


def check(item: str, size: int, name: str = "") -> None:
    """Refuse ``item`` (a key of ``WHAT``) with ``SizeLimit`` when ``size`` bytes of JSON
    pass ``ITEM_LIMIT``; ``name`` (a form id, a fact key) goes into the message."""
    if size > ITEM_LIMIT:
        raise too_large(item, size, name)


def too_large(item: str, size: int, name: str = "") -> SizeLimit:
    """The refusal of ``item`` at ``size`` bytes (see ``check``)."""
    what = WHAT[item] + (f" {name!r}" if name else "")
    return SizeLimit(
        item,
        size,
        ITEM_LIMIT,
        f"{what} would be {size:,} bytes stored, over the {ITEM_LIMIT:,}-byte limit of one "
        "stored item; nothing was saved, and the same call can never fit.",
        HINTS[item],
    )


def draft_bytes(entry_text: str, redo_text: str) -> int:
    """A draft's size: the edit in force's JSON (``EditEntry.model_dump_json(by_alias=True)``)
    and its redo path's (``json.dumps`` of its ``[entry, sentence]`` pairs)."""
    return text_bytes(entry_text) + text_bytes(redo_text)


def instance_bytes(instance: FormInstance, state_text: str | None = None) -> int:
    """The least an instance's home item holds: its identity, its state
    (``InstanceState.model_dump_json()``: ``state_text`` when the caller has it, else
    ``state_bytes``) and each written field's place in its log. Each answer in force beyond
    that is kept beside it only as far as it fits."""
    ids = (
        instance.id,
        instance.form_id,
        instance.principal,
        instance.conversation_id,
    )
    places = text_bytes("".join(instance.history)) + _PLACE * len(instance.history)
    state = state_bytes(instance.state) if state_text is None else text_bytes(state_text)
    return _IDENTITY + sum(map(text_bytes, ids)) + state + places


def check_instance(instance: FormInstance, state_text: str | None = None) -> None:
    """Refuse (``SizeLimit``) an instance whose home item would pass ``ITEM_LIMIT`` even with
    no answer in force kept in it (``instance_bytes``). Every ``FormStore`` adapter calls this
    before a create or a commit stores anything: with the state's JSON when it writes that
    text anyway, else without. Without it, an instance is measured to the byte only when a
    bound that costs what the commit changed (``_instance_bound``) could pass the limit, so
    the same instances are refused either way."""
    if state_text is None and _instance_bound(instance) <= ITEM_LIMIT:
        return
    check("instance", instance_bytes(instance, state_text), instance.form_id)


_HOOKS = TypeAdapter(dict[str, HookState])


def _serialised_hook_bytes(hook_id: str, hook: HookState) -> int:
    return len(_HOOKS.dump_json({hook_id: hook})) - 1


_HOOK_FIXED = len('"":{"holds":,"count":,"basis":},')
"""The bytes of a hook's entry around its values. Written out, not serialised at import: the
instance models build when first used, and the stream relay's cold start uses none of them
(tests/unit/test_cold_instance.py holds it to a hook state serialised)."""


def _plain(text: str) -> bool:
    """Whether JSON writes ``text`` as it is between its quotes (nothing to escape)."""
    return text.isascii() and text.isprintable() and '"' not in text and "\\" not in text


def _hook_bytes(hook_id: str, hook: HookState) -> int:
    """One hook's ``"id":{...}`` in the state's JSON, with the comma after it: counted when
    its id and basis need no escape (the usual case), else serialised."""
    if type(hook) is not HookState:
        return _serialised_hook_bytes(hook_id, hook)
    basis, count = hook.basis, hook.count
    if (
        type(count) is int
        and type(hook.holds) is bool
        and _plain(hook_id)
        and (basis is None or _plain(basis))
    ):
        values = (
            (4 if hook.holds else 5) + len(str(count)) + (4 if basis is None else len(basis) + 2)
        )
        return _HOOK_FIXED + len(hook_id) + values
    return _serialised_hook_bytes(hook_id, hook)


def state_bytes(state: InstanceState) -> int:
    """``text_bytes(state.model_dump_json())``, without serialising the hook states again on
    every commit: their part is measured once and then kept up to date, hook by hook, on the
    ``Marked`` dict that holds them (``Marked.sized``), which every commit's copy carries. The
    rest of the state (statuses, outbox, rejections, recollections) is serialised here."""
    size = _hooks_bytes(state.hooks)
    rest = built(InstanceState, {**state.__dict__, "hooks": {}}).model_dump_json()
    return text_bytes(rest) + max(size - 1, 0)  # no comma after the last


def _hooks_bytes(hooks: dict[str, HookState]) -> int:
    """The hook states' part of ``state_bytes`` with a comma after each, kept on a ``Marked``."""
    size = hooks.size if isinstance(hooks, Marked) else None
    if size is None:
        size = len(_HOOKS.dump_json(hooks)) - (1 if hooks else 2)
        if isinstance(hooks, Marked):
            hooks.sized(size, _hook_bytes)
    return size


_EMPTY_STATE = (
    '{"status":"open","closed_reason":null,"hooks":{},"override":null,"rejections":[],'
    '"outbox":{},"updated_at":"2000-01-01T00:00:00Z","recalled":{},"recall_owed":null,'
    '"page_edits":[],"handed_to":null,"handed_from":null}'
)
"""An empty state's JSON, written out as ``_HOOK_FIXED`` is (the test holds it to one dumped)."""
_REST_MARGIN = 64
"""More than the longest status and ``updated_at`` (with microseconds and an offset) add."""
_REST = len(_EMPTY_STATE) + _REST_MARGIN
"""A bound on a state's JSON without its hook states, outbox, rejections and recollections."""

_MEASURED: dict[int, tuple[BaseModel, int]] = {}
_MEASURED_LIMIT = 4_096


def _model_bytes(model: BaseModel) -> int:
    """The JSON bytes of a frozen model (an outbox entry, a rejection, a recollection).

    Memoised per object: such models never change, and a commit shares them with the one
    before it, so a commit measures only what it added. The entry keeps the model alive, so
    its id cannot be reused."""
    hit = _MEASURED.get(id(model))
    if hit is not None and hit[0] is model:
        return hit[1]
    size = len(model.__pydantic_serializer__.to_json(model))
    if len(_MEASURED) >= _MEASURED_LIMIT:
        _MEASURED.clear()
    _MEASURED[id(model)] = (model, size)
    return size


def _key_bytes(key: str) -> int:
    """At least the bytes of ``"key":`` in JSON (an escape takes at most six per character)."""
    return 6 * len(key) + 3


_CONTAINED: dict[int, tuple[object, int]] = {}


def _entries_bound(entries: Mapping[str, BaseModel]) -> int:
    """At least the JSON bytes of ``entries``' ``"key":{...},`` (an outbox, recollections).

    Memoised per sealed dict, as ``_model_bytes`` is per model: a sealed dict's content never
    changes, and a commit that changes none of its entries shares the dict of the one before
    it (an outbox grows with every hook occurrence), so a commit measures it only when it
    changed. The entry keeps the dict alive, so its id cannot be reused."""
    sealed = type(entries) is Sealed
    if sealed:
        hit = _CONTAINED.get(id(entries))
        if hit is not None and hit[0] is entries:
            return hit[1]
    size = 0
    for key, entry in entries.items():
        size += _key_bytes(key) + _model_bytes(entry) + 1
    if sealed:
        if len(_CONTAINED) >= _MEASURED_LIMIT:
            _CONTAINED.clear()
        _CONTAINED[id(entries)] = (entries, size)
    return size


FIXED = _IDENTITY + _REST
"""What ``_instance_bound`` counts of every instance besides its keys and its state's parts."""


def _instance_bound(instance: FormInstance) -> int:
    """At least ``instance_bytes(instance)``, at the cost of what the last commit changed: the
    hook states' part as ``Marked`` keeps it, each frozen entry's size measured once (and a
    sealed outbox's or recollections' total, while a commit shares it)."""
    fields = instance.__dict__  # read once: a model's attribute costs several dict reads
    return FIXED + keys_bytes(fields) + state_bound(fields["state"].__dict__)


def within(keys: int, state: dict[str, Any], instance: FormInstance) -> None:
    """``check_instance(instance)`` from the parts of its bound: ``keys``, what it counts of
    the ids and logs (``keys_bytes``, or ``keys_bytes_after``), and the state's ``__dict__``
    (``state_bound``). ``SizeLimit`` only when the exact size passes the limit too."""
    if FIXED + keys + state_bound(state) > ITEM_LIMIT:
        check("instance", instance_bytes(instance), instance.form_id)


def keys_bytes(fields: dict[str, Any]) -> int:
    """What ``_instance_bound`` counts of an instance's ids and its logs' places, from the
    instance's ``__dict__``: the UTF-8 bytes of the ids and of each log's field id, and
    ``_PLACE`` per log."""
    history = fields["history"]
    return text_bytes("".join(_IDS(fields)) + "".join(history)) + _PLACE * len(history)


_IDS = itemgetter("id", "form_id", "principal", "conversation_id")


def keys_bytes_after(
    before: int, logs: Mapping[str, object], after: Mapping[str, object], changed: Iterable[str]
) -> int:
    """``keys_bytes`` of what a commit writing the fields ``changed`` makes (its logs
    ``after``) of an instance whose logs are ``logs`` and whose ``keys_bytes`` is ``before``,
    at the cost of the commit: a commit keeps the ids and every log, so only a log it starts
    adds its field id and place (the bytes of joined texts are the sum of theirs), and a
    commit whose logs are as many as before started none."""
    if len(after) == len(logs):  # a corrected answer, an undo or redo, a change of state
        return before
    for field_id in changed:
        if field_id not in logs:  # a field written for the first time
            before += text_bytes(field_id) + _PLACE
    return before


def state_bound(values: dict[str, Any]) -> int:
    """What ``_instance_bound`` counts of a state (from its ``__dict__``) beyond ``FIXED``."""
    hooks = values["hooks"]
    kept = hooks.size if type(hooks) is Sealed else None  # a stored state's: sized once
    if kept is None:
        kept = _hooks_bytes(hooks)
    size = kept - 1 if kept else 0  # no comma after the last (no ``max`` call)
    if (
        values["outbox"]
        or values["rejections"]
        or values["recalled"]
        or values["override"] is not None
        or values["closed_reason"] is not None
        or values["recall_owed"] is not None
        or values["page_edits"]
    ):  # most states of an open form hold none of these
        size += _rest_bound(values)
    return size


def _rest_bound(values: dict[str, Any]) -> int:
    """At least the bytes of a state's outbox, rejections, recollections, override, closing
    reason, owed recall and page edits (from its ``__dict__``), beyond what ``_REST`` counts
    of them."""
    rejections, override = values["rejections"], values["override"]
    size = sum(map(_model_bytes, rejections)) + len(rejections)
    if values["outbox"]:
        size += _entries_bound(values["outbox"])
    if values["recalled"]:
        size += _entries_bound(values["recalled"])
    if override is not None:
        size += _model_bytes(override)
    if values["closed_reason"] is not None:
        size += _key_bytes(values["closed_reason"])
    if values["recall_owed"] is not None:
        size += _model_bytes(values["recall_owed"])
    if values["page_edits"]:
        size += sum(_key_bytes(field_id) for field_id in values["page_edits"])
    return size
