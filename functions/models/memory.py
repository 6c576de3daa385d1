"""Memory's bodies: a fact stated, confirmed or switched off, and the facts, their periods and
revisions, the export and the refusals the memory routes answer (docs/memory.md)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
    ValidatorFunctionWrapHandler,
    field_validator,
)
from pydantic.json_schema import SkipJsonSchema

from formwork.aws.models.common import ON_FIRST_USE, IgnoresIdentity

MAX_FACT_TEXT_CHARS = 4000
MAX_WORDS_CHARS = 1000
"""The longest text value and stated words a fact may hold (``forms.memory.facts``'s
``FactValue`` and ``Words``; a test pins them together: this module imports no engine)."""

FactText = Annotated[StrictStr, Field(max_length=MAX_FACT_TEXT_CHARS)]
FactValueIn = FactText | StrictInt | StrictFloat | StrictBool
"""A fact's value as a request sends it: one JSON scalar (never an object, a list or null)."""


class FactSourceIn(BaseModel):
    """Where a stated fact comes from, as the chatbot backend says it."""

    model_config = ConfigDict(**ON_FIRST_USE, extra="forbid", frozen=True)

    kind: Literal["conversation", "tool_call", "api"]
    ref: SkipJsonSchema[None] | Annotated[str, Field(min_length=1, max_length=200)] = None


