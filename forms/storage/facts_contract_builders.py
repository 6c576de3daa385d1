"""Principals, keys, instants and statements for the fact store's contract suites, and for any
test that stores facts (importable without pytest).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from forms.memory import (
    FactHead,
    FactRevision,
    Source,
    Statement,
    Vocabulary,
    plan_statement,
)
from forms.storage.facts import FactStore

T0 = datetime(2026, 1, 1, tzinfo=UTC)
DAY = timedelta(days=1)
ANA = "acme/ana"
BOB = "acme/bob"
WEIGHT = "person.weight_kg"
VOCABULARY = Vocabulary.default()
API = Source(kind="api", ref="chatbot")


def say(
    facts: FactStore,
    principal: str,
    key: str,
    value: Any = None,
    at: datetime = T0,
    **statement: Any,
) -> FactHead:
    """Plan a statement on the stored head and append it (the way the service will)."""
    head = facts.head(principal, key)
    said = Statement(key=key, value=value, source=API, stated_at=at, **statement)
    planned = plan_statement(said, head, vocabulary=VOCABULARY, now=at)
    assert isinstance(planned, FactRevision), planned
    stored: FactHead = facts.append(principal, planned)
    return stored


def revision(seq: int, value: str, at: datetime = T0, key: str = WEIGHT) -> FactRevision:
    """A statement of ``value`` kg as revision ``seq``, planned by hand."""
    return FactRevision(
        key=key,
        seq=seq,
        change="stated",
        value=value,
        words=f"{value} kg",
        source=API,
        stated_at=at,
        recorded_at=at,
    )
