"""A reference chat loop: a model filling in forms through Formwork's tool API.

``ChatAgent`` is the builder agent's sibling for the form tools. It runs the shared tool loop
(``formwork.agents.tool_loop``: one user turn, the step cap, Stop, truncation, a provider that
fails) with a provider (``BedrockConverse``, ``OpenAIChat``) and a ``formwork.client.Formwork``
for one conversation:

* the tools: ``GET /tools?format=<the provider's shape>`` (``bedrock``, ``openai``, or
  ``openai-strict`` with the forms the strict tools are typed for, ``tool_forms``), read on the
  first turn and sent to the model exactly as served;
* the system prompt, built before every model call: the instructions, the summary of older
  messages (past ``keep_messages``), and the conversation's status lines, read from the API
  each time (``GET /conversations/{id}/status``), so the model always sees what is pending
  after the calls it just made. Status lines that cannot be read are said in the prompt and
  noted in ``TurnResult.backend_errors``;
* each tool call forwarded through the client (``POST /conversations/{id}/tools/{name}``)
  under the provider's tool-use id as the ``tool_call_id`` and with the tools' format (in
  strict mode that is what makes the API read the model's ``null`` answers as not given), and
  its result, exactly as the API answered it, returned to the model. The client sends a
  failed call and a ``busy`` result again under that same id (a replay, never a second write).

A tool's refusal is data for the model, and so is a refusal of the call by the API (an unknown
tool, an input that is not an object, too large). What the model cannot fix (the API down
after the client's retries, a token it refuses) comes back to the model as
``backend_unavailable`` and is listed in ``TurnResult.backend_errors``. Stop: calls of the
response not yet sent when the abort is set are answered ``cancelled`` without being sent (the
form API has no cancelled record), and the turn ends.

The loop keeps nothing between turns but the tools it read: the caller keeps the transcript
(``TurnResult.transcript``) and the form keeps the answers.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from forms.surface.unavailable import forms_unavailable
from formwork.agents.context import DEFAULT_KEEP_MESSAGES, summary_section
from formwork.agents.errors import TurnFailed
from formwork.agents.providers import PostJson, ServedTool
from formwork.agents.tool_loop import (
    DEFAULT_MAX_STEPS,
    Abort,
    Turn,
    TurnResult,
    run_turn,
)
from formwork.agents.transcript import Entry, JsonDict, Provider, ToolCall, UserText
from formwork.client import ClientError, Formwork, RequestRefused

FORM_INSTRUCTIONS = """\
You help a person fill in forms by talking with them, and you record their answers only \
through the form tools. Call form_list to see the forms you can start; start one with \
form_start, passing every answer the person has already given.

Save each answer as soon as the person gives it, whatever step it belongs to: form_fill \
takes answers for any fields of the form in one call. Ask for what the status lines below \
list as pending, a few questions at a time, in plain words; never show ids or JSON to the \
person. Every result says what was saved and what was refused, and why: fix the call, or ask \
the person. Say something was saved only when a result says so.

When a form is complete, sum up the answers in a sentence or two and ask the person to \
confirm; submit it (form_fill with "submit": true) only once they do."""
"""The standing instructions of a form-filling assistant, the first part of every prompt."""

CANCELLED = "cancelled"
MODEL_REFUSALS = frozenset({413, 422})
"""HTTP statuses whose refusal is about the call the model made (an input too large, or not
an object), with the 404 ``unknown_tool``: data for the model. Any other refusal is the
host's (a malformed conversation id, a wrong base URL) and is ``backend_unavailable``."""

_log = logging.getLogger(__name__)


def chat_prompt(
    lines: Sequence[str],
    summary: Sequence[str] = (),
    instructions: str = FORM_INSTRUCTIONS,
    problem: str | None = None,
) -> str:
    """The instructions, the summary of older messages (if any) and the status lines of the
    conversation's open forms. ``problem`` replaces the lines when they could not be read."""
    parts = [instructions]
    if summary:
        parts.append(summary_section(summary))
    if problem is not None:
        parts.append(
            f"The forms' status could not be read just now ({problem}); form_list and "
            "form_read show where they stand."
        )
    elif lines:
        parts.append("Open forms in this conversation, as they stand now:\n" + "\n".join(lines))
    else:
        parts.append("No form is open in this conversation.")
    return "\n\n".join(parts)


def cancelled_result() -> JsonDict:
    """The result of a call the person stopped before it was sent."""
    return {
        "ok": False,
        "error": CANCELLED,
        "message": "The person stopped this turn before the call was sent; nothing was saved.",
        "hint": "Wait for what the person says next.",
    }


