"""``form_ask``: the person answers the open step's questions in a form their MCP host shows.

What one call does, in order:

1. ``form_read`` of the form (the open step, as the agent would read it);
2. the fields still to ask there (``pending``, ``optional``, ``ask_again``; never one the read
   marks ``decided_by``, which only an approver's decision writes) become a flat
   elicitation schema (``elicitation_schema``), one property per field, typed from the
   field's type string: ``true or false`` a boolean, ``integer …`` an integer and ``… number
   …`` a number (with their bounds when both are inclusive), ``one of "a", "b"`` a string
   enum, dates, e-mail addresses and URLs strings of that format, any other string a string
   (with its length bounds). Lists, objects and unions have no flat form: they are left out,
   named in the result, for the agent to ask in the conversation;
3. ``elicitation/create`` with that schema (the required fields required), through the host;
4. accepted: the answers given go to ``form_fill`` on that instance, under the call's own
   tool-call id, exactly as an agent's fill would (checked field by field, rejections
   explained); declined or cancelled: nothing is written, and the result says which.

The schema is built from what ``form_read`` shows, so the stdio server, which reaches the
forms through the HTTP API only, builds the same one as the Lambda route. A type string read
wrong costs nothing but a rejection: the fill checks every answer as it checks any other.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from forms.statuses import STILL_TO_ASK
from forms.surface.plain import inline

JsonDict = dict[str, Any]

ASK_TOOL = "form_ask"
ASK_DEFINITION: JsonDict = {
    "name": ASK_TOOL,
    "description": "Ask the person directly, in a form their app shows, for the open step's "
    "unanswered fields; their answers are saved as form_fill saves them. For when they would "
    "rather fill in a form than type; they may decline.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "form": {
                "type": "string",
                "minLength": 1,
                "maxLength": 64,
                "description": "Form id, as the status line shows it",
            },
            "instance": {
                "type": "string",
                "description": "Instance id; only needed when the form has several open instances",
            },
        },
        "required": ["form"],
        "additionalProperties": False,
    },
}
"""The tool as ``tools/list`` shows it, beside the form tools, to hosts that can elicit."""

OPTIONAL_SUFFIX = " (optional)"
_FORMATS = {
    "date YYYY-MM-DD": "date",
    "date-time ISO 8601": "date-time",
    "email address": "email",
    "URL": "uri",
}
_RANGE = re.compile(r"^(-?[\d.]+)(?:-| to )(-?[\d.]+)$")
_AT_MOST = re.compile(r"<= (-?[\d.]+)")
_AT_LEAST = re.compile(r">= (-?[\d.]+)")
_CHARS = re.compile(r"^(\d+)-(\d+) chars$")
_CHARS_MIN = re.compile(r"^at least (\d+) chars$")
_CHARS_MAX = re.compile(r"^at most (\d+) chars$")


def property_schema(label: str, type_string: str, ask: str | None = None) -> JsonDict | None:
    """The flat elicitation property of a field of ``type_string``, titled ``label``; None
    when the type has no flat form (a list, an object, a union)."""
    text = type_string.removesuffix(OPTIONAL_SUFFIX)
    node = _typed(text)
    if node is None:
        return None
    described = ask or (text if node["type"] == "string" and "format" not in node else None)
    shown = {"title": inline(label), **({"description": inline(described)} if described else {})}
    return {**shown, **node}


def _typed(text: str) -> JsonDict | None:
    if " or " in text and text != "true or false":
        return None  # a union
    if text.startswith(("list of", "object")):
        return None
    if text == "true or false":
        return {"type": "boolean"}
    if text.startswith(("one of ", "exactly ")):
        return _enum(text.split(" ", 2)[-1] if text.startswith("one of ") else text[8:])
    if text.startswith("integer"):
        return _number("integer", text.removeprefix("integer").split(",")[0].strip())
    for prefix in ("decimal number", "number"):
        if text.startswith(prefix):
            return _number("number", text.removeprefix(prefix).split(",")[0].strip())
    if text in _FORMATS:
        return {"type": "string", "format": _FORMATS[text]}
    if text.startswith(("string", "text like ")):
        return {"type": "string", **_lengths(text)}
    if text in ("time HH:MM[:SS]", "duration ISO 8601", "UUID"):
        return {"type": "string"}
    return None


def _enum(listed: str) -> JsonDict | None:
    try:
        options = json.loads(f"[{listed}]")
    except ValueError:
        return None
    if not options or not all(isinstance(option, str) for option in options):
        return None  # elicitation enums are strings
    return {"type": "string", "enum": options}


def _number(kind: str, bounds: str) -> JsonDict:
    node: JsonDict = {"type": kind}
    if (found := _RANGE.match(bounds)) is not None:
        node["minimum"], node["maximum"] = _num(found[1]), _num(found[2])
        return node
    if (low := _AT_LEAST.search(bounds)) is not None:
        node["minimum"] = _num(low[1])
    if (high := _AT_MOST.search(bounds)) is not None:
        node["maximum"] = _num(high[1])
    return node


def _num(text: str) -> int | float:
    value = float(text)
    return int(value) if value.is_integer() else value


def _lengths(text: str) -> JsonDict:
    """``string, 2-120 chars`` and its kin: the length bounds (a pattern has no flat form,
    and the fill checks it)."""
    size = text.rsplit(", ", 1)[-1] if ", " in text else ""
    if (both := _CHARS.match(size)) is not None:
        return {"minLength": int(both[1]), "maxLength": int(both[2])}
    if (low := _CHARS_MIN.match(size)) is not None:
        return {"minLength": int(low[1])}
    if (high := _CHARS_MAX.match(size)) is not None:
        return {"maxLength": int(high[1])}
    return {}


@dataclass(frozen=True, slots=True)
class Question:
    """What one ``form_ask`` asks: on which instance, the message, the schema, which fields
    it asks (in the step's order) and which it leaves to the conversation."""

    form: str
    instance: str
    message: str
    schema: JsonDict
    asked: tuple[str, ...]
    left: tuple[str, ...]

    def state(self) -> str:
        """The question as the ``request_state`` of a 2026-07-28 round trip: what the answer
        is written to (the client echoes it back with the answer)."""
        kept = {"form": self.form, "instance": self.instance}
        return json.dumps(
            {**kept, "asked": list(self.asked), "left": list(self.left)}, separators=(",", ":")
        )

    @classmethod
    def from_state(cls, state: str) -> Question | None:
        """The question a ``request_state`` names; None when it is not one of ``state``'s.

        The client could send any state: it names no more than a ``form_fill`` could (a form
        and instance of the caller's own conversation, the fields to take from the answer)."""
        try:
            loaded = json.loads(state)
        except ValueError:
            return None
        if not isinstance(loaded, dict):
            return None
        form, instance = loaded.get("form"), loaded.get("instance")
        asked, left = _ids(loaded.get("asked")), _ids(loaded.get("left", []))
        if not (isinstance(form, str) and isinstance(instance, str)) or None in (asked, left):
            return None
        return cls(form, instance, "", {}, asked or (), left or ())


def _ids(value: Any) -> tuple[str, ...] | None:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        return None
    return tuple(value)


def question(read: Mapping[str, Any]) -> Question | JsonDict:
    """The question for the open step ``form_read`` showed, or the result that says why
    there is none (the read's own refusal, or ``nothing_to_ask``)."""
    if read.get("ok") is not True:
        return dict(read)
    properties: JsonDict = {}
    required: list[str] = []
    left: list[str] = []
    for row in read.get("fields") or ():
        if not isinstance(row, Mapping) or row.get("status") not in STILL_TO_ASK:
            continue
        if "decided_by" in row:  # only an approver's decision writes it: nobody is asked
            continue
        field_id, type_string = str(row.get("id")), str(row.get("type") or "")
        node = property_schema(str(row.get("label") or field_id), type_string, row.get("ask"))
        if node is None:
            left.append(field_id)
            continue
        properties[field_id] = node
        if not type_string.endswith(OPTIONAL_SUFFIX):
            required.append(field_id)
    if not properties:
        return nothing_to_ask(left)
    schema: JsonDict = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    form, step = str(read.get("form")), inline(str(read.get("title") or read.get("step") or ""))
    position = f" {inline(str(read['position']))}" if read.get("position") else ""
    message = f'{inline(form)}, step{position} "{step}": please answer what you can.'
    if left:
        message += " The rest is asked in the conversation."
    instance = str(read.get("instance"))
    return Question(form, instance, message, schema, tuple(properties), tuple(left))


def nothing_to_ask(left: Sequence[str]) -> JsonDict:
    message = "The open step has no unanswered field a form can ask for"
    if left:
        message += f"; these need the conversation: {', '.join(left)}"
    return {
        "ok": False,
        "error": "nothing_to_ask",
        "message": message + ".",
        "hint": "form_read shows where the form stands",
    }


def answers(asked: Sequence[str], content: Mapping[str, Any] | None) -> JsonDict:
    """The values of an accepted elicitation to fill: the asked fields the person answered
    (a blank is no answer)."""
    given = content or {}
    return {f: given[f] for f in asked if given.get(f) is not None and given.get(f) != ""}


def declined(action: str) -> JsonDict:
    """The result of a question the person declined or dismissed: nothing was written."""
    if action == "decline":
        return {
            "ok": False,
            "error": "declined",
            "message": "The person declined to answer in a form; nothing was saved.",
            "hint": "Ask in the conversation instead, or go on without these answers.",
        }
    return {
        "ok": False,
        "error": "cancelled",
        "message": "The person closed the form without answering; nothing was saved.",
        "hint": "Ask in the conversation when they are ready.",
    }


def nothing_answered(asked: Sequence[str]) -> JsonDict:
    return {
        "ok": True,
        "summary": "The person sent the form back with nothing filled in; nothing was saved.",
        "asked": list(asked),
    }


def filled(fill: Mapping[str, Any], q: Question) -> JsonDict:
    """The fill's result, saying the answers came from the person and what was asked."""
    result = dict(fill)
    if result.get("ok") is True and isinstance(result.get("summary"), str):
        result["summary"] = "The person answered in a form. " + result["summary"]
    result["asked"] = list(q.asked)
    if q.left:
        result["left_to_ask"] = list(q.left)
    return result
