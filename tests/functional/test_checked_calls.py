"""The principal, the conversation id, the tool and the tool-call id are checked once per call
(issue 25 item 4): the shell verifies the principal and hands the service a ``CheckedCall``
(``forms.app.checked``), which the service does not check again. The HTTP route's request types
are its checks; a Bedrock invocation is checked by ``check_call`` in its shell; a caller that
names the parts itself is checked by the service."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from forms.app import checked
from forms.app.conversation import Caller
from forms.errors import BadRequest
from forms.surface.tools import check_id
from formwork.aws.bedrock_agent import lambda_handler
from formwork.aws.local import LocalContext
from formwork.bootstrap import App
from tests.functional.conftest import ALICE, Api, build_event, load_event
from tests.support import service_for

IDS = ["conversation id", "tool_call_id"]
"""What ``check_call`` checks of a call's ids, in order."""


@pytest.fixture
def checks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What ``check_call`` checks, by name, in order, from here on: both ids at once (one
    match of the two, ``IDS``), or one id on its own (``check_id``, when the two did not
    match, for the error that says which)."""
    seen: list[str] = []
    both = checked._ids_well_formed

    def counted(value: str, what: str) -> str:
        seen.append(what)
        return check_id(value, what)

    def counted_both(ids: str) -> object:
        seen.extend(IDS)
        return both(ids)

    monkeypatch.setattr(checked, "check_id", counted)
    monkeypatch.setattr(checked, "_ids_well_formed", counted_both)
    return seen


def test_an_http_tool_call_is_checked_by_its_request_types_alone(
    api: Api, checks: list[str]
) -> None:
    # WHEN a tool is called over HTTP
    answer = api.call("form_list")
    # THEN it ran, and nothing was checked after the route's types
    assert answer.status == 200 and answer.json()["ok"] is True
    assert checks == []
    # AND a malformed conversation id is still the route's 400
    assert api.call("form_list", conversation="no spaces").status == 400


def test_an_mcp_tool_call_is_checked_by_its_shell_alone(api: Api, checks: list[str]) -> None:
    # WHEN a tool is called over MCP (the route's type checked the conversation id, the
    # server the tool's name, and the call's id was made usable)
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "form_list", "arguments": {}},
    }
    headers = {
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2025-11-25",
    }
    event = build_event(
        "POST", "/conversations/chat-1/mcp", body=json.dumps(message), claims=ALICE, headers=headers
    )
    answer = api.send(event)
    # THEN it ran, and the service checked nothing again
    assert answer.status == 200 and answer.json()["result"]["isError"] is False
    assert checks == []


def test_a_bedrock_invocation_is_checked_once_in_its_shell(app: App, checks: list[str]) -> None:
    # WHEN the agent starts the travel claim
    start = copy.deepcopy(load_event("bedrock_agent_form_start"))
    response: dict[str, Any] = lambda_handler(start, LocalContext(), app=app)
    # THEN the conversation id and the tool-call id were each checked once
    assert response["response"]["httpStatusCode"] == 200
    assert checks == IDS


def test_a_call_naming_its_parts_is_checked_once_by_the_service(checks: list[str]) -> None:
    service = service_for()
    alice = Caller("acme/alice", "conv-1")
    # WHEN a caller that checked nothing calls a tool
    assert service.call(alice, "form_list", "c1", {})["ok"] is True
    # THEN the service checked each part once
    assert checks == IDS
    # AND a malformed one, or a tool that is not one, is refused as data, nothing run
    bad = service.call(Caller("acme/alice", "no spaces"), "form_list", "c2", {})
    unknown = service.call(alice, "form_lists", "c3", {})
    assert (bad["error"], unknown["error"]) == ("bad_request", "bad_request")
    assert unknown["message"] == "there is no tool 'form_lists'"
    assert bad["message"].startswith("conversation id must be")


@pytest.mark.parametrize(
    ("conversation", "call_id", "refused"),
    [
        ("conv-1", "c1", None),
        ("no spaces", "c1", "conversation id"),
        ("conv-1", "c 1", "tool_call_id"),
        ("conv-1 c1", "c1", "conversation id"),
        ("conv-1", "", "tool_call_id"),
        ("", "c1", "conversation id"),
        ("conv-1\n", "c1", "conversation id"),
        ("conv-1", "c1\n", "tool_call_id"),
        ("a" * 128, "b" * 128, None),
        ("a" * 129, "c1", "conversation id"),
        ("conv-1", "-c1", "tool_call_id"),
        ("bad!", "bad!", "conversation id"),
    ],
)
def test_both_ids_checked_at_once_refuse_as_each_alone(
    conversation: str, call_id: str, refused: str | None
) -> None:
    # WHEN the two ids are checked together, THEN the call passes exactly when each passes
    # alone, and a refusal names the first that does not (the same error as ``check_id``'s)
    caller = Caller("acme/alice", conversation)
    alone: str | None = None
    for value, what in ((conversation, "conversation id"), (call_id, "tool_call_id")):
        try:
            check_id(value, what)
        except BadRequest:
            alone = what
            break
    assert alone == refused
    if refused is None:
        assert checked.check_call(caller, "form_fill", call_id).tool_call_id == call_id
        return
    with pytest.raises(BadRequest) as error:
        checked.check_call(caller, "form_fill", call_id)
    assert error.value.args[0].startswith(refused + " must be")
