"""The MCP route through the Lambda handler, with payload v2 events as API Gateway sends them:
what it answers to each method, who it answers as, and a deployment without the SDK."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

from functions.api import lambda_handler
from functions.local import LocalContext
from tests.functional.conftest import ALICE, BOB, SETTINGS, Response, build_event, make_service
from tests.support import app_for

PATH = "/conversations/chat-1/mcp"
ACCEPT = {"accept": "application/json, text/event-stream"}
LEGACY = {**ACCEPT, "mcp-protocol-version": "2025-11-25"}


def rpc(method: str, params: dict[str, Any] | None = None, id: int = 1) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params or {}})


class Api:
    def __init__(self) -> None:
        self.service = make_service()
        self.app = app_for(self.service, settings=SETTINGS)

    def send(self, event: dict[str, Any]) -> Response:
        return Response(lambda_handler(event, LocalContext(), app=self.app))

    def post(
        self, body: str, claims: dict[str, Any] | None = ALICE, headers: dict[str, str] = LEGACY
    ) -> Response:
        return self.send(build_event("POST", PATH, body=body, claims=claims, headers=headers))


def test_an_initialize_is_answered_as_json_without_a_session() -> None:
    api = Api()
    response = api.post(
        rpc(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"},
            },
        ),
        headers=ACCEPT,
    )
    assert response.status == 200
    assert response.headers["content-type"] == "application/json"
    assert "mcp-session-id" not in response.headers
    assert response.headers["cache-control"] == "no-store"
    result = response.json()["result"]
    assert result["serverInfo"]["name"] == "formwork"
    assert set(result["capabilities"]) >= {"tools", "resources", "prompts"}
    assert "chat-1" in result["instructions"]


def test_a_tool_call_is_made_as_the_verified_principal() -> None:
    # GIVEN alice's call in chat-1, with a principal named in the payload's _meta
    api = Api()
    call = {"name": "form_start", "arguments": {"form": "travel-claim"}}
    started = api.post(rpc("tools/call", {**call, "_meta": {"principal": "acme/bob"}}))
    assert started.status == 200
    assert started.json()["result"]["structuredContent"]["ok"] is True
    # THEN the form is alice's (the claims), not bob's
    listed = api.post(rpc("tools/call", {"name": "form_list", "arguments": {}}), claims=BOB)
    assert listed.json()["result"]["structuredContent"]["started"] == []
    mine = api.post(rpc("tools/call", {"name": "form_list", "arguments": {}}))
    assert len(mine.json()["result"]["structuredContent"]["started"]) == 1


def test_a_notification_is_accepted_with_no_body() -> None:
    api = Api()
    body = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})
    response = api.post(body)
    assert (response.status, response.text) == (202, "")


@pytest.mark.parametrize("method", ["GET", "DELETE"])
def test_get_and_delete_are_not_allowed_on_a_stateless_endpoint(method: str) -> None:
    response = Api().send(build_event(method, PATH, headers=ACCEPT))
    assert response.status == 405
    assert response.headers["allow"] == "POST"
    assert response.json()["error"] == "method_not_allowed"


def test_no_token_no_mcp() -> None:
    response = Api().post(rpc("tools/list"), claims=None)
    assert response.status == 401


def test_a_malformed_conversation_id_is_refused_before_anything_runs() -> None:
    api = Api()
    event = build_event("POST", "/conversations/bad%20id/mcp", body=rpc("tools/list"))
    event["rawPath"] = event["requestContext"]["http"]["path"] = "/conversations/bad id/mcp"
    response = api.send(event)
    assert 400 <= response.status < 500
    assert response.status != 404


def test_a_deployment_without_the_sdk_answers_501(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN an environment in which the SDK cannot be imported
    for name in [m for m in sys.modules if m == "mcp" or m.startswith(("mcp.", "formwork.mcp"))]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "mcp", None)
    # WHEN an MCP request comes
    response = Api().post(rpc("tools/list"))
    # THEN it is refused as not implemented here, saying what to install
    assert response.status == 501
    assert response.json()["error"] == "mcp_unavailable"
    assert "formwork[mcp]" in response.json()["message"]


def test_the_mcp_routes_are_declared_behind_the_tool_routes_authorizer() -> None:
    from infra.local.dynamodb import load_template

    template = load_template()
    events = template["Resources"]["ToolsFunction"]["Properties"]["Events"].values()
    mcp = [e["Properties"] for e in events if e["Properties"].get("Path", "").endswith("/mcp")]
    # THEN the three methods are routes of the API, each behind its default JWT authorizer
    assert sorted(p["Method"] for p in mcp) == ["DELETE", "GET", "POST"]
    assert {p["Path"] for p in mcp} == {"/conversations/{conversation_id}/mcp"}
    assert all("Auth" not in p and p["ApiId"] == {"Ref": "ToolsApi"} for p in mcp)
    assert template["Resources"]["ToolsApi"]["Properties"]["Auth"]["DefaultAuthorizer"] == (
        "JwtAuthorizer"
    )
