"""What a document's author text may hold, and the shapes of its names.

Every label, message, option, guidance and paragraph a builder writes reaches a model and a
person, so a document refuses the characters that change how text reads without being seen
(``refused_character``, ``check_text``: controls, separators, bidi controls, tag characters),
except what it read back from a store (``STORED``). ``Text`` and ``Prose`` are author text on
one line and over lines; ``Id``, ``FormId``, ``ExecutorName`` and ``FactKeyName`` the names a
document gives and refers to; ``Scalar`` a literal in a rule or an action. The models that use
them are ``forms.documents.model``.
"""

from __future__ import annotations

import unicodedata
from typing import Annotated

from pydantic import AfterValidator, StringConstraints, ValidationInfo
from pydantic_core import PydanticCustomError

_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
"""Embeddings, overrides and isolates: they reorder how text reads without being seen."""
_NAMED = {"\n": "a line break", "\r": "a carriage return", "\t": "a tab", "\x00": "a NUL"}


def refused_character(text: str, *, prose: bool = False) -> tuple[int, str] | None:
    """The first character of ``text`` a document refuses, and its position: a C0 or C1
    control (NUL, line break, carriage return, tab, U+0085 ...), a line or paragraph separator
    (U+2028, U+2029), a bidi embedding, override or isolate, or an invisible tag character
    (U+E0000-U+E007F, which spell out text a person cannot see). ``prose`` (a description, a
    step's guidance, a paragraph) keeps line breaks and tabs. None when there is none."""
    for at, char in enumerate(text):
        if prose and char in "\n\t":
            continue
        if unicodedata.category(char) in ("Cc", "Zl", "Zp") or char in _BIDI_CONTROLS:
            return at, char
        if "\U000e0000" <= char <= "\U000e007f":
            return at, char
    return None


def check_text(text: str, *, prose: bool = False) -> str:
    """``text`` when it has no character ``refused_character`` names; else the one error every
    author text of a document raises, saying which character, where, and what to send."""
    found = refused_character(text, prose=prose)
    if found is None:
        return text
    at, char = found
    name = _NAMED.get(char) or (
        "a bidi control"
        if char in _BIDI_CONTROLS
        else "an invisible tag character"
        if char >= "\U000e0000"
        else "a line separator"
        if unicodedata.category(char) in ("Zl", "Zp")
        else "a control character"
    )
    keeps = "only line breaks and tabs are kept here" if prose else "write it on one line"
    raise PydanticCustomError(
        "control_character",
        f"has {name} (U+{ord(char):04X}) at character {at + 1}: control, line-separator and "
        f"bidi characters are refused ({keeps}); send the text without it",
    )


STORED: dict[str, object] = {"stored": True}
"""The validation context a store reads a document back with (``model_validate_json(...,
context=STORED)``): what was stored before ``check_text`` existed still loads; every text
that reaches a model is rendered on one line anyway (``forms.surface.plain``)."""


def _line(text: str, info: ValidationInfo) -> str:
    return text if info.context is STORED else check_text(text)


def _prose(text: str, info: ValidationInfo) -> str:
    return text if info.context is STORED else check_text(text, prose=True)


Line = AfterValidator(_line)
"""Refuses every control, separator and bidi character (``check_text``)."""
Multiline = AfterValidator(_prose)
"""As ``Line``, keeping line breaks and tabs."""

Id = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,62}$")]
"""A step, field, block or checkpoint id: lowercase letters, digits and ``_``."""
FormId = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9-]{0,62}$")]
"""A form id: lowercase letters, digits and ``-``."""
ExecutorName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_.:-]{0,127}$")]
"""The name of an executor the deployment registers in Python (``ExecutorRegistry``)."""
Text = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=2_000), Line
]
"""Author text on one line: a label, a title, an option's label, a message."""
Prose = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=2_000), Multiline
]
"""Author text that may run over lines: a step's guidance, a paragraph."""
Scalar = Annotated[str, Line] | int | float | bool
"""A literal in a rule or an action: JSON text, number or boolean."""
FACT_KEY_PATTERN = r"^[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)+$"
FACT_KEY_MAX_LENGTH = 80
"""A fact key's syntax, as ``forms.memory.vocabulary`` has it (``KEY_PATTERN``,
``KEY_MAX_LENGTH``; a test holds them together). It is not imported from there: a document
without keys never loads memory."""
FactKeyName = Annotated[
    str, StringConstraints(pattern=FACT_KEY_PATTERN, max_length=FACT_KEY_MAX_LENGTH)
]
"""The fact key a field holds (``person.date_of_birth``): dotted lowercase words, at least two.
Whether the deployment's vocabulary has it, and whether it fits the field, is checked when the
document compiles (``forms.documents.fact_keys``)."""
