"""The MCP routes through the Lambda handler, with payload v2 events as API Gateway sends them:
what they answer to each method, who they answer as, and a deployment without the SDK; the
conversation's form tools (``/conversations/{id}/mcp``) and a draft's builder tools
(``/builder/forms/{form_id}/mcp``)."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

from formwork.aws.api import lambda_handler
from formwork.aws.local import LocalContext
from tests.functional.conftest import ALICE, BOB, SETTINGS, Response, build_event, make_service
from tests.support import app_for

PATH = "/conversations/chat-1/mcp"
BUILDER_PATH = "/builder/forms/contact-us/mcp"
OTHER_TENANT: dict[str, str] = {"sub": "bo", "tenant": "globex"}
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
        self,
        body: str,
        claims: dict[str, Any] | None = ALICE,
        headers: dict[str, str] = LEGACY,
        path: str = PATH,
    ) -> Response:
        return self.send(build_event("POST", path, body=body, claims=claims, headers=headers))

    def builder(self, body: str, claims: dict[str, Any] | None = ALICE) -> Response:
        return self.post(body, claims=claims, path=BUILDER_PATH)


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
    from formwork.infra.local.dynamodb import load_template

    template = load_template()
    events = template["Resources"]["ToolsFunction"]["Properties"]["Events"].values()
    mcp = [
        e["Properties"]
        for e in events
        if e["Properties"].get("Path", "").startswith("/conversations/")
        and e["Properties"]["Path"].endswith("/mcp")
    ]
    # THEN the three methods are routes of the API, each behind its default JWT authorizer
    assert sorted(p["Method"] for p in mcp) == ["DELETE", "GET", "POST"]
    assert {p["Path"] for p in mcp} == {"/conversations/{conversation_id}/mcp"}
    assert all("Auth" not in p and p["ApiId"] == {"Ref": "ToolsApi"} for p in mcp)
    assert template["Resources"]["ToolsApi"]["Properties"]["Auth"]["DefaultAuthorizer"] == (
        "JwtAuthorizer"
    )


# ---------------------------------------------------------------------------- the builder's


def call(name: str, arguments: dict[str, Any], id: int = 1) -> str:
    return rpc("tools/call", {"name": name, "arguments": arguments}, id)


def structured(response: Response) -> dict[str, Any]:
    assert response.status == 200, response
    content: dict[str, Any] = response.json()["result"]["structuredContent"]
    return content


def test_the_builder_endpoint_introduces_the_draft_of_its_path() -> None:
    response = Api().post(
        rpc(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {"elicitation": {}},
                "clientInfo": {"name": "test", "version": "1"},
            },
        ),
        headers=ACCEPT,
        path=BUILDER_PATH,
    )
    assert response.status == 200
    assert "mcp-session-id" not in response.headers
    result = response.json()["result"]
    assert result["serverInfo"]["title"] == "Formwork form builder"
    assert "formwork://builder/forms/contact-us/draft" in result["instructions"]


def test_a_builder_call_edits_the_verified_principals_tenants_draft() -> None:
    # GIVEN alice's create_form, with a principal named in the payload's _meta
    api = Api()
    made = api.builder(
        rpc(
            "tools/call",
            {
                "name": "create_form",
                "arguments": {"title": "Contact us", "steps": [{"title": "Contact"}]},
                "_meta": {"principal": "globex/bo"},
            },
        )
    )
    assert structured(made)["ok"] is True
    added = structured(api.builder(call("add_field", {"field": {"kind": "email", "label": "E"}})))
    assert added["summary"] == 'Added field "e" (email) to step "Contact".'
    # THEN the draft is alice's tenant's (the claims): bob of acme reads it, bo of globex not
    bob = structured(api.builder(call("inspect_form", {}), claims=BOB))
    assert bob["ok"] is True and bob["form"]["title"] == "Contact us"
    other = structured(api.builder(call("inspect_form", {}), claims=OTHER_TENANT))
    assert other["error"] == "no_draft"
    assert api.app.builder.draft("acme/alice", "contact-us").draft.changed_by == "acme/alice"


def test_the_builder_tools_list_is_the_builder_routes() -> None:
    from formwork.aws.builder_routes import builder_tool_definitions

    response = Api().builder(rpc("tools/list"))
    tools = response.json()["result"]["tools"]
    assert [t["name"] for t in tools] == [d["name"] for d in builder_tool_definitions("mcp")]
    assert all("annotations" in t for t in tools)


@pytest.mark.parametrize("method", ["GET", "DELETE"])
def test_get_and_delete_are_not_allowed_on_the_builder_endpoint(method: str) -> None:
    response = Api().send(build_event(method, BUILDER_PATH, headers=ACCEPT))
    assert response.status == 405
    assert response.headers["allow"] == "POST"
    assert response.json()["error"] == "method_not_allowed"


@pytest.mark.parametrize("method", ["POST", "GET", "DELETE"])
def test_no_token_no_builder_mcp(method: str) -> None:
    body = rpc("tools/list") if method == "POST" else None
    event = build_event(method, BUILDER_PATH, body=body, claims=None, headers=LEGACY)
    assert Api().send(event).status == 401


@pytest.mark.parametrize("form_id", ["Contact-Us", "1st-form", "a" * 64])
def test_a_malformed_form_id_is_a_400_as_on_the_builder_routes(form_id: str) -> None:
    api = Api()
    path = f"/builder/forms/{form_id}"
    answer = api.send(build_event("POST", f"{path}/mcp", body=rpc("tools/list"), headers=LEGACY))
    draft = api.send(build_event("GET", path))
    assert (answer.status, answer.json()["error"]) == (400, "bad_request")
    assert draft.status == 400


def test_a_deployment_without_the_sdk_answers_501_on_the_builder_endpoint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in [m for m in sys.modules if m == "mcp" or m.startswith(("mcp.", "formwork.mcp"))]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "mcp", None)
    response = Api().builder(rpc("tools/list"))
    assert response.status == 501
    assert response.json()["error"] == "mcp_unavailable"


def test_the_builder_mcp_routes_are_declared_like_the_builder_routes() -> None:
    from formwork.infra.local.dynamodb import load_template

    events = load_template()["Resources"]["ToolsFunction"]["Properties"]["Events"].values()
    builder = [p for e in events if (p := e["Properties"]).get("Path", "").startswith("/builder")]
    mcp = [p for p in builder if p["Path"] == "/builder/forms/{form_id}/mcp"]
    # THEN the three methods are routes of the tools function's API, and like every other
    # builder route, behind its default authorizer
    assert sorted(p["Method"] for p in mcp) == ["DELETE", "GET", "POST"]
    assert all(p["ApiId"] == {"Ref": "ToolsApi"} and "Auth" not in p for p in builder)


@pytest.mark.parametrize(
    ("method", "label"),
    [("POST", "builder_mcp"), ("GET", "builder_mcp_stream"), ("DELETE", "builder_mcp_session")],
)
def test_each_builder_mcp_route_has_its_own_metric_label(method: str, label: str) -> None:
    from formwork.aws.refusals import route_label

    assert route_label(build_event(method, BUILDER_PATH)) == label


# ---------------------------------------------------------------------------- metrics


def _counted(out: str, metric: str) -> list[tuple[str, str]]:
    found = []
    for line in out.splitlines():
        try:
            emitted = json.loads(line)
        except ValueError:
            continue
        if isinstance(emitted, dict) and metric in emitted:
            found.append((emitted["tool"], emitted["outcome"]))
    return found


def test_tool_calls_over_mcp_are_counted_as_over_the_tool_routes(
    capfd: pytest.CaptureFixture[str],
) -> None:
    # WHEN a host starts a form, reads one that does not exist and calls a tool made up
    api = Api()
    api.post(call("form_start", {"form": "travel-claim"}, 1))
    api.post(call("form_read", {"form": "no-such-form"}, 2))
    api.post(call("x" * 300, {}, 3))
    api.builder(call("create_form", {"title": "Contact us", "steps": [{"title": "Contact"}]}))
    out = capfd.readouterr().out
    # THEN each is a ToolCalls (or BuilderCalls) count with its tool and outcome, as over HTTP;
    # the made-up name is refused by the MCP layer before any call, and never a dimension
    assert _counted(out, "ToolCalls") == [("form_start", "ok"), ("form_read", "unknown_form")]
    assert "x" * 300 not in "".join(line for line in out.splitlines() if "_aws" in line)
    assert _counted(out, "BuilderCalls") == [("create_form", "ok")]
