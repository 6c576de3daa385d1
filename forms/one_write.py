"""The incremental pass's shortcut for the most common write: one field's answer.

``forms.incremental.advance`` re-derives a core after a commit by visiting, in definition
order, every item something changed under (a queue of visits, a pass object holding the
readings it copies). Most writes change one field whose visit moves nothing beyond the
field itself: a first answer that does not complete its step, a corrected answer, a decline
of an optional field, of a field with no predicate of its own whose value no predicate reads
(none read the field, none read every value after it). Then no other item is scheduled: the
field's readings change, its step's count of missing answers may (its completion does not),
and its liveness may flip (a new token, as the pass gives: the field hooks look again). For
such a write ``rewritten`` builds the core ``advance`` would, without the pass: the field's
readings replaced in copies of the fields' readings and live values (and of the missing
counts, when they change), every other reading the core before's own, newest and redo moved
as the pass moves them.

Anything else (a field with a predicate, a step's completion that flips, a value some
predicate reads, several fields) is the pass's: ``rewritten`` says None, and the caller runs
``advance``. ``tests/unit/test_one_write.py`` holds the two to the same cores, and the
from-scratch oracle's property tests run through it.
"""

from __future__ import annotations

from collections.abc import Mapping

from forms.compiled import CompiledField, CompiledForm
from forms.evaluation import FieldEval, blocked_as, reading
from forms.incremental import Core, Visit, _tokens
from forms.instance import FieldChange, FieldHistory
from forms.undo_targets import moved_one

__all__ = ["rewritten"]

_tuple_new = tuple.__new__  # builds a named tuple from its fields in order, in C
_NONE: frozenset[str] = frozenset()
_NO_LOG = (None, -1, 0)  # ``FieldHistory.position`` of a log with no entry


def rewritten(
    core: Core, history: Mapping[str, FieldHistory], changes: Mapping[str, FieldChange]
) -> Core | None:
    """``advance``'s core for a write of one field whose visit schedules no other, or None."""
    if len(changes) != 1:
        return None
    (field_id,) = changes
    field = core.form.fields.get(field_id)
    if field is None or field.when is not None:
        return None  # not a field of this version, or a predicate to run and watch
    # unpacked once: a named tuple's field read costs ~3x an item unpacked (not specialised)
    (
        form,
        token,
        _,
        fields,
        live,
        applies,
        complete,
        missing,
        steps,
        reads,
        readers,
        step_readers,
        reads_all,
        _,
        _,
        newest,
        redo,
    ) = core
    ok, log = applies[field.step], history.get(field_id)
    position = log.position() if log is not None else _NO_LOG
    revision = position[0]
    before = fields.get(field_id)
    if before is None or before.revision is revision:
        return None  # the pass's: nothing to replace
    now_live, typed, status, blocks = reading(field, ok, revision)
    was_live = field_id in live
    if (now_live or was_live) and (  # a predicate read it, or one after it read every value
        readers.get(field_id) or (reads_all and _read_by_all(form, reads_all, field))
    ):
        return None  # what predicates see of it changes, and one reads it: the pass's
    if blocks != blocked_as(field, before.status):  # its step misses one answer more or less
        counted = _missing(missing, applies, complete, field.step, blocks)
        if counted is None:
            return None  # the step's completion flips: the pass's
        missing = counted
    fields = dict(fields)
    fields[field_id] = _tuple_new(FieldEval, (field_id, ok, status, revision))
    live = dict(live)
    if now_live:
        live[field_id] = typed
    elif was_live:
        del live[field_id]
    newest, redo = moved_one(form, history, newest, redo, field, log, position)
    flipped = _NONE if now_live == was_live else frozenset((field_id,))
    parent, token = token, token if flipped is _NONE else next(_tokens)  # hooks agree: kept
    # the core before's other readings stand, as the pass leaves them (by position, in C)
    made = (form, token, parent, fields, live, applies, complete, missing, steps, reads)
    return _tuple_new(Core, (*made, readers, step_readers, reads_all, flipped, _NONE, newest, redo))


def _missing(
    missing: dict[str, int],
    applies: dict[str, bool],
    complete: dict[str, bool],
    step_id: str,
    blocks: bool,
) -> dict[str, int] | None:
    """A core's counts of missing answers (``missing``, its steps' applicability and
    completeness beside them) with one more (``blocks``) or one fewer for ``step_id``, or
    None when that flips the step's completion."""
    missing = dict(missing)
    missing[step_id] = missing.get(step_id, 0) + (1 if blocks else -1)
    if (applies[step_id] and missing[step_id] == 0) != complete.get(step_id):
        return None
    return missing


def _read_by_all(form: CompiledForm, reads_all: frozenset[Visit], field: CompiledField) -> bool:
    """Whether a predicate that read every value (``repr(v)``, a core's ``reads_all``) comes
    after ``field``; the caller looked at ``reads_all`` (and at the field's own readers)
    first, with no call in the common case."""
    item = (form.step_index[field.step], 1, field.index)
    return any(r > item for r in reads_all)
