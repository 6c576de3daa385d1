"""The labelled set: who the principals are, and what must happen in each case.

Shaped after the hardest categories of the public long-term-memory benchmarks (LongMemEval's
knowledge updates, temporal reasoning and abstention), turned from questions into form
fields: a knowledge update is a fact that changed (the newest value must be the one filled or
offered), temporal reasoning is the fact's age against its decay class's windows (each class
just inside and just outside them, and a confirmation making a fact young again), and
abstention is a field with no usable fact (it must stay empty: no plausible value). Around
them, what the design note (seed 002) says can go wrong once memory writes into a form:
derived values, deleted facts, the switch, another principal's facts, an answer racing
recall, and a store that is slow or down.

Principals and helpers: ``common``; the cases by category: ``knowledge`` (knowledge updates,
deletions), ``ages`` (temporal reasoning), ``abstention`` (abstention, derived values),
``conditions`` (the switch, principals, races, the store).
"""

from __future__ import annotations

from bench.memory_bench.cases.abstention import ABSTENTION, DERIVED
from bench.memory_bench.cases.ages import TEMPORAL
from bench.memory_bench.cases.common import PRINCIPALS
from bench.memory_bench.cases.conditions import PRINCIPAL_CASES, RACE, STORE, SWITCH
from bench.memory_bench.cases.knowledge import DELETED, KNOWLEDGE_UPDATES
from bench.memory_bench.model import Case

CASES: tuple[Case, ...] = (
    *KNOWLEDGE_UPDATES,
    *TEMPORAL,
    *ABSTENTION,
    *DERIVED,
    *DELETED,
    *SWITCH,
    *PRINCIPAL_CASES,
    *RACE,
    *STORE,
)
"""Every case, by category."""

__all__ = ["CASES", "PRINCIPALS"]
