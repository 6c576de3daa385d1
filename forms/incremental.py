"""Incremental evaluation: what a write changes, re-derived from what it touches.

``forms.engine.evaluate`` walks the whole form; this module derives the same readings (each
field's applicability, status and live value, each step's applicability and completeness) and
keeps them as a ``Core``, then, for a commit, re-derives only what can depend on the fields
it changed.

**What a predicate depends on** is learnt by watching it run: every field it reads through the
values (``Values`` notes each read) and every step it asks about (``FormState`` notes each
question) while it decides. A predicate is a deterministic function of what it reads there (the
engine already relies on this: evaluation is repeatable), so as long as none of those readings
changes, running it again would read the same things in the same order and return the same
answer. One that reads every value at once (``repr(v)``) depends on every field before it.

**The pass** visits, in definition order, only the items something changed under: a step's
predicate (its applicability), a field (its predicate, its status, its live value) and a step's
completion. A changed field is visited; a visit whose outcome changed schedules every item that
read it (a live value: the predicates that read the field; a step's applicability: its fields,
its completion and the predicates that asked about it; a completion: the predicates that asked
about the step). Predicates read only what is declared before them (``Values`` and
``FormState`` enforce it while they run), so whatever an item reads is final before the item
is visited, and one ordered pass reaches the same fixed point as a walk of the whole form.
The readings of every item not visited are unchanged, and are shared with the core before.

A ``Core`` is attached to the field logs it describes (``forms.instance.Marked``), and carried
with them through snapshots and commits; any change to the logs outside a commit drops it.
"""

from __future__ import annotations

import heapq
import itertools
from bisect import bisect_left
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any, NamedTuple

from forms.compiled import CompiledField, CompiledForm
from forms.evaluation import (
    FieldEval,
    StepSummary,
    call_predicate,
    reading,
)
from forms.instance import FieldHistory
from forms.marked import Marked
from forms.state import READS_ALL, FormState, Values
from forms.undo_targets import newest_answer, redo_at

Visit = tuple[int, int, int]
"""A visit, ordered as definition order runs: ``(step, 0, 0)`` a step's predicate, ``(step, 1,
field)`` a field, ``(step, 2, 0)`` the step's completion (positions, not ids)."""

Reads = tuple[frozenset[str], frozenset[str]]  # what a predicate read: fields, then steps

_EMPTY: frozenset[Visit] = frozenset()
_NONE: frozenset[str] = frozenset()
_NO_READS: Reads = (frozenset(), frozenset())
_tokens = itertools.count(1)


class Core(NamedTuple):
    """The readings of one form over one set of field logs, and what each predicate read.

    ``token`` names what field and step hooks read of it, its fields' liveness and its steps'
    completeness: a core derived with neither changed keeps its parent's token, so cores with
    one token agree on every such hook. ``parent`` is the token of the core it was derived
    from (None: from nothing), ``flipped`` / ``completion_flipped`` the fields whose liveness
    and the steps whose completeness differ from that one's. ``newest`` and ``redo`` are what
    the undo/redo line of the views needs: the field whose answer in force is the newest, and
    the fields with a redo available, each with the time of the entry in question. A named
    tuple: one is built on every commit, at a fraction of a frozen dataclass's cost.
    """

    form: CompiledForm
    token: int
    parent: int | None
    fields: dict[str, FieldEval]
    live: dict[str, Any]
    step_applies: dict[str, bool]
    step_complete: dict[str, bool]
    missing: dict[str, int]
    steps: StepSummary
    reads: dict[Visit, Reads]
    field_readers: dict[str, frozenset[Visit]]
    step_readers: dict[str, frozenset[Visit]]
    reads_all: frozenset[Visit]
    flipped: frozenset[str]
    completion_flipped: frozenset[str]
    newest: tuple[datetime, int, str] | None
    redo: dict[str, tuple[datetime, int]]

    def open_step(self) -> str | None:
        """The first step that applies and is not complete."""
        unfinished = self.steps.unfinished
        return self.form.step_order[unfinished[0]] if unfinished else None


