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

from forms.compiled import CompiledField
from forms.evaluation import FieldEval, blocked_as, reading
from forms.incremental import Core, _tokens
from forms.instance import FieldChange, FieldHistory
from forms.undo_targets import moved

__all__ = ["rewritten"]

_tuple_new = tuple.__new__  # builds a named tuple from its fields in order, in C
_NONE: frozenset[str] = frozenset()


def rewritten(
    core: Core, history: Mapping[str, FieldHistory], changes: Mapping[str, FieldChange]
) -> Core | None:
    """``advance``'s core for a write of one field whose visit schedules no other, or None."""
    if len(changes) != 1:
        return None
    (field_id,) = changes
    form = core.form
    field = form.fields.get(field_id)
    if field is None or field.when is not None:
        return None  # not a field of this version, or a predicate to run and watch
    ok, log = core.step_applies[field.step], history.get(field_id)
    revision = log.in_force() if log is not None else None
    before = core.fields.get(field_id)
    if before is None or before.revision is revision:
        return None  # the pass's: nothing to replace
    now_live, typed, status, blocks = reading(field, ok, revision)
    was_live = field_id in core.live
    if (now_live or was_live) and (  # a predicate read it, or one after it read every value
        core.field_readers.get(field_id) or (core.reads_all and _read_by_all(core, field))
    ):
        return None  # what predicates see of it changes, and one reads it: the pass's
    missing: dict[str, int] | None = core.missing
    if blocks != blocked_as(field, before.status):  # its step misses one answer more or less
        missing = _missing(core, field.step, blocks)
    if missing is None:
        return None  # the step's completion flips: the pass's
    fields = dict(core.fields)
    fields[field_id] = _tuple_new(FieldEval, (field_id, ok, status, revision))
    live = dict(core.live)
    if now_live:
        live[field_id] = typed
    elif was_live:
        del live[field_id]
    newest, redo = moved(form, history, core.newest, core.redo, [field_id])
    flipped = _NONE if now_live == was_live else frozenset((field_id,))
    token = core.token if flipped is _NONE else next(_tokens)  # the hooks agree: kept
    return _tuple_new(  # the core before's other readings stand, as the pass leaves them
        Core,
        (
            form,
            token,
            core.token,
            fields,
            live,
            core.step_applies,
            core.step_complete,
            missing,
            core.steps,
            core.reads,
            core.field_readers,
            core.step_readers,
            core.reads_all,
            flipped,
            _NONE,
            newest,
            redo,
        ),
    )


def _missing(core: Core, step_id: str, blocks: bool) -> dict[str, int] | None:
    """The core's counts of missing answers with one more (``blocks``) or one fewer for
    ``step_id``, or None when that flips the step's completion."""
    missing = dict(core.missing)
    missing[step_id] = missing.get(step_id, 0) + (1 if blocks else -1)
    if (core.step_applies[step_id] and missing[step_id] == 0) != core.step_complete.get(step_id):
        return None
    return missing


def _read_by_all(core: Core, field: CompiledField) -> bool:
    """Whether a predicate that read every value (``repr(v)``) comes after ``field``; the
    caller looked at ``core.reads_all`` (and at the field's own readers) first, with no call
    in the common case."""
    item = (core.form.step_index[field.step], 1, field.index)
    return any(r > item for r in core.reads_all)
