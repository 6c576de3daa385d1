"""The checkpoint tools: set (add or replace by id) and delete a checkpoint.

A checkpoint's rule may read any field; its actions name fields (``set``, placeholders in a
``fail`` message) and steps (``jump``), all checked against the draft by ``apply_edit`` like
every other reference.
"""

from __future__ import annotations

from forms.documents.edit_arguments import DeleteCheckpoint, Limits, Selection, SetCheckpoint
from forms.documents.edit_checks import describe_rule
from forms.documents.edit_draft import Data, Draft, not_found
from forms.documents.edit_layout import unique_id


def set_checkpoint(
    draft: Draft, args: SetCheckpoint, selection: Selection | None, limits: Limits
) -> str:
    checkpoints: list[Data] = draft.data.setdefault("checkpoints", [])
    ids = [str(c["id"]) for c in checkpoints]
    checkpoint_id = args.id or unique_id("checkpoint_1", ids)
    data: Data = args.model_dump(mode="json", by_alias=True, exclude_none=True)
    data["id"] = checkpoint_id
    actions = ", ".join(str(a["action"]) for a in data["then"])
    if checkpoint_id in ids:
        checkpoints[ids.index(checkpoint_id)] = data
        verb = "Replaced"
    else:
        checkpoints.append(data)
        verb = "Added"
    return f'{verb} checkpoint "{checkpoint_id}": when {describe_rule(args.when)}, {actions}.'


def delete_checkpoint(
    draft: Draft, args: DeleteCheckpoint, selection: Selection | None, limits: Limits
) -> str:
    checkpoints: list[Data] = draft.data.setdefault("checkpoints", [])
    ids = [str(c["id"]) for c in checkpoints]
    if args.id not in ids:
        raise not_found("checkpoint", args.id, {i: (i,) for i in ids})
    del checkpoints[ids.index(args.id)]
    return f'Deleted checkpoint "{args.id}".'
