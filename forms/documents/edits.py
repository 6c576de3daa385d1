"""The builder's edit engine: a builder agent changes a draft form document in small tool calls.

Pure: no storage, no clock, no ids from nowhere. The shell keeps the draft, its edit log and
the tool-call ids; this module turns one call into the next draft, or refuses it.

What one ``apply_edit`` does, in order:

1. reads the arguments into the tool's model (``edit_arguments``, ``edit_parse``), strictly,
   except for the strings models send for numbers and booleans, which are read and noted (a
   model is shown a looser schema, ``edit_shapes``: what it lets through and the model does
   not take is refused here, in words);
2. finds what the call names, falling back to the editor's selection when it leaves out which
   field or step (``no_selection`` when nothing is selected), with the closest names when
   something is not there (``not_found``);
3. applies the change to a working copy: ids derived from labels and made unique, display
   blocks given their defaults, a rule's values read as the fields they compare read an
   answer (``edit_values``), the layout packed on the 12-column grid (``edit_layout``), the
   plan's ``Limits`` enforced (``plan_limit``);
4. validates the copy into a ``FormDocument`` (``invalid``, naming each problem), then checks
   that the edit broke no reference the draft had right: a rule reading a deleted or later
   field, a comparison a field's new kind does not take, a checkpoint naming a step that went
   or setting a value its field no longer holds (``edit_checks``, with the compiler's own
   checks: the fields' types are kept by their settings, so this costs little per field),
   and that every fact key a field holds (``memory``) is one the deployment's vocabulary has,
   keeps, and whose values fit the field (``fact_keys``, the compiler's own check; a name that
   is not even a key's syntax is refused the same way, before the copy is validated);
5. returns ``Edited``: the new draft, one sentence for the model, and ``notes`` on what it did
   on its own (values coerced, ids rewritten, positions clamped, keys dropped, and a layout
   the call sent that the packer had to change).

Any failure is an ``EditError`` (code, message, hint) and nothing is applied: the draft given
is never changed. A draft is shape-valid after every edit; it compiles when it is published.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pydantic import JsonValue, TypeAdapter, ValidationError

from forms.documents.edit_arguments import GENEROUS, Limits, Selection
from forms.documents.edit_checks import DraftProblems, introduced
from forms.documents.edit_draft import Data, Notes, WorkingCopy, finish
from forms.documents.edit_errors import EditError, sentence
from forms.documents.edit_inspect import inspect, outline, selection_line
from forms.documents.edit_names import new_unknown_names
from forms.documents.edit_parse import parse_arguments
from forms.documents.edit_steps import create_form
from forms.documents.edit_tools import BUILDER_TOOLS_BY_NAME, TOOL_ARGUMENTS
from forms.documents.executor_names import unknown_executors
from forms.documents.fact_keys import KeyProblem, fitting_keys, unknown_key
from forms.documents.model import (
    BLOCK_KINDS,
    Divider,
    FieldDoc,
    FormDocument,
    Heading,
    Paragraph,
)
from forms.documents.text import FACT_KEY_MAX_LENGTH, FACT_KEY_PATTERN

if TYPE_CHECKING:
    from forms.vocabulary import Vocabulary

__all__ = [
    "TOOL_ARGUMENTS",
    "EditError",
    "Edited",
    "Limits",
    "Selection",
    "apply_edit",
    "inspect",
    "outline",
    "selection_line",
]


@dataclass(frozen=True, slots=True)
class Edited:
    """An edit that was applied: the new draft, the sentence for the model, and what the edit
    did on its own that the model should know (``notes``, JSON)."""

    document: FormDocument
    summary: str
    notes: dict[str, JsonValue] = field(default_factory=dict)

    def as_result(self) -> dict[str, JsonValue]:
        """What the model reads: ``{"ok": true, "summary": ..., "notes": ...}``."""
        result: dict[str, JsonValue] = {"ok": True, "summary": self.summary}
        if self.notes:
            result["notes"] = self.notes
        return result


def apply_edit(
    draft: FormDocument | None,
    tool: str,
    arguments: Mapping[str, object],
    *,
    selection: Selection | None = None,
    limits: Limits = GENEROUS,
    vocabulary: Vocabulary | None = None,
    executors: Collection[str] | None = None,
) -> Edited:
    """``draft`` after the builder tool ``tool`` with ``arguments``; ``EditError`` when the
    call is refused (``draft`` is never changed). ``draft`` is None before ``create_form``.
    The fact keys fields hold are checked against ``vocabulary``, the deployment's (None:
    Formwork's): the one its documents compile with; the executor names the draft gives
    against ``executors``, the names the deployment registers (None: not checked)."""
    model = TOOL_ARGUMENTS.get(tool)
    if model is None:
        raise EditError(
            "unknown_tool",
            f"There is no builder tool {tool!r}.",
            "The tools are: " + ", ".join(TOOL_ARGUMENTS) + ".",
        )
    args, coerced = parse_arguments(model, arguments)
    notes = Notes(coerced)
    if tool == "create_form":
        data, summary = create_form(draft, args, notes, limits)
        _refuse_key_names(data, vocabulary)
        document, before = finish(data), None
    else:
        if draft is None:
            raise EditError(
                "no_draft",
                "There is no form yet.",
                "Start it with create_form (a title and the steps), then add fields.",
            )
        working = WorkingCopy(draft, notes)
        edit = BUILDER_TOOLS_BY_NAME[tool].edit
        assert edit is not None  # every editing tool but create_form has its edit
        summary = edit(working, args, selection, limits)
        _refuse_key_names(working.data, vocabulary)
        document, before = working.finish(), draft
    new = introduced(before, document, vocabulary)
    _refuse_new_problems(tool, new, before, document, vocabulary)
    if executors is not None:
        _refuse_unknown_executors(before, document, executors)
    return Edited(document, summary, notes.as_json())


def _refuse_unknown_executors(
    before: FormDocument | None, after: FormDocument, registered: Collection[str]
) -> None:
    """``invalid`` naming each executor the edit names that the deployment does not register
    (one the draft named already does not block an unrelated edit), with the registered names
    it likely meant in ``did_you_mean``."""
    had = {(u.where, u.name) for u in unknown_executors(before, registered)} if before else set()
    new = [u for u in unknown_executors(after, registered) if (u.where, u.name) not in had]
    if not new:
        return
    listed = ", ".join(list(registered)[:30])
    raise EditError(
        "invalid",
        sentence("; ".join(u.message for u in new)),
        (
            f"The executors this deployment registers are: {listed}."
            if listed
            else "This deployment registers no executors: leave it out (null clears it)."
        )
        + " Send one of them, or ask the person which to use; nothing was applied.",
        list(dict.fromkeys(c for u in new for c in u.did_you_mean)),
    )


def _refuse_new_problems(
    tool: str,
    new: DraftProblems,
    before: FormDocument | None,
    document: FormDocument,
    vocabulary: Vocabulary | None,
) -> None:
    if new.settings:
        raise EditError(
            "invalid",
            sentence("That would make the form invalid: " + "; ".join(new.settings)),
            "Fix the values named and send the call again; nothing was applied.",
        )
    if new.keys:
        raise _key_refused(new.keys, _field(document, new.keys[0].field), vocabulary)
    if new.references:
        spec = BUILDER_TOOLS_BY_NAME[tool]
        raise EditError(
            "invalid_rule" if spec.rules else "breaks_rules",
            sentence(
                ("" if spec.rules else "That would break a rule: ") + "; ".join(new.references)
            ),
            spec.broken_rules_hint
            or "Change those rules first (set_conditional_logic); nothing was applied.",
            new_unknown_names(before, document),
        )


_KEY_SYNTAX = re.compile(FACT_KEY_PATTERN)
_FIELD: TypeAdapter[FieldDoc] = TypeAdapter(FieldDoc)


def _refuse_key_names(data: Data, vocabulary: Vocabulary | None) -> None:
    """A field's ``memory`` that is not even a key's syntax (``dob``), refused as the
    vocabulary refuses a key it does not have, with the keys it likely meant: the document's
    pattern would only say it does not match."""
    for step in data["steps"]:
        for item in step.get("items", []):
            key = item.get("memory")
            if item["kind"] in BLOCK_KINDS or not isinstance(key, str):
                continue
            if _KEY_SYNTAX.fullmatch(key) and len(key) <= FACT_KEY_MAX_LENGTH:
                continue
            unknown = unknown_key(str(item["id"]), str(step["id"]), key, vocabulary)
            if unknown is not None:
                try:
                    sent = _FIELD.validate_python({**item, "memory": None})
                except ValidationError:
                    sent = None  # its other problems are named once the key is right
                raise _key_refused([unknown], sent, vocabulary)


def _key_refused(
    found: Sequence[KeyProblem], item: FieldDoc | None, vocabulary: Vocabulary | None
) -> EditError:
    """The refusal of fact keys, naming each, with the keys they likely meant and the keys
    the (first) field could hold."""
    close = list(dict.fromkeys(k for p in found for k in p.did_you_mean))
    message = sentence("That fact key cannot be used: " + "; ".join(p.message for p in found))
    clear = "leave memory out (null clears it)"
    if item is None:
        return EditError("invalid", message, f"Send a fact key that exists, or {clear}.", close)
    fitting = fitting_keys(item, vocabulary)
    which = f'field "{item.id}" ({item.kind})'
    if not fitting:
        hint = f"No fact key of this deployment fits {which}: {clear}."
    else:
        shown = ", ".join(fitting[:12]) + (", ..." if len(fitting) > 12 else "")
        hint = f"Keys {which} can hold: {shown}. Send one as memory, or {clear}."
    return EditError("invalid", message, hint, close)


def _field(document: FormDocument, field_id: str) -> FieldDoc | None:
    """The field of ``document`` with this id (the first, if two have it)."""
    for step in document.steps:
        for item in step.items:
            if not isinstance(item, Heading | Paragraph | Divider) and item.id == field_id:
                return item
    return None