class ChatAgent:
    """A model filling in forms in one conversation through Formwork's tool API, one user
    turn at a time (the module says what a turn does).

    ``tool_format`` and ``tool_forms`` name the tools' shape and, for a strict one, the forms
    they are typed for; by default the provider's (``OpenAIChat(strict=...)`` sets both)."""

    def __init__(
        self,
        provider: Provider,
        client: Formwork,
        conversation_id: str,
        *,
        tool_format: str | None = None,
        tool_forms: Sequence[str] | None = None,
        max_steps: int = DEFAULT_MAX_STEPS,
        keep_messages: int = DEFAULT_KEEP_MESSAGES,
        instructions: str = FORM_INSTRUCTIONS,
    ) -> None:
        if max_steps < 1 or keep_messages < 1:
            raise ValueError("max_steps and keep_messages must be at least 1")
        chosen = tool_format or getattr(provider, "tool_format", None)
        if not isinstance(chosen, str) or not chosen:
            raise ValueError("name the tool_format of a provider that has none")
        self.provider = provider
        self.client = client
        self.conversation_id = conversation_id
        self.tool_format = chosen
        forms = tool_forms if tool_forms is not None else getattr(provider, "tool_forms", None)
        self.tool_forms: tuple[str, ...] | None = None if forms is None else tuple(forms)
        """The forms a strict format's tools are typed for (None: every form the caller can
        start); ``tool_forms=`` or the provider's (``OpenAIChat(strict=[...])``)."""
        self.max_steps = max_steps
        self.keep_messages = keep_messages
        self.instructions = instructions
        self.tools: tuple[ServedTool, ...] | None = None
        """The tools as ``GET /tools`` served them; None until the first turn reads them."""

    def run_turn(
        self, transcript: Sequence[Entry], text: str, *, abort: Abort | None = None
    ) -> TurnResult:
        """Run the person's ``text`` after ``transcript`` until the model replies, the step
        cap, the abort, or a truncated response. ``TurnFailed`` when the model call fails, or
        the tools cannot be read on the first turn."""
        tools = self._tools(transcript, text)
        return run_turn(
            self.provider,
            transcript,
            text,
            tools=tools,
            prompt=self._prompt,
            execute=self._execute,
            max_steps=self.max_steps,
            keep_messages=self.keep_messages,
            abort=abort,
        )

    def _tools(self, transcript: Sequence[Entry], text: str) -> tuple[ServedTool, ...]:
        if self.tools is None:
            try:
                served = self.client.tools(self.tool_format, forms=self.tool_forms)
                self.tools = ServedTool.read(self.tool_format, served)
            except (ClientError, ValueError) as failure:
                partial = Turn([*transcript, UserText(text)]).result("failed")
                raise TurnFailed(f"the tools could not be read: {failure}", partial) from failure
        return self.tools

    def _prompt(self, turn: Turn, summary: tuple[str, ...]) -> str:
        try:
            lines = self.client.status(self.conversation_id).lines
        except ClientError as failure:
            turn.backend_errors.append(f"status: {failure}")
            return chat_prompt([], summary, self.instructions, str(failure))
        return chat_prompt(lines, summary, self.instructions)

    def _execute(self, turn: Turn, call: ToolCall, cancelled: bool) -> JsonDict:
        if cancelled:
            return cancelled_result()
        try:
            result = self.client.call(
                self.conversation_id, call.name, call.args, call.id, format=self.tool_format
            )
        except RequestRefused as refused:
            if refused.status in MODEL_REFUSALS or refused.code == "unknown_tool":
                return {
                    "ok": False,
                    "error": refused.code or "bad_request",
                    "message": _message(refused.body, refused.message),
                }
            failure: Exception = refused
        except ClientError as unavailable:
            failure = unavailable
        except Exception as bug:  # a client's bug must not leave a call unanswered
            _log.exception("forwarding %s (%s) failed", call.name, call.id)
            failure = bug
        else:
            return result.to_dict()
        turn.backend_errors.append(f"{call.name} ({call.id}): {failure}")
        status = failure.status if isinstance(failure, ClientError) else None
        return forms_unavailable(f"HTTP {status}" if status else type(failure).__name__)


def _message(body: Mapping[str, Any] | None, fallback: str) -> str:
    message = body.get("message") if body is not None else None
    return str(message) if message else fallback


def openai_sdk_post(client: Any) -> PostJson:
    """``OpenAIChat``'s transport through the official OpenAI Python SDK: the request body
    goes to ``client.chat.completions.create`` (an ``openai.OpenAI``, or any client of that
    shape), whose answer comes back as JSON. The SDK's own base URL, key, retries and timeouts
    apply; the URL and headers ``OpenAIChat`` passes are not used."""

    def post(url: str, headers: Mapping[str, str], body: Mapping[str, Any]) -> dict[str, Any]:
        del url, headers
        completion = client.chat.completions.create(**body)
        answer: dict[str, Any] = completion.model_dump(mode="json")
        return answer

    return post
