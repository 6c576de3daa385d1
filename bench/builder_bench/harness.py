"""One scenario played in process: a fresh ``BuilderService`` over in-memory stores, a clock
that starts at 2026-03-02 09:00 UTC and moves one second per reading, tool-call ids
``seed_000``, ``call_000``, ... So every run makes the same calls and counts the same tokens.

For each measured call it keeps the result, what the result should have said and did not
(``Step``), and three counts in o200k_base tokens of compact JSON (``bench.forms_bench.ledger``):
the call's arguments (what the model writes), its result (what the model reads back), and,
when the call changed the draft, the whole document after it (``scenarios.as_json``: without
defaults, the smallest JSON of that draft), which is what the old contract had the model print
for that change. At the end it checks the draft against the scenario's expectation and
publishes it through the service with the demo's executors.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from bench.builder_bench.scenarios import Scenario, Step, as_json
from bench.forms_bench.ledger import compact, tokens
from forms.app.builder import BuilderService, NotPublishable
from forms.app.catalog import Catalog
from forms.app.loop import CommitPolicy
from forms.documents import FormDocument, Limits
from forms.registry import FormRegistry
from forms.storage.documents import InMemoryFormDocumentStore
from forms.storage.drafts import InMemoryDraftStore
from formwork.examples.executors import EXECUTORS
from formwork.examples.job_application import FORM_ID, BuilderCall

BUILDER = "acme/builder"
"""The builder agent's principal."""
PUBLISHER = "acme/hr-lead"
"""The person who publishes (the service does not check roles; the HTTP layer does)."""
START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def ticking_clock(start: datetime = START) -> Callable[[], datetime]:
    """A clock one second later at each reading."""
    seconds = itertools.count(1)
    return lambda: start + timedelta(seconds=next(seconds))


def new_builder() -> BuilderService:
    catalog = Catalog(
        FormRegistry([]), InMemoryFormDocumentStore(), timer=lambda: 0.0, executors=EXECUTORS
    )
    return BuilderService(
        InMemoryDraftStore(),
        catalog,
        clock=ticking_clock(),
        limits=lambda tenant: Limits(),
        policy=CommitPolicy.counted(6),  # the budget its drafts were measured under
        selections=None,
    )


@dataclass(frozen=True, slots=True)
class CallOutcome:
    """One measured call: its result, what the result missed, and its token counts."""

    step: Step
    call_id: str
    result: dict[str, Any]
    problems: tuple[str, ...]
    arguments: int
    answer: int
    reprint: int
    """The document after the call, when it changed the draft; else 0."""
    layout_notes: int
    """Of ``answer``, what ``notes.layout`` (the places the packer gave) costs."""

    @property
    def call(self) -> BuilderCall:
        return self.step.call

    @property
    def applied(self) -> bool:
        return bool(self.result.get("ok")) and self.call.tool != "inspect_form"

    @property
    def notes(self) -> dict[str, Any]:
        notes: dict[str, Any] = self.result.get("notes", {})
        return notes


@dataclass(frozen=True, slots=True)
class Outcome:
    """A scenario played: every call, the final draft and what it lacks, the publish."""

    scenario: Scenario
    calls: tuple[CallOutcome, ...]
    document: FormDocument
    problems: tuple[str, ...]
    """What keeps the final draft from being the expected document."""
    published: int | None
    """The version publishing made; None when the draft was not publishable."""
    not_publishable: tuple[str, ...]
    final: int
    """The final document's tokens: the old contract's single dump for a whole build."""

    @property
    def call_problems(self) -> list[str]:
        return [f"{c.call_id} {c.call.tool}: {p}" for c in self.calls for p in c.problems]

    @property
    def as_expected(self) -> bool:
        return not self.problems and not self.call_problems and self.published is not None

    @property
    def arguments(self) -> int:
        return sum(c.arguments for c in self.calls)

    @property
    def answers(self) -> int:
        return sum(c.answer for c in self.calls)

    @property
    def edits(self) -> int:
        """What the tools cost: every call's arguments and result."""
        return self.arguments + self.answers

    @property
    def layout_notes(self) -> int:
        return sum(c.layout_notes for c in self.calls)

    @property
    def reprints(self) -> int:
        """What reprinting cost: the whole document once per change."""
        return sum(c.reprint for c in self.calls)

    def noted(self, key: str) -> list[Any]:
        """Every entry the results reported under ``notes[key]``, in order (a mapping's
        entries as pairs)."""
        found: list[Any] = []
        for c in self.calls:
            value = c.notes.get(key)
            if isinstance(value, dict):
                found += list(value.items())
            elif isinstance(value, list):
                found += value
        return found


