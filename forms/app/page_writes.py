"""The person's writes from their form page, through the tools' own write path.

Every move the page offers (answer or correct a field, take an answer back, decline, undo,
redo, apply what memory offers, confirm or clear every memory fill at once, submit) is one of
the agent's write tools (``form_fill`` or ``form_revise``) run by ``Caller(source="user")``:
the same planning, the same commit loop, the same call record. Its revisions say ``by: user``;
the agent's next status line names what the person changed (``InstanceState.page_edits``).

A post carries what the page showed when it was rendered, and a ``Guard`` checks it on the
instance each attempt plans on, inside the commit loop:

* a move on one field carries that field's log head (``head``: its entry count and cursor);
  when anyone wrote the field since, the move is refused as ``changed_meanwhile`` and the page
  shows what stands now, keeping what the person typed. Writes to *other* fields meanwhile do
  not stop it;
* a move on the whole form (apply an offer, confirm memory's fills, submit) carries the
  instance's version: any change since is ``changed_meanwhile``, because what the person
  agreed to is what they saw;
* submit is refused as ``memory_unconfirmed`` while a value memory filled stands unconfirmed:
  a prefilled value is only safe once the person has seen it.

A post carries a key the page drew when it rendered the form (``PagePost.key``): the call's id
is ``page.<key>``, so a double click or a resent post is the same call, applied once and
answered again with its first result (``forms.app.calls``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal, get_args

from pydantic import JsonValue, ValidationError

from forms.app.calls import CallId, fingerprint
from forms.app.conversation import Caller, locate
from forms.app.writes import Guard, Writer, form_fill, form_revise
from forms.compiled import CompiledForm
from forms.engine import evaluate
from forms.errors import BadRequest, ToolError
from forms.instance import FieldHistory, FormInstance
from forms.surface.recalled import standing
from forms.surface.results import Result, describe_validation
from forms.surface.tools import FormFillArgs, FormReviseArgs, check_id

PageAction = Literal[
    "answer",
    "retract",
    "decline",
    "undo",
    "redo",
    "apply",
    "confirm_memory",
    "clear_memory",
    "submit",
]
ACTIONS: frozenset[str] = frozenset(get_args(PageAction))
FIELD_ACTIONS: frozenset[str] = frozenset({"answer", "retract", "decline", "undo", "redo"})
"""Moves on one field: guarded by that field's log head, not by the whole form's version."""
_REVISE = {"retract": "retract", "decline": "decline", "undo": "undo", "redo": "redo"}
PAGE_KEY = re.compile(r"[A-Za-z0-9_-]{8,64}")
"""A post's key as the page draws it (``secrets.token_urlsafe``: it may begin with ``-`` or
``_``); the call id ``page.<key>`` it makes is a valid tool-call id either way."""
PAGE_FORM = "page"
"""The ``form`` a page post's tool arguments carry: never read, the post names its instance."""


class ChangedMeanwhile(ToolError):
    """What the page showed is no longer what stands: someone wrote since it was rendered."""

    code = "changed_meanwhile"


class MemoryUnconfirmed(ToolError):
    """Submit from the page while values memory filled stand unconfirmed."""

    code = "memory_unconfirmed"


@dataclass(frozen=True, slots=True)
class PagePost:
    """One post of the person's page, as the page rendered it and the person sent it."""

    action: str
    key: str
    """Drawn when the page rendered this form: one call however often it is sent."""
    version: int
    """The instance's version the page was rendered from."""
    field: str | None = None
    seen: str | None = None
    """The field's log head the page showed (``head``), for a move on one field."""
    value: JsonValue = None
    """The answer, for ``answer`` and ``apply``."""


def head(history: FieldHistory) -> str:
    """A field log's head as a page carries it: its entry count and cursor. Any write to the
    field (an append, an undo, a redo) changes it."""
    return f"{history.count}.{history.cursor}"


