"""The form page's cost against the agent's own read: prints a table, asserts nothing.

The issue's goal: a page costs no more than about two tool calls. Both are served by
``formwork.aws.api.lambda_handler`` in process, on the DynamoDB adapter over moto's DynamoDB (the
requests go over the loopback network, as on the local stack) and on the in-memory store:

* ``form_read`` of the outline, the agent's read of the whole form (one tool call);
* ``GET /pages/forms/{id}`` with a valid session cookie: the page of the same instance (every
  step, field, value, memory mark and revision history, rendered with Jinja2);
* ``form_fill`` of one field, the agent's write (one tool call);
* ``POST /pages/forms/{id}``, the person's correction of another field from the page (the
  session cookie, the CSRF token, the field's head as the page rendered it), answered with
  the 303 back to the page; a browser then loads the page, so the person's save costs the
  post plus a page.

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
from urllib.parse import urlencode

from bench.backend.inprocess import quiet_stdout
from bench.backend.stats import duration, ratio, table
from forms.app.page_writes import head
from forms.storage.memory import InMemoryFormStore
from formwork.aws.api import lambda_handler
from formwork.aws.local import LocalContext
from formwork.aws.pages import access
from formwork.bootstrap import App, bootstrap
from formwork.config import Settings
from formwork.infra.local.dynamodb import LocalDynamoDB, client, create_table
from tests.support import TRAVEL_ANSWERS

EVENTS = Path(__file__).resolve().parents[1] / "tests" / "events"
CLAIMS = {"sub": "alice", "tenant": "acme"}
ANSWERS = TRAVEL_ANSWERS
"""The travel claim answered in full (the tests' own answers: it completes)."""
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


Actions = tuple[Callable[[], None], Callable[[], None], Callable[[], None], Callable[[], None]]


def prepare(app: App) -> Actions:
    """The travel claim answered and corrected; the agent's read and write, the page and the
    person's post on it."""
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

    places = iter(("Porto", "Faro", "Braga", "Evora") * 1_000_000)

    def fill() -> None:
        values = {"destination": next(places)}
        tool(app, conversation, "form_fill", form="travel-claim", values=values)

    session = access.session_for(app, {"cookies": [cookie]}, instance)
    assert session is not None
    csrf = access.csrf_token(access.page_key(app), session)
    pending: list[dict[str, Any]] = []

    def ready_post() -> None:
        """The next post as the page would render it (untimed: the field's head read)."""
        seen = head(app.service.store.get(instance).field("purpose"))
        fields = {"csrf_token": csrf, "key": uuid.uuid4().hex, "action": "answer"}
        fields |= {"field": "purpose", "seen": seen, "as": "text", "value": next(places)}
        request = event("POST", f"/pages/forms/{instance}", claims=False)
        request["cookies"] = [cookie]
        request["headers"]["sec-fetch-site"] = "same-origin"
        request["headers"]["content-type"] = "application/x-www-form-urlencoded"
        fields["version"] = str(app.service.store.get(instance).version)
        request["body"] = urlencode(fields)
        pending.append(request)

    def post() -> None:
        response = send(app, pending.pop())
        assert response["statusCode"] == 303, response["statusCode"]

    post.ready = ready_post  # type: ignore[attr-defined]
    return read, page, fill, post


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
                "form_fill (1 field)",
                "page post",
                "post / form_fill",
                "post + page / form_fill",
                "DynamoDB requests: read / page / fill / post",
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
            read, page, fill, post = prepare(app)
            ready: Callable[[], None] = post.ready  # type: ignore[attr-defined]
            for _ in range(3):  # warm: templates compiled, connections open
                read()
                page()
                fill()
                ready()
                post()
            times: dict[str, list[float]] = {"read": [], "page": [], "fill": [], "post": []}
            requests = dict.fromkeys(times, 0)
            for _ in range(rounds):
                ready()
                for name, action in (
                    ("read", read),
                    ("page", page),
                    ("fill", fill),
                    ("post", post),
                ):
                    before = counted.count
                    times[name].append(timed(action))
                    requests[name] += counted.count - before
            at = {name: median(values) for name, values in times.items()}
            rows.append(
                [
                    store,
                    duration(at["read"]),
                    duration(at["page"]),
                    ratio(at["page"], at["read"]),
                    duration(at["fill"]),
                    duration(at["post"]),
                    ratio(at["post"], at["fill"]),
                    ratio(at["post"] + at["page"], at["fill"]),
                    " / ".join(
                        f"{requests[n] / rounds:g}" for n in ("read", "page", "fill", "post")
                    ),
                ]
            )
    return rows


if __name__ == "__main__":
    main()
