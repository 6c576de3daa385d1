"""The form and builder tools as MCP tools: their annotations, their results, and the
tool-call id.

**Annotations** say what each tool does, from what the engine promises (``docs/tools.md``):
the reads change nothing (``readOnlyHint``); nothing but ``form_abandon`` destroys anything,
since every answer is a revision that can be undone (``destructiveHint`` false), while an
abandoned form stays closed for good; ``form_fill`` and ``form_abandon`` are idempotent (the
same answers again append nothing, a closed form refuses a second abandon), ``form_start``
(another instance) and ``form_revise`` (undo twice goes back twice) are not. The tools act on
the forms service alone (``openWorldHint`` false). They come from the tools' list
(``forms.surface.tools.TOOLS``: a title, ``writes``, ``destructive``, ``idempotent``).

The builder tools (``builder_hints``, from their list ``forms.documents.BUILDER_TOOLS``, which
holds what this says of each; ``docs/builder.md``): ``inspect_form`` is the read.
Every edit is an entry of the draft's edit log that ``undo_edit`` takes back, but a host should
still ask before one that takes away what the person built: the three deletes, and
``create_form``, whose ``replace: true`` discards every step and field (``destructiveHint``).
Idempotent are the edits that leave the draft as the first call left it when sent again (the
log may gain a line, the document does not change): the deletes (the second is refused
``not_found``), the moves to a position, ``update_form``, ``update_step`` and ``update_field``
(the same keys again; a rename sent again is refused ``not_found``),
``set_conditional_logic`` (the same rule), and ``create_form`` (refused ``not_empty``, or the
same structure again). Not idempotent: the adds (a second ``email_2``),
``set_checkpoint`` (without an id, a second checkpoint), undo and redo (twice goes twice).

**Results** are the API's result object, as JSON text content (what a model reads) and as
``structuredContent`` (what a host's code reads), with ``isError`` when it says ``ok: false``:
the same object the HTTP route answers, refusals included.

**The tool-call id.** MCP gives a tool call no id of its own, and a Formwork write is recorded
under one (a retry under the same id is a replay). ``tool_call_id`` takes, in order:

1. ``_meta["formwork/tool_call_id"]`` when the host sends it (the model's own tool-use id is
   the best one: a host that re-sends a call after a lost answer gets the first result);
2. on a connection (stdio): ``mcp-<connection nonce>-<JSON-RPC request id>``. The nonce is
   drawn when the server starts, so two connections never share an id, and the ids are stable
   for everything within the connection: the client's own retries to the API, and a request
   the host sends again under its JSON-RPC id;
3. on stateless HTTP: a fresh ``mcp-<uuid>`` per call. A stateless request has no connection
   to tie its JSON-RPC id to, and clients number requests from 0 on every connection, so
   "request id + conversation" would give the second connection's first ``form_start`` the
   first one's id, and it would be answered with that call's result instead of starting a
   form. A host that wants replays over HTTP sends ``_meta["formwork/tool_call_id"]``.

An id the API would refuse (over 128 characters, or characters outside letters, digits and
``. _ : @ -``) is replaced by ``mcp-`` and a digest of it, the same for the same id.

**The chat.** The builder records a tool-call id as the chat's that made it (some model
servers number their calls ``call_0``, ``call_1``, ... in every chat; ``docs/builder.md``).
``chat_id`` takes ``_meta["formwork/chat_id"]`` when the host sends it (a host that sends its
model's ids sends its chat's id with them), else the connection (``mcp-<nonce>``, stdio), else
none: on stateless HTTP, a call without a chat is recorded nowhere, so it is never answered
with another call's result (and never replayed). A conversation's form tools need none: their
ids are the conversation's.
"""

from __future__ import annotations

import functools
import hashlib
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import mcp_types as types

from forms.surface.plain import result_text
from forms.surface.tools import ID_PATTERN, TOOLS
from formwork.mcp.ask import ASK_TOOL

TOOL_CALL_ID_META = "formwork/tool_call_id"
"""The ``_meta`` key a host may send a tool call's id under."""
CHAT_ID_META = "formwork/chat_id"
"""The ``_meta`` key a host may send the id of the call's chat under (the builder's)."""

_ID = re.compile(ID_PATTERN)
"""What the API takes as a tool-call id (``forms.surface.tools.check_id``)."""


@dataclass(frozen=True, slots=True)
class Hints:
    title: str
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False

    def annotations(self) -> types.ToolAnnotations:
        if self.read_only:
            return types.ToolAnnotations(
                title=self.title, read_only_hint=True, open_world_hint=False
            )
        return types.ToolAnnotations(
            title=self.title,
            read_only_hint=False,
            destructive_hint=self.destructive,
            idempotent_hint=self.idempotent,
            open_world_hint=False,
        )


HINTS: dict[str, Hints] = {
    **{
        spec.name: Hints(
            spec.title,
            read_only=not spec.writes,
            destructive=spec.destructive,
            idempotent=spec.idempotent,
        )
        for spec in TOOLS
    },
    ASK_TOOL: Hints("Ask the person"),
}
"""Each form tool's annotations, by name, from the tools' list (``forms.surface.tools.TOOLS``),
and ``form_ask``'s (MCP's own); a tool the API serves that is not here gets none."""


@functools.cache
def builder_hints() -> dict[str, Hints]:
    """Each builder tool's annotations, by name, from the builder tools' list
    (``forms.documents.BUILDER_TOOLS``; the module says why each is what it is). The names are
    not the form tools', so one lookup serves both servers. Built on first use: the builder's
    list loads the edit engine, which a server of the form tools never needs."""
    from forms.documents import BUILDER_TOOLS

    return {
        spec.name: Hints(
            spec.title,
            read_only=spec.does == "read",
            destructive=spec.destructive,
            idempotent=spec.idempotent,
        )
        for spec in BUILDER_TOOLS
    }


def mcp_tool(definition: Mapping[str, Any]) -> types.Tool:
    """A tool of ``GET /tools?format=mcp`` or ``GET /builder/tools?format=mcp`` (name,
    description, inputSchema) with its annotations."""
    name = str(definition["name"])
    hints = HINTS.get(name) or builder_hints().get(name)
    return types.Tool(
        name=name,
        description=definition.get("description"),
        input_schema=dict(definition["inputSchema"]),
        annotations=hints.annotations() if hints is not None else None,
    )


def tool_result(result: Mapping[str, Any]) -> types.CallToolResult:
    """A Formwork result as MCP's: JSON text, the object itself, ``isError`` when not ok."""
    data = dict(result)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=result_text(data))],
        structured_content=data,
        is_error=result.get("ok") is False,
    )


def tool_call_id(
    meta: Mapping[str, Any] | None, request_id: types.RequestId | None, connection: str | None
) -> str:
    """The id a call is recorded under (the module says which, and why)."""
    given = (meta or {}).get(TOOL_CALL_ID_META)
    if isinstance(given, str) and given:
        return _usable(given)
    if connection is not None and request_id is not None:
        return _usable(f"mcp-{connection}-{request_id}")
    return f"mcp-{uuid.uuid4().hex}"


def chat_id(meta: Mapping[str, Any] | None, connection: str | None) -> str | None:
    """The chat a builder call's id is recorded for (the module says which, and why)."""
    given = (meta or {}).get(CHAT_ID_META)
    if isinstance(given, str) and given:
        return _usable(given)
    return _usable(f"mcp-{connection}") if connection is not None else None


def _usable(text: str) -> str:
    if _ID.fullmatch(text):
        return text
    return "mcp-" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:40]
