"""The agent tool surface: one pydantic argument model per tool, and the words the model reads.

Tool schemas are re-sent on every model call and dominate the surface's context cost, so the
surface is six tools, and the four revision moves (plus decline) share ``form_revise`` behind
one ``action`` enum. Descriptions say what not to do as plainly as what to do; they are the API.

``TOOLS`` is the one list of the form tools: each entry names its tool, its argument model, the
description the model reads, its result model, whether it writes, and what an MCP host is told
of it (a title; destructive, idempotent). Everything else that names the tools derives from it:
the HTTP routes and their OpenAPI operations, the Bedrock action group, ``GET /tools`` in every
vendor's shape (and so the client and the agents, which read it), MCP's tool list and
annotations, and which calls are recorded (``forms.app.calls.WRITE_TOOLS``). Adding a tool is
one entry here and its function in ``forms.app.service`` (a test holds the two together, and
finds any other list of tool names).
"""

# No ``from __future__ import annotations``: pydantic and ``NamedTuple`` would compile each
# string annotation back into the type (``typing.ForwardRef``) as the handlers import this module.
import re
from typing import TYPE_CHECKING, Annotated, Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, JsonValue, model_validator

from forms.errors import BadRequest

if TYPE_CHECKING:
    from forms.surface.tool_result import ToolResult

FormArg = Annotated[
    str,
    Field(min_length=1, max_length=64, description="Form id, as the status line shows it"),
]
InstanceId = Annotated[
    str | None,
    Field(
        default=None,
        max_length=64,
        description="Instance id; only needed when the form has several open instances",
    ),
]


class _Args(BaseModel):
    # Each validator is built on its model's first use (a call validates one tool's arguments,
    # ``GET /tools`` reads every schema), not at import: a cold start builds the one it needs.
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class FormListArgs(_Args):
    pass


Declines = Annotated[
    list[str] | None,
    Field(default=None, description="Ids the user won't answer or has no preference on"),
]
"""Bounded where they are read (``plan_declines``), not in the schema: fewer tokens."""


class FormStartArgs(_Args):
    form: FormArg
    values: dict[str, JsonValue] | None = Field(
        default=None, description="Answers already given in the conversation, by field id"
    )
    decline: Declines
    from_: str | None = Field(
        default=None,
        alias="from",
        max_length=64,
        description="Form or instance to hand over from",
    )


class FormReadArgs(_Args):
    form: FormArg
    instance: InstanceId
    part: str | None = Field(
        default=None,
        max_length=128,
        description='Omit for the open step; "outline", a step id, or a field id',
    )


class FormFillArgs(_Args):
    form: FormArg
    instance: InstanceId
    values: dict[str, JsonValue] | None = Field(
        default=None, description="Field id -> answer, any fields of any step"
    )
    decline: Declines
    submit: bool = Field(default=False, description="true after the user confirms: closes it")

    @model_validator(mode="after")
    def _something_to_do(self) -> "FormFillArgs":
        if not (self.values or self.decline or self.submit):
            raise ValueError("send values, decline or submit")
        return self


class FormReviseArgs(_Args):
    form: FormArg
    instance: InstanceId
    field: str | None = Field(default=None, min_length=1, max_length=128)
    action: Literal["set", "retract", "decline", "undo", "redo", "clear_memory"]
    value: JsonValue = Field(default=None, description='Only with "set"')

    @model_validator(mode="after")
    def _field_unless_clearing(self) -> "FormReviseArgs":
        if self.action == "clear_memory":
            if self.field is not None:
                raise ValueError("clear_memory takes no field: it clears every one memory filled")
        elif self.field is None:
            raise ValueError(f"{self.action!r} needs the field to change")
        return self


class FormAbandonArgs(_Args):
    form: FormArg
    instance: InstanceId
    reason: str = Field(min_length=1, max_length=300)


