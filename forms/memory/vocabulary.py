"""The fact vocabulary, where memory has always imported it from: the vocabulary lives in the
core (``forms.vocabulary``: a table of keys and their types, with no memory in it), so the
compile check reads it without reaching up into memory; every name is importable from here as
before."""

from __future__ import annotations

from forms.vocabulary import (
    DEFAULT_KEYS,
    KEY_MAX_LENGTH,
    KEY_PATTERN,
    LOCALE_PATTERN,
    TIMEZONE_PATTERN,
    FactKey,
    Vocabulary,
    fact_key,
)

__all__ = [
    "DEFAULT_KEYS",
    "KEY_MAX_LENGTH",
    "KEY_PATTERN",
    "LOCALE_PATTERN",
    "TIMEZONE_PATTERN",
    "FactKey",
    "Vocabulary",
    "fact_key",
]