def play(scenario: Scenario) -> Outcome:
    """``scenario`` against a fresh service; ``RuntimeError`` when its seed does not apply."""
    builder = new_builder()
    for n, call in enumerate(scenario.seed):
        seeded = _send(builder, call, f"seed_{n:03d}")
        if not seeded.get("ok"):
            raise RuntimeError(f"{scenario.id}: seed call {n} ({call.tool}) failed: {seeded}")
    before = builder.draft(BUILDER, FORM_ID).document if scenario.seed else None
    calls: list[CallOutcome] = []
    for n, step in enumerate(scenario.steps):
        call_id = f"call_{n:03d}"
        result = _send(builder, step.call, call_id)
        changed = bool(result.get("ok")) and step.call.tool != "inspect_form"
        after = builder.draft(BUILDER, FORM_ID).document if changed else None
        calls.append(
            CallOutcome(
                step,
                call_id,
                result,
                tuple(_missed(step, result)),
                tokens(compact(dict(step.call.input))),
                tokens(compact(result)),
                tokens(compact(as_json(after))) if after is not None else 0,
                _layout_notes(result),
            )
        )
    document = builder.draft(BUILDER, FORM_ID).document
    try:
        published: int | None = builder.publish(PUBLISHER, FORM_ID).version
        refusals: tuple[str, ...] = ()
    except NotPublishable as refused:
        published, refusals = None, refused.problems
    return Outcome(
        scenario,
        tuple(calls),
        document,
        tuple(scenario.expect(before, document)),
        published,
        refusals,
        tokens(compact(as_json(document))),
    )


def _send(builder: BuilderService, call: BuilderCall, call_id: str) -> dict[str, Any]:
    result: dict[str, Any] = builder.call(
        BUILDER, FORM_ID, call.tool, call_id, dict(call.input), selection=call.selection
    )
    return result


def _layout_notes(result: dict[str, Any]) -> int:
    notes: dict[str, Any] = result.get("notes", {})
    if "layout" not in notes:
        return 0
    rest = {k: v for k, v in notes.items() if k != "layout"}
    without = {k: v for k, v in result.items() if k != "notes"} | ({"notes": rest} if rest else {})
    return tokens(compact(result)) - tokens(compact(without))


def _missed(step: Step, result: dict[str, Any]) -> list[str]:
    """What ``result`` should have said about ``step`` and did not, or said unasked."""
    problems: list[str] = []
    if step.refused is not None:
        if result.get("error") != step.refused:
            problems.append(f"expected to be refused {step.refused!r}, got {_said(result)}")
        return problems
    if not result.get("ok"):
        return [f"refused: {_said(result)}"]
    notes: dict[str, Any] = result.get("notes", {})
    reported = sorted((c["at"], c["sent"], c["stored"]) for c in notes.get("coerced", []))
    if reported != sorted(step.coerced):
        problems.append(f"coerced reported {reported}, expected {sorted(step.coerced)}")
    for key, wanted in (("ids_rewritten", step.rewritten), ("resolved", step.resolved)):
        if notes.get(key, {}) != dict(wanted):
            problems.append(f"{key} reported {notes.get(key, {})}, expected {dict(wanted)}")
    return problems


def _said(result: dict[str, Any]) -> str:
    if result.get("ok"):
        return "ok"
    return f"{result.get('error')}: {result.get('message')}"