def core_for(form: CompiledForm, history: Mapping[str, FieldHistory]) -> Core:
    """The core of ``form`` over ``history``: the one the logs carry, or derived now (and
    left on them when they can carry one)."""
    known = getattr(history, "derived", None)
    if isinstance(known, Core) and known.form is form:
        return known
    core = _Pass(form, history, None).scratch()
    if isinstance(history, Marked):
        history.derived = core
    return core


def advance(core: Core, history: Mapping[str, FieldHistory], changed: Iterable[str]) -> Core:
    """The core over ``history``, which holds the logs ``core`` describes except those of
    ``changed``: only what can depend on them is visited again."""
    return _Pass(core.form, history, core).incremental(changed)


class _Pass:
    """One derivation: from nothing (every item visited), or from a core (items scheduled)."""

    def __init__(
        self, form: CompiledForm, history: Mapping[str, FieldHistory], base: Core | None
    ) -> None:
        self.form = form
        self.history = history
        self.base = base
        self.steps = form.step_order
        self.field_ids = form.field_order
        self.fields: dict[str, FieldEval] = {} if base is None else dict(base.fields)
        self.live: dict[str, Any] = {} if base is None else dict(base.live)
        self.applies: dict[str, bool] = {} if base is None else dict(base.step_applies)
        self.complete: dict[str, bool] = {} if base is None else dict(base.step_complete)
        self.missing: dict[str, int] = {} if base is None else dict(base.missing)
        # what predicates read: the core before's, copied on the first change (``_note_reads``)
        self.reads: dict[Visit, Reads] = {} if base is None else base.reads
        self.field_readers: dict[str, frozenset[Visit]] = {} if base is None else base.field_readers
        self.step_readers: dict[str, frozenset[Visit]] = {} if base is None else base.step_readers
        self.reads_all: frozenset[Visit] = frozenset() if base is None else base.reads_all
        self.own_reads = base is None
        # what predicates see, made when the first one runs (a write nothing reads runs none)
        self.seen: tuple[Values, FormState] | None = None
        self.queue: list[Visit] = []
        self.queued: set[Visit] = set()
        self.flipped: set[str] = set()
        self.completion_flipped: set[str] = set()
        self.touched_steps: set[str] = set()

    # ---------------------------------------------------------------- the two passes

    def scratch(self) -> Core:
        for si, step_id in enumerate(self.steps):
            self._step(si)
            for field_id in self.form.steps[step_id].fields:
                self._field(si, self.form.fields[field_id])
            self._completion(si)
        newest = newest_answer(self.form, self.history, self.form.fields)
        redo = {}
        for field_id, field in self.form.fields.items():
            target = redo_at(self.history.get(field_id), field)
            if target is not None:
                redo[field_id] = target
        summary = StepSummary.of(self.steps, self.applies, self.complete)
        return self._core(summary, newest, redo)

    def incremental(self, changed: Iterable[str]) -> Core:
        base = self.base
        assert base is not None
        fields = self.form.fields
        written = [f for f in dict.fromkeys(changed) if f in fields]
        if len(written) == 1:  # visited first whatever it schedules: no queue needed for it
            field = fields[written[0]]
            self._field(self.form.step_index[field.step], field)
        else:
            for field_id in written:
                field = fields[field_id]
                self._schedule((self.form.step_index[field.step], 1, field.index))
        while self.queue:
            si, kind, position = heapq.heappop(self.queue)
            if kind == 0:
                self._step(si)
            elif kind == 1:
                self._field(si, self.form.fields[self.field_ids[position]])
            else:
                self._completion(si)
        newest, redo = self._moves(base, written)
        return self._core(self._summary(base.steps), newest, redo)

    def _summary(self, base: StepSummary) -> StepSummary:
        """``base`` with the steps this pass touched (whose applicability or completeness
        changed) put in or taken out: a bisection each, never a walk over the steps."""
        if not self.touched_steps:
            return base
        applicable, unfinished = list(base.applicable), list(base.unfinished)
        index = self.form.step_index
        for step_id in self.touched_steps:
            si = index[step_id]
            applies = self.applies[step_id]
            _place(applicable, si, applies)
            _place(unfinished, si, applies and not self.complete[step_id])
        return StepSummary(tuple(applicable), tuple(unfinished))

    def _core(
        self,
        steps: StepSummary,
        newest: tuple[datetime, int, str] | None,
        redo: dict[str, tuple[datetime, int]],
    ) -> Core:
        base, flipped, completion_flipped = self.base, self.flipped, self.completion_flipped
        same = base is not None and not flipped and not completion_flipped
        return Core(  # by position: a named tuple built by keyword costs several times as much
            self.form,
            base.token if same and base is not None else next(_tokens),
            None if base is None else base.token,
            self.fields,
            self.live,
            self.applies,
            self.complete,
            self.missing,
            steps,
            self.reads,
            self.field_readers,
            self.step_readers,
            self.reads_all,
            frozenset(flipped) if flipped else _NONE,
            frozenset(completion_flipped) if completion_flipped else _NONE,
            newest,
            redo,
        )

    def _moves(
        self, base: Core, written: list[str]
    ) -> tuple[tuple[datetime, int, str] | None, dict[str, tuple[datetime, int]]]:
        """``newest`` and ``redo`` after the writes: only the written logs moved."""
        form, history = self.form, self.history
        redo = base.redo
        for field_id in written:
            target = redo_at(history.get(field_id), form.fields[field_id])
            if redo.get(field_id) == target:
                continue  # the core before's (shared) stands
            redo = dict(redo) if redo is base.redo else redo
            if target is None:
                del redo[field_id]
            else:
                redo[field_id] = target
        newest = base.newest
        fresh = newest_answer(form, history, written)
        if newest is None or (fresh is not None and fresh[:2] > newest[:2]):
            return fresh, redo
        if newest[2] in written and (fresh is None or fresh[:2] < newest[:2]):
            # the newest answer moved back in time: any field may hold the newest one now
            return newest_answer(form, history, form.fields), redo
        return newest, redo

    # ---------------------------------------------------------------- visits

    def _schedule(self, item: Visit) -> None:
        if item not in self.queued:
            self.queued.add(item)
            heapq.heappush(self.queue, item)

    def _readers(self, readers: frozenset[Visit], after: Visit) -> None:
        for item in readers:
            assert item > after, "a predicate read something declared after it"
            self._schedule(item)

    def _step(self, si: int) -> None:
        step = self.form.steps[self.steps[si]]
        item = (si, 0, 0)
        if step.when is None:
            applies = True
        else:
            reader = f"step {step.id!r} when"
            applies, reads = self._watched(step.when, step.when_arity, step.first_field, si, reader)
            self._note_reads(item, *reads)
        if self.base is not None and self.applies.get(step.id) == applies:
            return
        self.applies[step.id] = applies
        self.touched_steps.add(step.id)
        self.missing.setdefault(step.id, 0)
        if self.base is not None:
            for field_id in step.fields:
                self._schedule((si, 1, self.form.fields[field_id].index))
            self._schedule((si, 2, 0))
            self._readers(self.step_readers.get(step.id, _EMPTY), item)

    def _watched(
        self, predicate: Any, arity: int, horizon: int, si: int, reader: str
    ) -> tuple[bool, Reads]:
        """Run a step or field predicate (of step position ``si``, seeing the fields before
        ``horizon``), and what it read: the fields, then the steps it asked about."""
        field_reads: set[str] = set()
        step_reads: set[str] = set()
        if self.seen is None:
            form = self.form
            state = FormState(form.step_index, self.applies, self.complete, None, False, None)
            self.seen = (Values(self.live, form.field_index), state)
        values, state = self.seen
        values._limit(horizon, reader)
        values._record(field_reads)
        state._limit(si, step_reads)
        try:
            outcome = call_predicate(predicate, arity, values, state, reader)
        finally:
            values._record(None)
            state._limit(None, None)
        return outcome, (frozenset(field_reads), frozenset(step_reads))

    def _field(self, si: int, field: CompiledField) -> None:
        field_id = field.id
        item = (si, 1, field.index)
        ok = self.applies[field.step]
        if field.when is not None:
            reads = _NO_READS
            if ok:
                reader = f"field {field_id!r} when"
                ok, reads = self._watched(field.when, field.when_arity, field.index, si, reader)
            self._note_reads(item, *reads)
        history = self.history.get(field_id)
        revision = history.in_force() if history is not None else None
        before = self.fields.get(field_id)
        if before is not None and before.applies == ok and before.revision is revision:
            return  # the same answer on a field that applies as before: every reading stays
        live = self.live
        was_live = field_id in live
        now_live, typed, status, blocks = reading(field, ok, revision)
        if now_live:
            if not (was_live and before is not None and before.revision is revision):
                live[field_id] = typed
        elif was_live:
            del live[field_id]
        self.fields[field_id] = FieldEval(field_id, ok, status, revision)
        was_blocking = before is not None and _blocked(field, before.status)
        if blocks != was_blocking:
            self.missing[field.step] = self.missing.get(field.step, 0) + (1 if blocks else -1)
            if self.base is not None:
                self._schedule((si, 2, 0))
        if self.base is None:
            return
        if was_live != now_live:
            self.flipped.add(field_id)
        elif not now_live or before is None or before.revision is revision:
            return  # what predicates see of it is unchanged
        readers = self.field_readers.get(field_id)
        if readers:
            self._readers(readers, item)
        if self.reads_all:
            self._readers(frozenset(r for r in self.reads_all if r > item), item)

    def _completion(self, si: int) -> None:
        step_id = self.steps[si]
        complete = self.applies[step_id] and self.missing.get(step_id, 0) == 0
        if self.base is not None and self.complete.get(step_id) == complete:
            return
        self.complete[step_id] = complete
        self.touched_steps.add(step_id)
        if self.base is not None:
            self.completion_flipped.add(step_id)
            self._readers(self.step_readers.get(step_id, _EMPTY), (si, 2, 0))

    def _note_reads(
        self, item: Visit, field_reads: Iterable[str], step_reads: Iterable[str]
    ) -> None:
        """Record what ``item``'s predicate read, keeping the reverse index in step."""
        new = (frozenset(field_reads), frozenset(step_reads))
        old = self.reads.get(item, _NO_READS)
        if old == new:
            return
        if not self.own_reads:  # copy on first write: the core before keeps its own
            self.reads = dict(self.reads)
            self.field_readers = dict(self.field_readers)
            self.step_readers = dict(self.step_readers)
            self.own_reads = True
        self.reads[item] = new
        for readers, was, now in (
            (self.field_readers, old[0], new[0]),
            (self.step_readers, old[1], new[1]),
        ):
            for name in was - now:
                readers[name] = readers[name] - {item}
            for name in now - was:
                readers[name] = readers.get(name, _EMPTY) | {item}
        if (READS_ALL in new[0]) != (READS_ALL in old[0]):
            self.reads_all = (
                self.reads_all | {item} if READS_ALL in new[0] else self.reads_all - {item}
            )


def _blocked(field: CompiledField, status: str) -> bool:
    """``blocking`` read from the status a core gave the field (never ``ask_again``, which
    only a revisit's copy holds): no second look at the answer."""
    return status in ("invalid", "pending") or (status == "declined" and not field.optional)


def _place(positions: list[int], position: int, member: bool) -> None:
    """Put ``position`` in the ascending list ``positions`` or take it out, as ``member`` says."""
    at = bisect_left(positions, position)
    present = at < len(positions) and positions[at] == position
    if member and not present:
        positions.insert(at, position)
    elif present and not member:
        del positions[at]
