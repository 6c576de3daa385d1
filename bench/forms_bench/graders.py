"""Checks: predicates over what a cell left behind (stored instances and messages to the user).

A check is evaluated after the whole conversation, against the snapshot taken after a given
user turn (``at``) or the final one. *State* checks look only at stored instances (was the
information collected, right, and kept); *conduct* checks look at how the agent got there (one
write for a front-loaded turn, a rejection relayed to the user). Expected values are compared
as the field's type reads them, so ``640`` and ``"640.00"`` are the same total.

Checks that read messages compute what must (and must not) be said from the form itself at that
point, never from a hand-written list: a "what else" answer must name every pending field and
none marked not_applicable.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

from bench.forms_bench.harness import Transcript, registry
from forms import CompiledForm, Evaluation, FormInstance, evaluate
from forms.schema import Accepted

Kind = Literal["state", "conduct"]


@dataclass(frozen=True, slots=True)
class Check:
    id: str
    claim: str
    test: Callable[[Transcript], bool]
    kind: Kind = "state"

    def run(self, transcript: Transcript) -> bool:
        try:
            return bool(self.test(transcript))
        except LookupError:
            return False


def _find(t: Transcript, form_id: str, at: int | None) -> FormInstance:
    found = [i for i in t.instances(at) if i.form_id == form_id]
    if not found:
        raise LookupError(f"no {form_id} in the conversation")
    return found[-1]


def _evaluate(t: Transcript, form_id: str, at: int | None) -> tuple[CompiledForm, Evaluation]:
    instance = _find(t, form_id, at)
    form, _ = registry().for_instance(instance)
    return form, evaluate(form, instance)


def _typed(form: CompiledForm, field_id: str, value: object) -> Any:
    outcome = form.fields[field_id].type.validate(value)
    return outcome.typed if isinstance(outcome, Accepted) else ("invalid", value)


def _where(at: int | None) -> str:
    return "at the end" if at is None else f"after turn {at}"


def answer(form_id: str, field_id: str, expected: object, at: int | None = None) -> Check:
    """The field has a live answer equal to ``expected`` (as its type reads them)."""

    def test(t: Transcript) -> bool:
        form, ev = _evaluate(t, form_id, at)
        fe = ev.fields[field_id]
        if fe.status != "answered" or fe.revision is None:
            return False
        return bool(_typed(form, field_id, fe.revision.value) == _typed(form, field_id, expected))

    return Check(f"{field_id}={expected}", f"{field_id} is {expected!r} {_where(at)}", test)


def field_status(form_id: str, field_id: str, status: str, at: int | None = None) -> Check:
    def test(t: Transcript) -> bool:
        _, ev = _evaluate(t, form_id, at)
        return ev.fields[field_id].status == status

    return Check(f"{field_id}:{status}@{at}", f"{field_id} is {status} {_where(at)}", test)


def held_with(form_id: str, field_id: str, value: object, at: int) -> Check:
    """The answer is held (kept, not live) with its value intact."""

    def test(t: Transcript) -> bool:
        form, ev = _evaluate(t, form_id, at)
        fe = ev.fields[field_id]
        return (
            fe.status == "held"
            and fe.revision is not None
            and _typed(form, field_id, fe.revision.value) == _typed(form, field_id, value)
        )

    return Check(f"{field_id}:held@{at}", f"{field_id} is held as {value!r} {_where(at)}", test)


def no_answer(form_id: str, field_id: str, at: int | None = None) -> Check:
    """Nothing is in force on the field (taken back), yet its log still has the old answer."""

    def test(t: Transcript) -> bool:
        instance = _find(t, form_id, at)
        history = instance.field(field_id)
        current = history.in_force()
        kept = any(r.kind == "value" for r in history.revisions)
        return kept and (current is None or current.kind != "value")

    return Check(
        f"{field_id}:none@{at}",
        f"{field_id} has no answer in force {_where(at)}, and its log kept the old one",
        test,
    )


def never_stored(form_id: str, field_id: str) -> Check:
    def test(t: Transcript) -> bool:
        try:
            instance = _find(t, form_id, None)
        except LookupError:
            return True
        return not instance.field(field_id).revisions

    return Check(f"{field_id}:unwritten", f"nothing was ever stored on {field_id}", test)


def closed_as(form_id: str, status: str, reason: str = "", at: int | None = None) -> Check:
    def test(t: Transcript) -> bool:
        instance = _find(t, form_id, at)
        return instance.state.status == status and (instance.state.closed_reason or "").startswith(
            reason
        )

    what = f"{status}" + (f" ({reason}…)" if reason else "")
    return Check(f"{status}@{at}", f"the form is {what} {_where(at)}", test)


def open_and_blocked(form_id: str, at: int) -> Check:
    """Still open although every answer is in: an active checkpoint rejection blocks it."""

    def test(t: Transcript) -> bool:
        instance = _find(t, form_id, at)
        _, ev = _evaluate(t, form_id, at)
        return instance.state.status == "open" and bool(ev.active_rejections)

    return Check(f"blocked@{at}", f"a checkpoint rejection keeps the form open {_where(at)}", test)


def step_complete(form_id: str, step_id: str, at: int) -> Check:
    def test(t: Transcript) -> bool:
        _, ev = _evaluate(t, form_id, at)
        return ev.step_complete[step_id]

    return Check(f"{step_id}:complete@{at}", f"step {step_id} is complete {_where(at)}", test)


def revisiting(form_id: str, step_id: str | None, at: int) -> Check:
    def test(t: Transcript) -> bool:
        _, ev = _evaluate(t, form_id, at)
        return ev.revisit == step_id

    what = f"revisiting {step_id}" if step_id else "not revisiting any step"
    return Check(f"revisit={step_id}@{at}", f"the form is {what} {_where(at)}", test)


def one_write(form_id: str, turn: int, fields: Iterable[str]) -> Check:
    """Every answer of a front-loaded turn was written by one tool call."""
    wanted = tuple(fields)

    def test(t: Transcript) -> bool:
        instance = _find(t, form_id, turn)
        calls: set[str | None] = set()
        for field_id in wanted:
            first = next(
                (r for r in instance.field(field_id).revisions if r.by == "agent"),
                None,
            )
            if first is None:
                return False
            calls.add(first.tool_call_id)
        return len(calls) == 1

    return Check(
        f"one-write@{turn}",
        f"the {len(wanted)} answers of turn {turn} landed in one write call",
        test,
        kind="conduct",
    )


def _norm(text: str) -> str:
    text = text.replace("’", "'").replace("_", " ").casefold()
    return re.sub(r"\s+", " ", text)


def _mentions(text: str, phrase: str) -> bool:
    return _norm(phrase) in _norm(text)


def said(turn: int, *groups: tuple[str, ...]) -> Check:
    """The agent's message(s) in ``turn`` contain one phrase of every group."""

    def test(t: Transcript) -> bool:
        text = t.said(turn)
        return bool(text) and all(any(_mentions(text, p) for p in group) for group in groups)

    shown = " and ".join("/".join(group) for group in groups)
    return Check(
        f"said@{turn}", f"the agent told the user ({shown}) in turn {turn}", test, "conduct"
    )


