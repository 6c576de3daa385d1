"""What the MCP routes answer to a body that is not one JSON-RPC message: a short JSON-RPC
error with the specification's code (``formwork.mcp.http.envelope_error``), never the SDK's
pydantic dump, and never a silent ``202`` for a request that would get no answer."""

from __future__ import annotations

import json
from typing import Any

import pytest

from formwork.mcp.http import envelope_error
from tests.functional.conftest import ALICE, Api, RecordingStore, build_event

HEADERS = {"accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25"}
PATHS = ["/conversations/chat-1/mcp", "/builder/forms/contact-us/mcp"]
LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}


def post(api: Api, path: str, message: Any) -> tuple[int, dict[str, Any]]:
    body = json.dumps(message)
    response = api.send(build_event("POST", path, body=body, claims=ALICE, headers=HEADERS))
    return response.status, response.json() if response.text else {}


# (what was sent, the JSON-RPC code, the id answered, words the message must hold)
MALFORMED: list[tuple[Any, int, Any, str]] = [
    ([LIST, {**LIST, "id": 2}], -32600, None, "batches"),
    ([], -32600, None, "batches"),
    ("tools/list", -32600, None, "one JSON-RPC message"),
    (None, -32600, None, "one JSON-RPC message"),
    ({}, -32600, None, '"jsonrpc"'),
    ({**LIST, "jsonrpc": "1.0"}, -32600, 1, '"jsonrpc"'),
    ({**LIST, "method": 5}, -32600, None, '"method"'),
    ({**LIST, "id": {"n": 1}}, -32600, None, '"id"'),
    ({**LIST, "id": None}, -32600, None, '"id"'),
    ({**LIST, "id": True}, -32600, None, '"id"'),
    ({**LIST, "id": 1.5}, -32600, None, '"id"'),
    ({**LIST, "params": [1]}, -32602, 1, '"params"'),
    (
        {"jsonrpc": "2.0", "method": "notifications/initialized", "params": 5},
        -32602,
        None,
        "params",
    ),
    ({"jsonrpc": "2.0", "id": 1}, -32600, 1, '"result"'),
    ({"jsonrpc": "2.0", "id": 1, "error": 5}, -32600, 1, '"error"'),
    ({"jsonrpc": "2.0", "id": 1, "error": {"code": "x"}}, -32600, 1, '"code"'),
]


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize(("message", "code", "answered_id", "words"), MALFORMED)
def test_a_body_that_is_not_one_json_rpc_message_gets_a_short_spec_error(
    api: Api,
    store: RecordingStore,
    path: str,
    message: Any,
    code: int,
    answered_id: Any,
    words: str,
) -> None:
    # WHEN the MCP endpoint gets it
    status, answer = post(api, path, message)
    # THEN it is a JSON-RPC error with the specification's code and a one-line message
    assert status == 400
    assert answer["jsonrpc"] == "2.0" and answer["id"] == answered_id
    assert answer["error"]["code"] == code
    text = answer["error"]["message"]
    assert words in text and "\n" not in text and len(text) < 200
    assert "validation error" not in text.lower()
    # AND nothing ran
    assert store.writes == 0


@pytest.mark.parametrize("path", PATHS)
def test_well_formed_messages_still_reach_the_server(api: Api, path: str) -> None:
    # a request, a notification, a response from the client, an unknown method
    assert post(api, path, LIST)[0] == 200
    notification = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert post(api, path, notification)[0] == 202
    assert post(api, path, {"jsonrpc": "2.0", "id": "s1", "result": {}})[0] == 202
    status, answer = post(api, path, {**LIST, "id": "x", "method": "no/such"})
    assert (status, answer["id"], answer["error"]["code"]) == (200, "x", -32601)


def test_a_body_that_is_not_json_is_a_parse_error() -> None:
    # (the Lambda routes refuse it before routing, as every route does: malformed_json)
    refused = envelope_error(b"{not json")
    assert refused is not None and refused.status == 400
    assert json.loads(refused.body)["error"]["code"] == -32700
