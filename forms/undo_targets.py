"""What undo and redo would apply to, read from the field logs: the undo/redo line of the views.

Undo applies to the field whose answer in force is the newest (by time, then the field's
position in the form); a field has a redo when an entry was appended on top of the one in
force (``FieldHistory.redo_target``). ``forms.incremental`` keeps both in its ``Core``
(``newest``, ``redo``) and asks these again only for the fields a commit wrote.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime

from forms.compiled import CompiledField, CompiledForm
from forms.instance import FieldHistory

__all__ = ["newest_answer", "redo_at"]


def newest_answer(
    form: CompiledForm, history: Mapping[str, FieldHistory], field_ids: Iterable[str]
) -> tuple[datetime, int, str] | None:
    """Among ``field_ids``, the field whose answer in force is the newest (by time, then
    position): what undo applies to."""
    newest: tuple[datetime, int, str] | None = None
    for field_id in field_ids:
        log = history.get(field_id)
        current = log.in_force() if log is not None else None
        if current is None:
            continue
        key = (current.at, form.fields[field_id].index, field_id)
        if newest is None or key[:2] > newest[:2]:
            newest = key
    return newest


def redo_at(log: FieldHistory | None, field: CompiledField) -> tuple[datetime, int] | None:
    """When the entry redo would bring back was written (None: no redo)."""
    if log is None:
        return None
    target = log.redo_target()
    return None if target is None else (log.entry(target).at, field.index)