def page_call(post: PagePost) -> CallId:
    """The call a post is: the tool it runs, ``page.<key>`` as its id, and the whole post as
    what the id is bound to (the same key sent with anything else is refused as a reuse,
    never applied as a second move). ``BadRequest`` for an unknown action or a malformed key."""
    if post.action not in ACTIONS:
        raise BadRequest(f"there is no page action {post.action!r}", "reload the page")
    if not PAGE_KEY.fullmatch(post.key):
        raise BadRequest("the page key must be 8-64 URL-safe characters", "reload the page")
    tool = "form_revise" if post.action in _REVISE or post.action == "clear_memory" else "form_fill"
    return CallId(tool, f"page.{post.key}", fingerprint("page", _sent(post)))


def page_write(
    writer: Writer, caller: Caller, instance_id: str, post: PagePost, call: CallId
) -> Result:
    """Run the person's ``post`` (``call``: ``page_call(post)``) on their instance
    ``instance_id`` as the tools' write path does; ``caller.source`` is ``user``."""
    if caller.source != "user":
        raise ValueError("a page write is the person's own: Caller(source='user')")
    check_id(instance_id, "instance id")
    tool, payload, guard = _plan(writer, caller, instance_id, post, _field(post))
    try:
        if tool == "form_fill":
            return form_fill(writer, caller, call, FormFillArgs.model_validate(payload), guard)
        return form_revise(writer, caller, call, FormReviseArgs.model_validate(payload), guard)
    except ValidationError as exc:
        raise BadRequest(describe_validation(exc), "reload the page") from None


def _field(post: PagePost) -> str | None:
    if post.action not in FIELD_ACTIONS and post.action != "apply":
        return None
    if post.field is None:
        raise BadRequest(f"{post.action!r} needs the field it is about", "reload the page")
    return post.field


def _plan(
    writer: Writer, caller: Caller, instance_id: str, post: PagePost, field_id: str | None
) -> tuple[str, dict[str, Any], Guard]:
    """The tool a post runs, its arguments and what must still stand when it commits."""
    base: dict[str, Any] = {"form": PAGE_FORM, "instance": instance_id}
    if post.action in FIELD_ACTIONS:
        assert field_id is not None
        if post.seen is None:
            raise BadRequest("the post does not say what the page showed", "reload the page")
        guard = _field_unchanged(field_id, post.seen)
        if post.action == "answer":
            return "form_fill", {**base, "values": {field_id: post.value}}, guard
        move = {"field": field_id, "action": _REVISE[post.action]}
        return "form_revise", {**base, **move}, guard
    if post.action == "apply":
        assert field_id is not None
        values = {field_id: post.value}
        return "form_fill", {**base, "values": values}, _form_unchanged(post.version)
    if post.action == "clear_memory":
        return "form_revise", {**base, "action": "clear_memory"}, _form_unchanged(post.version)
    if post.action == "confirm_memory":
        fills = _unconfirmed(writer, caller, instance_id, post.version)
        if not fills:
            raise ChangedMeanwhile(
                "nothing filled from memory is waiting for your confirmation",
                "reload the page to see the form as it stands",
            )
        return "form_fill", {**base, "values": fills}, _form_unchanged(post.version)
    return "form_fill", {**base, "submit": True}, _submittable(post.version)


def _sent(post: PagePost) -> dict[str, JsonValue]:
    """What the call's id is bound to: the whole post, so the same key sent with anything
    else is refused as a reuse, never applied as a second move."""
    return {
        "page": post.action,
        "version": post.version,
        "field": post.field,
        "seen": post.seen,
        "value": post.value,
    }


def _unconfirmed(
    writer: Writer, caller: Caller, instance_id: str, version: int
) -> dict[str, JsonValue]:
    """The values memory filled that stand unconfirmed, as the page showed them (its version
    still current), each to be sent again by the person: that confirms it."""
    stored, _ = locate(writer.loop, caller, PAGE_FORM, instance_id)
    form, instance = writer.loop.settle(stored)
    _check_version(instance, version)
    marks = standing(form, instance, evaluate(form, instance))
    fills: dict[str, JsonValue] = {}
    for field_id, mark in marks.items():
        revision = instance.field(field_id).in_force()
        if mark.use == "fill" and revision is not None and revision.kind == "value":
            fills[field_id] = revision.value
    return fills


