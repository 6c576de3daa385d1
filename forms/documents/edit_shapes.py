"""What a model is shown of the builder tools' arguments: few compact objects where the edits
validate a union.

The edits validate strictly (``edit_arguments``): an item is one of ten kinds, each with its
own keys; a rule is a condition or ``all`` / ``any`` / ``not`` of rules; an action is one of
five. Shown as validated, those unions were most of the ~12,500 tokens the builder's tools
list cost on every model call: ten item schemas each repeating the common keys, the rule
expanded in four tools. So the schema a model reads shows an item as one of three objects
(``ITEM_SHAPES``): ``FieldItem`` has every key some field kind takes, its description saying
exactly which keys each kind adds (generated from the document model, so it cannot drift),
``TextBlock`` a heading's or paragraph's keys, ``DividerBlock`` a divider's: a key no kind of
the shape takes (a heading's ``label``) is refused by the schema itself. ``Rule`` has every
key of every form of rule (recursive, one ``$defs`` entry), ``Action`` every key of every
action. What the shapes let through and the kind does not take (``options`` on an integer)
is refused by the edits as data, naming the key and the keys the kind takes (``edit_parse``).

``ShownAs(shape)`` in an argument model's annotation puts ``shape``'s schema where the
validated type's would be; validation is untouched. ``Omitted`` is a Python default the schema
does not show (leaving the key out says as much), and ``STRING`` shows a constrained string
as a plain one: the limits (2,000 characters, an id's pattern) are checked by the edits and
named in their refusals, and would cost every call to show. The shapes are never validated
against; ``tests/unit/test_builder_surface.py`` holds them to the models' keys.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    GetJsonSchemaHandler,
    TypeAdapter,
    WithJsonSchema,
)
from pydantic.json_schema import JsonSchemaValue, SkipJsonSchema
from pydantic_core import CoreSchema

from forms.documents import model as doc
from forms.documents.kinds import BARE_BLOCK_KINDS, FIELD_KINDS, TEXT_BLOCK_KINDS
from forms.documents.model import ComparisonOp

Omitted = SkipJsonSchema[None]
"""``None`` as a Python default, left out of the schema."""
STRING = WithJsonSchema({"type": "string"})
"""Shows a constrained string as a plain string."""
INTEGER = WithJsonSchema({"type": "integer"})
"""Shows a bounded integer as a plain integer."""
DATE = WithJsonSchema({"type": "string", "format": "date"})
"""Shows a date as its JSON form (YYYY-MM-DD)."""


@dataclass(frozen=True, slots=True)
class ShownAs:
    """Annotation metadata: the JSON schema of ``shape`` in place of the annotated type's."""

    shape: Any
    """A model, or a union of models."""

    def __get_pydantic_json_schema__(
        self, schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return handler(TypeAdapter(self.shape).core_schema)


class _Shape(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


Value = Annotated[
    str | int | float | bool | list[str | int | float | bool],
    WithJsonSchema(
        {
            "type": ["string", "number", "boolean", "array"],
            "items": {"type": ["string", "number", "boolean"]},
        }
    ),
]
"""A literal of a rule or a ``set``: text, a number, true/false, or a list of them."""


class Rule(_Shape):
    """A condition (field, op, value) or one of all, any (lists of rules), not (a rule).
    in/not_in take a list of values, answered/not_answered none."""

    field: str | Omitted = None
    op: ComparisonOp | Omitted = None
    value: Value | Omitted = None
    all: list[Rule] | Omitted = None
    any: list[Rule] | Omitted = None
    not_: Rule | Omitted = Field(None, alias="not")


class Grid(_Shape):
    """12-column grid: x 0-11, w 1-12 (x + w <= 12), y and h in rows. Left out, x and y
    are packed."""

    # null is shown: in an update's layout it clears the key (the item is packed again)
    x: int | None = None
    y: int | None = None
    w: int | None = None
    h: int | None = None


class Option(_Shape):
    value: str
    label: str | Omitted = None


_COMMON = [
    k
    for k in doc.FIELD_MODELS[0].model_fields
    if all(k in m.model_fields for m in doc.FIELD_MODELS)
]
"""The keys every field kind takes, in declaration order."""
_GLOSS = {
    "no_preference": "a decline counts as answered",
    "on_fill": "executor run on an answer",
    "when": "rule on earlier fields",
    "memory": "fact key: contact.email",
    "must_be_true": "a consent",
}


def _key(model: type[BaseModel], key: str) -> str:
    """A key as the description names it, with what it is and whether it must be sent (an id
    never: it is derived from the label)."""
    needed = key != "id" and model.model_fields[key].is_required()
    notes = [n for n in (_GLOSS.get(key), "required" if needed else None) if n]
    return f"{key} ({', '.join(notes)})" if notes else key


def _by_kind() -> str:
    """Which keys each field kind takes beyond the common ones, from the document model."""
    parts = []
    for model in doc.FIELD_MODELS:
        extra = [_key(model, k) for k in model.model_fields if k not in _COMMON and k != "kind"]
        if extra:
            parts.append(f"{', '.join(doc.kinds_of(model))}: {', '.join(extra)}")
    return "; ".join(parts) + "; other kinds nothing more"


FIELD_DESCRIPTION = (
    "A field: label (required), id (from the label if left out), "
    + ", ".join(f"{k} ({g})" for k, g in _GLOSS.items() if k in _COMMON)
    + ". By kind also: "
    + _by_kind()
    + "."
)
"""The field shape's description: the keys of each kind, generated from the document model."""
FieldKind = Literal[FIELD_KINDS]  # type: ignore[valid-type]


class FieldItem(_Shape):
    model_config = ConfigDict(json_schema_extra={"description": FIELD_DESCRIPTION})

    kind: FieldKind
    id: str | Omitted = None
    label: str
    help: str | Omitted = None
    required: bool = True
    no_preference: bool | Omitted = None
    must_be_true: bool | Omitted = None
    aliases: list[str] | Omitted = None
    on_fill: str | Omitted = None
    memory: str | Omitted = None
    when: Rule | Omitted = None
    layout: Grid | Omitted = None
    min_length: int | Omitted = None
    max_length: int | Omitted = None
    pattern: str | Omitted = None
    example: str | Omitted = None
    minimum: float | Omitted = None
    maximum: float | Omitted = None
    decimal_places: int | Omitted = None
    earliest: Annotated[str, DATE] | Omitted = None
    latest: Annotated[str, DATE] | Omitted = None
    options: list[Option] | Omitted = None
    min_selected: int | Omitted = None
    max_selected: int | Omitted = None


class TextBlock(_Shape):
    """A heading or paragraph (the agent reads its text with the step)."""

    kind: Literal[TEXT_BLOCK_KINDS]  # type: ignore[valid-type]
    id: str | Omitted = None
    text: str
    layout: Grid | Omitted = None


class DividerBlock(_Shape):
    """A divider."""

    kind: Literal[BARE_BLOCK_KINDS]  # type: ignore[valid-type]
    id: str | Omitted = None
    layout: Grid | Omitted = None


ITEM_SHAPES = (FieldItem, TextBlock, DividerBlock)
"""What an item is shown as: a field (every field kind, its keys by kind in the description),
a text block or a divider, each with only its own keys."""
Item = FieldItem | TextBlock | DividerBlock


class Rename(_Shape):
    """A field carried under another id there (to), or left behind (to null)."""

    field: str
    to: str | None


class Action(_Shape):
    """fail: message ({field_id} in it is replaced by that answer); terminate: reason; jump:
    step; set: field, value; run: executor; hand_over: form (another form's id; answers
    carry by field id), reason, rename."""

    action: Literal["fail", "terminate", "jump", "set", "run", "hand_over"]
    message: str | Omitted = None
    reason: str | Omitted = None
    step: str | Omitted = None
    field: str | Omitted = None
    value: Value | Omitted = None
    executor: str | Omitted = None
    form: str | Omitted = None
    rename: list[Rename] | Omitted = None
