"""Writing one fact: the one write loop of memory, for the HTTP routes and for answers alike.

``write_fact`` carries out ``forms.memory``'s processing model of one write, in order:

1. plan the revision on the key's head as last read (``plan``: a statement, a confirmation or
   a deletion; pure). A ``Refusal`` is returned as it is, and nothing is written;
2. append it, compare-and-set on the head's version (``FactStore.append``);
3. on ``FactConflict`` (another writer appended first), plan again on the head the conflict
   carries, without reading the store again;
4. after ``attempts`` lost races, raise ``TooManyConflicts`` (``busy``): nothing was written,
   and the same write can be sent again.

What a caller does with each outcome is its own: the routes answer a refusal as a 4xx and
``busy`` as a 409; remembering an answer counts a refusal and logs a failure. A revision that
cannot apply to the head (``apply_revision``'s ``ValueError``) is raised as it is.

This module imports ``forms.memory``: load it when memory is first used, as its callers do.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from forms.errors import TooManyConflicts
from forms.memory.errors import FactConflict
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
    attempts: int,
) -> Written | Refusal:
    """Plan on ``head`` (the key's head as last read), append compare-and-set, and plan again
    on the head a lost race carries, up to ``attempts`` appends in all. The ``Refusal`` when
    a plan refuses (nothing written); ``TooManyConflicts`` when every append lost."""
    if attempts < 1:
        raise ValueError("a fact write needs at least one attempt")
    for _ in range(attempts):
        planned = plan(head)
        if isinstance(planned, Refusal):
            return planned
        try:
            return Written(planned, facts.append(principal, planned))
        except FactConflict as moved:  # someone appended first: plan again on theirs
            head = moved.current
    raise TooManyConflicts(
        f"fact {key} kept changing under the write: nothing was written",
        "send it again",
    )


__all__ = ["FactPlan", "Written", "write_fact"]
