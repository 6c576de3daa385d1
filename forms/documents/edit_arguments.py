"""The builder tools' arguments: one strict pydantic model per tool.

Each model has explicit keys, forbids unknown ones, and has no ``Any``, no open map and no list
without an item type. Items (``add_field``'s ``field``, ``create_form``'s steps) are the
document's own item models with ``id`` and the layout's ``x``/``y`` optional: ids are derived
from labels, positions are packed.

The models validate; what a model is shown is their JSON schema made compact
(``edit_shapes``): an item, a rule and an action are shown as one flat object each rather than
the union validated, constrained strings as plain strings, and ``None`` only where it is a
value (``null`` clears a key of an update; ``when: null`` means always). The model's docstring
is the tool's description.

``edit_parse.parse_arguments`` reads a call into one of them. Which tool takes which model is
the builder tools' list (``edit_tools.BUILDER_TOOLS``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    WithJsonSchema,
    create_model,
    model_validator,
)

from forms.documents import model as doc
from forms.documents import text as author_text
from forms.documents.edit_shapes import DATE, INTEGER, STRING, Omitted, ShownAs
from forms.documents.edit_shapes import Action as ActionShape
from forms.documents.edit_shapes import Grid as GridShape
from forms.documents.edit_shapes import Item as ItemShape
from forms.documents.edit_shapes import Option as OptionShape
from forms.documents.edit_shapes import Rule as RuleShape
from forms.documents.model import ITEM_MODELS, ItemKind

Ref = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=200),
    author_text.Line,
    STRING,
]
"""A step or field as the model names it: its id (or, when unique, its label or title)."""
Position = Annotated[int, Field(ge=0, le=1_000), WithJsonSchema({"type": "integer", "minimum": 0})]
"""0-based; past the end means last."""
Text = Annotated[author_text.Text, STRING]
Prose = Annotated[author_text.Prose, STRING]
Id = Annotated[author_text.Id, STRING]
ExecutorName = Annotated[author_text.ExecutorName, STRING]
Rule = Annotated[doc.Rule, ShownAs(RuleShape)]
Action = Annotated[doc.Action, ShownAs(ActionShape)]
Option = Annotated[doc.Option, ShownAs(OptionShape)]
MAX_CREATE_ITEMS = 8
"""The most fields and blocks a ``create_form`` may carry; the rest go in with ``add_field``."""


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Selection(_Args):
    """What the person has selected in the editor; edits that leave out which field or step
    fall back to it ("make this required")."""

    field: Ref | None = None
    step: Ref | None = None


@dataclass(frozen=True, slots=True)
class Limits:
    """The plan's ceilings for one draft (per tenant, set by the deployment)."""

    max_steps: int = 50
    max_fields: int = 300


GENEROUS = Limits()
"""The limits when the deployment sets none."""


class GridInput(_Args):
    """A place on the editor's 12-column grid; ``x`` and ``y`` left out are packed."""

    x: Annotated[int, Field(ge=0, le=11)] | None = None
    y: Annotated[int, Field(ge=0, le=10_000)] | None = None
    w: Annotated[int, Field(ge=1, le=12)] | None = None
    h: Annotated[int, Field(ge=1, le=50)] | None = None

    @model_validator(mode="after")
    def _fits(self) -> GridInput:
        if self.x is not None and self.w is not None and self.x + self.w > 12:
            raise ValueError(f"x {self.x} + w {self.w} passes the grid's 12 columns")
        return self


Layout = Annotated[GridInput, ShownAs(GridShape)]


FactKeySent = Annotated[
    str, StringConstraints(min_length=1, max_length=200), author_text.Line, STRING
]
"""A fact key as the builder sends it: any name, so that one that is not even a key's syntax
(``dob``) is refused by the vocabulary with the keys it likely meant, not by a pattern."""


def _as_input(item: type[BaseModel]) -> type[BaseModel]:
    """``item`` as the builder sends it: ``id`` optional, ``layout`` a partial grid, a field's
    ``memory`` any name (``FactKeySent``)."""
    memory: dict[str, Any] = {}
    if "memory" in item.model_fields:
        memory["memory"] = (FactKeySent | None, None)
    return create_model(
        f"{item.__name__}Input",
        __base__=item,
        __doc__=item.__doc__,
        id=(author_text.Id | None, None),
        layout=(GridInput | None, None),
        **memory,
    )


_ITEM_INPUTS = tuple(_as_input(m) for m in ITEM_MODELS)
if TYPE_CHECKING:
    ItemInput = BaseModel
else:
    ItemInput = Annotated[
        Union[_ITEM_INPUTS],  # noqa: UP007
        Field(discriminator="kind"),
        ShownAs(ItemShape),
    ]
"""A field of any kind, or a display block, as ``add_field`` takes it (shown as one object)."""


class StepInput(_Args):  # a step of create_form
    title: Text
    id: Id | Omitted = None
    preview: Text | Omitted = None
    guidance: Prose | Omitted = None
    items: list[ItemInput] = []


class CreateForm(_Args):
    """Start the form on an empty canvas, or rebuild it (replace: true discards every step
    and field). Send the structure: title and steps, their items 8 at most in all; then add
    the fields one by one with add_field."""

    title: Text
    id: Annotated[author_text.FormId, STRING] | Omitted = None
    description: (
        Annotated[str, StringConstraints(max_length=2_000), author_text.Multiline, STRING] | Omitted
    ) = None
    steps: Annotated[list[StepInput], Field(max_length=100)] = []
    replace: bool = False


