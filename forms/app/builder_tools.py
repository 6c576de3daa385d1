"""What the builder's model and editor see: every builder tool's arguments
(``BUILDER_ARGUMENTS``, from the one list of the builder tools,
``forms.documents.BUILDER_TOOLS``), the answers of a cancelled call and of undo and redo, and
the draft as its editor reads it (``DraftView``). ``forms.app.builder`` is the service that
answers the calls. The error of a draft that cannot be published yet, ``NotPublishable``, is
one of the tool errors of ``forms.errors``; it is importable from here and from
``forms.app.builder``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, JsonValue

from forms.documents import BUILDER_TOOLS, EditError, FormDocument
from forms.documents.edit_arguments import InspectForm, RedoEdit, UndoEdit
from forms.documents.edit_names import suggest
from forms.errors import NotPublishable
from forms.storage.drafts import Draft

__all__ = [
    "BUILDER_ARGUMENTS",
    "CANCELLED",
    "BuilderAnswer",
    "DraftView",
    "InspectForm",
    "LogLine",
    "NotPublishable",
    "RedoEdit",
    "UndoEdit",
    "moved",
    "no_draft",
    "unknown_tool",
]

BuilderAnswer = dict[str, JsonValue]
"""What a builder tool call answers, as JSON for the model: ``ok``, then ``summary`` (an edit,
a move), the draft's parts (``inspect_form``), or ``error``, ``message`` and ``hint``. Not the
form tools' result (``forms.surface.tool_result.ToolResult``)."""


BUILDER_ARGUMENTS: Mapping[str, type[BaseModel]] = {
    tool.name: tool.arguments for tool in BUILDER_TOOLS
}
"""Every builder tool and the model of its arguments (the docstring is its description), in
the order of the one list of the builder tools (``forms.documents.BUILDER_TOOLS``)."""
CANCELLED: BuilderAnswer = {
    "ok": False,
    "error": "cancelled",
    "message": "Cancelled: the person stopped the assistant or closed the panel; nothing was "
    "applied.",
}
"""What a cancelled call is answered, and recorded as, under its id."""


@dataclass(frozen=True, slots=True)
class LogLine:
    """One entry of a draft's edit log, without its document."""

    index: int
    tool: str
    call_id: str
    by: str
    at: datetime
    summary: str
    prev: int
    in_force: bool


@dataclass(frozen=True, slots=True)
class DraftView:
    """A draft for its editor: the document, where it stands, and its edit log."""

    draft: Draft
    log: tuple[LogLine, ...]

    @property
    def document(self) -> FormDocument:
        return self.draft.document

    def as_json(self) -> dict[str, JsonValue]:
        draft = self.draft
        return {
            "form_id": draft.form_id,
            "version": draft.version,
            "document": draft.document.model_dump(mode="json", by_alias=True, exclude_none=True),
            "undo": draft.current.summary if draft.undo_target is not None else None,
            "redo": draft.redo[0].summary if draft.redo else None,
            "changed_by": draft.changed_by,
            "changed_at": draft.changed_at.isoformat(),
            "log": [
                {
                    "index": line.index,
                    "tool": line.tool,
                    "call_id": line.call_id,
                    "by": line.by,
                    "at": line.at.isoformat(),
                    "summary": line.summary,
                    "prev": line.prev,
                    "in_force": line.in_force,
                }
                for line in self.log
            ],
        }


def moved(draft: Draft | None, way: Literal["undo", "redo"]) -> BuilderAnswer:
    """The answer of an undo or redo on ``draft``; ``EditError`` when there is nothing to move
    to."""
    if draft is None:
        raise no_draft()
    if way == "undo":
        if draft.undo_target is None:
            raise EditError(
                "nothing_to_undo",
                "There is no edit to undo: the draft is as create_form started it.",
                "To start over, call create_form with replace: true.",
            )
        return {"ok": True, "summary": f"Undid: {draft.current.summary}"}
    if not draft.redo:
        raise EditError(
            "nothing_to_redo",
            "There is no undone edit to redo.",
            "Make the change again with the editing tools.",
        )
    return {"ok": True, "summary": f"Redid: {draft.redo[0].summary}"}


def unknown_tool(tool: object) -> EditError:
    """The refusal of a call to a tool that is not a builder tool: every tool of
    ``BUILDER_ARGUMENTS`` in the hint, the likeliest in ``did_you_mean``."""
    name = tool if isinstance(tool, str) else repr(tool)
    return EditError(
        "unknown_tool",
        f"There is no builder tool {name[:128]!r}.",
        "The tools are: " + ", ".join(BUILDER_ARGUMENTS) + ".",
        did_you_mean=suggest(name[:128], {t: (t, t.replace("_", " ")) for t in BUILDER_ARGUMENTS}),
    )


def no_draft() -> EditError:
    """The refusal of a call on a draft that does not exist yet."""
    return EditError(
        "no_draft",
        "There is no form yet.",
        "Start it with create_form (a title and the steps), then add fields.",
    )
