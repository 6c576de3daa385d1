"""A fact's records: the revision appended to a key's history (``FactRevision``, with its
``Source`` and ``Derivation``), the period a value held (``Fact``) and a principal's memory
switch (``MemorySettings``). What each kind of revision means, and how a history folds into
periods and a head, is ``forms.memory.facts``'s docstring; the folding is
``forms.memory.timeline``.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Annotated, Literal

from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    model_validator,
)

from forms.vocabulary import KEY_MAX_LENGTH, KEY_PATTERN

FactValue = Annotated[StrictStr, Field(max_length=4000)] | StrictInt | StrictFloat | StrictBool
"""A fact's value, as the key's type gives its JSON: one scalar."""
Words = Annotated[str, Field(min_length=1, max_length=1000)]
"""The words a fact was stated in."""
FactName = Annotated[str, Field(pattern=KEY_PATTERN, max_length=KEY_MAX_LENGTH)]
SourceKind = Literal["conversation", "tool_call", "api"]
Change = Literal["stated", "corrected", "confirmed", "deleted"]

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class Source(BaseModel):
    """Where a revision came from: a conversation (an answer in a form), a tool call, or the
    API; ``ref`` names it (a conversation or instance id, a tool-call id, an API client)."""

    model_config = _FROZEN

    kind: SourceKind
    ref: Annotated[str, Field(max_length=200)] | None = None


class Derivation(BaseModel):
    """A value read from other words by a rule: ``5'8"`` to 173 by ``feet_inches_to_cm``."""

    model_config = _FROZEN

    rule: Annotated[str, Field(min_length=1, max_length=80)]
    words: Words


class FactRevision(BaseModel):
    """One change of one key, as appended. ``seq`` is its place in the key's history."""

    model_config = _FROZEN

    key: FactName
    seq: Annotated[int, Field(ge=0)]
    change: Change
    value: FactValue | None = None
    words: Words | None = None
    derivation: Derivation | None = None
    source: Source
    stated_at: AwareDatetime | None = None
    confirmed_at: AwareDatetime | None = None
    valid_from: AwareDatetime | None = None
    valid_until: AwareDatetime | None = None
    recorded_at: AwareDatetime
    erased: bool = False

    @model_validator(mode="after")
    def _shape(self) -> FactRevision:
        content = (self.value, self.words, self.derivation)
        if self.erased and content != (None, None, None):
            raise ValueError("an erased revision keeps no value, words or derivation")
        has_value = self.erased or self.value is not None
        if self.change in ("stated", "corrected"):
            if not has_value or self.stated_at is None or self.confirmed_at is not None:
                raise ValueError(f"a {self.change} revision has a value and stated_at only")
        elif self.change == "confirmed":
            if not has_value or self.confirmed_at is None or self.stated_at is not None:
                raise ValueError("a confirmed revision has the value and confirmed_at only")
        elif self.change == "deleted":
            dated = (self.stated_at, self.confirmed_at, self.valid_from, self.valid_until)
            if content != (None, None, None) or dated != (None, None, None, None):
                raise ValueError("a deleted revision has no value, words or dates")
        if self.change == "confirmed" and (self.valid_from or self.valid_until):
            raise ValueError("a confirmed revision has no period")
        if self.valid_from and self.valid_until and self.valid_until <= self.valid_from:
            raise ValueError("valid_until must be after valid_from")
        return self

    def erase(self) -> FactRevision:
        """This revision with its content erased (what a later ``deleted`` leaves of it)."""
        if self.erased:
            return self
        update = {"value": None, "words": None, "derivation": None, "erased": True}
        return self.model_copy(update=update)


class Fact(BaseModel):
    """A value held over a period of world time, with where it came from.

    ``since`` (``valid_from``, or ``stated_at`` when the user gave no start) to
    ``valid_until`` (None: no end known). ``revision`` is the ``seq`` of the revision that
    stated or corrected the value; ``recorded_at`` its system time. ``erased`` facts (only in
    timelines read before a deletion) have no value."""

    model_config = _FROZEN

    key: FactName
    value: FactValue | None
    words: Words | None = None
    derivation: Derivation | None = None
    source: Source
    stated_at: AwareDatetime
    confirmed_at: AwareDatetime | None = None
    valid_from: AwareDatetime | None = None
    valid_until: AwareDatetime | None = None
    recorded_at: AwareDatetime
    revision: Annotated[int, Field(ge=0)]
    erased: bool = False

    @property
    def since(self) -> datetime:
        """Where its period starts in world time: ``valid_from``, else ``stated_at``."""
        return self.valid_from or self.stated_at

    @property
    def last_seen(self) -> datetime:
        """When it was last stated or confirmed: its age counts from here."""
        return max(self.stated_at, self.confirmed_at or self.stated_at)

    def age(self, now: datetime) -> timedelta:
        return now - self.last_seen

    def holds_at(self, world_time: datetime) -> bool:
        """Whether ``world_time`` is inside its period."""
        return self.since <= world_time and (
            self.valid_until is None or world_time < self.valid_until
        )


class MemorySettings(BaseModel):
    """A principal's memory switch: on unless turned off."""

    model_config = _FROZEN

    enabled: bool = True
    changed_at: AwareDatetime | None = None
