"""Agents over the builder tools: a model building a form in small tool calls.

- ``transcript``: the conversation in no vendor's shape (``UserText``, ``AssistantTurn``,
  ``ToolResults``), a model response (``Completion``, ``Usage``) and the ``Provider`` port;
- ``providers``: ``BedrockConverse`` and ``OpenAIChat``, stateless over the transcript;
- ``backends``: where the tool calls go, the ``Backend`` port with ``ServiceBackend`` (a
  ``BuilderService`` in this process) and ``HttpBackend`` (the builder's HTTP API);
- ``context``: the system prompt (instructions, the draft's snapshot, the selection line)
  and history compaction;
- ``builder_loop``: ``BuilderAgent``, one user turn with its step cap and abort.

Loaded only by a chat backend that imports it: the Lambda handlers never do
(``docs/builder.md``, "The builder agent loop").
"""

from formwork.agents.backends import (
    BACKEND_UNAVAILABLE,
    Backend,
    HttpBackend,
    ServiceBackend,
    backend_unavailable,
    urllib_send,
)
from formwork.agents.builder_loop import (
    DEFAULT_MAX_STEPS,
    Abort,
    BuilderAgent,
    CallOutcome,
    StopReason,
    TurnResult,
)
from formwork.agents.context import (
    BUILDER_INSTRUCTIONS,
    DEFAULT_KEEP_MESSAGES,
    Compacted,
    compact,
    snapshot,
    system_prompt,
)
from formwork.agents.errors import AgentError, BackendUnavailable, TurnFailed
from formwork.agents.providers import (
    DEFAULT_MAX_TOKENS,
    BedrockConverse,
    OpenAIChat,
    chat_messages,
    converse_messages,
    urllib_post,
)
from formwork.agents.transcript import (
    AssistantTurn,
    Completion,
    Entry,
    Provider,
    ToolCall,
    ToolResult,
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
    "Compacted",
    "Completion",
    "Entry",
    "HttpBackend",
    "OpenAIChat",
    "Provider",
    "ServiceBackend",
    "StopReason",
    "ToolCall",
    "ToolResult",
    "ToolResults",
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
    "safe_call_id",
    "snapshot",
    "system_prompt",
    "urllib_post",
    "urllib_send",
]
