"""What undo and redo would apply to, read from the field logs: the undo/redo line of the views.

Undo applies to the field whose answer in force is the newest (by time, then the field's
position in the form); a field has a redo when an entry was appended on top of the one in
force (``FieldHistory.redo_target``). ``forms.incremental`` keeps both in its ``Core``
(``newest``, ``redo``) and asks these again only for the fields a commit wrote.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from datetime import datetime

from forms.compiled import CompiledField, CompiledForm
from forms.instance import FieldHistory, Revision

__all__ = ["moved", "moved_one", "newest_answer", "redo_at", "redo_targets"]

_At = tuple[datetime, int, str] | None  # a field's answer in force: when, its position, its id


def newest_answer(
    form: CompiledForm, history: Mapping[str, FieldHistory], field_ids: Iterable[str]
) -> _At:
    """Among ``field_ids``, the field whose answer in force is the newest (by time, then
    position): what undo applies to."""
    newest: _At = None
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


def redo_targets(
    form: CompiledForm, history: Mapping[str, FieldHistory]
) -> dict[str, tuple[datetime, int]]:
    """``redo_at`` of every field that has a redo."""
    redo = {}
    for field_id, field in form.fields.items():
        target = redo_at(history.get(field_id), field)
        if target is not None:
            redo[field_id] = target
    return redo


def moved(
    form: CompiledForm,
    history: Mapping[str, FieldHistory],
    newest: _At,
    redo: dict[str, tuple[datetime, int]],
    written: list[str],
) -> tuple[_At, dict[str, tuple[datetime, int]]]:
    """``newest`` and ``redo`` (what a core says of the logs before) after writes to the logs
    of ``written``: only those logs moved, so only they are asked again. ``redo`` itself
    while no written field's redo changed (it is shared with the core before: never changed
    in place)."""
    shared, fresh = redo, None
    fields = form.fields
    for field_id in written:  # each written log once: its redo, and its answer in force
        log, field = history.get(field_id), fields[field_id]
        if log is None:
            target = current = None
        else:
            # the usual write appends its entry and leaves it in force at the log's end, where
            # nothing can be above it to redo: ``redo_at`` is asked only after any other move
            current, cursor, count = log.position()
            target = None if cursor == count - 1 else redo_at(log, field)
        if redo.get(field_id) != target:  # else the core before's stands
            redo = _redo_set(redo, shared, field_id, target)
        if current is not None:
            at = current.at  # read once: a model's attribute costs several dict reads
            if fresh is None or (at, field.index) > fresh[:2]:
                fresh = (at, field.index, field_id)  # as ``newest_answer`` picks
    return _newest(form, history, newest, fresh, written), redo


def moved_one(
    form: CompiledForm,
    history: Mapping[str, FieldHistory],
    newest: _At,
    redo: dict[str, tuple[datetime, int]],
    field: CompiledField,
    log: FieldHistory | None,
    position: tuple[Revision | None, int, int],
) -> tuple[_At, dict[str, tuple[datetime, int]]]:
    """``moved`` after a write of ``field`` alone, whose log (None: it has none) and its
    ``position()`` the caller read already (``forms.one_write``, on most writes): the same
    answer, without the loop and a second look-up of the log."""
    current, cursor, count = position
    field_id = field.id
    # as in ``moved``: no redo above an entry in force at the log's end (the usual write)
    target = None if cursor == count - 1 else redo_at(log, field)
    if redo.get(field_id) != target:  # else the core before's stands
        redo = _redo_set(redo, redo, field_id, target)
    fresh = None if current is None else (current.at, field.index, field_id)
    return _newest(form, history, newest, fresh, (field_id,)), redo


def _redo_set(
    redo: dict[str, tuple[datetime, int]],
    shared: dict[str, tuple[datetime, int]],
    field_id: str,
    target: tuple[datetime, int] | None,
) -> dict[str, tuple[datetime, int]]:
    """``redo`` with ``field_id``'s redo set to ``target`` (None: it has none), copied first
    while it is ``shared`` (the core before's: never changed in place)."""
    redo = dict(redo) if redo is shared else redo
    if target is None:
        del redo[field_id]
    else:
        redo[field_id] = target
    return redo


def _newest(
    form: CompiledForm,
    history: Mapping[str, FieldHistory],
    newest: _At,
    fresh: _At,
    written: Collection[str],
) -> _At:
    """The newest answer after writes to ``written``, ``newest`` before them and ``fresh``
    the newest of the written fields' answers in force now."""
    if newest is None or (fresh is not None and _later(fresh, newest)):
        return fresh
    if newest[2] in written and (fresh is None or _later(newest, fresh)):
        # the newest answer moved back in time: any field may hold the newest one now
        return newest_answer(form, history, form.fields)
    return newest


def _later(one: tuple[datetime, int, str], other: tuple[datetime, int, str]) -> bool:
    """``one[:2] > other[:2]`` (by time, then position), without the two slices."""
    at, other_at = one[0], other[0]
    return at > other_at if at != other_at else one[1] > other[1]