class FormUpdates(_Args):  # no docstring: update_form's description says what it is
    title: Text | Omitted = None
    description: (
        Annotated[str, StringConstraints(max_length=2_000), author_text.Multiline, STRING] | None
    ) = None
    on_complete: ExecutorName | None = None
    closes_on_complete: bool | Omitted = None


class UpdateForm(_Args):
    """Change the form's title, description, on_complete (executor run when the form
    completes) or closes_on_complete (true: close on completion, no submit); keys left out are
    kept, null clears one."""

    updates: FormUpdates


class AddStep(_Args):
    """Add a step (a page) at a 0-based position; default: after the selected step, else
    last."""

    title: Text
    id: Id | Omitted = None
    position: Position | Omitted = None
    preview: Text | Omitted = None
    guidance: Prose | Omitted = None


class StepUpdates(_Args):  # no docstring: update_step's description says what it is
    id: Id | Omitted = None
    title: Text | None = None
    preview: Text | None = None
    guidance: Prose | None = None
    on_complete: ExecutorName | None = None


class UpdateStep(_Args):
    """Change a step's id (jumps to it follow), title, preview (what it collects, in a few
    words), guidance or on_complete (executor run when complete); keys left out are kept, null
    clears one. step defaults to the selected step. Its when: set_conditional_logic."""

    step: Ref | Omitted = None
    updates: StepUpdates


class DeleteStep(_Args):
    """Delete a step and its fields (never the only step). step defaults to the selected
    step."""

    step: Ref | Omitted = None


class MoveStep(_Args):
    """Move a step to a 0-based position. step defaults to the selected step."""

    step: Ref | Omitted = None
    position: Position


class AddField(_Args):
    """Add a field or display block at a 0-based position (default last). step defaults to the
    selected step, or to the selected field's, right after it. Leave out layout unless asked:
    it is packed."""

    field: ItemInput
    step: Ref | Omitted = None
    position: Position | Omitted = None


class FieldUpdates(_Args):  # no docstring: update_field's description says what it is
    kind: ItemKind | Omitted = None
    id: Id | Omitted = None
    label: Text | None = None
    help: Text | None = None
    required: bool | None = None
    no_preference: bool | None = None
    must_be_true: bool | None = None
    aliases: Annotated[list[Text], Field(max_length=10)] | None = None
    on_fill: ExecutorName | None = None
    memory: FactKeySent | None = None
    layout: Layout | None = None
    min_length: Annotated[int, Field(ge=0, le=10_000), INTEGER] | None = None
    max_length: Annotated[int, Field(ge=1, le=10_000), INTEGER] | None = None
    pattern: (
        Annotated[str, StringConstraints(min_length=1, max_length=500), author_text.Line, STRING]
        | None
    ) = None
    example: Text | None = None
    minimum: float | None = None
    maximum: float | None = None
    decimal_places: Annotated[int, Field(ge=0, le=10), INTEGER] | None = None
    earliest: Annotated[date, DATE] | None = None
    latest: Annotated[date, DATE] | None = None
    options: Annotated[list[Option], Field(min_length=1, max_length=200)] | None = None
    min_selected: Annotated[int, Field(ge=0), INTEGER] | None = None
    max_selected: Annotated[int, Field(ge=1), INTEGER] | None = None
    text: Prose | None = None


class UpdateField(_Args):
    """Change some keys of a field ("make this required": {"updates": {"required": true}});
    the rest are kept, layout is merged key by key, null clears a key, a new kind drops the
    keys it does not take, a new id is renamed in every rule and checkpoint. field defaults to
    the selected field. Its when: set_conditional_logic."""

    field: Ref | Omitted = None
    step: Ref | Omitted = None
    updates: FieldUpdates


class DeleteField(_Args):
    """Delete a field or block (refused while a rule reads it). field defaults to the selected
    field."""

    field: Ref | Omitted = None
    step: Ref | Omitted = None


class MoveField(_Args):
    """Move a field within its step or to to_step, at a 0-based position (default last).
    field defaults to the selected field. A rule may only read fields before what it gates."""

    field: Ref | Omitted = None
    to_step: Ref | Omitted = None
    position: Position | Omitted = None


class SetConditionalLogic(_Args):
    """Show a field or step only while a rule holds, or always (when: null). The rule may read
    fields declared before the target (for a step: fields of earlier steps). id defaults to
    the selected field or step."""

    target: Literal["field", "step"]
    id: Ref | Omitted = None
    when: Rule | None


class SetCheckpoint(_Args):
    """Add a checkpoint, or replace the one with this id: when its rule starts to hold (it may
    read any field), its actions run in order."""

    id: Id | Omitted = None
    title: Text | Omitted = None
    when: Rule
    then: Annotated[list[Action], Field(min_length=1, max_length=20)]


class DeleteCheckpoint(_Args):
    """Delete a checkpoint."""

    id: Ref


class InspectForm(_Args):
    """Read the draft as it is now, this turn's edits included: the form as an outline, one
    step in full, or one field in full with where it is and what reads it. id defaults to the
    selected step or field."""

    scope: Literal["form", "step", "field"] = "form"
    id: Ref | Omitted = None


class UndoEdit(_Args):
    """Undo the last edit (the draft goes back to before it); redo_edit brings it back."""


class RedoEdit(_Args):
    """Redo the edit undo_edit last took back."""