class FactStatementRequest(IgnoresIdentity):
    """A fact the verified principal states: the value, or the words to read it from, or both.

    Other keys are refused (422), except the identity keys, which are ignored: memory is the
    verified principal's, never one a body names.
    """

    model_config = ConfigDict(**ON_FIRST_USE, extra="forbid", frozen=True)

    value: SkipJsonSchema[None] | FactValueIn = Field(
        default=None,
        description="The value, as the key's type takes it: a number, text, a date as "
        '"1990-05-01", a decimal as a number or a string ("70.5"). Leave it out to have it '
        "read from words.",
        examples=[173],
    )
    words: (
        SkipJsonSchema[None] | Annotated[str, Field(min_length=1, max_length=MAX_WORDS_CHARS)]
    ) = Field(
        default=None,
        description="The words the user said it in. Alone, a rule reads the value from them "
        "(5'8\" is 173 cm), and the fact records the rule; with a value, they must agree.",
        examples=["5'8\""],
    )
    valid_from: SkipJsonSchema[None] | AwareDatetime = Field(
        default=None,
        description="When it became true in the world, if the user said (ISO 8601, with a "
        "time zone); else it holds from when it is stated",
    )
    valid_until: SkipJsonSchema[None] | AwareDatetime = Field(
        default=None,
        description="When it stopped (or stops) being true, if the user said (ISO 8601, with "
        "a time zone)",
    )
    correction: bool = Field(
        default=False,
        strict=True,
        description="true when the value in force was wrong (not changed in the world): it "
        "is replaced over its period, and the wrong value stays in the history",
    )
    stated_at: SkipJsonSchema[None] | AwareDatetime = Field(
        default=None,
        description="When the user said it (ISO 8601, with a time zone), if not just now: "
        "a statement from an earlier conversation. Not in the future",
    )
    source: SkipJsonSchema[None] | FactSourceIn = Field(
        default=None,
        description="Where the user said it: a conversation, a tool call of your agent, or "
        'the API (the default), with its id: {"kind": "tool_call", "ref": "call_Lx7"}',
    )

    @field_validator("value", mode="wrap")
    @classmethod
    def _one_scalar(cls, value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        """One error that says what a value may be, instead of one per kind it is not."""
        try:
            return handler(value)
        except ValidationError:
            raise ValueError(
                f"a fact's value is one JSON value: text (at most {MAX_FACT_TEXT_CHARS} "
                "characters), a number, or true or false"
            ) from None


class ConfirmRequest(IgnoresIdentity):
    """The user says the fact in force is still right: an empty object (``{}``)."""

    model_config = ConfigDict(**ON_FIRST_USE, extra="forbid", frozen=True)


class MemorySettingsRequest(IgnoresIdentity):
    """The verified principal's memory switch."""

    model_config = ConfigDict(**ON_FIRST_USE, extra="forbid", frozen=True)

    enabled: bool = Field(
        strict=True,
        description="false: no fact of yours is recorded or recalled until you turn it on "
        "again (what is stored stays, readable, exportable and deletable)",
        examples=[False],
    )


FactUse = Literal["fill", "offer", "none"]
FactChangeKind = Literal["stated", "corrected", "confirmed", "deleted"]


class FactSource(BaseModel):
    model_config = ON_FIRST_USE

    kind: Literal["conversation", "tool_call", "api"]
    ref: SkipJsonSchema[None] | str = Field(
        default=None, description="The conversation, tool call or API client"
    )


class FactDerivation(BaseModel):
    """A value a rule read from words: ``5'8"`` to 173 by ``feet_inches_to_cm``."""

    model_config = ON_FIRST_USE

    rule: str = Field(examples=["feet_inches_to_cm"])
    words: str = Field(examples=["5'8\""])


class FactBody(BaseModel):
    """A value held over a period of world time, with where it came from."""

    model_config = ON_FIRST_USE

    key: str = Field(examples=["person.height_cm"])
    label: SkipJsonSchema[None] | str = Field(
        default=None, description="The key's label (absent: the key left the vocabulary)"
    )
    value: SkipJsonSchema[None] | str | int | float | bool = Field(
        default=None, description="As the key's type keeps it (JSON); absent only when erased"
    )
    shown: SkipJsonSchema[None] | str = Field(
        default=None, description="The value as people read it", examples=["173 cm"]
    )
    words: SkipJsonSchema[None] | str = Field(default=None, description="As the user said it")
    derivation: SkipJsonSchema[None] | FactDerivation = Field(
        default=None, description="Present when a rule read the value from other words"
    )
    source: FactSource
    stated_at: str = Field(description="When it was said (ISO 8601)")
    confirmed_at: SkipJsonSchema[None] | str = Field(
        default=None, description="When the user last confirmed it"
    )
    valid_from: SkipJsonSchema[None] | str = Field(
        default=None, description="World time: since when it holds (absent: since stated_at)"
    )
    valid_until: SkipJsonSchema[None] | str = Field(
        default=None, description="World time: until when it holds (absent: no end known)"
    )
    recorded_at: str = Field(description="System time: when it was recorded")
    revision: int = Field(description="The seq of the revision that stated or corrected it")
    erased: SkipJsonSchema[None] | Literal[True] = Field(
        default=None,
        description="Present in a timeline read as of a time before a deletion: the value, "
        "words and derivation were erased by it",
    )


class FactLine(FactBody):
    """A fact in force, with what recall would do with it now."""

    model_config = ON_FIRST_USE

    decay: SkipJsonSchema[None] | str = Field(
        default=None,
        description="The key's decay class: never, years, months, steps or weeks",
        examples=["years"],
    )
    age_days: int = Field(description="Whole days since it was last stated or confirmed")
    use: FactUse = Field(
        description="What recall would do with it now: fill an empty field, offer it for the "
        "agent to ask about, or nothing"
    )
    reason: SkipJsonSchema[None] | str = Field(
        default=None,
        description="With use=none, why: memory_off, too_old, not_valid_now, unknown_key",
    )
    note: SkipJsonSchema[None] | str = Field(
        default=None,
        description="With fill or offer, the status line's words",
        examples=["from memory: Height 173 cm (derived from “5'8\"”), said 2026-09-03"],
    )


class FactList(BaseModel):
    """The caller's facts in force, by key."""

    model_config = ON_FIRST_USE

    memory_enabled: bool = Field(
        description="Whether memory is on for the caller (their switch and the deployment's)"
    )
    facts: list[FactLine]


class FactRevisionBody(BaseModel):
    """One change of one key, as appended (the content of revisions a deletion erased is gone:
    ``erased`` is true and value, words and derivation are absent)."""

    model_config = ON_FIRST_USE

    key: str
    seq: int
    change: FactChangeKind
    value: SkipJsonSchema[None] | str | int | float | bool = None
    words: SkipJsonSchema[None] | str = None
    derivation: SkipJsonSchema[None] | FactDerivation = None
    source: FactSource
    stated_at: SkipJsonSchema[None] | str = None
    confirmed_at: SkipJsonSchema[None] | str = None
    valid_from: SkipJsonSchema[None] | str = None
    valid_until: SkipJsonSchema[None] | str = None
    recorded_at: str = Field(description="System time (ISO 8601)")
    erased: bool


class FactDetail(BaseModel):
    """One key of the caller's memory: the fact in force, its periods, every revision."""

    model_config = ON_FIRST_USE

    key: str
    current: FactLine | None = Field(description="The fact in force (null: deleted)")
    timeline: list[FactBody] = Field(
        description="The periods of world time each value held, by start, as believed now "
        "(or at as_of)"
    )
    history: list[FactRevisionBody] = Field(description="Every revision, oldest first")
    as_of: SkipJsonSchema[None] | str = Field(
        default=None, description="With ?as_of: the system time asked about"
    )
    believed: FactBody | None = Field(
        default=None,
        description="Only with ?as_of: the fact in force as believed then (null: none yet, or "
        "deleted by then)",
    )


class FactChange(BaseModel):
    """What a statement or a confirmation appended, and the fact in force after it."""

    model_config = ON_FIRST_USE

    key: str
    change: FactChangeKind = Field(
        description="stated; corrected; confirmed (also the same value stated again)"
    )
    revision: int = Field(description="The seq of the revision appended")
    derivation: SkipJsonSchema[None] | FactDerivation = Field(
        default=None, description="The rule that read the value from the words, when one did"
    )
    fact: FactBody = Field(
        description="The fact in force now (a statement about the past leaves it as it was)"
    )


class FactDeleted(BaseModel):
    """A key forgotten: recall never returns it again; earlier revisions' content is erased."""

    model_config = ON_FIRST_USE

    key: str
    change: Literal["deleted"] = "deleted"
    revision: int = Field(description="The seq of the deletion")
    erased: int = Field(description="Revisions of the key whose content is now erased")
    recorded_at: str


class MemorySettingsBody(BaseModel):
    """The caller's memory switch, and the deployment's."""

    model_config = ON_FIRST_USE

    enabled: bool = Field(description="The caller's switch (on unless turned off)")
    changed_at: str | None = Field(description="When the caller last changed it (null: never)")
    deployment_enabled: bool = Field(
        description="Whether the deployment has memory on (FORMWORK_MEMORY); off, nothing is "
        "recorded or recalled for anyone"
    )


class ExportedKey(BaseModel):
    model_config = ON_FIRST_USE

    key: str
    current: FactBody | None = Field(description="The fact in force (null: deleted)")
    history: list[FactRevisionBody]


class MemoryExport(BaseModel):
    """Everything memory holds of the caller."""

    model_config = ON_FIRST_USE

    principal: str = Field(description="The verified principal the memory belongs to")
    exported_at: str
    settings: MemorySettingsBody
    facts: list[ExportedKey] = Field(description="Every key ever stated, by key")


class MemoryRefusal(BaseModel):
    """A memory request refused; nothing was written."""

    model_config = ON_FIRST_USE

    error: str = Field(description="A stable, machine-readable code", examples=["no_rule"])
    message: str = Field(description="What was wrong")
    hint: SkipJsonSchema[None] | str = Field(default=None, description="What to send instead")
    did_you_mean: SkipJsonSchema[None] | list[str] = Field(
        default=None, description="Fact keys close to one that is not in the vocabulary"
    )
