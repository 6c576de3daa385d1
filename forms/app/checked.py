"""A tool call checked once: who calls, in which conversation, which tool, under which id.

A shell verifies the principal (a JWT's, a Bedrock agent's session, an MCP route's token) and
builds the ``Caller``; ``check_call`` then checks the rest of what a call names, the
conversation id, the tool's name and the tool-call id, and answers a ``CheckedCall``, which
``FormService.call_checked`` trusts without checking any of them again. ``FormService.call``
is ``check_call`` and then ``call_checked``, for a caller that checked nothing itself (the
CLI, the demo, the agents' in-process backends).

A shell that already checked the same three by the same rules builds the ``CheckedCall``
with ``typed_call``, which checks nothing: the HTTP route (its request types: the conversation
id and the tool-call id on ``forms.surface.tools.ID_PATTERN``, the tool's name a literal of
``TOOLS_BY_NAME``) and MCP's (``formwork.mcp.backends.FormServiceBackend``: the route's type
checks the conversation id, the server the tool's name, ``formwork.mcp.tools.tool_call_id``
makes the id usable). The Bedrock shell calls ``check_call``. So each is checked once per call
on every path (``tests/functional/test_checked_calls.py`` counts them).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from forms.app.conversation import Caller
from forms.errors import BadRequest
from forms.surface.tools import ID_PATTERN, TOOLS_BY_NAME, ToolSpec, check_id


class CheckedCall(NamedTuple):
    """One tool call as checked: the verified caller (its conversation id well formed), the
    tool's spec, and the tool-call id (well formed). A named tuple: immutable, and built at
    a fraction of a frozen dataclass's cost, once per call."""

    caller: Caller
    spec: ToolSpec
    tool_call_id: str

    @property
    def tool(self) -> str:
        """The tool's name."""
        return self.spec.name


_tuple_new = tuple.__new__
"""Builds a named tuple from its fields in order, in C (the class's own ``__new__`` is Python
code, about twice the cost): what every call's checked parts are made with."""


_ID = ID_PATTERN.removeprefix("^").removesuffix("$")
_ids_well_formed = re.compile(f"{_ID} {_ID}").fullmatch
"""Whether ``"<conversation id> <tool-call id>"`` is two ids ``check_id`` takes: one match of
both (an id holds no space, so the one space is the border), where a match of each paid the
regex engine's start-up twice (~2k instructions a call). ``tests/functional/test_checked_calls.py``
counts its calls (once per call that names its parts) and holds it to ``check_id`` of each."""


def check_call(caller: Caller, tool: str, tool_call_id: str) -> CheckedCall:
    """The call, checked: the conversation id and the tool-call id well formed, the tool one
    of the tools; ``BadRequest`` for the first that is not (in that order)."""
    spec = checked_spec(caller, tool, tool_call_id)
    return _tuple_new(CheckedCall, (caller, spec, tool_call_id))  # in C: see ``_tuple_new``


def checked_spec(caller: Caller, tool: str, tool_call_id: str) -> ToolSpec:
    """The tool's spec, once ``check_call``'s checks pass (the same checks, the same
    refusals): what ``FormService.call`` runs on, without the ``CheckedCall`` it would
    unpack again at once (a named tuple's making and freeing cost ~1.4k instructions)."""
    conversation_id = caller.conversation_id
    if (
        type(conversation_id) is not str
        or type(tool_call_id) is not str
        or _ids_well_formed(f"{conversation_id} {tool_call_id}") is None
    ):  # one is not (or is text of a subclass): each on its own, for the error that says which
        check_id(conversation_id, "conversation id")
        check_id(tool_call_id, "tool_call_id")
    spec = TOOLS_BY_NAME.get(tool)
    if spec is None:
        known = ", ".join(TOOLS_BY_NAME)
        raise BadRequest(f"there is no tool {tool!r}", f"the tools are: {known}")
    return spec


def typed_call(caller: Caller, tool: str, tool_call_id: str) -> CheckedCall:
    """The call a shell's request types checked (by the rules ``check_call`` applies): taken
    as it is, nothing checked again; ``KeyError`` for a tool name no type let through."""
    return CheckedCall(caller, TOOLS_BY_NAME[tool], tool_call_id)


__all__ = ["CheckedCall", "check_call", "checked_spec", "typed_call"]