class ToolSpec(NamedTuple):  # a tenth of a frozen dataclass's cost to create, at import
    """One form tool: its name, the description the model reads, its argument model, whether
    a call changes anything (a write is recorded under its tool-call id and replayed; a read
    is not), a title for people (MCP's annotation), whether it takes away what cannot be
    brought back (``destructive``) and whether sending it again changes nothing more
    (``idempotent``); ``result`` is the model of what it answers."""

    name: str
    description: str
    args: type[_Args]
    writes: bool
    title: str
    destructive: bool = False
    idempotent: bool = False

    @property
    def result(self) -> "type[ToolResult]":
        """The model of what it answers (``ToolResult`` for every form tool), which the HTTP
        API's document names: imported when first read, so the Bedrock handler, which never
        reads it, does not make its six classes as it starts."""
        from forms.surface.tool_result import ToolResult  # noqa: PLC0415 (on first use)

        return ToolResult

    def input_schema(self) -> dict[str, Any]:
        """The argument model's JSON schema, without titles or null branches (fewer tokens)."""
        return compact_schema(self.args.model_json_schema())


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "form_list",
        "List the forms you can start and this conversation's forms with their status.",
        FormListArgs,
        writes=False,
        title="List forms",
    ),
    ToolSpec(
        "form_start",
        "Start a form. Pass in values anything the user already told you, by field id. "
        "Switching forms? Pass from (the open one): it closes, its answers carry over.",
        FormStartArgs,
        writes=True,
        title="Start a form",
    ),
    ToolSpec(
        "form_read",
        'Read a form: the open step by default (ids, types, status, values); part="outline" '
        "for all steps, including ones that may not apply; a step id; or a field id for its "
        "revision history.",
        FormReadArgs,
        writes=False,
        title="Read a form",
    ),
    ToolSpec(
        "form_fill",
        "Save answers, any fields of any step, everything the user said in one call. Each "
        "value is checked alone: good ones are kept if others fail. Send JSON types exactly as "
        "the field type says (numbers, true/false unquoted). Answers that don't apply yet are "
        'kept. Never send "", null or 0 to clear: use form_revise retract. A complete form '
        "stays open for corrections until submitted.",
        FormFillArgs,
        writes=True,
        title="Save answers",
        idempotent=True,
    ),
    ToolSpec(
        "form_revise",
        "Change one field: set (replace the answer), retract (user took it back), decline "
        "(user won't say; optional fields only), undo or redo (step through its revisions). "
        "clear_memory, no field: retract every unconfirmed answer from memory. "
        "Nothing is deleted; every move can be undone.",
        FormReviseArgs,
        writes=True,
        title="Change one answer",
    ),
    ToolSpec(
        "form_abandon",
        "Close a form for good (the user quits or it no longer fits), with a short reason. "
        "Not for pausing: open forms wait.",
        FormAbandonArgs,
        writes=True,
        title="Abandon a form",
        destructive=True,
        idempotent=True,
    ),
)

TOOLS_BY_NAME = {tool.name: tool for tool in TOOLS}
WRITES = frozenset(tool.name for tool in TOOLS if tool.writes)
"""The tools whose calls change something (recorded under their tool-call ids, replayed)."""


def compact_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Strip what a model does not need from a pydantic JSON schema.

    Drops titles and ``default: null`` or ``false``, collapses ``X | None`` to ``X`` (optional
    already means "may be omitted"), and inlines the ``JsonValue`` definition as an
    unconstrained value.
    """
    defs = schema.get("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(item) for item in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            target = defs.get(node["$ref"].rsplit("/", 1)[-1], {})
            return walk({**target, **{k: v for k, v in node.items() if k != "$ref"}})
        out: dict[str, Any] = {}
        for key, value in node.items():
            empty_default = key == "default" and (value is None or value is False)
            if key in ("title", "$defs") or empty_default:
                continue
            out[key] = walk(value)
        branches = out.get("anyOf")
        if isinstance(branches, list):
            rest = [b for b in branches if b != {"type": "null"}]
            if len(rest) == 1 and len(rest) != len(branches):
                del out["anyOf"]
                out = {**rest[0], **out}
        return out

    result: dict[str, Any] = walk(schema)
    return result


ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$"
"""An id the API takes (a tool call's, a conversation's, an instance's): 1-128 letters, digits
and ``. _ : @ -``, starting with a letter or digit. The HTTP models' pattern and MCP's ids are
this one."""
_ID = re.compile(ID_PATTERN)


def check_id(value: str, what: str) -> str:
    """Reject ids that are empty, too long or carry characters outside a safe set."""
    if not isinstance(value, str) or not _ID.fullmatch(value):
        raise BadRequest(
            f"{what} must be 1-128 characters of letters, digits and . _ : @ -",
            f"send a plain {what}",
        )
    return value