def _named(form: CompiledForm, field_id: str, text: str) -> bool:
    return _mentions(text, form.fields[field_id].label) or _mentions(text, field_id)


def lists_remaining(form_id: str, turn: int) -> Check:
    """Names every pending field, and no field that does not apply (a branch may skip it)."""

    def test(t: Transcript) -> bool:
        form, ev = _evaluate(t, form_id, turn)
        text = t.said(turn)
        pending = [f for f, fe in ev.fields.items() if fe.status in ("pending", "ask_again")]
        skipped = [f for f, fe in ev.fields.items() if fe.status == "not_applicable"]
        return (
            bool(pending)
            and all(_named(form, f, text) for f in pending)
            and not any(_named(form, f, text) for f in skipped)
        )

    return Check(
        f"remaining@{turn}",
        f"turn {turn}'s answer names every pending field and none that does not apply",
        test,
        kind="conduct",
    )


def asks_recheck(form_id: str, turn: int) -> Check:
    """After a backward jump, the agent asks the user to go over the reopened answers."""

    def test(t: Transcript) -> bool:
        form, ev = _evaluate(t, form_id, turn)
        text = t.said(turn)
        again = [f for f, fe in ev.fields.items() if fe.status == "ask_again"]
        return bool(again) and all(_named(form, f, text) for f in again)

    return Check(
        f"recheck@{turn}",
        f"turn {turn}'s message asks the user to re-check every reopened answer",
        test,
        kind="conduct",
    )
