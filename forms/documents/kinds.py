"""The kinds of item a document's step holds, in one list: what each part of the documents
reads of a kind.

A kind's keys are its model's (``forms.documents.model``: ``TextField`` takes ``short_text``
and ``long_text``); everything else a kind means is its entry here, and the parts read it
from here instead of naming kinds themselves:

- the field types (``field_types``): a text kind's default longest answer, the pattern a
  contact kind's answers match;
- the rule language (``rules``): which family of comparisons a kind takes;
- export (``export``): which kind a Python field's pattern or length writes out as;
- the example answer the agent is shown (``build``), and a display block's default size on
  the grid (``edit_layout``);
- the flat item shapes the builder's tools show (``edit_shapes``): which blocks carry text;
- the table of kinds in ``docs/form-documents.md`` (``kinds_table``, which a test holds the
  page to).

Adding a kind is adding its entry (and its keys to a model, and the model to the model's
union, when it takes keys no model has); ``tests/unit/test_document_kinds.py`` fails until
every part above has it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel

from forms.documents.model import (
    BooleanField,
    ChoiceField,
    ContactField,
    DateField,
    DecimalField,
    Divider,
    Heading,
    IntegerField,
    Paragraph,
    TextField,
)

Family = Literal["text", "ordered", "boolean", "single_choice", "multiple_choice"]
"""A family of kinds that takes the same comparisons in a rule (``rules``)."""

SHORT_TEXT_MAX = 300
LONG_TEXT_MAX = 4_000
PHONE_PATTERN = r"^\+?[0-9][0-9 ()./-]{5,24}$"
URL_PATTERN = r"^https?://[^\s/?#]+\.[^\s]+$"


@dataclass(frozen=True, slots=True)
class KindSpec:
    """One kind of item, with what the parts of the documents read of it."""

    name: str
    model: type[BaseModel]
    """The document model whose ``kind`` takes it: its keys."""
    family: Family | None
    """The comparisons a rule may make on it; None for a display block, which holds no answer."""
    reads: str = ""
    """What the agent reads for it, in words (the table of kinds in the docs)."""
    adds: str = ""
    """The keys it takes beyond every field's, in words (the same table)."""
    longest: int | None = None
    """A text kind's longest answer when the field gives no ``max_length``."""
    pattern: str | None = None
    """The pattern every answer matches (a contact kind); export reads a field by it."""
    example: str | None = None
    """One valid answer, shown to the agent for a field of the kind."""
    layout: Mapping[str, int] | None = None
    """A display block's size on the grid unless the call says otherwise."""


KINDS: tuple[KindSpec, ...] = (
    KindSpec(
        "short_text",
        TextField,
        "text",
        reads=f"text (1-{SHORT_TEXT_MAX:,} characters unless given)",
        adds="`min_length`, `max_length` (up to 10,000), `pattern` (a regular expression; must "
        "compile), `example` (one valid answer, shown instead of the pattern)",
        longest=SHORT_TEXT_MAX,
    ),
    KindSpec(
        "long_text",
        TextField,
        "text",
        reads=f"text (1-{LONG_TEXT_MAX:,} characters unless given)",
        adds="as `short_text`",
        longest=LONG_TEXT_MAX,
    ),
    KindSpec("email", ContactField, "text", reads="an email address (validated as one)"),
    KindSpec(
        "phone",
        ContactField,
        "text",
        reads="text like `+351 912 345 678` (digits, spaces, `()./-`, optional `+`)",
        pattern=PHONE_PATTERN,
        example="+351 912 345 678",
    ),
    KindSpec(
        "url",
        ContactField,
        "text",
        reads="text like `https://example.com` (`http` or `https`, up to 2,000 characters)",
        pattern=URL_PATTERN,
        example="https://example.com",
    ),
    KindSpec("integer", IntegerField, "ordered", reads="integer", adds="`minimum`, `maximum`"),
    KindSpec(
        "decimal",
        DecimalField,
        "ordered",
        reads="decimal number",
        adds="`minimum`, `maximum`, `decimal_places`",
    ),
    KindSpec(
        "boolean",
        BooleanField,
        "boolean",
        reads="true or false (`exactly true` with `must_be_true`)",
        adds="`must_be_true` (a consent: only true is an answer, as `Literal[True]` in Python)",
    ),
    KindSpec("date", DateField, "ordered", reads="date `YYYY-MM-DD`", adds="`earliest`, `latest`"),
    KindSpec(
        "single_choice",
        ChoiceField,
        "single_choice",
        reads="one of the option values",
        adds='`options`: `[{"value": "air", "label": "By air"}]` (values unique; labels are '
        "told to the agent where they say more than the value)",
    ),
    KindSpec(
        "multiple_choice",
        ChoiceField,
        "multiple_choice",
        reads="a list of option values",
        adds="`options`, `min_selected` (default 1), `max_selected` (default: all)",
    ),
    KindSpec("heading", Heading, None, layout={"w": 12, "h": 1}),
    KindSpec("paragraph", Paragraph, None, layout={"w": 12, "h": 2}),
    KindSpec("divider", Divider, None, layout={"w": 12, "h": 1}),
)
"""Every kind, fields first, in the order the model's union lists their models."""

KIND: Mapping[str, KindSpec] = {kind.name: kind for kind in KINDS}
"""Each kind's entry, by name."""
FIELD_KINDS = tuple(kind.name for kind in KINDS if kind.family is not None)
"""The kinds that collect an answer."""
TEXT_BLOCK_KINDS = tuple(
    kind.name for kind in KINDS if kind.family is None and "text" in kind.model.model_fields
)
"""The display blocks that carry text (the step's guidance)."""
BARE_BLOCK_KINDS = tuple(
    kind.name for kind in KINDS if kind.family is None and kind.name not in TEXT_BLOCK_KINDS
)
"""The display blocks that carry nothing but their place (a divider)."""


def kinds_table() -> str:
    """The table of field kinds ``docs/form-documents.md`` shows, written from the entries."""
    rows = [
        "| `kind` | the agent reads | extra keys |",
        "| --- | --- | --- |",
        *(
            f"| `{kind.name}` | {kind.reads} | {kind.adds} |".replace("|  |", "| |")
            for kind in KINDS
            if kind.family is not None
        ),
    ]
    return "\n".join(rows)
