"""Context defaults over HTTP: API Gateway events through ``formwork.aws.api.lambda_handler``.

The locale a caller's verified token carries fills the empty field that declares
``person.locale`` when a form starts, over the tool route and over MCP, marked as from the
account; each caller gets their own, and a deployment that maps no claims gets none.
"""

from __future__ import annotations

import json
from typing import Any

from forms import FormDef, Step, field
from formwork.config import Settings
from tests.functional.conftest import SETTINGS, Api, build_event
from tests.support import service_for

ALICE: dict[str, str] = {"sub": "alice", "tenant": "acme", "locale": "en-GB"}
BOB: dict[str, str] = {"sub": "bob", "tenant": "acme", "locale": "de-DE", "zoneinfo": "x" * 200}
MARK = "from your account, unconfirmed (resend once confirmed): "


class Profile(Step, title="Profile"):
    name: str = field("Name")
    locale: str = field("Language", memory="person.locale")
    zone: str | None = field("Time zone", memory="person.timezone")


profile = FormDef(id="profile", version=1, title="Profile", steps=[Profile])


def api(settings: Settings = SETTINGS) -> Api:
    """A deployment serving the profile form, without memory: defaults need no fact store."""
    return Api.over(service_for(profile), settings)


def started(over: Api, claims: dict[str, str], conversation: str) -> dict[str, Any]:
    response = over.call("form_start", conversation=conversation, claims=claims, form="profile")
    assert response.status == 200, response
    result: dict[str, Any] = response.json()
    assert result["ok"] is True, result
    return result


def rows_of(over: Api, claims: dict[str, str], conversation: str) -> dict[str, Any]:
    """The field rows of the caller's profile, as a read shows them."""
    read = over.call("form_read", conversation=conversation, claims=claims, form="profile")
    return {row["id"]: row for row in read.json()["fields"]}


def test_each_callers_own_locale_fills_the_field_and_is_marked() -> None:
    over = api()
    # WHEN alice, whose token says en-GB, starts the profile
    alice = started(over, ALICE, "conv-a")
    # THEN her language is filled from her account, and the result says so
    assert "filled 1 from your account, unconfirmed (locale)" in alice["summary"]
    assert alice["status_line"].splitlines()[-1] == MARK + "Language en-GB"
    rows = rows_of(over, ALICE, "conv-a")
    assert rows["locale"]["value"] == "en-GB"
    assert rows["locale"]["memory"] == "from your account; unconfirmed"
    # AND bob, of the same tenant, gets his own (his oversized zone claim ignored, not refused)
    bob = started(over, BOB, "conv-b")
    assert bob["status_line"].splitlines()[-1] == MARK + "Language de-DE"
    bob_rows = rows_of(over, BOB, "conv-b")
    assert bob_rows["locale"]["value"] == "de-DE"
    assert "value" not in bob_rows["zone"]
    # AND the conversation's status lines carry the mark for the system prompt
    line = over.status("conv-a", claims=ALICE).json()["lines"][0]
    assert MARK + "Language en-GB" in line


def test_a_locale_in_a_header_or_the_query_is_never_read() -> None:
    # GIVEN carol, whose token carries no locale, sending one in headers and the query
    over = api()
    claims = {"sub": "carol", "tenant": "acme"}
    envelope = {"tool_call_id": "call-c", "input": {"form": "profile"}}
    event = build_event(
        "POST",
        "/conversations/conv-c/tools/form_start",
        body=json.dumps(envelope),
        headers={"locale": "fr-FR", "accept-language": "fr-FR", "x-locale": "fr-FR"},
        query={"locale": "fr-FR"},
        claims=claims,
    )
    # WHEN the form starts / THEN nothing is filled: only the verified claims count
    response = over.send(event)
    assert response.status == 200 and response.json()["ok"] is True, response
    assert "account" not in response.json()["summary"]
    assert "value" not in rows_of(over, claims, "conv-c")["locale"]


def test_a_deployment_mapping_no_claims_fills_nothing() -> None:
    over = api(Settings(tenant_claim="tenant", context_claims=()))
    result = started(over, ALICE, "conv-a")
    assert "account" not in result["summary"]
    assert "value" not in rows_of(over, ALICE, "conv-a")["locale"]


def test_over_mcp_the_same_claims_fill_the_same_field() -> None:
    over = api()
    call = {"name": "form_start", "arguments": {"form": "profile"}}
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call})
    headers = {
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2025-11-25",
    }
    response = over.send(
        build_event("POST", "/conversations/conv-m/mcp", body=body, claims=ALICE, headers=headers)
    )
    assert response.status == 200, response
    result = response.json()["result"]["structuredContent"]
    assert "filled 1 from your account, unconfirmed (locale)" in result["summary"]
    assert rows_of(over, ALICE, "conv-m")["locale"]["value"] == "en-GB"
