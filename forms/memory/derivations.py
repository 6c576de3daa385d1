"""Derivations: reading a stated quantity into a key's unit, by a named rule.

When a fact arrives as words (``5'8"``, ``154 lb``, ``1.73 m``), a rule of the key's unit
reads them: ``feet_inches_to_cm`` turns ``5'8"`` into 173 cm. The fact keeps the words and
the rule's name, so a derived value is never passed off as one the user said (offers and
fills show "173 cm, derived from 5'8""). Words already in the key's unit (``70 kg``,
``173cm``) are read, not derived: no conversion, no rule recorded.

Reading is extractive. The words must be the quantity and nothing else (``5 ft 8``, not "I
think about 5'8""); a sentence, a hedge, a range or two quantities match no rule, and no rule
means no value: never a guess. Words two rules could read give nothing either. Conversions
round half up to the unit's precision (a whole centimetre, a tenth of a kilogram); reads in
the key's own unit are kept exactly as said.

``DEFAULT_DERIVATIONS`` holds the rules below; a deployment adds its own (``with_rules``).

====================  ======  ==========================================  ================
rule                  unit    reads                                       rounds to
====================  ======  ==========================================  ================
cm                    cm      ``173 cm``, ``173cm``, ``173 centimetres``  (as said)
metres_to_cm          cm      ``1.73 m``, ``1,73 m``, ``1.73 metres``     1 cm
feet_inches_to_cm     cm      ``5'8"``, ``5 ft 8 in``, ``5 foot 8``, ``6'`` 1 cm
kg                    kg      ``70 kg``, ``70.5kg``, ``70 kilos``         (as said)
pounds_to_kg          kg      ``154 lb``, ``154 lbs``, ``154 pounds``     0.1 kg
stones_to_kg          kg      ``11 st 2 lb``, ``11 stone``                0.1 kg
====================  ======  ==========================================  ================
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

_POUND = Decimal("0.45359237")
_INCH = Decimal("2.54")


@dataclass(frozen=True, slots=True)
class Derived:
    """A value read from words: ``value`` in the key's unit, the rule that read it, and
    whether it converted from another unit (only then is it a derivation to show)."""

    value: Decimal
    rule: str
    converted: bool

    @property
    def text(self) -> str:
        """The value as JSON-ready text (``"173"``, ``"69.9"``), for the key's type to read."""
        return format(self.value, "f")


@dataclass(frozen=True, slots=True)
class DerivationRule:
    """Reads words matching ``pattern`` (whole, after normalising) into ``unit``.

    ``read`` takes the match and gives the value in ``unit`` (None: the match stands for no
    value, such as 5'14"); ``places`` rounds it half up to that many decimals (None: kept as
    read). ``converts`` is False for a rule that only reads the unit it produces."""

    name: str
    unit: str
    pattern: re.Pattern[str]
    read: Callable[[re.Match[str]], Decimal | None]
    converts: bool = True
    places: int | None = None

    def apply(self, words: str) -> Derived | None:
        match = self.pattern.fullmatch(words)
        value = self.read(match) if match is not None else None
        if value is None:
            return None
        if self.places is not None:
            value = value.quantize(Decimal(1).scaleb(-self.places), rounding=ROUND_HALF_UP)
        return Derived(value, self.name, self.converts)


class Derivations:
    """A registry of rules; ``derive`` reads words for a unit. Immutable."""

    __slots__ = ("_rules",)

    def __init__(self, rules: Iterable[DerivationRule]) -> None:
        self._rules = tuple(rules)
        names = [rule.name for rule in self._rules]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise ValueError(f"derivation rules named twice: {', '.join(twice)}")

    def with_rules(self, rules: Iterable[DerivationRule]) -> Derivations:
        return Derivations([*self._rules, *rules])

    @property
    def rules(self) -> tuple[DerivationRule, ...]:
        return self._rules

    def derive(self, words: str, unit: str | None) -> Derived | None:
        """The value ``words`` state in ``unit``, when exactly one rule reads them; else None."""
        if unit is None:
            return None
        text = normalise(words)
        found = [d for rule in self._rules if rule.unit == unit if (d := rule.apply(text))]
        return found[0] if len(found) == 1 else None


_QUOTES = str.maketrans({"’": "'", "‘": "'", "′": "'", "”": '"', "“": '"', "″": '"'})


def normalise(words: str) -> str:
    """Lowercase, typographic quotes made plain, spaces collapsed."""
    return " ".join(words.translate(_QUOTES).casefold().split())


def _number(text: str) -> Decimal:
    return Decimal(text.replace(",", "."))


def _as_is(match: re.Match[str]) -> Decimal:
    return _number(match[1])


def _metres(match: re.Match[str]) -> Decimal:
    return _number(match[1]) * 100


def _feet_inches(match: re.Match[str]) -> Decimal | None:
    feet, inches = Decimal(match[1]), _number(match[2] or "0")
    return None if inches >= 12 else (feet * 12 + inches) * _INCH


def _pounds(match: re.Match[str]) -> Decimal:
    return _number(match[1]) * _POUND


def _stones(match: re.Match[str]) -> Decimal | None:
    stones, pounds = Decimal(match[1]), _number(match[2] or "0")
    return None if pounds >= 14 else (stones * 14 + pounds) * _POUND


_N = r"(\d{1,3}(?:\.\d+)?)"
_LB = r"(?:lb|lbs|pounds?)"

DEFAULT_DERIVATIONS = Derivations(
    [
        DerivationRule(
            "cm", "cm", re.compile(_N + r" ?(?:cm|centimet(?:er|re)s?)"), _as_is, converts=False
        ),
        DerivationRule(
            "metres_to_cm",
            "cm",
            re.compile(r"(\d(?:[.,]\d{1,3})?) ?(?:m|met(?:er|re)s?)"),
            _metres,
            places=0,
        ),
        DerivationRule(
            "feet_inches_to_cm",
            "cm",
            re.compile(
                r"(\d) ?(?:'|ft|feet|foot)(?: ?(\d{1,2}(?:\.\d+)?) ?(?:\"|''|in|inch|inches)?)?"
            ),
            _feet_inches,
            places=0,
        ),
        DerivationRule(
            "kg", "kg", re.compile(_N + r" ?(?:kg|kgs|kilos?|kilograms?)"), _as_is, converts=False
        ),
        DerivationRule("pounds_to_kg", "kg", re.compile(_N + " ?" + _LB), _pounds, places=1),
        DerivationRule(
            "stones_to_kg",
            "kg",
            re.compile(r"(\d{1,2}) ?(?:st|stone|stones)(?: ?(\d{1,2}(?:\.\d+)?) ?" + _LB + "?)?"),
            _stones,
            places=1,
        ),
    ]
)
"""Formwork's rules (the table in the module docstring)."""
