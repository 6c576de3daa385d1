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
from collections.abc import Collection, Iterable, Mapping
from datetime import datetime
from typing import Any, NamedTuple

from forms.compiled import CompiledField, CompiledForm
from forms.evaluation import FieldEval, StepSummary, blocked_as, call_predicate, reading
from forms.instance import FieldHistory
from forms.marked import Marked
from forms.state import READS_ALL, FormState, Values
from forms.undo_targets import moved, newest_answer, redo_targets

Visit = tuple[int, int, int]
"""A visit, ordered as definition order runs: ``(step, 0, 0)`` a step's predicate, ``(step, 1,
field)`` a field, ``(step, 2, 0)`` the step's completion (positions, not ids)."""

Reads = tuple[frozenset[str], frozenset[str]]  # what a predicate read: fields, then steps

_EMPTY: frozenset[Visit] = frozenset()
_NONE: frozenset[str] = frozenset()
_NO_READS: Reads = (frozenset(), frozenset())
_tokens = itertools.count(1)
_tuple_new = tuple.__new__  # builds a named tuple from its fields in order, in C


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


def advance(core: Core, history: Mapping[str, FieldHistory], changed: Collection[str]) -> Core:
    """The core over ``history``, which holds the logs ``core`` describes except those of
    ``changed`` (distinct field ids: a commit's changes): only what can depend on them is
    visited again."""
    return _Pass(core.form, history, core).incremental(changed)


