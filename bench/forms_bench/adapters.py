"""Real models as bench agents: Amazon Bedrock Converse and OpenAI-compatible chat completions.

Used only when credentials are in the environment (nothing here looks anywhere else for them).
Offline, both adapters are tested against recorded responses (``recordings/``): the transport is
injected (a boto3-like client with ``converse``, or a ``post(url, headers, body)`` function).

What the model is given: a short system prompt (the forms it can start, and the tier-0 status
lines of its open forms, rebuilt before every call), the user's utterances, and the tools in
the vendor's shape from ``forms.surface.formats.tool_definitions``. Token usage is the
provider's own count. A completion cut off by the output limit (``stopReason: max_tokens`` /
``finish_reason: length``) is counted as truncated; ``max_tokens`` defaults high (8192) because
1024 starved reasoning models in the design's first eval.
"""

from __future__ import annotations

import json
import os
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from bench.forms_bench.harness import catalog
from bench.forms_bench.model import Action, Message, Observation, ToolCall, ToolResult, Usage
from forms.surface.formats import tool_definitions

DEFAULT_MAX_TOKENS = 8192
Post = Callable[[str, Mapping[str, str], Mapping[str, Any]], dict[str, Any]]


def system_prompt(status: Sequence[str]) -> str:
    forms = "; ".join(f"{f.id} ({f.title})" for f in catalog().values())
    lines = "\n".join(status) if status else "(none open)"
    return (
        "You collect information from the user by filling in forms with the form tools. "
        f"Forms you can start: {forms}. Save what the user tells you as soon as they say it, "
        "and tell the user plainly about anything the tools report that concerns them. Reply "
        "in plain text when you need something from the user.\n\nOpen forms:\n" + lines
    )


class Provider(Protocol):
    def add_user(self, text: str) -> None: ...

    def add_results(self, results: Sequence[ToolResult]) -> None: ...

    def complete(self, system: str) -> tuple[list[ToolCall], str, Usage]: ...


class ModelAgent:
    """An ``Agent`` backed by a provider; the harness collects usage with ``take_usage``."""

    def __init__(self, name: str, provider: Provider) -> None:
        self.name = name
        self.provider = provider
        self._turn = -1
        self._seen = 0
        self._usage: list[Usage] = []

    def act(self, observation: Observation) -> Action:
        if observation.turn != self._turn:
            self._turn, self._seen = observation.turn, 0
            self.provider.add_user(observation.user.text)
        else:
            self.provider.add_results(observation.results[self._seen :])
        self._seen = len(observation.results)
        calls, text, usage = self.provider.complete(system_prompt(observation.status))
        self._usage.append(usage)
        return calls if calls else Message(text)

    def take_usage(self) -> list[Usage]:
        taken, self._usage = self._usage, []
        return taken


class BedrockConverse:
    """Bedrock's Converse API (``bedrock-runtime``), tools in Bedrock's ``toolSpec`` shape."""

    def __init__(self, client: Any, model_id: str, max_tokens: int = DEFAULT_MAX_TOKENS) -> None:
        self.client = client
        self.model_id = model_id
        self.max_tokens = max_tokens
        self.messages: list[dict[str, Any]] = []
        self.tools = tool_definitions("bedrock")

    def _append(self, role: str, content: list[dict[str, Any]]) -> None:
        if self.messages and self.messages[-1]["role"] == role:
            self.messages[-1]["content"].extend(content)
        else:
            self.messages.append({"role": role, "content": content})

    def add_user(self, text: str) -> None:
        self._append("user", [{"text": text}])

    def add_results(self, results: Sequence[ToolResult]) -> None:
        self._append(
            "user",
            [
                {
                    "toolResult": {
                        "toolUseId": done.call.id,
                        "content": [{"json": done.result}],
                        "status": "success" if done.result.get("ok") else "error",
                    }
                }
                for done in results
            ],
        )

    def complete(self, system: str) -> tuple[list[ToolCall], str, Usage]:
        response = self.client.converse(
            modelId=self.model_id,
            system=[{"text": system}],
            messages=self.messages,
            toolConfig={"tools": self.tools},
            inferenceConfig={"maxTokens": self.max_tokens},
        )
        message = response.get("output", {}).get("message", {})
        content = message.get("content") or []
        stop = str(response.get("stopReason", ""))
        usage = response.get("usage", {})
        spent = Usage(
            int(usage.get("inputTokens", 0)),
            int(usage.get("outputTokens", 0)),
            truncated=stop == "max_tokens",
            stop_reason=stop,
        )
        calls = [
            ToolCall(
                str(b["toolUse"]["name"]),
                dict(b["toolUse"].get("input") or {}),
                str(b["toolUse"]["toolUseId"]),
            )
            for b in content
            if "toolUse" in b
        ]
        text = "\n".join(str(b["text"]) for b in content if "text" in b)
        if spent.truncated:
            calls = []  # a cut-off tool call is not a call
        if content and not spent.truncated:
            self._append("assistant", list(content))
        elif text:
            self._append("assistant", [{"text": text}])
        return calls, text, spent


def _urllib_post(url: str, headers: Mapping[str, str], body: Mapping[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers=dict(headers), method="POST"
    )
    with urllib.request.urlopen(request, timeout=180) as response:
        loaded: dict[str, Any] = json.loads(response.read().decode())
        return loaded


class OpenAIChat:
    """Any OpenAI-compatible ``/chat/completions`` endpoint, tools in the ``function`` shape."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        model: str,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        post: Post = _urllib_post,
        max_tokens_param: str = "max_tokens",
    ) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.headers = {"Authorization": f"Bearer {api_key}", "Content-Type": "application/json"}
        self.model = model
        self.max_tokens = max_tokens
        self.max_tokens_param = max_tokens_param
        self.post = post
        self.messages: list[dict[str, Any]] = []
        self.tools = tool_definitions("openai")

    def add_user(self, text: str) -> None:
        self.messages.append({"role": "user", "content": text})

    def add_results(self, results: Sequence[ToolResult]) -> None:
        for done in results:
            self.messages.append(
                {
                    "role": "tool",
                    "tool_call_id": done.call.id,
                    "content": json.dumps(done.result, separators=(",", ":"), ensure_ascii=False),
                }
            )

    def complete(self, system: str) -> tuple[list[ToolCall], str, Usage]:
        body = {
            "model": self.model,
            "messages": [{"role": "system", "content": system}, *self.messages],
            "tools": self.tools,
            self.max_tokens_param: self.max_tokens,
        }
        response = self.post(self.url, self.headers, body)
        choice = (response.get("choices") or [{}])[0]
        message = choice.get("message") or {}
        finish = str(choice.get("finish_reason", ""))
        usage = response.get("usage") or {}
        spent = Usage(
            int(usage.get("prompt_tokens", 0)),
            int(usage.get("completion_tokens", 0)),
            truncated=finish == "length",
            stop_reason=finish,
        )
        text = str(message.get("content") or "")
        calls: list[ToolCall] = []
        if not spent.truncated:
            for raw in message.get("tool_calls") or []:
                function = raw.get("function", {})
                try:
                    args = json.loads(function.get("arguments") or "{}")
                except ValueError:
                    args = {"unparsed_arguments": function.get("arguments")}
                if not isinstance(args, dict):
                    args = {"unparsed_arguments": args}
                calls.append(ToolCall(str(function.get("name")), args, str(raw.get("id"))))
        kept: dict[str, Any] = {"role": "assistant", "content": text or None}
        if calls:
            kept["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": json.dumps(c.args)},
                }
                for c in calls
            ]
        if calls or text:
            self.messages.append(kept)
        return calls, text, spent


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
