"""What a model is shown of the builder tools' arguments: one flat object where the edits
validate a union.

The edits validate strictly (``edit_arguments``): an item is one of ten kinds, each with its
own keys; a rule is a condition or ``all`` / ``any`` / ``not`` of rules; an action is one of
five. Shown as validated, those unions were most of the ~12,500 tokens the builder's tools
list cost on every model call: ten item schemas each repeating the common keys, the rule
expanded in four tools. So the schema a model reads shows each as one object: ``Item`` has
``kind`` and every key some kind takes (its description says which kinds take which),
``Rule`` every key of every form of rule (recursive, one ``$defs`` entry), ``Action`` every
key of every action. What the shapes let through and the kind does not take is refused by
the edits as data, naming the key and the keys the kind takes (``edit_parse``).

``ShownAs(shape)`` in an argument model's annotation puts ``shape``'s schema where the
validated type's would be; validation is untouched. ``Omitted`` is a Python default the schema
does not show (leaving the key out says as much), and ``STRING`` shows a constrained string
as a plain one: the limits (2,000 characters, an id's pattern) are checked by the edits and
named in their refusals, and would cost every call to show. The shapes are never validated
against; ``tests/unit/test_builder_surface.py`` holds them to the models' keys.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, GetJsonSchemaHandler, WithJsonSchema
from pydantic.json_schema import JsonSchemaValue, SkipJsonSchema
from pydantic_core import CoreSchema

from forms.documents.model import ComparisonOp, ItemKind

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

    shape: type[BaseModel]

    def __get_pydantic_json_schema__(
        self, schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return handler(self.shape.__pydantic_core_schema__)


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


class Item(_Shape):
    """A field or display block; its kind decides its keys. Every field: label (required),
    help, required, aliases, on_fill (executor run on an answer), when (rule on earlier
    fields), memory (fact key, e.g. contact.email). short_text/long_text: min_length,
    max_length, pattern, example. integer/decimal: minimum, maximum; decimal: decimal_places.
    date: earliest, latest. single_choice/multiple_choice: options (required);
    multiple_choice: min_selected, max_selected. heading/paragraph: text (required). id: from
    the label if left out."""

    kind: ItemKind
    id: str | Omitted = None
    label: str | Omitted = None
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
    text: str | Omitted = None


class Action(_Shape):
    """fail: message ({field_id} in it is replaced by that answer); terminate: reason; jump:
    step; set: field, value; run: executor."""

    action: Literal["fail", "terminate", "jump", "set", "run"]
    message: str | Omitted = None
    reason: str | Omitted = None
    step: str | Omitted = None
    field: str | Omitted = None
    value: Value | Omitted = None
    executor: str | Omitted = None
