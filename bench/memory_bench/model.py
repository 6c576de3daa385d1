"""What a labelled case is: the facts a principal's memory holds (set up the way the fact API
and earlier conversations put them there), one ``form_start`` under some conditions, and what
must become of each field that declares a fact key.

Times are absolute (UTC) and every case's measured start happens at ``START``, so an age is
``START - at``. A case runs on its own service and stores (``harness.play``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any, Literal

START = datetime(2026, 9, 10, 9, 0, tzinfo=UTC)
"""When every measured ``form_start`` happens (the service's clock then ticks a second per
reading)."""

MINUTE = timedelta(minutes=1)
DAY = timedelta(days=1)
YEAR = 365 * DAY
"""A year is 365 days, as the decay policy counts it."""


def ago(span: timedelta) -> datetime:
    """``span`` before the measured start."""
    return START - span


def on(day: date) -> datetime:
    """09:00 UTC on ``day``."""
    return datetime(day.year, day.month, day.day, 9, 0, tzinfo=UTC)


# ---------------------------------------------------------------- what memory holds


@dataclass(frozen=True, slots=True, kw_only=True)
class Said:
    """A fact stated through the fact API (``PUT /memory/facts/{key}``): a value, or the words
    to read it from, at ``at``; optionally when it is true in the world, or a correction.
    ``refused``: the refusal code the statement must get (then nothing is stored)."""

    key: str
    value: Any = None
    words: str | None = None
    at: datetime
    who: str
    valid_from: datetime | None = None
    valid_until: datetime | None = None
    correction: bool = False
    refused: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Confirmed:
    """The user confirmed the fact in force through the fact editor (``POST .../confirm``)."""

    key: str
    at: datetime
    who: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Deleted:
    """The user deleted the fact through the fact editor (``DELETE /memory/facts/{key}``)."""

    key: str
    at: datetime
    who: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Switched:
    """The user turned memory on or off (``PUT /memory/settings``)."""

    enabled: bool
    at: datetime
    who: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Answered:
    """An earlier conversation: the form started (memory doing what it does then), then the
    user's answers written with ``form_fill``, which memory remembers."""

    form: str
    values: Mapping[str, Any]
    at: datetime
    who: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Raced:
    """An earlier conversation whose ``form_start`` carried ``values`` while the user's
    ``answer`` (a ``form_fill``) landed right after the start's write (which holds what
    memory recalled)."""

    form: str
    values: Mapping[str, Any]
    answer: Mapping[str, Any]
    at: datetime
    who: str


Event = Said | Confirmed | Deleted | Switched | Answered | Raced


# ---------------------------------------------------------------- the measured start


@dataclass(frozen=True, slots=True)
class Race:
    """A call of the user's that lands right after the start's one write (memory's fills
    and offers are in it: there is no commit of memory's to race any more)."""

    tool: Literal["form_fill", "form_abandon"]
    payload: Mapping[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class Start:
    """The measured ``form_start``: whose, from where, with which values, and a racing call."""

    who: str
    form: str = "profile"
    source: Literal["agent", "webhook"] = "agent"
    values: Mapping[str, Any] = field(default_factory=dict)
    race: Race | None = None


@dataclass(frozen=True, slots=True)
class Store:
    """The fact store during the measured start: seconds per request, requests that fail."""

    latency: float = 0.0
    fails: frozenset[str] = frozenset()


# ---------------------------------------------------------------- what must happen


@dataclass(frozen=True, slots=True)
class Fill:
    """Memory writes ``value`` into the empty field, marked as from memory; a derived value
    shows its words (and records its rule); ``when`` is what the mark says of its age."""

    value: Any
    derived_from: str | None = None
    rule: str | None = None
    when: str | None = None


@dataclass(frozen=True, slots=True)
class Offer:
    """Memory writes nothing and offers ``value`` for the agent to confirm."""

    value: Any
    derived_from: str | None = None
    rule: str | None = None
    when: str | None = None


EmptyWhy = Literal["absent", "stale", "unfit", "off", "unavailable", "closed", "named"]


@dataclass(frozen=True, slots=True)
class Empty:
    """Memory neither writes nor offers anything, because the fact is ``absent`` (never
    stated, deleted, refused, someone else's, not true now), ``stale`` (too old even to
    offer), ``unfit`` (the field refuses the value as it is), memory is ``off`` for this call,
    the store is ``unavailable`` (failing or late), the form was ``closed`` before memory
    wrote, or the starting call ``named`` the field (a value the field refused)."""

    why: EmptyWhy


@dataclass(frozen=True, slots=True)
class Kept:
    """What the user said (``value``) is the answer in force; memory wrote nothing there."""

    value: Any


Expected = Fill | Offer | Empty | Kept


@dataclass(frozen=True, slots=True)
class TrueOn:
    """After the case, the key's history says ``value`` was true at world time ``at`` (as
    believed now): a contradiction closed the old value's period, it did not erase it."""

    key: str
    at: datetime
    value: Any


Category = Literal[
    "knowledge_update",
    "temporal",
    "abstention",
    "derived",
    "deleted",
    "switch",
    "principals",
    "race",
    "store",
]

CATEGORIES: Mapping[Category, str] = {
    "knowledge_update": "Knowledge updates: the fact changed, the newest must win",
    "temporal": "Temporal reasoning: every decay class just inside and outside its windows",
    "abstention": "Abstention: no usable fact, nothing filled",
    "derived": "Derived and stated: words read into a value, the rule shown",
    "deleted": "Deleted: a fact the user deleted never returns",
    "switch": "Memory on and off",
    "principals": "Another principal's facts",
    "race": "User answers racing recall",
    "store": "A slow or failing fact store",
}
"""The categories, in report order."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Case:
    """One labelled case. Fields of the started form that declare a fact key and are not in
    ``expect`` must come out ``Empty("absent")``. ``requests``: the exact fact-store requests
    the start may make, in order (None: not checked). ``off``: memory is off for this start
    (for the switch, the deployment, or a caller memory does not serve). ``unseen``: values
    that must appear nowhere the agent reads; ``not_kept``: values no revision in the fact
    store may hold (a deleted fact's, one said while memory was off). ``finding``: a
    known defect of the memory code this case exposes (the test expects it to fail)."""

    id: str
    category: Category
    claim: str
    start: Start
    facts: tuple[Event, ...] = ()
    expect: Mapping[str, Expected] = field(default_factory=dict)
    store: Store = Store()
    memory: bool = True
    off: bool = False
    requests: tuple[str, ...] | None = None
    unseen: tuple[str, ...] = ()
    not_kept: tuple[Any, ...] = ()
    true_on: tuple[TrueOn, ...] = ()
    finding: str | None = None
