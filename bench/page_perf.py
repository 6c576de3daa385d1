"""The form page's cost against the agent's own read: prints a table, asserts nothing.

The issue's goal: a page costs no more than about two tool calls. Both are served by
``functions.api.lambda_handler`` in process, on the DynamoDB adapter over moto's DynamoDB (the
requests go over the loopback network, as on the local stack) and on the in-memory store:

* ``form_read`` of the outline, the agent's read of the whole form (one tool call);
* ``GET /pages/forms/{id}`` with a valid session cookie: the page of the same instance (every
  step, field, value, memory mark and revision history, rendered with Jinja2).

The instance is the travel claim with every answer given and a few corrected, so the page
has history to render. The two are timed interleaved, round by round, and the page is
reported as a ratio to the tool call of the same store and run, with the DynamoDB requests
each one makes (``bench/README.md``: ratios within one run).

Run: ``.venv/bin/python -m bench.page_perf [--rounds N]``.
"""

from __future__ import annotations

import argparse
import copy
import json
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from statistics import median
from typing import Any

from bench.backend.inprocess import quiet_stdout
from bench.backend.stats import duration, ratio, table
from forms.storage.memory import InMemoryFormStore
from formwork.bootstrap import App, bootstrap
from formwork.config import Settings
from functions.api import lambda_handler
from functions.local import LocalContext
from functions.pages import access
from infra.local.dynamodb import LocalDynamoDB, client, create_table

EVENTS = Path(__file__).resolve().parents[1] / "tests" / "events"
CLAIMS = {"sub": "alice", "tenant": "acme"}
ANSWERS: dict[str, Any] = {
    "full_name": "Ana Ferreira",
    "staff_id": "AB1234",
    "destination": "Lisbon",
    "departure_date": "2025-03-03",
    "return_date": "2025-03-07",
    "mode": "air",
    "flight_number": "TP1234",
    "total": 1950,
    "cost_centre": "CC-104",
    "manager_email": "joao.silva@example.com",
    "receipts_attached": True,
}
CORRECTIONS = ({"destination": "Porto"}, {"total": 1800}, {"destination": "Faro"})


def event(method: str, path: str, body: Any = None, claims: bool = True) -> dict[str, Any]:
    built: dict[str, Any] = copy.deepcopy(json.loads((EVENTS / "list_tools.json").read_text()))
    built["routeKey"] = built["requestContext"]["routeKey"] = "$default"
    built["rawPath"] = built["requestContext"]["http"]["path"] = path
    built["requestContext"]["http"]["method"] = method
    built["rawQueryString"] = ""
    if claims:
        built["requestContext"]["authorizer"]["jwt"]["claims"] = dict(CLAIMS)
    else:
        del built["requestContext"]["authorizer"]
        del built["headers"]["authorization"]
    if body is not None:
        built["headers"]["content-type"] = "application/json"
        built["body"] = json.dumps(body)
    return built


def send(app: App, built: dict[str, Any]) -> dict[str, Any]:
    response: dict[str, Any] = lambda_handler(built, LocalContext(), app=app)
    return response


def tool(app: App, conversation: str, name: str, **tool_input: Any) -> dict[str, Any]:
    path = f"/conversations/{conversation}/tools/{name}"
    body = {"tool_call_id": uuid.uuid4().hex, "input": tool_input}
    response = send(app, event("POST", path, body))
    assert response["statusCode"] == 200, response
    result: dict[str, Any] = json.loads(response["body"])
    assert result["ok"], result
    return result


def prepare(app: App) -> tuple[Callable[[], None], Callable[[], None]]:
    """The travel claim answered and corrected; the tool call and the page request on it."""
    conversation = f"bench-{uuid.uuid4().hex[:8]}"
    instance = tool(app, conversation, "form_start", form="travel-claim", values=ANSWERS)[
        "instance"
    ]
    for values in CORRECTIONS:
        tool(app, conversation, "form_fill", form="travel-claim", values=values)
    minted = send(
        app,
        event("POST", f"/conversations/{conversation}/page-links", {"instance_id": instance}),
    )
    url = json.loads(minted["body"])["url"]
    # the entry page's button: the post that spends the link and sets the cookie
    entered = send(app, event("POST", "/pages/enter/" + url.rsplit("/", 1)[1], claims=False))
    cookie = entered["cookies"][0].split(";", 1)[0]
    assert cookie.startswith(access.cookie_name(instance) + "=")

    def read() -> None:
        tool(app, conversation, "form_read", form="travel-claim", part="outline")

    def page() -> None:
        request = event("GET", f"/pages/forms/{instance}", claims=False)
        request["cookies"] = [cookie]
        response = send(app, request)
        assert response["statusCode"] == 200, response["statusCode"]

    return read, page


class Requests:
    """DynamoDB requests made through a boto3 client, counted by operation."""

    def __init__(self, dynamodb: Any) -> None:
        self.count = 0
        dynamodb.meta.events.register("before-call.dynamodb.*", self._seen)

    def _seen(self, **kwargs: Any) -> None:
        self.count += 1


def timed(action: Callable[[], None]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=100)
    rounds = parser.parse_args(argv).rounds
    settings = Settings(tenant_claim="tenant")
    with quiet_stdout():
        rows = measure(settings, rounds)
    print(
        table(
            [
                "store",
                "form_read (outline)",
                "page",
                "page / form_read",
                "DynamoDB requests, read",
                "page",
            ],
            rows,
        )
    )


def measure(settings: Settings, rounds: int) -> list[list[str]]:
    rows = []
    with LocalDynamoDB() as server:
        dynamodb = client(server.endpoint)
        table_name = f"bench-{uuid.uuid4().hex[:8]}"
        create_table(dynamodb, table_name)
        stored = Settings(
            tenant_claim="tenant", table_name=table_name, dynamodb_endpoint_url=server.endpoint
        )
        counted = Requests(dynamodb)
        apps = {
            "in-memory": bootstrap(settings, store=InMemoryFormStore()),
            "DynamoDB (moto)": bootstrap(stored, dynamodb_client=dynamodb),
        }
        for store, app in apps.items():
            read, page = prepare(app)
            for _ in range(3):  # warm: templates compiled, connections open
                read()
                page()
            reads: list[float] = []
            pages: list[float] = []
            requests = {"read": 0, "page": 0}
            for _ in range(rounds):
                before = counted.count
                reads.append(timed(read))
                requests["read"] += counted.count - before
                before = counted.count
                pages.append(timed(page))
                requests["page"] += counted.count - before
            base = median(reads)
            rows.append(
                [
                    store,
                    duration(base),
                    duration(median(pages)),
                    ratio(median(pages), base),
                    f"{requests['read'] / rounds:g}",
                    f"{requests['page'] / rounds:g}",
                ]
            )
    return rows


if __name__ == "__main__":
    main()