def _field_unchanged(field_id: str, seen: str) -> Guard:
    def guard(form: CompiledForm, current: FormInstance) -> None:
        if field_id in form.fields and head(current.field(field_id)) != seen:
            label = form.fields[field_id].label
            raise ChangedMeanwhile(
                f"{label} was changed while you were writing",
                "look at what stands now; your entry is kept, send it again to replace it",
            )

    return guard


def _form_unchanged(version: int) -> Guard:
    def guard(form: CompiledForm, current: FormInstance) -> None:
        del form
        _check_version(current, version)

    return guard


def _check_version(instance: FormInstance, version: int) -> None:
    if instance.version != version:
        raise ChangedMeanwhile(
            "the form changed since this page was loaded",
            "look at it as it stands now, then do it again",
        )


def _submittable(version: int) -> Guard:
    unchanged = _form_unchanged(version)

    def guard(form: CompiledForm, current: FormInstance) -> None:
        unchanged(form, current)
        if current.state.status != "open":
            return  # the write path answers a closed form itself
        marks = standing(form, current, evaluate(form, current))
        waiting = [form.fields[f].label for f, m in marks.items() if m.use == "fill"]
        if waiting:
            raise MemoryUnconfirmed(
                "some answers were filled from memory and you have not confirmed them yet: "
                + ", ".join(waiting),
                "check them, then confirm them (or clear them) before you send the form",
            )

    return guard


def typed_value(kind: str, typed: str | list[str]) -> JsonValue:
    """What a page's input of ``kind`` (``input_kind``) sends as the field's answer: a list of
    choices as sent, text as typed (the write path reads unambiguous encodings: ``"12"`` for a
    number, ``"true"`` for yes), and for a field whose answer is an object or a list of more
    than choices, the JSON typed (text that is not JSON is sent as it is, and refused by the
    field's own check, in its words)."""
    if isinstance(typed, list):
        return list[JsonValue](typed)
    if kind != "json":
        return typed
    try:
        parsed: JsonValue = json.loads(typed)
    except ValueError:
        return typed
    return parsed


InputKind = Literal["text", "long_text", "number", "boolean", "choice", "choices", "date", "json"]
LONG_TEXT = 200
"""Text fields that take more than this many characters get a text area."""


def input_kind(json_schema: dict[str, Any]) -> tuple[InputKind, tuple[str, ...]]:
    """The input a page renders for a field of this JSON schema, and its options (a choice's
    values, in order)."""
    schema = _unwrapped(json_schema)
    kind = schema.get("type")
    if "enum" in schema and all(isinstance(v, str) for v in schema["enum"]):
        return "choice", tuple(schema["enum"])
    if kind == "boolean":
        return "boolean", ()
    if kind in ("integer", "number"):
        return "number", ()
    if kind == "string":
        if schema.get("format") == "date":
            return "date", ()
        limit = schema.get("maxLength")
        return ("long_text" if isinstance(limit, int) and limit > LONG_TEXT else "text"), ()
    if kind == "array":
        items = _unwrapped(schema.get("items") or {})
        if "enum" in items and all(isinstance(v, str) for v in items["enum"]):
            return "choices", tuple(items["enum"])
    return "json", ()


def _unwrapped(schema: dict[str, Any]) -> dict[str, Any]:
    """A schema without its ``null`` branch (an optional field's) and its ``$defs`` wrapper."""
    branches = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(branches, list):
        kept = [b for b in branches if isinstance(b, dict) and b.get("type") != "null"]
        numbers = [b for b in kept if b.get("type") in ("number", "integer")]
        if len(numbers) == 1 and all(b.get("type") == "string" for b in kept if b not in numbers):
            kept = numbers  # a decimal: a number, or its exact digits as a string
        if len(kept) == 1:
            return {**kept[0], **({"$defs": schema["$defs"]} if "$defs" in schema else {})}
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        target = (schema.get("$defs") or {}).get(ref.removeprefix("#/$defs/"))
        if isinstance(target, dict):
            return target
    if "const" in schema and "enum" not in schema:
        return {**schema, "enum": [schema["const"]]}
    return schema
