"""``forms.app.writes._unchanged``, the write's "does this plan change nothing?" check, gives the
answer of the plain comparison it shortcuts, ``made == replaced(held, updated_at=...)``, on
states that share every part, share some, hold equal copies or differ in one field."""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from forms.app.writes import _unchanged
from forms.instance import (
    HookState,
    InstanceState,
    OutboxEntry,
    RecallOwed,
    Rejection,
    StepOverride,
)
from forms.marked import Marked, built, replaced, seal

T0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def _plain(made: InstanceState, held: InstanceState) -> bool:
    return made == replaced(held, updated_at=made.updated_at)


def _state(rng: random.Random) -> InstanceState:
    hooks = {f"h{i}": HookState(holds=rng.random() < 0.5, count=rng.randrange(3)) for i in range(3)}
    outbox = (
        {"k1": OutboxEntry(key="k1", hook_id="h1", occurrence=1, created_at=T0)}
        if rng.random() < 0.5
        else {}
    )
    rejections = (
        [Rejection(key="r", hook_id="h2", message="no", at=T0)] if rng.random() < 0.3 else []
    )
    return InstanceState(
        status=rng.choice(["open", "open", "completed"]),
        closed_reason=rng.choice([None, "submitted"]),
        hooks=hooks,
        override=rng.choice([None, StepOverride(step="s1", kind="focus", by="agent")]),
        rejections=rejections,
        outbox=outbox,
        updated_at=T0 + timedelta(seconds=rng.randrange(3)),
        recall_owed=rng.choice([None, RecallOwed(since=T0)]),
        page_edits=rng.choice([[], ["a"], ["a", "b"]]),
    )


def _variant(rng: random.Random, held: InstanceState) -> InstanceState:
    """A state a plan might make from ``held``: the same parts, copies of them (sealed, marked
    or plain), one field changed, or a new ``updated_at``, in random mixes."""
    fields: dict[str, Any] = dict(held.__dict__)
    for name in list(fields):
        roll = rng.random()
        value = fields[name]
        if roll < 0.15 and isinstance(value, dict):
            copies: list[Callable[[dict[str, Any]], Any]] = [seal, Marked, dict]
            copy = rng.choice(copies)
            fields[name] = copy(dict(value))
        elif roll < 0.25 and isinstance(value, list):
            fields[name] = list(value)
        elif roll < 0.3:
            fields[name] = _state(rng).__dict__[name]  # maybe equal, maybe not
    if rng.random() < 0.5:
        fields["updated_at"] = T0 + timedelta(minutes=rng.randrange(5))
    if rng.random() < 0.5:
        return built(InstanceState, fields)
    return InstanceState.model_construct(**fields)


def test_unchanged_answers_as_the_plain_comparison() -> None:
    rng = random.Random(26)
    seen = {True: 0, False: 0}
    for _ in range(3000):
        held = _state(rng)
        if rng.random() < 0.5:
            held = built(InstanceState, {**held.__dict__, "hooks": seal(held.hooks)})
        made = _variant(rng, held) if rng.random() < 0.9 else _state(rng)
        expected = _plain(made, held)
        assert _unchanged(made, held) is expected
        seen[expected] += 1
    assert min(seen.values()) > 300  # both answers well covered


def test_same_parts_and_a_new_time_is_unchanged() -> None:
    held = _state(random.Random(1))
    made = replaced(held, updated_at=T0 + timedelta(days=1))
    assert _unchanged(made, held) and _plain(made, held)
    edited = replaced(made, page_edits=["z"])
    assert not _unchanged(edited, held) and not _plain(edited, held)
