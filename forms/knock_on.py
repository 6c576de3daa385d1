"""Step 4's outbox entries: what a commit's rising edges raise, and where knock-ons stop.

A hook with an executor or an approval gets an entry keyed ``{instance_id}:{hook_id}:{occurrence}``
for each rising edge of its condition. An entry raised by an executor's effects is one deeper
than the entry whose effects they are; an executor entry one past ``KNOCK_ON_LIMIT`` is recorded
failed instead, naming the hooks of the loop, so hooks that keep triggering each other stop.
Pure: ``forms.engine.transition`` calls it with the commit's evaluation.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta

from forms.edges import bound_answers
from forms.evaluation import Evaluation
from forms.instance import KNOCK_ON_LIMIT, LOOP_STOPPED, FormInstance, OutboxEntry
from forms.keys import idempotency_key
from forms.marked import replaced

__all__ = ["raise_entries"]


def raise_entries(
    provisional: FormInstance,
    evaluation: Evaluation,
    outbox: Mapping[str, OutboxEntry],
    now: datetime,
    cause: str | None,
) -> tuple[list[OutboxEntry], list[OutboxEntry], Mapping[str, OutboxEntry]]:
    """The entries ``evaluation``'s rising edges raise on ``provisional``: those to dispatch,
    those stopped at the knock-on limit, and ``outbox`` with both (a copy; ``outbox`` itself
    when nothing is raised). Depth and the loop are read from ``provisional.state.outbox``,
    the outbox before them."""
    added: list[OutboxEntry] = []
    stopped: list[OutboxEntry] = []
    dispatched = [hook for hook in evaluation.rising if hook.dispatched]
    if not dispatched:
        return added, stopped, outbox
    before = provisional.state.outbox
    depth = _depth(before, cause)
    result = dict(outbox)
    for hook in dispatched:
        occurrence = evaluation.hooks[hook.id].count
        key = idempotency_key(provisional.id, hook.id, occurrence)
        approval = hook.approval
        entry = OutboxEntry(
            key=key,
            hook_id=hook.id,
            occurrence=occurrence,
            kind="approval" if approval is not None else "executor",
            deadline=now + timedelta(seconds=approval.timeout_seconds) if approval else None,
            created_at=now,
            cause=cause,
            subject=bound_answers(provisional, hook.binds, evaluation.live) if approval else None,
            depth=depth,
        )
        if depth > KNOCK_ON_LIMIT and approval is None:
            error = _loop_error(before, hook.id, cause)
            entry = replaced(entry, status="failed", error=error, finished_at=now)
            stopped.append(entry)
        else:
            added.append(entry)
        result[key] = entry
    return added, stopped, result


def _depth(outbox: Mapping[str, OutboxEntry], cause: str | None) -> int:
    """The depth of the entries a commit applying ``cause``'s effects raises: one more than
    the cause's when an executor's effects are applied, 0 otherwise (an answer, a decision)."""
    entry = outbox.get(cause) if cause is not None else None
    return entry.depth + 1 if entry is not None and entry.kind == "executor" else 0


def _loop_error(outbox: Mapping[str, OutboxEntry], hook_id: str, cause: str | None) -> str:
    """Why an entry was stopped at the knock-on limit, naming the hooks of the loop (the
    chain of causes back to the last occurrence of ``hook_id``, oldest first)."""
    chain = [hook_id]
    entry = outbox.get(cause) if cause is not None else None
    while entry is not None and len(chain) <= KNOCK_ON_LIMIT:
        chain.append(entry.hook_id)
        if entry.hook_id == hook_id:
            break
        entry = outbox.get(entry.cause) if entry.cause is not None else None
    loop = " -> ".join(reversed(chain))
    return (
        f"{LOOP_STOPPED} ({loop}); {KNOCK_ON_LIMIT} executor commits in a row each raised the "
        "next, so this one did not run. Fix the definition, then retry it"
    )
