"""A form as data: the document a builder edits and the engine compiles.

Every part is a pydantic model with explicit keys; JSON on the wire. There is no open map, no
``Any`` and no list without an item type anywhere in it, so its JSON schema is exact and a
model (or a person) writing one gets told precisely what is wrong.

A document compiles (``forms.documents.compile_document``) into the same ``CompiledForm`` a
Python definition does, through the same compiler; ``docs/form-documents.md`` is the reference.
What its author text may hold, and the shapes of its names, is ``forms.documents.text``.
"""

from __future__ import annotations

from datetime import date
from typing import TYPE_CHECKING, Annotated, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

from forms.documents import text
from forms.documents.text import (
    ExecutorName,
    FactKeyName,
    FormId,
    Id,
    Line,
    Multiline,
    Prose,
    Scalar,
    Text,
)

# Importable from here as before author text had a module of its own:
STORED = text.STORED
refused_character = text.refused_character
check_text = text.check_text
FACT_KEY_PATTERN = text.FACT_KEY_PATTERN
FACT_KEY_MAX_LENGTH = text.FACT_KEY_MAX_LENGTH


class _Doc(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


# ---------------------------------------------------------------------- rules


ComparisonOp = Literal[
    "equals",
    "not_equals",
    "greater_than",
    "greater_or_equal",
    "less_than",
    "less_or_equal",
    "contains",
    "in",
    "not_in",
    "answered",
    "not_answered",
]


class Condition(_Doc):
    """One test on one earlier field: ``{"field": "mode", "op": "equals", "value": "air"}``.

    ``in`` / ``not_in`` take a list; ``answered`` / ``not_answered`` take no value; the rest
    one literal, checked against the field's type when the form compiles. Only
    ``not_answered`` holds on a field with no live answer.
    """

    field: Id
    op: ComparisonOp
    value: Scalar | list[Scalar] | None = None

    @model_validator(mode="after")
    def _value_fits_op(self) -> Condition:
        listed = isinstance(self.value, list)
        if self.op in ("answered", "not_answered"):
            if self.value is not None:
                raise ValueError(f'"{self.op}" takes no value')
        elif self.op in ("in", "not_in"):
            if not listed or not self.value:
                raise ValueError(f'"{self.op}" takes a non-empty list of values')
        elif self.value is None or listed:
            raise ValueError(f'"{self.op}" takes one value (text, number or true/false)')
        return self


class AllOf(_Doc):
    """Holds when every rule holds."""

    all: Annotated[list[Rule], Field(min_length=1, max_length=50)]


class AnyOf(_Doc):
    """Holds when at least one rule holds."""

    any: Annotated[list[Rule], Field(min_length=1, max_length=50)]


class Not(_Doc):
    """Holds when the rule does not."""

    not_: Rule = Field(alias="not")


Rule = Condition | AllOf | AnyOf | Not
"""A ``when``: a condition, or ``all`` / ``any`` / ``not`` of rules."""


# ---------------------------------------------------------------------- fields and blocks


class Grid(_Doc):
    """Where an item sits on the editor's 12-column grid (``x`` + ``w`` <= 12)."""

    x: Annotated[int, Field(ge=0, le=11)]
    y: Annotated[int, Field(ge=0, le=10_000)]
    w: Annotated[int, Field(ge=1, le=12)] = 12
    h: Annotated[int, Field(ge=1, le=50)] = 1

    @model_validator(mode="after")
    def _fits(self) -> Grid:
        if self.x + self.w > 12:
            raise ValueError(f"x {self.x} + w {self.w} passes the grid's 12 columns")
        return self


class _Item(_Doc):
    id: Id
    layout: Grid | None = None


class _Field(_Item):
    label: Text
    help: Text | None = None
    """How to ask for it (the agent reads it while the field is unanswered)."""
    required: bool = True
    no_preference: bool = False
    """A required field that takes an explicit "no preference" ("any date is fine"): a decline,
    which then counts as answered (``field(..., no_preference=True)``)."""
    when: Rule | None = None
    aliases: Annotated[list[Text], Field(max_length=10)] = []
    on_fill: ExecutorName | None = None
    """An executor to run when the field gets a live answer."""
    memory: FactKeyName | None = None
    """The fact key the field holds: memory may fill or offer it when the form starts, and the
    answer is remembered under it (``docs/memory.md``)."""


class TextField(_Field):
    kind: Literal["short_text", "long_text"]
    min_length: Annotated[int, Field(ge=0, le=10_000)] | None = None
    max_length: Annotated[int, Field(ge=1, le=10_000)] | None = None
    pattern: Annotated[str, StringConstraints(min_length=1, max_length=500), Line] | None = None
    example: Text | None = None
    """One valid answer, shown to the agent instead of the pattern."""


class ContactField(_Field):
    """An email address, a phone number or a web address (``http``/``https``)."""

    kind: Literal["email", "phone", "url"]


class IntegerField(_Field):
    kind: Literal["integer"]
    minimum: int | None = None
    maximum: int | None = None


class DecimalField(_Field):
    kind: Literal["decimal"]
    minimum: float | None = None
    maximum: float | None = None
    decimal_places: Annotated[int, Field(ge=0, le=10)] | None = None


class BooleanField(_Field):
    kind: Literal["boolean"]
    must_be_true: bool = False
    """Only true is an answer (a consent): the field's type is ``Literal[True]``, as a code
    form writes it."""


class DateField(_Field):
    kind: Literal["date"]
    earliest: date | None = None
    latest: date | None = None


class Option(_Doc):
    value: Annotated[str, StringConstraints(min_length=1, max_length=200), Line]
    label: Text | None = None


class ChoiceField(_Field):
    """One option (``single_choice``) or several (``multiple_choice``)."""

    kind: Literal["single_choice", "multiple_choice"]
    options: Annotated[list[Option], Field(min_length=1, max_length=200)]
    min_selected: Annotated[int, Field(ge=0)] | None = None
    max_selected: Annotated[int, Field(ge=1)] | None = None


class Heading(_Item):
    kind: Literal["heading"]
    text: Text


class Paragraph(_Item):
    kind: Literal["paragraph"]
    text: Prose


class Divider(_Item):
    kind: Literal["divider"]


AnyField = (
    TextField | ContactField | IntegerField | DecimalField | BooleanField | DateField | ChoiceField
)
"""Every model a field can be: the one list of them (``FIELD_MODELS`` and ``ItemKind`` are
read from it; ``forms.documents.kinds`` has an entry for each kind they take)."""
AnyBlock = Heading | Paragraph | Divider
"""Every model a display block can be."""
FieldDoc = Annotated[AnyField, Field(discriminator="kind")]
Item = Annotated[AnyField | AnyBlock, Field(discriminator="kind")]
"""What a step holds, in order: fields (which collect answers) and display blocks (which
collect nothing: headings and paragraphs become the step's guidance, dividers nothing)."""
FIELD_MODELS: tuple[type[_Field], ...] = get_args(AnyField)
BLOCK_MODELS: tuple[type[_Item], ...] = get_args(AnyBlock)
ITEM_MODELS = (*FIELD_MODELS, *BLOCK_MODELS)
"""Every model a step's item can be (what ``Item`` is the union of), fields first."""


def kinds_of(model: type[BaseModel]) -> tuple[str, ...]:
    """The ``kind`` values ``model`` takes."""
    return get_args(model.model_fields["kind"].annotation)


BLOCK_KINDS = tuple(kind for model in BLOCK_MODELS for kind in kinds_of(model))
if TYPE_CHECKING:
    ItemKind = str
else:
    ItemKind = Literal[tuple(kind for model in ITEM_MODELS for kind in kinds_of(model))]
"""Every item kind, as one type (what an update may change ``kind`` to), in the order of
``ITEM_MODELS``."""


# ---------------------------------------------------------------------- steps and checkpoints


class StepDoc(_Doc):
    id: Id
    title: Text
    preview: Text | None = None
    """What the step collects, in a few words (derived from its fields when left out)."""
    guidance: Prose | None = None
    when: Rule | None = None
    on_complete: ExecutorName | None = None
    items: Annotated[list[Item], Field(max_length=500)] = []


class FailAction(_Doc):
    """Tell the person why they cannot go on; it stands while the checkpoint's rule holds.
    ``{field_id}`` in the message is replaced by that field's answer."""

    action: Literal["fail"]
    message: Text


class TerminateAction(_Doc):
    """Close the form for a reason other than success."""

    action: Literal["terminate"]
    reason: Text


class JumpAction(_Doc):
    """Go to a step: ahead, it is asked next; already complete, it is reopened (a revisit)."""

    action: Literal["jump"]
    step: Id


class SetAction(_Doc):
    """Write a value to a field: read as the field's type reads an answer, and refused when
    the type cannot hold it, both when the builder sets the checkpoint and when the form
    compiles (by the same check, ``field_types.read_set``)."""

    action: Literal["set"]
    field: Id
    value: Scalar | list[Scalar]


class RunAction(_Doc):
    """Run an executor the deployment registered in Python under this name."""

    action: Literal["run"]
    executor: ExecutorName


class FieldRename(_Doc):
    """One field a handover carries under another id on the other form (``to``), or leaves
    behind (``to`` null)."""

    field: Id
    to: Id | None


class HandOverAction(_Doc):
    """Close this form as handed over and start another form in the same conversation,
    carrying the answers across: same field ids, or as ``rename`` says (a field renamed to
    null stays behind). Checked when the form is built (renamed fields exist), and when the
    handover runs against the other form's fields and types (``forms.handover``)."""

    action: Literal["hand_over"]
    form: FormId
    rename: Annotated[list[FieldRename], Field(max_length=500)] = []
    reason: Text | None = None


Action = Annotated[
    FailAction | TerminateAction | JumpAction | SetAction | RunAction | HandOverAction,
    Field(discriminator="action"),
]


class CheckpointDoc(_Doc):
    """A rule over every answer; when it starts to hold, its actions run, in order."""

    id: Id
    title: Text | None = None
    when: Rule
    then: Annotated[list[Action], Field(min_length=1, max_length=20)]


class FormDocument(_Doc):
    """A whole form. Versions are the store's: a document is what one version holds."""

    id: FormId
    title: Text
    description: Annotated[str, StringConstraints(max_length=2_000), Multiline] = ""
    steps: Annotated[list[StepDoc], Field(min_length=1, max_length=100)]
    checkpoints: Annotated[list[CheckpointDoc], Field(max_length=100)] = []
    on_complete: ExecutorName | None = None
    closes_on_complete: bool = False


for _model in (AllOf, AnyOf, Not):
    _model.model_rebuild()
