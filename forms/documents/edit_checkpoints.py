"""The checkpoint tools: set (add or replace by id) and delete a checkpoint.

A checkpoint's rule may read any field; its actions name fields (``set``, placeholders in a
``fail`` message) and steps (``jump``). ``set_checkpoint`` checks its actions against the
draft before anything else (``invalid_rule``, with the closest names in ``did_you_mean`` and,
for a value, what the field takes in the hint), reading a ``set`` value with the compiler's
own ``read_set``, so a value refused at publish time is refused here; then ``apply_edit``
checks the whole draft like after every edit. Its rule's values are stored as their fields'
types read them, and noted (``edit_values``); a ``set`` value is stored as sent (the compiled
checkpoint writes it as the field's type reads it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from forms.documents.edit_arguments import DeleteCheckpoint, Limits, Selection, SetCheckpoint
from forms.documents.edit_checks import PLACEHOLDER, describe_action, describe_rule
from forms.documents.edit_draft import Data, WorkingCopy, not_found
from forms.documents.edit_errors import EditError, sentence
from forms.documents.edit_layout import unique_id
from forms.documents.edit_names import suggest
from forms.documents.edit_values import read_rule
from forms.documents.field_types import FieldIndex, index_document, read_set
from forms.documents.model import (
    Action,
    CheckpointDoc,
    FailAction,
    HandOverAction,
    JumpAction,
    SetAction,
)


def set_checkpoint(
    draft: WorkingCopy, args: SetCheckpoint, selection: Selection | None, limits: Limits
) -> str:
    checkpoints: list[Data] = draft.data.setdefault("checkpoints", [])
    ids = [str(c["id"]) for c in checkpoints]
    checkpoint_id = args.id or unique_id("checkpoint_1", ids)
    index = index_document(draft.original)
    when, read = read_rule(args.when, index.known, "when")
    _check_actions(draft, index, checkpoint_id, args.then)
    draft.notes.coerced.extend(read)
    checkpoint = CheckpointDoc(id=checkpoint_id, title=args.title, when=when, then=args.then)
    data: Data = checkpoint.model_dump(mode="json", by_alias=True, exclude_none=True)
    if checkpoint_id in ids:
        checkpoints[ids.index(checkpoint_id)] = data
        verb = "Replaced"
    else:
        checkpoints.append(data)
        verb = "Added"
    actions = ", ".join(describe_action(a) for a in args.then)
    return f'{verb} checkpoint "{checkpoint_id}": when {describe_rule(when)}, {actions}.'


def delete_checkpoint(
    draft: WorkingCopy, args: DeleteCheckpoint, selection: Selection | None, limits: Limits
) -> str:
    checkpoints: list[Data] = draft.data.setdefault("checkpoints", [])
    ids = [str(c["id"]) for c in checkpoints]
    if args.id not in ids:
        raise not_found("checkpoint", args.id, {i: (i,) for i in ids})
    del checkpoints[ids.index(args.id)]
    return f'Deleted checkpoint "{args.id}".'


def _check_actions(
    draft: WorkingCopy, index: FieldIndex, checkpoint_id: str, actions: Sequence[Action]
) -> None:
    """``invalid_rule`` naming every action that names a field or step the draft does not
    have, or sets a field to a value its type does not hold; nothing when all of them fit."""
    fields = {
        str(i["id"]): (str(i["id"]), str(i.get("label", "")), *i.get("aliases", []))
        for _, i in draft.items()
        if i["id"] in index.known
    }
    steps = {str(s["id"]): (str(s["id"]), str(s["title"])) for s in draft.steps}
    where = f"checkpoint {checkpoint_id!r}"
    problems: list[str] = []
    close: list[str] = []
    hints: list[str] = []

    def unknown(name: str, what: str, candidates: Mapping[str, Sequence[str]]) -> str:
        """Notes the closest names and the hint listing them; the problem's ending."""
        named = suggest(name, candidates)
        close.extend(c for c in named if c not in close)
        hint = f"The {what}s are: {', '.join(list(candidates)[:30]) or 'none yet'}."
        if hint not in hints:
            hints.append(hint)
        return f"; did you mean {' or '.join(repr(c) for c in named)}?" if named else ""

    for action in actions:
        if isinstance(action, SetAction):
            read = read_set(action, index, where)
            if not isinstance(read, str):
                continue
            if action.field in index.types:
                taken = index.types[action.field].answer().type_string
                problems.append(read)
                hints.append(f'"{action.field}" takes {taken}.')
            else:
                problems.append(read + unknown(action.field, "field", fields))
        elif isinstance(action, JumpAction) and action.step not in steps:
            ending = unknown(action.step, "step", steps)
            problems.append(f"{where} jumps to {action.step!r}, which is not a step{ending}")
        elif isinstance(action, FailAction):
            for name in PLACEHOLDER.findall(action.message):
                if name not in index.known:
                    ending = unknown(name, "field", fields)
                    problems.append(f"{where}: the message names {{{name}}}, not a field{ending}")
        elif isinstance(action, HandOverAction):
            for renamed in action.rename:
                if renamed.field not in index.known:
                    ending = unknown(renamed.field, "field", fields)
                    problems.append(
                        f"{where} hands over {renamed.field!r}, which is not a field{ending}"
                    )
    if problems:
        raise EditError(
            "invalid_rule",
            " ".join(sentence(p) for p in problems),
            " ".join(hints) + " Send the checkpoint again with those fixed; nothing was applied.",
            close,
        )
