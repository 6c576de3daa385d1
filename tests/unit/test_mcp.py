"""The MCP server (``formwork.mcp``) in process: the SDK's own client against the server over
an in-memory ``FormService``, in both protocol eras (``mode="legacy"``: the initialize
handshake, elicitation as a server-to-client request; the default: 2026-07-28, elicitation as
an ``InputRequiredResult`` and a retried call), and the pure parts: the elicitation schema,
the tool-call id, the annotations."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any, cast

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.session import ClientRequestContext, ElicitationFnT
from mcp.shared.exceptions import MCPError
from mcp_types._v2025_11_25 import PrimitiveSchemaDefinition
from pydantic import TypeAdapter

from forms import FormService
from forms.app.conversation import Caller
from formwork.mcp.ask import property_schema, question
from formwork.mcp.backends import FormServiceBackend
from formwork.mcp.server import NO_FORMS, build_server, status_uri
from formwork.mcp.tools import HINTS, TOOL_CALL_ID_META, tool_call_id
from tests.functional.conftest import make_service

ALICE = Caller(principal="acme/alice", conversation_id="chat-1")
BOB = Caller(principal="acme/bob", conversation_id="chat-1")
ERAS = ["legacy", "auto"]
FORM_TOOLS = ["form_list", "form_start", "form_read", "form_fill", "form_revise", "form_abandon"]
PRIMITIVE = TypeAdapter[Any](PrimitiveSchemaDefinition)
SPEC_KEYS = {
    "type",
    "title",
    "description",
    "enum",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "format",
}

Elicit = ElicitationFnT


def run(test: Callable[[], Awaitable[None]]) -> None:
    anyio.run(test)


def client(
    service: FormService,
    mode: str,
    caller: Caller = ALICE,
    elicit: Elicit | None = None,
    connection: str | None = "c0ffee",
) -> Client:
    server = build_server(FormServiceBackend(service, caller), connection=connection)
    return Client(server, mode=mode, elicitation_callback=elicit)


def answering(content: dict[str, Any] | None, action: str = "accept") -> tuple[Elicit, list[Any]]:
    asked: list[Any] = []

    async def elicit(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        asked.append(params)
        return types.ElicitResult(action=action, content=content)

    return elicit, asked


# ---------------------------------------------------------------------------- the tools


@pytest.mark.parametrize("mode", ERAS)
def test_the_form_tools_are_listed_with_annotations_from_what_they_do(mode: str) -> None:
    async def test() -> None:
        # GIVEN a client that cannot elicit
        async with client(make_service(), mode) as mcp:
            # WHEN it lists the tools
            tools = {tool.name: tool for tool in (await mcp.list_tools()).tools}
        # THEN it sees the six form tools with their schemas, and no form_ask
        assert list(tools) == FORM_TOOLS
        assert tools["form_fill"].input_schema["required"] == ["form"]
        hints = {
            name: (a.read_only_hint, a.destructive_hint, a.idempotent_hint)
            for name, tool in tools.items()
            if (a := tool.annotations) is not None
        }
        assert hints == {
            "form_list": (True, None, None),
            "form_read": (True, None, None),
            "form_start": (False, False, False),
            "form_fill": (False, False, True),
            "form_revise": (False, False, False),
            "form_abandon": (False, True, True),
        }
        assert all(
            tool.annotations and tool.annotations.open_world_hint is False
            for tool in tools.values()
        )

    run(test)


@pytest.mark.parametrize("mode", ERAS)
def test_a_result_is_the_apis_as_json_text_and_structured_content(mode: str) -> None:
    async def test() -> None:
        service = make_service()
        async with client(service, mode) as mcp:
            # WHEN a form is started, then a value the field refuses is sent
            started = await mcp.call_tool("form_start", {"form": "travel-claim"})
            refused = await mcp.call_tool(
                "form_revise", {"form": "travel-claim", "action": "undo", "field": "full_name"}
            )
        # THEN each result is the service's object, as text and as structured content
        assert started.structured_content is not None
        assert started.structured_content["ok"] is True and started.is_error is False
        assert isinstance(started.content[0], types.TextContent)
        assert json.loads(started.content[0].text) == started.structured_content
        # AND a refusal is the same data, flagged as an error for the host
        assert refused.is_error is True
        assert refused.structured_content is not None
        assert refused.structured_content["error"] == "cannot_revise"

    run(test)


def test_an_unknown_tool_is_a_protocol_error() -> None:
    async def test() -> None:
        async with client(make_service(), "legacy") as mcp:
            with pytest.raises(MCPError, match="Unknown tool: form_delete"):
                await mcp.call_tool("form_delete", {})

    run(test)


@pytest.mark.parametrize("mode", ERAS)
def test_the_hosts_tool_call_id_makes_a_retry_a_replay(mode: str) -> None:
    async def test() -> None:
        service = make_service()
        # _meta is an open map (extra_items=Any), which mypy does not model: a cast, as the SDK does
        meta = cast("types.RequestParamsMeta", {TOOL_CALL_ID_META: "toolu_01"})
        async with client(service, mode) as mcp:
            first = await mcp.call_tool("form_start", {"form": "travel-claim"}, meta=meta)
            again = await mcp.call_tool("form_start", {"form": "travel-claim"}, meta=meta)
            listed = await mcp.call_tool("form_list", {})
        # THEN the second call is the first one's result, replayed: one claim was started
        assert first.structured_content is not None and again.structured_content is not None
        assert again.structured_content["replayed"] is True
        assert again.structured_content["instance"] == first.structured_content["instance"]
        assert listed.structured_content is not None
        assert len(listed.structured_content["started"]) == 1

    run(test)


def test_the_tool_call_id_rules() -> None:
    # the host's id wins; one the API would refuse becomes the same digest every time
    assert tool_call_id({TOOL_CALL_ID_META: "call_Lx7"}, 3, "ab12") == "call_Lx7"
    odd = tool_call_id({TOOL_CALL_ID_META: "call with spaces"}, 3, None)
    assert odd == tool_call_id({TOOL_CALL_ID_META: "call with spaces"}, 9, "x")
    assert odd.startswith("mcp-") and " " not in odd
    # on a connection: its nonce and the request id; stable, and distinct per connection
    assert tool_call_id(None, 7, "ab12") == "mcp-ab12-7" == tool_call_id({}, 7, "ab12")
    assert tool_call_id(None, 7, "cd34") != tool_call_id(None, 7, "ab12")
    # stateless HTTP: a fresh id per call, never another connection's
    assert tool_call_id(None, 7, None) != tool_call_id(None, 7, None)
    assert set(HINTS) == {*FORM_TOOLS, "form_ask"}


# ---------------------------------------------------------------------------- status


@pytest.mark.parametrize("mode", ERAS)
def test_the_status_lines_are_a_resource_and_a_prompt(mode: str) -> None:
    async def test() -> None:
        service = make_service()
        async with client(service, mode) as mcp:
            (resource,) = (await mcp.list_resources()).resources
            empty = await mcp.read_resource(resource.uri)
            await mcp.call_tool("form_start", {"form": "travel-claim"})
            read = await mcp.read_resource(resource.uri)
            prompt = await mcp.get_prompt("form_status")
            with pytest.raises(MCPError, match="Resource not found"):
                await mcp.read_resource(status_uri("chat-2"))
        assert resource.uri == "formwork://conversations/chat-1/status"
        assert resource.mime_type == "text/plain"
        texts = [c.text for c in (*empty.contents, *read.contents) if hasattr(c, "text")]
        assert texts[0] == NO_FORMS
        assert texts[1].startswith('[form: travel-claim] step 1/4 "Claimant"')
        (message,) = prompt.messages
        assert isinstance(message.content, types.TextContent)
        assert texts[1] in message.content.text

    run(test)


@pytest.mark.parametrize("mode", ERAS)
def test_resource_templates_are_an_empty_list_not_an_unknown_method(mode: str) -> None:
    # GIVEN a host that lists resource templates beside resources (the inspector does)
    async def test() -> None:
        async with client(make_service(), mode) as mcp:
            # WHEN it asks for the templates
            templates = await mcp.list_resource_templates()
        # THEN the answer is an empty list, not -32601 (method not found)
        assert templates.resource_templates == []

    run(test)


def test_another_principal_sees_nothing_of_the_conversation() -> None:
    async def test() -> None:
        service = make_service()
        async with client(service, "legacy") as alice:
            await alice.call_tool("form_start", {"form": "travel-claim"})
        async with client(service, "legacy", caller=BOB) as bob:
            listed = await bob.call_tool("form_list", {})
            read = await bob.call_tool("form_read", {"form": "travel-claim"})
            status = await bob.read_resource(status_uri("chat-1"))
        assert listed.structured_content is not None and read.structured_content is not None
        assert listed.structured_content["started"] == []
        assert read.structured_content["error"] == "unknown_form"
        assert [getattr(c, "text", None) for c in status.contents] == [NO_FORMS]

    run(test)


# ---------------------------------------------------------------------------- form_ask


@pytest.mark.parametrize("mode", ERAS)
def test_form_ask_is_listed_only_to_a_host_that_can_elicit(mode: str) -> None:
    async def test() -> None:
        elicit, _ = answering({})
        async with client(make_service(), mode, elicit=elicit) as mcp:
            names = [tool.name for tool in (await mcp.list_tools()).tools]
        assert names == [*FORM_TOOLS, "form_ask"]

    run(test)


@pytest.mark.parametrize("mode", ERAS)
def test_form_ask_writes_the_persons_answers_through_a_fill(mode: str) -> None:
    async def test() -> None:
        # GIVEN a started claim, and a person who answers both questions of step 1
        service = make_service()
        elicit, asked = answering({"full_name": "Ana Lima", "staff_id": "AB1234"})
        async with client(service, mode, elicit=elicit) as mcp:
            await mcp.call_tool("form_start", {"form": "travel-claim"})
            # WHEN the agent asks them in a form
            result = await mcp.call_tool("form_ask", {"form": "travel-claim"})
            read = await mcp.call_tool("form_read", {"form": "travel-claim", "part": "full_name"})
        # THEN they were asked the open step's fields, both required
        (params,) = asked
        assert isinstance(params, types.ElicitRequestFormParams)
        assert params.message == 'travel-claim, step 1/4 "Claimant": please answer what you can.'
        assert list(params.requested_schema["properties"]) == ["full_name", "staff_id"]
        assert params.requested_schema["required"] == ["full_name", "staff_id"]
        # AND their answers were saved by a fill, the step moved on
        content = result.structured_content
        assert content is not None and content["ok"] is True, content
        assert content["summary"].startswith("The person answered in a form. Saved 2")
        assert content["asked"] == ["full_name", "staff_id"]
        assert content["status_line"].startswith('[form: travel-claim] step 2/4 "Trip"')
        assert read.structured_content is not None
        assert "Ana Lima" in json.dumps(read.structured_content)

    run(test)


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_form_ask_declined_or_cancelled_writes_nothing(mode: str, action: str) -> None:
    async def test() -> None:
        service = make_service()
        elicit, asked = answering(None, action)
        async with client(service, mode, elicit=elicit) as mcp:
            await mcp.call_tool("form_start", {"form": "travel-claim"})
            result = await mcp.call_tool("form_ask", {"form": "travel-claim"})
            read = await mcp.call_tool("form_read", {"form": "travel-claim"})
        assert len(asked) == 1
        assert result.structured_content is not None
        expected = "declined" if action == "decline" else "cancelled"
        assert result.structured_content["error"] == expected
        assert result.is_error is True
        assert read.structured_content is not None
        assert [f["status"] for f in read.structured_content["fields"]] == ["pending", "pending"]

    run(test)


def test_form_ask_on_a_form_not_started_is_the_reads_refusal_and_asks_nothing() -> None:
    async def test() -> None:
        elicit, asked = answering({})
        async with client(make_service(), "legacy", elicit=elicit) as mcp:
            result = await mcp.call_tool("form_ask", {"form": "travel-claim"})
        assert asked == []
        assert result.structured_content is not None
        assert result.structured_content["error"] == "unknown_form"

    run(test)


# ---------------------------------------------------------------------------- the schema


def test_every_example_field_type_becomes_a_flat_spec_property_or_is_left_out() -> None:
    from forms import compile_form
    from forms.examples import EXAMPLES

    made = 0
    for definition in EXAMPLES:
        for field in compile_form(definition).fields.values():
            node = property_schema(field.label, field.type.type_string)
            assert node is not None, field.type.type_string  # the examples are all flat
            PRIMITIVE.validate_python(node)
            assert set(node) <= SPEC_KEYS
            made += 1
    assert made > 50


@pytest.mark.parametrize(
    ("type_string", "expected"),
    [
        ("true or false", {"type": "boolean"}),
        ('one of "air", "rail", "car"', {"type": "string", "enum": ["air", "rail", "car"]}),
        ("integer 1-20000", {"type": "integer", "minimum": 1, "maximum": 20000}),
        ("integer -5 to 5", {"type": "integer", "minimum": -5, "maximum": 5}),
        ("decimal number > 0 and <= 25000, max 2 decimals", {"type": "number", "maximum": 25000}),
        ("number 0-200", {"type": "number", "minimum": 0, "maximum": 200}),
        ("date YYYY-MM-DD", {"type": "string", "format": "date"}),
        ("email address", {"type": "string", "format": "email"}),
        ("string, 2-120 chars", {"type": "string", "minLength": 2, "maxLength": 120}),
        ("text like AB1234 (optional)", {"type": "string"}),
        ("list of string, at most 3 items", None),
        ("object {name: string}", None),
        ("integer or string", None),
        ("one of 1, 2", None),
    ],
)
def test_a_type_string_reads_as(type_string: str, expected: dict[str, Any] | None) -> None:
    node = property_schema("Label", type_string)
    if expected is None:
        assert node is None
        return
    assert node is not None
    assert {k: v for k, v in node.items() if k not in ("title", "description")} == expected
    assert node["title"] == "Label"


def test_a_step_with_nothing_flat_to_ask_says_so() -> None:
    read = {
        "ok": True,
        "form": "f",
        "instance": "fi_1",
        "fields": [
            {"id": "tags", "label": "Tags", "type": "list of string", "status": "pending"},
            {"id": "name", "label": "Name", "type": "string", "status": "answered"},
        ],
    }
    refused = question(read)
    assert isinstance(refused, dict)
    assert refused["error"] == "nothing_to_ask"
    assert "tags" in refused["message"]
