"""Chat in the terminal with a model that fills in Formwork's forms: the reference chat loop.

With the local stack running (``make dev``) and ``pip install 'formwork[client]'``::

    OPENAI_API_KEY=... python -m formwork.examples.chat_loop --model openai:gpt-4.1-mini \\
        --url http://127.0.0.1:3000
    python -m formwork.examples.chat_loop \\
        --model bedrock:anthropic.claude-3-5-haiku-20241022-v1:0 --url http://127.0.0.1:3000

``openai:<model>`` is any OpenAI-compatible ``/chat/completions`` endpoint: the key is
``OPENAI_API_KEY``, the endpoint ``OPENAI_BASE_URL`` (default OpenAI's); ``--strict`` gives it
the tools in OpenAI's strict mode, typed for every form you can start, or for the forms named
(``--strict travel-claim,health-check``). ``bedrock:<model id>``
is Amazon Bedrock's Converse API, with boto3's usual credentials and region (boto3 comes with
the ``aws`` extra). The token is ``--token`` or ``FORMWORK_TOKEN`` (default the local stack's
dev token ``dev:alice``); each run is a new conversation unless ``--conversation`` names one.

Each line you type is one turn of ``formwork.agents.chat_loop.ChatAgent``: the status lines go
into the system prompt before every model call, the tools come from ``GET /tools`` in the
model's shape, and each tool call goes to the API under the model's id (printed as it runs).
``docs/clients.md`` says what each part does.
"""

from __future__ import annotations

import argparse
import os
import sys
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import TextIO

from formwork.agents.chat_loop import ChatAgent
from formwork.agents.context import DEFAULT_KEEP_MESSAGES
from formwork.agents.errors import TurnFailed
from formwork.agents.providers import BedrockConverse, OpenAIChat
from formwork.agents.tool_loop import DEFAULT_MAX_STEPS, TurnResult
from formwork.agents.transcript import Entry, Provider
from formwork.client import Formwork

OPENAI_URL = "https://api.openai.com/v1"


def parse(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m formwork.examples.chat_loop",
        description="Chat with a model that fills in Formwork's forms.",
    )
    parser.add_argument("--model", required=True, help="openai:<model> or bedrock:<model id>")
    parser.add_argument("--url", required=True, help="the Formwork API's base URL")
    parser.add_argument("--token", help="bearer token (default $FORMWORK_TOKEN or dev:alice)")
    parser.add_argument("--conversation", help="conversation id (default: a new one)")
    parser.add_argument(
        "--strict",
        nargs="?",
        const="",
        metavar="FORMS",
        help="openai: strict-mode tools, for every form or these (comma-separated)",
    )
    parser.add_argument("--max-steps", type=int, default=DEFAULT_MAX_STEPS)
    parser.add_argument("--keep-messages", type=int, default=DEFAULT_KEEP_MESSAGES)
    return parser.parse_args(argv)


def provider_for(model: str, environ: Mapping[str, str], strict: str | None = None) -> Provider:
    """The provider ``openai:<model>`` or ``bedrock:<model id>`` names; ``strict`` (OpenAI
    only) is ``--strict``'s forms, ``""`` for every form the caller can start."""
    vendor, _, name = model.partition(":")
    if vendor == "openai" and name:
        base_url = environ.get("OPENAI_BASE_URL") or OPENAI_URL
        named = [form.strip() for form in (strict or "").split(",") if form.strip()]
        forms: list[str] | bool = named or strict is not None
        return OpenAIChat(base_url, environ.get("OPENAI_API_KEY", ""), name, strict=forms)
    if strict is not None:
        raise SystemExit("--strict is OpenAI's strict mode: use it with openai:<model>")
    if vendor == "bedrock" and name:
        import boto3

        return BedrockConverse(boto3.client("bedrock-runtime"), name)
    raise SystemExit(f"--model must be openai:<model> or bedrock:<model id>, not {model!r}")


def show(result: TurnResult, out: TextIO) -> None:
    """Each call of the turn in a line (its summary, or its error), then the reply."""
    for done in result.calls:
        said = done.result.get("summary") or done.result.get("error")
        out.write(f"  [{done.call.name} {done.call.id}] {said}\n")
    for problem in result.backend_errors:
        out.write(f"  ! {problem}\n")
    if result.stopped != "reply":
        out.write(f"  (turn ended: {result.stopped})\n")
    out.write(f"model> {result.reply}\n")


def chat(agent: ChatAgent, lines: Iterable[str], out: TextIO, prompt: str = "") -> list[Entry]:
    """One turn per non-blank line of ``lines``; the transcript at the end."""
    transcript: list[Entry] = []
    out.write(prompt)
    out.flush()
    for line in lines:
        if line.strip():
            try:
                result = agent.run_turn(transcript, line.strip())
            except TurnFailed as failure:
                out.write(f"  ! {failure}\n")
                result = failure.partial
            transcript = list(result.transcript)
            show(result, out)
        out.write(prompt)
        out.flush()
    return transcript


def run(
    args: argparse.Namespace, lines: Iterable[str], out: TextIO, environ: Mapping[str, str]
) -> int:
    provider = provider_for(args.model, environ, args.strict)
    token = args.token or environ.get("FORMWORK_TOKEN") or "dev:alice"
    conversation = args.conversation or f"chat-{uuid.uuid4().hex[:8]}"
    with Formwork(args.url, token) as client:
        agent = ChatAgent(
            provider,
            client,
            conversation,
            max_steps=args.max_steps,
            keep_messages=args.keep_messages,
        )
        out.write(f"conversation {conversation} on {args.url}; type to talk, Ctrl-D ends\n")
        chat(agent, lines, out, prompt="you> " if out.isatty() else "")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    return run(parse(argv), sys.stdin, sys.stdout, os.environ)


if __name__ == "__main__":
    sys.exit(main())
