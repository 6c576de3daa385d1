"""Agents over Formwork's tools: a model building a form, or filling one in, in small tool calls.

- ``transcript``: the conversation in no vendor's shape (``UserText``, ``AssistantTurn``,
  ``ToolResults``), a model response (``Completion``, ``Usage``) and the ``Provider`` port;
- ``providers``: ``BedrockConverse`` and ``OpenAIChat``, stateless over the transcript, and
  ``ServedTool`` (a tool definition as an API served it);
- ``tool_loop``: what one user turn does, shared by both loops (``run_turn``, ``TurnResult``,
  the step cap, Stop);
- ``backends``: where the builder's tool calls go, the ``Backend`` port with
  ``ServiceBackend`` (a ``BuilderService`` in this process) and ``HttpBackend`` (the builder's
  HTTP API);
- ``context``: the builder's system prompt (instructions, the draft's snapshot, the selection
  line) and history compaction;
- ``builder_loop``: ``BuilderAgent``, one user turn with its step cap and abort;
- ``chat_loop``: ``ChatAgent``, the form tools through ``formwork.client`` (imported on its
  own, ``formwork.agents.chat_loop``: it needs the ``client`` extra, httpx).

Loaded only by a chat backend that imports it: the Lambda handlers never do
(``docs/builder.md``, "The builder agent loop"; ``docs/clients.md``).
"""

from forms.surface.unavailable import BACKEND_UNAVAILABLE
from forms.surface.unavailable import builder_unavailable as backend_unavailable
from formwork.agents.backends import Backend, HttpBackend, ServiceBackend, urllib_send
from formwork.agents.builder_loop import BuilderAgent, new_chat_id
from formwork.agents.context import (
    BUILDER_INSTRUCTIONS,
    DEFAULT_KEEP_MESSAGES,
    Compacted,
    compact,
    snapshot,
    summary_section,
    system_prompt,
)
from formwork.agents.errors import AgentError, BackendUnavailable, TurnFailed
from formwork.agents.providers import (
    DEFAULT_MAX_TOKENS,
    BedrockConverse,
    OpenAIChat,
    ServedTool,
    chat_messages,
    converse_messages,
    urllib_post,
)
from formwork.agents.tool_loop import (
    DEFAULT_MAX_STEPS,
    Abort,
    CallOutcome,
    StopReason,
    Turn,
    TurnResult,
    run_turn,
    unused_ids,
)
from formwork.agents.transcript import (
    AssistantTurn,
    CallResult,
    Completion,
    Entry,
    Provider,
    ToolCall,
    ToolResults,
    Usage,
    UserText,
    dump_transcript,
    load_transcript,
    safe_call_id,
)

__all__ = [
    "BACKEND_UNAVAILABLE",
    "BUILDER_INSTRUCTIONS",
    "DEFAULT_KEEP_MESSAGES",
    "DEFAULT_MAX_STEPS",
    "DEFAULT_MAX_TOKENS",
    "Abort",
    "AgentError",
    "AssistantTurn",
    "Backend",
    "BackendUnavailable",
    "BedrockConverse",
    "BuilderAgent",
    "CallOutcome",
    "CallResult",
    "Compacted",
    "Completion",
    "Entry",
    "HttpBackend",
    "OpenAIChat",
    "Provider",
    "ServedTool",
    "ServiceBackend",
    "StopReason",
    "ToolCall",
    "ToolResults",
    "Turn",
    "TurnFailed",
    "TurnResult",
    "Usage",
    "UserText",
    "backend_unavailable",
    "chat_messages",
    "compact",
    "converse_messages",
    "dump_transcript",
    "load_transcript",
    "new_chat_id",
    "run_turn",
    "safe_call_id",
    "snapshot",
    "summary_section",
    "system_prompt",
    "unused_ids",
    "urllib_post",
    "urllib_send",
]
