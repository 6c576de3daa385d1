"""The fact vocabulary: the keys a memory may hold, each with its label, type, unit and decay.

A fact key is a dotted name (``person.date_of_birth``: lowercase words joined by ``_``, at
least two parts), a label for people (``Date of birth``), the Python type of its value (any
annotation pydantic validates: ``date``, ``int``, ``Decimal``, ``str``, ``EmailStr``,
``Literal[...]``, with constraints), an optional unit (``cm``: the value is in it, and
derivations read words into it) and a decay class (``forms.memory.decay``).

Values are kept as the engine keeps answers: the JSON its ``FieldType`` gives (a ``Decimal``
as a string such as ``"70.5"``, a date as ``"1990-05-01"``), so a fact and a field's answer
are read by the same rules.

``Vocabulary.default()`` holds Formwork's keys (``DEFAULT_KEYS``); a deployment adds its own
with ``extended``. A vocabulary is checked when it is built, every problem reported at once
(``InvalidVocabulary``): a malformed name, two keys with one name, an empty label, a type
pydantic cannot validate or that is not one scalar value.

The vocabulary is part of the core: a table of keys and their types, with no memory in it, so
the compile check of a field declaring a key (``forms.compile_memory``) reads it without
reaching up into ``forms.memory``, which sits on the core and re-exports every name from its
old home (``forms.memory.vocabulary``). The fit of a key's values to a field's type is
``forms.fact_fit``; a key's decay class is named here (``DecayClass``), its rules are memory's
(``forms.memory.decay``). The vocabulary's errors are here too, under ``FactError``, the base
memory's own errors (``forms.memory.errors``) share.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from enum import StrEnum
from functools import cache
from typing import Annotated, Any
from zoneinfo import ZoneInfo

from pydantic import AfterValidator, EmailStr, Field

from forms.errors import FormworkError
from forms.fact_fit import Kind, TypeFit, kinds_of, type_fit
from forms.schema import FieldType, field_type
from forms.suggest import rank


class FactError(FormworkError):
    """Base of the fact errors: the vocabulary's (here) and memory's own
    (``forms.memory.errors``), not the fact store's."""


