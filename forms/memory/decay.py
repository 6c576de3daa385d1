"""Decay classes: how long a remembered fact stays true, and so what recall may do with it.

A fact's *age* is counted from the latest of its ``stated_at`` and ``confirmed_at`` (a
confirmation makes an old statement fresh again). Each class has a ``DecayRule``: a fact at
most ``fill_within`` old is written into an empty field silently (with provenance
``memory``); past that, a fact at most ``offer_within`` old is *offered* (the agent asks "I
have 70 kg from 3 September: still right?"); older than both, it is not used at all. A window
of ``None`` means never: a class with ``fill_within=None`` is only ever offered. Both limits
are inclusive: a fact exactly ``fill_within`` old still fills.

The classes follow how fast each kind of fact goes stale, not how sure we are that it was
said (the confidence is about whether they said it; it says nothing about whether it is still
true):

=============  ======================  ===========  =============  =========================
class          for                     fill within  offer within   e.g.
=============  ======================  ===========  =============  =========================
never          true once, true always  always       always         date of birth
years          changes rarely          3 years      10 years       name, email, height
months         changes now and then    180 days     2 years        home city, address
steps          changes unannounced     never        2 years        job title, employer, salary
weeks          drifts quietly          never        180 days       weight
do_not_store   true for days           -            -              "my current project"
=============  ======================  ===========  =============  =========================

``do_not_store`` has no rule: such facts are refused when stated and never written. A
deployment replaces any other class's rule (``DecayPolicy.with_rules``); windows are
timedeltas (ISO 8601 durations such as ``"P90D"`` in JSON; a year is 365 days).

The classes themselves (``DecayClass``) are named with the vocabulary's keys, in the core
(``forms.vocabulary``), and importable from here as before.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from forms.memory.errors import InvalidPolicy
from forms.vocabulary import DecayClass

__all__ = ["DEFAULT_RULES", "FOREVER", "DecayClass", "DecayPolicy", "DecayRule", "Use"]


class Use(StrEnum):
    """What recall may do with a fact of some age."""

    FILL = "fill"
    """Write it into the empty field, marked as from memory."""
    OFFER = "offer"
    """Show it for the agent to ask about; the field stays empty."""
    NONE = "none"
    """Too old to be used at all."""


FOREVER = timedelta.max
"""A window with no end: a fact of any age is within it."""

_DAY = timedelta(days=1)
_YEAR = 365 * _DAY


class DecayRule(BaseModel):
    """How old a fact may be to fill (``fill_within``) or to be offered (``offer_within``);
    ``None`` for never. A rule that fills must offer at least as long as it fills."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    fill_within: timedelta | None
    offer_within: timedelta | None

    @model_validator(mode="after")
    def _windows_in_order(self) -> DecayRule:
        for name in ("fill_within", "offer_within"):
            window = getattr(self, name)
            if window is not None and window < timedelta(0):
                raise ValueError(f"{name} cannot be negative")
        fill, offer = self.fill_within, self.offer_within
        if fill is not None and (offer is None or offer < fill):
            raise ValueError("offer_within must be at least fill_within (a fresh fact fills)")
        return self

    def use(self, age: timedelta) -> Use:
        """What a fact this old may be used for (a negative age, a clock skew, counts as 0)."""
        age = max(age, timedelta(0))
        if self.fill_within is not None and age <= self.fill_within:
            return Use.FILL
        if self.offer_within is not None and age <= self.offer_within:
            return Use.OFFER
        return Use.NONE


DEFAULT_RULES: Mapping[DecayClass, DecayRule] = {
    DecayClass.NEVER: DecayRule(fill_within=FOREVER, offer_within=FOREVER),
    DecayClass.YEARS: DecayRule(fill_within=3 * _YEAR, offer_within=10 * _YEAR),
    DecayClass.MONTHS: DecayRule(fill_within=180 * _DAY, offer_within=2 * _YEAR),
    DecayClass.STEPS: DecayRule(fill_within=None, offer_within=2 * _YEAR),
    DecayClass.WEEKS: DecayRule(fill_within=None, offer_within=180 * _DAY),
}
"""The rules Formwork ships with (the table in the module docstring)."""


class DecayPolicy:
    """A rule per storable decay class. Immutable; ``with_rules`` returns a new policy."""

    __slots__ = ("_rules",)

    def __init__(self, rules: Mapping[DecayClass, DecayRule] = DEFAULT_RULES) -> None:
        missing = [
            c.value for c in DecayClass if c is not DecayClass.DO_NOT_STORE and c not in rules
        ]
        if missing:
            raise InvalidPolicy(f"no decay rule for {', '.join(missing)}")
        if DecayClass.DO_NOT_STORE in rules:
            raise InvalidPolicy("do_not_store facts are never stored, so they take no rule")
        self._rules = {c: rules[c] for c in DecayClass if c in rules}

    @classmethod
    def default(cls) -> DecayPolicy:
        return cls(DEFAULT_RULES)

    def with_rules(self, rules: Mapping[str, DecayRule | Mapping[str, Any]]) -> DecayPolicy:
        """This policy with some classes' rules replaced, given as rules or as their JSON-like
        form (``{"weeks": {"fill_within": None, "offer_within": "P90D"}}``)."""
        merged = dict(self._rules)
        for name, rule in rules.items():
            try:
                decay = DecayClass(name)
                merged[decay] = (
                    rule if isinstance(rule, DecayRule) else DecayRule.model_validate(rule)
                )
            except ValidationError as exc:
                reasons = "; ".join(error["msg"] for error in exc.errors(include_url=False))
                raise InvalidPolicy(f"decay class {name!r}: {reasons}") from None
            except ValueError:
                raise InvalidPolicy(f"unknown decay class {name!r}") from None
        return DecayPolicy(merged)

    def rule(self, decay: DecayClass) -> DecayRule | None:
        """The class's rule; None for ``do_not_store``."""
        return self._rules.get(decay)

    def decide(self, decay: DecayClass, *, last_seen: datetime, now: datetime) -> Use:
        """What recall may do at ``now`` with a fact of this class last stated or confirmed at
        ``last_seen``."""
        rule = self._rules.get(decay)
        return Use.NONE if rule is None else rule.use(now - last_seen)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DecayPolicy) and self._rules == other._rules

    def __hash__(self) -> int:
        return hash(tuple(self._rules.items()))

    def __repr__(self) -> str:
        return f"DecayPolicy({self._rules!r})"
