"""Writing one fact: memory's attempt of the one commit loop, for the HTTP routes and for
answers alike.

``write_fact`` carries out ``forms.memory``'s processing model of one write, in order:

1. plan the revision on the key's head as last read (``plan``: a statement, a confirmation or
   a deletion; pure). A ``Refusal`` is returned as it is, and nothing is written;
2. append it, compare-and-set on the head's version (``FactStore.append``);
3. on a ``Conflict`` (another writer appended first), plan again on the head the conflict
   carries, without reading the store again: ``forms.app.loop.CommitPolicy.retry``, the loop
   instances and drafts go through too, within the policy's budget and with its backoff;
4. past the budget, raise ``TooManyConflicts`` (``busy``): nothing was written, and the same
   write can be sent again.

What a caller does with each outcome is its own: the routes answer a refusal as a 4xx and
``busy`` as a 409; remembering an answer counts a refusal and logs a failure. A revision that
cannot apply to the head (``apply_revision``'s ``ValueError``) is raised as it is.

This module imports ``forms.memory``: load it when memory is first used, as its callers do.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from forms.app.loop import CommitPolicy
from forms.errors import TooManyConflicts
from forms.memory.statements import Refusal

if TYPE_CHECKING:
    from forms.memory.facts import FactHead, FactRevision
    from forms.storage.facts import FactStore

FactPlan = Callable[["FactHead | None"], "FactRevision | Refusal"]
"""``plan(head)``: the revision to append on ``head`` (None: the key was never stated), or the
``Refusal`` saying why not. Pure: it may run once per attempt."""


@dataclass(frozen=True, slots=True)
class Written:
    """A write that landed: the revision appended, and the key's head after it."""

    revision: FactRevision
    head: FactHead


def write_fact(
    facts: FactStore,
    principal: str,
    key: str,
    plan: FactPlan,
    *,
    head: FactHead | None,
    attempts: int | None = None,
    policy: CommitPolicy | None = None,
) -> Written | Refusal:
    """Plan on ``head`` (the key's head as last read), append compare-and-set, and plan again
    on the head a lost race carries, within ``policy`` (or, given ``attempts`` instead, that
    many appends in all: ``CommitPolicy.counted``). The ``Refusal`` when a plan refuses
    (nothing written); ``TooManyConflicts`` when the budget ran out."""
    if policy is None:
        if attempts is None:
            raise ValueError("a fact write needs a policy or a number of attempts")
        if attempts < 1:
            raise ValueError("a fact write needs at least one attempt")
        policy = CommitPolicy.counted(attempts)

    def attempt(head: FactHead | None) -> Written | Refusal:
        planned = plan(head)
        if isinstance(planned, Refusal):
            return planned
        return Written(planned, facts.append(principal, planned))

    def busy() -> TooManyConflicts:
        return TooManyConflicts(
            f"fact {key} kept changing under the write: nothing was written", "send it again"
        )

    return policy.retry(head, attempt, busy=busy)


__all__ = ["FactPlan", "Written", "write_fact"]
