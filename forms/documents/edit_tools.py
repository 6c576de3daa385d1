"""The one list of the builder tools (``BUILDER_TOOLS``): each entry names its tool, the model
of its arguments (whose docstring is the tool's description), what it does (an edit, the read,
an undo or a redo), the function an edit applies, what an MCP host is told of it (a title;
destructive, idempotent), and what a broken rule's refusal says for it.

Everything else that names the builder tools derives from it: the editing tools' arguments
(``TOOL_ARGUMENTS``) and every tool's (``forms.app.builder_tools.BUILDER_ARGUMENTS``), so the
builder's HTTP routes, its OpenAPI operations, ``GET /builder/tools`` in every shape, the agents'
tool lists, the refusal of an unknown tool; the edits ``apply_edit`` dispatches to; and MCP's
annotations (``formwork.mcp.tools.builder_hints``). Adding a builder tool is one entry here
(``tests/unit/test_builder_tool_list.py`` finds any other list of their names).

Why each is destructive or idempotent is ``formwork.mcp.tools``'s to say (its docstring).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

from forms.documents.edit_arguments import (
    AddField,
    AddStep,
    CreateForm,
    DeleteCheckpoint,
    DeleteField,
    DeleteStep,
    InspectForm,
    Limits,
    MoveField,
    MoveStep,
    RedoEdit,
    Selection,
    SetCheckpoint,
    SetConditionalLogic,
    UndoEdit,
    UpdateField,
    UpdateForm,
    UpdateStep,
)
from forms.documents.edit_checkpoints import delete_checkpoint, set_checkpoint
from forms.documents.edit_draft import WorkingCopy
from forms.documents.edit_fields import (
    add_field,
    delete_field,
    move_field,
    set_conditional_logic,
    update_field,
)
from forms.documents.edit_steps import (
    add_step,
    delete_step,
    move_step,
    update_form,
    update_step,
)

__all__ = [
    "BUILDER_TOOLS",
    "BUILDER_TOOLS_BY_NAME",
    "TOOL_ARGUMENTS",
    "BuilderTool",
    "Edit",
]

Edit = Callable[[WorkingCopy, Any, Selection | None, Limits], str]
"""An edit of a draft that has one: the working copy, the arguments read into the tool's
model, the selection and the limits; it answers the sentence for the model."""


@dataclass(frozen=True, slots=True)
class BuilderTool:
    """One builder tool (the module says what derives from it)."""

    name: str
    arguments: type[BaseModel]
    title: str
    """What an MCP host shows of it."""
    does: Literal["edit", "read", "undo", "redo"] = "edit"
    """``edit``: ``apply_edit`` applies it; ``read``: it reads the draft, changing nothing;
    ``undo``, ``redo``: it moves over the draft's edit log."""
    edit: Edit | None = None
    """The edit, on a draft that has one (None: ``create_form``, which starts one, and the
    tools that are not edits)."""
    destructive: bool = False
    idempotent: bool = False
    rules: bool = False
    """Its arguments may carry a rule: a reference the call breaks is the rule's fault
    (``invalid_rule``), not the edit's (``breaks_rules``)."""
    broken_rules_hint: str | None = None
    """The hint of its refusal when it breaks a rule (None: change those rules first)."""


BUILDER_TOOLS: tuple[BuilderTool, ...] = (
    BuilderTool(
        "create_form",
        CreateForm,
        "Start or rebuild the form",
        destructive=True,
        idempotent=True,
        rules=True,
        broken_rules_hint="A field's rule may read only fields declared before it: send the "
        "form again with the names fixed; nothing was applied.",
    ),
    BuilderTool("update_form", UpdateForm, "Change the form", edit=update_form, idempotent=True),
    BuilderTool("add_step", AddStep, "Add a step", edit=add_step),
    BuilderTool("update_step", UpdateStep, "Change a step", edit=update_step, idempotent=True),
    BuilderTool(
        "delete_step",
        DeleteStep,
        "Delete a step",
        edit=delete_step,
        destructive=True,
        idempotent=True,
    ),
    BuilderTool(
        "move_step",
        MoveStep,
        "Move a step",
        edit=move_step,
        idempotent=True,
        broken_rules_hint="A step's rule may only read fields of earlier steps, and a field's "
        "rule only earlier fields: move it elsewhere, or change those rules first "
        "(set_conditional_logic).",
    ),
    BuilderTool(
        "add_field",
        AddField,
        "Add a field",
        edit=add_field,
        rules=True,
        broken_rules_hint="A field's rule may read only fields declared before it "
        "(inspect_form lists them, with their options): send the field again with the names "
        "fixed; nothing was applied.",
    ),
    BuilderTool(
        "update_field",
        UpdateField,
        "Change a field",
        edit=update_field,
        idempotent=True,
        broken_rules_hint="Rules and checkpoints read the field as its kind and constraints "
        "do: change those first (set_conditional_logic, set_checkpoint), or keep the kind, "
        "options and constraints they use.",
    ),
    BuilderTool(
        "delete_field",
        DeleteField,
        "Delete a field",
        edit=delete_field,
        destructive=True,
        idempotent=True,
    ),
    BuilderTool(
        "move_field",
        MoveField,
        "Move a field",
        edit=move_field,
        idempotent=True,
        broken_rules_hint="A rule may only read fields before what it gates: move the field "
        "before its readers, or change their rules first (set_conditional_logic).",
    ),
    BuilderTool(
        "set_conditional_logic",
        SetConditionalLogic,
        "Set when it shows",
        edit=set_conditional_logic,
        idempotent=True,
    ),
    BuilderTool(
        "set_checkpoint",
        SetCheckpoint,
        "Set a checkpoint",
        edit=set_checkpoint,
        rules=True,
        broken_rules_hint="A checkpoint's rule may read any field of the draft (inspect_form "
        "lists them, with their options): send the checkpoint again with the names fixed; "
        "nothing was applied.",
    ),
    BuilderTool(
        "delete_checkpoint",
        DeleteCheckpoint,
        "Delete a checkpoint",
        edit=delete_checkpoint,
        destructive=True,
        idempotent=True,
    ),
    BuilderTool("inspect_form", InspectForm, "Read the draft", does="read"),
    BuilderTool("undo_edit", UndoEdit, "Undo the last edit", does="undo"),
    BuilderTool("redo_edit", RedoEdit, "Redo an undone edit", does="redo"),
)
"""Every builder tool, in the order a builder meets them: the editing tools, then the read,
undo and redo."""

BUILDER_TOOLS_BY_NAME: Mapping[str, BuilderTool] = {tool.name: tool for tool in BUILDER_TOOLS}

TOOL_ARGUMENTS: Mapping[str, type[BaseModel]] = {
    tool.name: tool.arguments for tool in BUILDER_TOOLS if tool.does == "edit"
}
"""Every editing tool and the model of its arguments, in the list's order."""