class _Pass:
    """One derivation: from nothing (every item visited), or from a core (items scheduled)."""

    __slots__ = (
        "applies",
        "base",
        "complete",
        "completion_flipped",
        "field_ids",
        "field_readers",
        "fields",
        "flipped",
        "form",
        "history",
        "live",
        "missing",
        "own_reads",
        "own_steps",
        "queue",
        "queued",
        "reads",
        "reads_all",
        "seen",
        "step_readers",
        "steps",
        "touched_steps",
    )

    def __init__(
        self, form: CompiledForm, history: Mapping[str, FieldHistory], base: Core | None
    ) -> None:
        self.form = form
        self.history = history
        self.base = base
        self.steps = form.step_order
        self.field_ids = form.field_order
        self.queue: list[Visit] = []
        self.queued: set[Visit] = set()
        self.flipped: set[str] = set()
        self.completion_flipped: set[str] = set()
        self.touched_steps: set[str] = set()
        # what predicates see, made when the first one runs (a write nothing reads runs none)
        self.seen: tuple[Values, FormState] | None = None
        if base is None:
            self.fields: dict[str, FieldEval] = {}
            self.live: dict[str, Any] = {}
            self.applies: dict[str, bool] = {}
            self.complete: dict[str, bool] = {}
            self.missing: dict[str, int] = {}
            self.reads: dict[Visit, Reads] = {}
            self.field_readers: dict[str, frozenset[Visit]] = {}
            self.step_readers: dict[str, frozenset[Visit]] = {}
            self.reads_all: frozenset[Visit] = frozenset()
            self.own_steps = self.own_reads = True
            return
        # a write changes a field's readings (copied now); the steps' readings and what
        # predicates read are the core before's, copied on the first change (``_own_steps``,
        # ``_note_reads``): most writes change neither
        self.fields = dict(base.fields)
        self.live = dict(base.live)
        self.applies = base.step_applies
        self.complete = base.step_complete
        self.missing = base.missing
        self.reads = base.reads
        self.field_readers = base.field_readers
        self.step_readers = base.step_readers
        self.reads_all = base.reads_all
        self.own_steps = self.own_reads = False

    def _own_steps(self) -> None:
        """Copy the steps' readings before the first change (the core before keeps its own)."""
        self.applies = dict(self.applies)
        self.complete = dict(self.complete)
        self.missing = dict(self.missing)
        self.own_steps = True
        if self.seen is not None:  # what predicates see follows the copies
            state = self.seen[1]
            state._applies, state._complete = self.applies, self.complete

    # ---------------------------------------------------------------- the two passes

    def scratch(self) -> Core:
        for si, step_id in enumerate(self.steps):
            self._step(si)
            for field_id in self.form.steps[step_id].fields:
                self._field(si, self.form.fields[field_id])
            self._completion(si)
        newest = newest_answer(self.form, self.history, self.form.fields)
        summary = StepSummary.of(self.steps, self.applies, self.complete)
        return self._core(summary, newest, redo_targets(self.form, self.history))

    def incremental(self, changed: Collection[str]) -> Core:
        base = self.base
        assert base is not None
        written = [*filter(self.form.fields.__contains__, changed)]
        if len(written) == 1:  # visited first whatever it schedules: no queue needed for it
            field = self.form.fields[written[0]]
            self._field(self.form.step_index[field.step], field)
        else:
            for field_id in written:
                field = self.form.fields[field_id]
                self._schedule((self.form.step_index[field.step], 1, field.index))
        while self.queue:
            si, kind, position = heapq.heappop(self.queue)
            if kind == 0:
                self._step(si)
            elif kind == 1:
                self._field(si, self.form.fields[self.field_ids[position]])
            else:
                self._completion(si)
        newest, redo = moved(self.form, self.history, base.newest, base.redo, written)
        steps, touched = base.steps, self.touched_steps
        if touched:
            steps = steps.moved(touched, self.form.step_index, self.applies, self.complete)
        return self._core(steps, newest, redo)

    def _core(
        self,
        steps: StepSummary,
        newest: tuple[datetime, int, str] | None,
        redo: dict[str, tuple[datetime, int]],
    ) -> Core:
        base, flipped, completion_flipped = self.base, self.flipped, self.completion_flipped
        same = base is not None and not flipped and not completion_flipped
        return _tuple_new(  # by position, without the named tuple's own (Python) __new__
            Core,
            (
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
            ),
        )

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
            reader = self.form.when_names[1][step.id]
            applies, reads = self._watched(step.when, step.when_arity, step.first_field, si, reader)
            self._note_reads(item, *reads)
        if self.base is not None and self.applies.get(step.id) == applies:
            return
        if not self.own_steps:
            self._own_steps()
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
        values._limit(horizon, reader, field_reads)
        state._limit(si, step_reads)
        try:
            outcome = call_predicate(predicate, arity, values, state, reader)
        finally:
            values._unlimit()
            state._limit(None, None)
        return outcome, (frozenset(field_reads), frozenset(step_reads))

    def _field(self, si: int, field: CompiledField) -> None:
        field_id = field.id
        ok = self.applies[field.step]
        if field.when is not None:
            reads = _NO_READS
            if ok:
                reader = self.form.when_names[0][field_id]
                ok, reads = self._watched(field.when, field.when_arity, field.index, si, reader)
            self._note_reads((si, 1, field.index), *reads)
        history = self.history.get(field_id)
        revision = history.in_force() if history is not None else None
        before = self.fields.get(field_id)
        if before is not None and before.applies == ok and before.revision is revision:
            return  # the same answer on a field that applies as before: every reading stays
        live = self.live
        was_live = field_id in live
        now_live, typed, status, blocks = reading(field, ok, revision)
        if now_live:  # a new revision, or one that did not apply before
            live[field_id] = typed
        elif was_live:
            del live[field_id]
        self.fields[field_id] = _tuple_new(FieldEval, (field_id, ok, status, revision))
        was_blocking = before is not None and blocked_as(field, before.status)
        if blocks != was_blocking:
            if not self.own_steps:
                self._own_steps()
            self.missing[field.step] = self.missing.get(field.step, 0) + (1 if blocks else -1)
            if self.base is not None:
                self._schedule((si, 2, 0))
        if self.base is None:
            return
        if was_live != now_live:
            self.flipped.add(field_id)
        elif not now_live or before is None or before.revision is revision:
            return  # what predicates see of it is unchanged
        item = (si, 1, field.index)
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
        if not self.own_steps:
            self._own_steps()
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
