"""Real models as bench agents: Amazon Bedrock Converse and OpenAI-compatible chat completions.

Used only when credentials are in the environment (nothing here looks anywhere else for them).
The providers are the production ones (``formwork.agents.providers``: ``BedrockConverse``,
``OpenAIChat``); ``ModelAgent`` keeps the conversation as their vendor-neutral transcript and
turns the harness's observations into it. Offline, both are tested against recorded responses
(``recordings/``): the transport is injected (a boto3-like client with ``converse``, or a
``post(url, headers, body)`` function).

What the model is given: a short system prompt (the forms it can start, and the tier-0 status
lines of its open forms, rebuilt before every call), the user's utterances, and the form tools
in the vendor's shape from ``forms.surface.formats.tool_definitions``. Token usage is the
provider's own count. A completion cut off by the output limit (``stopReason: max_tokens`` /
``finish_reason: length``) is counted as truncated; ``max_tokens`` defaults high (8192) because
1024 starved reasoning models in the design's first eval.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from bench.forms_bench.harness import catalog
from bench.forms_bench.model import Action, Message, Observation, ToolCall, Usage
from forms.surface.tools import TOOLS
from formwork.agents.providers import DEFAULT_MAX_TOKENS, BedrockConverse, OpenAIChat
from formwork.agents.transcript import (
    AssistantTurn,
    CallResult,
    Entry,
    Provider,
    ToolResults,
    UserText,
)

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "BedrockConverse",
    "Budget",
    "ModelAgent",
    "OpenAIChat",
    "Provider",
    "budget_from_env",
    "model_agent_factory",
    "system_prompt",
]


def system_prompt(status: Sequence[str]) -> str:
    forms = "; ".join(f"{f.id} ({f.title})" for f in catalog().values())
    lines = "\n".join(status) if status else "(none open)"
    return (
        "You collect information from the user by filling in forms with the form tools. "
        f"Forms you can start: {forms}. Save what the user tells you as soon as they say it, "
        "and tell the user plainly about anything the tools report that concerns them. Reply "
        "in plain text when you need something from the user.\n\nOpen forms:\n" + lines
    )


class ModelAgent:
    """An ``Agent`` backed by a provider; the harness collects usage with ``take_usage``.

    It keeps the conversation as a transcript: the user's utterance when a turn starts, the
    results the harness ran since the last call, and each response with text or calls."""

    def __init__(self, name: str, provider: Provider) -> None:
        self.name = name
        self.provider = provider
        self.transcript: list[Entry] = []
        self._turn = -1
        self._seen = 0
        self._usage: list[Usage] = []

    def act(self, observation: Observation) -> Action:
        if observation.turn != self._turn:
            self._turn, self._seen = observation.turn, 0
            self.transcript.append(UserText(observation.user.text))
        elif observation.results[self._seen :]:
            results = tuple(
                CallResult(done.call.id, done.result) for done in observation.results[self._seen :]
            )
            self.transcript.append(ToolResults(results))
        self._seen = len(observation.results)
        done = self.provider.complete(system_prompt(observation.status), self.transcript, TOOLS)
        spent = done.usage
        self._usage.append(
            Usage(spent.input_tokens, spent.output_tokens, spent.truncated, spent.stop_reason)
        )
        if done.text or done.calls:
            self.transcript.append(AssistantTurn(done.text, done.calls))
        if done.calls:
            return [ToolCall(c.name, c.args, c.id) for c in done.calls]
        return Message(done.text)

    def take_usage(self) -> list[Usage]:
        taken, self._usage = self._usage, []
        return taken


# ---------------------------------------------------------------- environment, spend cap


@dataclass
class Budget:
    """A spend cap checked before each cell, from the provider's own token counts."""

    max_usd: float
    input_per_1k: float
    output_per_1k: float
    spent_usd: float = 0.0

    def cost(self, usage: Sequence[Usage]) -> float:
        return sum(
            u.input_tokens / 1000 * self.input_per_1k + u.output_tokens / 1000 * self.output_per_1k
            for u in usage
        )

    def allows_another_cell(self) -> bool:
        return self.spent_usd < self.max_usd

    def charge(self, usage: Sequence[Usage]) -> None:
        self.spent_usd += self.cost(usage)

    def prices(self) -> dict[str, float]:
        return {"input": self.input_per_1k, "output": self.output_per_1k}


def budget_from_env(env: Mapping[str, str]) -> tuple[Budget | None, str | None]:
    try:
        cap = float(env.get("FORMS_BENCH_MAX_USD", "1.00"))
        price_in = env.get("FORMS_BENCH_USD_PER_1K_INPUT")
        price_out = env.get("FORMS_BENCH_USD_PER_1K_OUTPUT")
        if price_in is None or price_out is None:
            return None, (
                "set FORMS_BENCH_USD_PER_1K_INPUT and FORMS_BENCH_USD_PER_1K_OUTPUT (USD per "
                "1,000 tokens) so the spend cap FORMS_BENCH_MAX_USD can be enforced"
            )
        return Budget(cap, float(price_in), float(price_out)), None
    except ValueError as exc:
        return None, f"bad number in the bench's price or cap settings: {exc}"


_AWS_CREDENTIALS = (
    "AWS_ACCESS_KEY_ID",
    "AWS_PROFILE",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
)


def model_agent_factory(
    spec: str, env: Mapping[str, str] | None = None
) -> tuple[Callable[[], ModelAgent] | None, str | None]:
    """A factory of fresh agents for ``bedrock:<model-id>`` or ``openai:<model>``, or why not."""
    env = os.environ if env is None else env
    provider, _, model = spec.partition(":")
    if not model:
        return None, "--model takes bedrock:<model-id> or openai:<model>"
    max_tokens = int(env.get("FORMS_BENCH_MAX_TOKENS", str(DEFAULT_MAX_TOKENS)))
    if provider == "bedrock":
        if not any(env.get(name) for name in _AWS_CREDENTIALS):
            return None, (
                "no AWS credentials in the environment (AWS_ACCESS_KEY_ID or AWS_PROFILE, ...); "
                "the bench does not look for them anywhere else"
            )
        region = env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION")
        if not region:
            return None, "set AWS_REGION to the Bedrock region to call"

        def bedrock() -> ModelAgent:
            import boto3

            client = boto3.client("bedrock-runtime", region_name=region)
            return ModelAgent(spec, BedrockConverse(client, model, max_tokens))

        return bedrock, None
    if provider == "openai":
        key = env.get("FORMS_BENCH_OPENAI_API_KEY") or env.get("OPENAI_API_KEY")
        if not key:
            return None, "no FORMS_BENCH_OPENAI_API_KEY (or OPENAI_API_KEY) in the environment"
        base = (
            env.get("FORMS_BENCH_OPENAI_BASE_URL")
            or env.get("OPENAI_BASE_URL")
            or "https://api.openai.com/v1"
        )
        param = env.get("FORMS_BENCH_MAX_TOKENS_PARAM", "max_tokens")

        def openai() -> ModelAgent:
            return ModelAgent(
                spec, OpenAIChat(base, key, model, max_tokens, max_tokens_param=param)
            )

        return openai, None
    return None, f"unknown provider {provider!r}: use bedrock:<model-id> or openai:<model>"
