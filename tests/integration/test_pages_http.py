"""The form page over HTTP, end to end: the local stack as ``make dev`` runs it.

One ``LocalStack`` for the module (AWS's DynamoDB Local, the table and the routes from
``template.yaml``, the real handler in local execution environments, the local gateway). An
agent fills alice's travel claim through the tool route and changes the mode of travel, so the
flight number is held; her backend mints a page link with her dev token; a browser with no
token opens it (plain ``urllib``, redirects not followed, so each step is seen): its entry
page spends nothing, another site's post of it is refused, the entry page's button gets the
session cookie, and the page shows the held answer. The link does not open twice, bob gets no
link to her instance, and the used link is recorded in the table.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from formwork.infra.local.dynamodb_local import DynamoDBLocal
from formwork.infra.local.stack import LocalStack
from tests.integration.stacks import local_stack

ALICE = "dev:acme:alice"
BOB = "dev:acme:bob"


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


OPENER = urllib.request.build_opener(NoRedirect)
FROM_THE_PAGE = {"Sec-Fetch-Site": "same-origin"}
"""What a browser says of a post made by a page of the API's own origin (the entry page's
button)."""


def fetch(
    url: str,
    method: str = "GET",
    body: Any = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, dict[str, str], list[str], str]:
    """Status, headers (lower-case names), Set-Cookie values and body text."""
    sent = dict(headers or {})
    data = None
    if isinstance(body, bytes):  # a form's post
        sent["Content-Type"] = "application/x-www-form-urlencoded"
        data = body
    elif body is not None:
        sent["Content-Type"] = "application/json"
        data = json.dumps(body).encode()
    request = urllib.request.Request(url, data, sent, method=method)
    try:
        response = OPENER.open(request, timeout=30)
    except urllib.error.HTTPError as error:
        response = error
    with response:
        cookies = response.headers.get_all("Set-Cookie") or []
        found = {k.lower(): v for k, v in response.headers.items()}
        return response.status, found, cookies, response.read().decode()


@pytest.fixture(scope="module")
def stack(dynamodb_local: DynamoDBLocal) -> Iterator[LocalStack]:
    with local_stack(dynamodb_local) as running:
        yield running


def call(stack: LocalStack, tool: str, call_id: str, **tool_input: Any) -> dict[str, Any]:
    status, _, _, text = fetch(
        f"{stack.api_url}/conversations/conv-p/tools/{tool}",
        "POST",
        {"tool_call_id": call_id, "input": tool_input},
        {"Authorization": f"Bearer {ALICE}"},
    )
    assert status == 200, text
    result: dict[str, Any] = json.loads(text)
    assert result["ok"], result
    return result


def test_a_minted_link_opens_the_page_once_and_shows_a_held_answer(stack: LocalStack) -> None:
    # GIVEN alice's claim by air, then rail: the flight number is held
    started = call(
        stack,
        "form_start",
        "p-1",
        form="travel-claim",
        values={"mode": "air", "flight_number": "TP1234"},
    )
    instance = started["instance"]
    call(stack, "form_fill", "p-2", form="travel-claim", values={"mode": "rail"})
    # WHEN her backend mints a page link
    mint = f"{stack.api_url}/conversations/conv-p/page-links"
    status, _, _, text = fetch(
        mint, "POST", {"instance_id": instance}, {"Authorization": f"Bearer {ALICE}"}
    )
    assert status == 200, text
    url = json.loads(text)["url"]
    # THEN it points at the local stack itself, over plain HTTP
    assert url.startswith(stack.api_url + "/pages/enter/v1.")
    # AND a browser without any token opens it: its entry page, no session (only the
    # browser's entry cookie, not Secure on plain HTTP), nothing spent
    status, _, cookies, entry = fetch(url)
    assert status == 200 and "Open your form" in entry
    (given,) = cookies
    assert given.startswith("fwe=") and "Path=/pages/enter/" in given and "Secure" not in given
    assert not ledger_items(stack)
    # AND another site's post of it is refused, and spends nothing
    status, _, cookies, refused = fetch(url, "POST", b"", {"Sec-Fetch-Site": "cross-site"})
    assert status == 404 and not cookies and not ledger_items(stack)
    # AND the entry page's button (a post from this origin) is a 303 to the page with an
    # HttpOnly cookie, not Secure on plain HTTP
    status, headers, cookies, _ = fetch(url, "POST", b"", FROM_THE_PAGE)
    assert status == 303 and headers["location"] == f"/pages/forms/{instance}"
    (cookie,) = cookies
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Secure" not in cookie
    pair = cookie.split(";", 1)[0]
    status, headers, _, page = fetch(stack.api_url + headers["location"], headers={"Cookie": pair})
    assert status == 200, page
    assert headers["content-security-policy"].startswith("default-src 'none'")
    assert headers["x-frame-options"] == "DENY" and headers["cache-control"] == "no-store"
    assert 'data-field="flight_number"' in page and "TP1234" in page and "Held" in page
    # AND its stylesheet is served from the package, cacheable
    sheet = page.split('rel="stylesheet" href="', 1)[1].split('"', 1)[0]
    status, headers, _, css = fetch(stack.api_url + sheet.replace("&amp;", "&"))
    assert status == 200 and "max-age=31536000" in headers["cache-control"] and "main" in css
    # AND the link does not open a second time, nor does a page without the cookie
    again = fetch(url, "POST", b"", FROM_THE_PAGE)
    bare = fetch(stack.api_url + f"/pages/forms/{instance}")
    assert again[0] == bare[0] == 404 and again[3] == bare[3] == refused
    # AND bob, of the same tenant, gets no link to her instance
    status, _, _, text = fetch(
        mint, "POST", {"instance_id": instance}, {"Authorization": f"Bearer {BOB}"}
    )
    assert status == 404 and json.loads(text)["error"] == "not_found"
    # AND the used link is recorded under alice's principal, with the table's TTL attribute
    items = ledger_items(stack)
    assert len(items) == 1 and "expires_at" in items[0]


def ledger_items(stack: LocalStack) -> list[dict[str, Any]]:
    """The used page links the table records for alice."""
    items: list[dict[str, Any]] = stack.dynamodb_client().query(
        TableName=stack.table_name,
        KeyConditionExpression="pk = :pk",
        ExpressionAttributeValues={":pk": {"S": "PL#acme/alice"}},
    )["Items"]
    return items
