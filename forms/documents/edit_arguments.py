"""The builder tools' arguments: one strict pydantic model per tool.

Each model has explicit keys, forbids unknown ones, and has no ``Any``, no open map and no list
without an item type, so its JSON schema can be handed to a model as the tool's input schema
(the model's docstring is the tool's description). Items (``add_field``'s ``field``,
``create_form``'s steps) are the document's own item models with ``id`` and the layout's
``x``/``y`` optional: ids are derived from labels, positions are packed.

``edit_parse.parse_arguments`` reads a call into one of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Annotated, Literal, Union

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    create_model,
    model_validator,
)

from forms.documents.model import (
    ITEM_MODELS,
    Action,
    ExecutorName,
    FormId,
    Id,
    ItemKind,
    Option,
    Rule,
    Text,
)

Ref = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]
"""A step or field as the model names it: its id (or, when unique, its label or title)."""
Position = Annotated[int, Field(ge=0, le=1_000)]
"""0-based; past the end means last."""
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
    """A place on the editor's 12-column grid. Leave out ``x`` and ``y`` (the usual case):
    the item is packed after the one before it. ``w`` is the width in columns (default 12)."""

    x: Annotated[int, Field(ge=0, le=11)] | None = None
    y: Annotated[int, Field(ge=0, le=10_000)] | None = None
    w: Annotated[int, Field(ge=1, le=12)] | None = None
    h: Annotated[int, Field(ge=1, le=50)] | None = None

    @model_validator(mode="after")
    def _fits(self) -> GridInput:
        if self.x is not None and self.w is not None and self.x + self.w > 12:
            raise ValueError(f"x {self.x} + w {self.w} passes the grid's 12 columns")
        return self


def _as_input(model: type[BaseModel]) -> type[BaseModel]:
    """``model`` as the builder sends it: ``id`` optional, ``layout`` a partial grid."""
    return create_model(
        f"{model.__name__}Input",
        __base__=model,
        __doc__=model.__doc__,
        id=(Id | None, None),
        layout=(GridInput | None, None),
    )


_ITEM_INPUTS = tuple(_as_input(m) for m in ITEM_MODELS)
if TYPE_CHECKING:
    ItemInput = BaseModel
else:
    ItemInput = Annotated[Union[_ITEM_INPUTS], Field(discriminator="kind")]  # noqa: UP007
"""A field of any kind, or a display block, as ``add_field`` takes it."""


class StepInput(_Args):
    """A step of ``create_form``: a title, and a few items at most."""

    title: Text
    id: Id | None = None
    preview: Text | None = None
    guidance: Text | None = None
    items: Annotated[list[ItemInput], Field(max_length=500)] = []


class CreateForm(_Args):
    """Start the form on an empty canvas, or rebuild it from scratch with ``replace: true``
    (which discards every step and field of the draft). Give the structure: the title and the
    steps, with at most 8 fields in all; add the rest one by one with add_field, so the person
    watches the form assemble and a bad field costs one call, not the form."""

    title: Text
    id: FormId | None = None
    description: Annotated[str, StringConstraints(max_length=2_000)] | None = None
    steps: Annotated[list[StepInput], Field(max_length=100)] = []
    replace: bool = False


class AddStep(_Args):
    """Add a step (a page of the form). ``position`` is 0-based; left out: after the selected
    step, else last."""

    title: Text
    id: Id | None = None
    position: Position | None = None
    preview: Text | None = None
    guidance: Text | None = None


class StepUpdates(_Args):
    """The keys to change; keys left out are kept, ``null`` clears an optional one."""

    title: Text | None = None
    preview: Text | None = None
    guidance: Text | None = None
    on_complete: ExecutorName | None = None


class UpdateStep(_Args):
    """Change a step's title, preview, guidance. ``step`` defaults to the selected step. Use
    set_conditional_logic for its ``when``."""

    step: Ref | None = None
    updates: StepUpdates


class DeleteStep(_Args):
    """Delete a step and everything in it (not the only step). ``step`` defaults to the
    selected step."""

    step: Ref | None = None


class MoveStep(_Args):
    """Move a step to a 0-based position. ``step`` defaults to the selected step."""

    step: Ref | None = None
    position: Position


class AddField(_Args):
    """Add one field (or a heading, paragraph or divider) to a step. ``id`` is derived from the
    label when left out; an id already in use is made unique (the result says to what). ``step``
    defaults to the selected step (or the selected field's step, right after that field).
    Leave out ``layout`` unless asked: the field is placed for you."""

    field: ItemInput
    step: Ref | None = None
    position: Position | None = None


class FieldUpdates(_Args):
    """The keys to change; keys left out are kept (``layout`` is merged key by key), ``null``
    clears an optional one. Changing ``kind`` drops the keys the new kind does not take."""

    kind: ItemKind | None = None
    label: Text | None = None
    help: Text | None = None
    required: bool | None = None
    aliases: Annotated[list[Text], Field(max_length=10)] | None = None
    on_fill: ExecutorName | None = None
    layout: GridInput | None = None
    min_length: Annotated[int, Field(ge=0, le=10_000)] | None = None
    max_length: Annotated[int, Field(ge=1, le=10_000)] | None = None
    pattern: Annotated[str, StringConstraints(min_length=1, max_length=500)] | None = None
    example: Text | None = None
    minimum: float | None = None
    maximum: float | None = None
    decimal_places: Annotated[int, Field(ge=0, le=10)] | None = None
    earliest: date | None = None
    latest: date | None = None
    options: Annotated[list[Option], Field(min_length=1, max_length=200)] | None = None
    min_selected: Annotated[int, Field(ge=0)] | None = None
    max_selected: Annotated[int, Field(ge=1)] | None = None
    text: Text | None = None


class UpdateField(_Args):
    """Change some keys of a field ("make this required": ``{"updates": {"required": true}}``).
    ``field`` defaults to the selected field. Use set_conditional_logic for its ``when``."""

    field: Ref | None = None
    step: Ref | None = None
    updates: FieldUpdates


class DeleteField(_Args):
    """Delete a field or block. ``field`` defaults to the selected field. Refused while a rule
    reads it: change those rules first."""

    field: Ref | None = None
    step: Ref | None = None


class MoveField(_Args):
    """Move a field within its step or to another step, at a 0-based position (left out: last).
    ``field`` defaults to the selected field. A rule may only read fields before what it gates."""

    field: Ref | None = None
    to_step: Ref | None = None
    position: Position | None = None


class SetConditionalLogic(_Args):
    """Show a field or step only while a rule holds, or always (``when: null``). The rule may
    read fields declared before the target (for a step: fields of earlier steps), e.g.
    ``{"field": "role", "op": "equals", "value": "designer"}``; combine with ``all``, ``any``,
    ``not``. ``id`` defaults to the selected field or step."""

    target: Literal["field", "step"]
    id: Ref | None = None
    when: Rule | None


class SetCheckpoint(_Args):
    """Add a checkpoint, or replace the one with this ``id``: when its rule starts to hold (it
    may read any field), its actions run in order: ``{"action": "fail", "message": "{total} is
    over the cap"}``, ``{"action": "terminate", "reason": ...}``, ``{"action": "jump", "step":
    ...}``, ``{"action": "set", "field": ..., "value": ...}``, ``{"action": "run", "executor":
    ...}``."""

    id: Id | None = None
    title: Text | None = None
    when: Rule
    then: Annotated[list[Action], Field(min_length=1, max_length=20)]


class DeleteCheckpoint(_Args):
    """Delete a checkpoint."""

    id: Ref


TOOL_ARGUMENTS: Mapping[str, type[BaseModel]] = {
    "create_form": CreateForm,
    "add_step": AddStep,
    "update_step": UpdateStep,
    "delete_step": DeleteStep,
    "move_step": MoveStep,
    "add_field": AddField,
    "update_field": UpdateField,
    "delete_field": DeleteField,
    "move_field": MoveField,
    "set_conditional_logic": SetConditionalLogic,
    "set_checkpoint": SetCheckpoint,
    "delete_checkpoint": DeleteCheckpoint,
}
"""Every editing tool and the model of its arguments, in the order a builder meets them."""
