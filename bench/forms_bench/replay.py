"""Recorded provider responses, played back in place of a network (tests and dry runs)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

RECORDINGS = Path(__file__).resolve().parent / "recordings"


def load(name: str) -> list[dict[str, Any]]:
    """The ``responses`` list of ``recordings/<name>.json``."""
    data = json.loads((RECORDINGS / f"{name}.json").read_text(encoding="utf-8"))
    responses: list[dict[str, Any]] = data["responses"]
    return responses


class ReplayBedrockClient:
    """A stand-in for ``boto3.client("bedrock-runtime")``: ``converse`` returns the next
    recorded response and keeps a copy of every request."""

    def __init__(self, responses: list[dict[str, Any]]) -> None:
        self.responses = list(responses)
        self.requests: list[dict[str, Any]] = []

    def converse(self, **request: Any) -> dict[str, Any]:
        self.requests.append(json.loads(json.dumps(request)))
        if not self.responses:
            raise RuntimeError("no recorded response left")
        return self.responses.pop(0)


class ReplayPost:
    """A stand-in for the OpenAI adapter's HTTP POST."""

    def __init__(self, responses: list[dict[str, Any]]) -> None:
        self.responses = list(responses)
        self.requests: list[dict[str, Any]] = []

    def __call__(
        self, url: str, headers: Mapping[str, str], body: Mapping[str, Any]
    ) -> dict[str, Any]:
        self.requests.append(
            {"url": url, "headers": dict(headers), "body": json.loads(json.dumps(body))}
        )
        if not self.responses:
            raise RuntimeError("no recorded response left")
        return self.responses.pop(0)