class InvalidVocabulary(FactError):
    """A fact vocabulary breaks a rule; ``problems`` holds one message per problem."""

    def __init__(self, problems: Sequence[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems: tuple[str, ...] = tuple(problems)


class UnknownFactKey(FactError, KeyError):
    """No key of the vocabulary has this name; ``did_you_mean`` ranks the likely ones."""

    def __init__(self, key: str, did_you_mean: Sequence[str] = ()) -> None:
        hint = f"; did you mean {', '.join(did_you_mean)}?" if did_you_mean else ""
        super().__init__(f"unknown fact key {key!r}{hint}")
        self.key = key
        self.did_you_mean: tuple[str, ...] = tuple(did_you_mean)

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


class DecayClass(StrEnum):
    """How long a fact of a vocabulary key stays true (each class's rule, and the table of
    them: ``forms.memory.decay``)."""

    NEVER = "never"
    YEARS = "years"
    MONTHS = "months"
    STEPS = "steps"
    WEEKS = "weeks"
    DO_NOT_STORE = "do_not_store"


KEY_PATTERN = r"^[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)+$"
"""A fact key: lowercase words (``a-z``, digits, ``_``) joined by dots, at least two."""
KEY_MAX_LENGTH = 80
_KEY = re.compile(KEY_PATTERN)


@dataclass(frozen=True, slots=True, eq=False)
class FactKey:
    """One key of the vocabulary. ``type`` and ``kinds`` are compiled from ``value_type``."""

    key: str
    label: str
    value_type: Any
    decay: DecayClass
    unit: str | None = None
    type: FieldType = field(init=False, repr=False)
    kinds: tuple[Kind, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        compiled = field_type(self.value_type)  # TypeError: pydantic cannot validate it
        object.__setattr__(self, "type", compiled)
        object.__setattr__(self, "kinds", kinds_of(compiled))

    @property
    def storable(self) -> bool:
        return self.decay is not DecayClass.DO_NOT_STORE

    def show(self, value: Any) -> str:
        """A value as people read it, with the unit: ``70.5 kg``, ``1990-05-01``."""
        text = value if isinstance(value, str) else str(value).lower()
        return f"{text} {self.unit}" if self.unit else text

    def fit(self, field_type: FieldType | Any) -> TypeFit:
        """Whether this key's values fit a field of that type (``forms.memory.fit``)."""
        return type_fit(self, field_type)


_Name = Annotated[str, Field(min_length=1, max_length=200)]
_Place = Annotated[str, Field(min_length=1, max_length=120)]

LOCALE_PATTERN = r"^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{1,8})*$"
"""A BCP 47 language tag as people and identity providers write them (``en``, ``en-GB``,
``zh-Hant-TW``, ``de-CH-1996``): a two- or three-letter language, then subtags of up to eight
letters or digits. Not the whole grammar: enough to keep out what is not a tag (``en_GB``
included: a value is never rewritten into one)."""
TIMEZONE_PATTERN = r"^[A-Z][A-Za-z0-9_+-]*(?:/[A-Za-z0-9_+-]+){0,2}$"
"""The shape of an IANA zone name (``UTC``, ``Europe/London``, ``America/Argentina/Salta``,
``Etc/GMT+5``), checked before the zone is looked up, so a path or a dotted name never reaches
the tz database."""


def _known_zone(name: str) -> str:
    """``name`` when the tz database knows it. ``ZoneInfo`` caches what it loads, so a zone
    costs one file read per process; ``zoneinfo.available_timezones()`` would scan them all.
    Without a tz database (no system one, no ``tzdata``) every name is refused: a zone is
    never taken on its shape alone."""
    try:
        ZoneInfo(name)
    except (KeyError, ValueError, OSError):  # ZoneInfoNotFoundError is a KeyError
        raise ValueError(f"{name!r} is not a time zone of the IANA database") from None
    return name


_Locale = Annotated[str, Field(min_length=2, max_length=35, pattern=LOCALE_PATTERN)]
"""35 characters: the length RFC 5646 asks every implementation to accept."""
_TimeZone = Annotated[
    str, Field(min_length=1, max_length=64, pattern=TIMEZONE_PATTERN), AfterValidator(_known_zone)
]
_Currency = Annotated[str, Field(min_length=3, max_length=3, pattern=r"^[A-Z]{3}$")]
"""An ISO 4217 code (``EUR``, ``GBP``): three capital letters."""

DEFAULT_KEYS: tuple[tuple[str, str, Any, DecayClass, str | None], ...] = (
    ("person.full_name", "Full name", _Name, DecayClass.YEARS, None),
    ("person.given_name", "Given name", _Name, DecayClass.YEARS, None),
    ("person.family_name", "Family name", _Name, DecayClass.YEARS, None),
    ("person.date_of_birth", "Date of birth", date, DecayClass.NEVER, None),
    ("person.height_cm", "Height", Annotated[int, Field(ge=30, le=300)], DecayClass.YEARS, "cm"),
    (
        "person.weight_kg",
        "Weight",
        Annotated[Decimal, Field(gt=0, le=700)],
        DecayClass.WEEKS,
        "kg",
    ),
    ("contact.email", "Email", EmailStr, DecayClass.YEARS, None),
    (
        "contact.phone",
        "Phone",
        Annotated[str, Field(min_length=3, max_length=40)],
        DecayClass.YEARS,
        None,
    ),
    ("address.line1", "Street address", _Place, DecayClass.MONTHS, None),
    ("address.city", "City", _Place, DecayClass.MONTHS, None),
    (
        "address.postcode",
        "Postcode",
        Annotated[str, Field(min_length=1, max_length=20)],
        DecayClass.MONTHS,
        None,
    ),
    ("address.country", "Country", _Place, DecayClass.YEARS, None),
    ("person.locale", "Locale", _Locale, DecayClass.YEARS, None),
    ("person.timezone", "Time zone", _TimeZone, DecayClass.YEARS, None),
    ("person.currency", "Currency", _Currency, DecayClass.YEARS, None),
    ("work.job_title", "Job title", _Place, DecayClass.STEPS, None),
    ("work.employer", "Employer", _Place, DecayClass.STEPS, None),
    ("work.salary", "Salary (yearly)", Annotated[Decimal, Field(ge=0)], DecayClass.STEPS, None),
    ("work.current_project", "Current project", str, DecayClass.DO_NOT_STORE, None),
)
"""Formwork's keys: (key, label, value type, decay class, unit)."""


class Vocabulary:
    """The fact keys a deployment's memory holds, in the order they were given. Immutable."""

    __slots__ = ("_keys",)

    def __init__(self, keys: Iterable[FactKey]) -> None:
        keys = tuple(keys)
        problems: list[str] = []
        seen: set[str] = set()
        for key in keys:
            problems += _problems(key)
            if key.key in seen:
                problems.append(f"fact key {key.key!r} is declared twice")
            seen.add(key.key)
        if problems:
            raise InvalidVocabulary(problems)
        self._keys = {key.key: key for key in keys}

    @classmethod
    def default(cls) -> Vocabulary:
        """Formwork's keys (``DEFAULT_KEYS``), built on first use and kept."""
        return _default()

    def extended(self, keys: Iterable[FactKey]) -> Vocabulary:
        """This vocabulary plus ``keys`` (a name already here is a clash: an error)."""
        return Vocabulary([*self._keys.values(), *keys])

    def get(self, key: str) -> FactKey:
        """The key; ``UnknownFactKey`` with the likely ones when there is none."""
        found = self._keys.get(key)
        if found is None:
            raise UnknownFactKey(key, self.did_you_mean(key))
        return found

    def did_you_mean(self, key: str) -> list[str]:
        """The keys a mistyped or guessed name most likely meant, best first."""
        return rank(key, {name: _spellings(k) for name, k in self._keys.items()})

    def check_field(self, key: str, field_type: FieldType | Any) -> str | None:
        """The compile check of a field declaring ``memory=key``: None when the key exists, is
        stored, and its values fit the field's type; else what is wrong."""
        found = self._keys.get(key)
        if found is None:
            return str(UnknownFactKey(key, self.did_you_mean(key)))
        if not found.storable:
            return f"fact key {key!r} is never stored (do_not_store), so it can fill nothing"
        fit = found.fit(field_type)
        return None if fit else f"fact key {key!r} does not fit the field: {fit.reason}"

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def __iter__(self) -> Iterator[FactKey]:
        return iter(self._keys.values())

    def __len__(self) -> int:
        return len(self._keys)

    def __repr__(self) -> str:
        return f"Vocabulary({list(self._keys)!r})"


def fact_key(
    key: str, label: str, value_type: Any, decay: DecayClass | str, unit: str | None = None
) -> FactKey:
    """A ``FactKey``; ``InvalidVocabulary`` when pydantic cannot validate ``value_type``."""
    try:
        return FactKey(key, label, value_type, DecayClass(decay), unit)
    except TypeError as exc:
        raise InvalidVocabulary([f"fact key {key!r}: {exc}"]) from None
    except ValueError:
        raise InvalidVocabulary([f"fact key {key!r}: unknown decay class {decay!r}"]) from None


def _spellings(key: FactKey) -> tuple[str, ...]:
    """What a key may be called: its name, its label, its last part, and its first part with
    its label (``person weight`` for ``person.weight_kg``)."""
    first, _, last = key.key.rpartition(".")
    return (key.key, key.label, last, f"{first} {key.label}")


def _problems(key: FactKey) -> list[str]:
    problems = []
    if not _KEY.fullmatch(key.key) or len(key.key) > KEY_MAX_LENGTH:
        problems.append(
            f"fact key {key.key!r} is not a dotted lowercase name such as 'person.height_cm' "
            f"(at most {KEY_MAX_LENGTH} characters)"
        )
    if not key.label.strip():
        problems.append(f"fact key {key.key!r} has an empty label")
    if key.unit is not None and not key.unit.strip():
        problems.append(f"fact key {key.key!r} has an empty unit (leave it out instead)")
    if any(kind.name == "other" for kind in key.kinds):
        problems.append(
            f"fact key {key.key!r}: a fact holds one value (a number, text, a date, a choice), "
            f"not {key.type.type_string}"
        )
    return problems


@cache
def _default() -> Vocabulary:
    """Built when first asked for, not on import: compiling the keys' types (an email's
    validator among them) is left to what uses the vocabulary."""
    return Vocabulary(fact_key(*entry) for entry in DEFAULT_KEYS)
