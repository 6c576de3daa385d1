"""The builder tools over MCP (``formwork.mcp.builder``) in process: the SDK's own client
against the server over an in-memory ``BuilderService``, in both protocol eras, and the
backend over the builder's HTTP API (``formwork.mcp.remote.ApiBuilderBackend``) against an
``httpx`` mock: the tools and their annotations, a draft built to where it compiles, replays,
refusals as data, another tenant's draft, the draft resource and prompt."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any, cast

import anyio
import httpx
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.session import ClientRequestContext
from mcp.shared.exceptions import MCPError

from forms.app.builder import BUILDER_ARGUMENTS, BuilderService
from forms.app.catalog import Catalog
from forms.errors import InvalidFormDefinition
from forms.examples.travel_claim import travel_claim
from forms.registry import FormRegistry
from forms.storage.documents import InMemoryFormDocumentStore
from forms.storage.drafts import InMemoryDraftStore
from formwork.aws.builder_routes import builder_tool_definitions
from formwork.client import AsyncFormwork, Retry
from formwork.mcp.builder import BuilderBackend
from formwork.mcp.remote import ApiBuilderBackend
from formwork.mcp.server import DRAFT_PROMPT, build_server, draft_uri
from formwork.mcp.surface import no_draft
from formwork.mcp.tools import CHAT_ID_META, HINTS, TOOL_CALL_ID_META, builder_hints
from tests.support import T0, TickingClock, builder_for

ANA = "acme/ana"
CY = "acme/cy"
BO = "globex/bo"
FORM = "contact-us"
ERAS = ["legacy", "auto"]
EMAIL = {"field": {"kind": "email", "label": "Email"}}


def run(test: Callable[[], Awaitable[None]]) -> None:
    anyio.run(test)


def builder_service() -> BuilderService:
    catalog = Catalog(FormRegistry([travel_claim]), InMemoryFormDocumentStore(), timer=lambda: 0.0)
    return builder_for(InMemoryDraftStore(), catalog, clock=TickingClock(T0))


def client(
    service: BuilderService,
    mode: str = "legacy",
    principal: str = ANA,
    form_id: str = FORM,
    **options: Any,
) -> Client:
    server = build_server(BuilderBackend(service, principal, form_id), connection="c0ffee")
    return Client(server, mode=mode, **options)


def structured(result: types.CallToolResult) -> dict[str, Any]:
    assert isinstance(result.structured_content, dict), result
    return result.structured_content


def text_of(result: types.ReadResourceResult) -> str:
    (content,) = result.contents
    assert isinstance(content, types.TextResourceContents)
    return content.text


async def elicit(
    context: ClientRequestContext, params: types.ElicitRequestParams
) -> types.ElicitResult:
    return types.ElicitResult(action="decline")


# ---------------------------------------------------------------------------- the tools


@pytest.mark.parametrize("mode", ERAS)
def test_the_builder_tools_are_the_apis_with_annotations_from_what_they_do(mode: str) -> None:
    async def test() -> None:
        # GIVEN a host that could elicit
        async with client(builder_service(), mode, elicitation_callback=elicit) as mcp:
            # WHEN it lists the tools
            tools = {tool.name: tool for tool in (await mcp.list_tools()).tools}
        # THEN they are GET /builder/tools?format=mcp, in its order, and no form_ask
        served = builder_tool_definitions("mcp")
        assert list(tools) == [d["name"] for d in served] == list(BUILDER_ARGUMENTS)
        for definition in served:
            tool = tools[definition["name"]]
            assert tool.description == definition["description"]
            assert tool.input_schema == json.loads(json.dumps(definition["inputSchema"]))
        # AND each is annotated from what it does
        hints = {
            name: (a.read_only_hint, a.destructive_hint, a.idempotent_hint)
            for name, tool in tools.items()
            if (a := tool.annotations) is not None
        }
        assert hints["inspect_form"] == (True, None, None)
        destructive = {name for name, h in hints.items() if h[1]}
        assert destructive == {"create_form", "delete_step", "delete_field", "delete_checkpoint"}
        not_idempotent = {name for name, h in hints.items() if h[2] is False}
        assert not_idempotent == {
            "add_step",
            "add_field",
            "set_checkpoint",
            "undo_edit",
            "redo_edit",
        }
        assert len(hints) == len(tools)
        assert all(t.annotations and t.annotations.open_world_hint is False for t in tools.values())

    run(test)


def test_every_builder_tool_has_hints_and_none_shares_a_form_tools_name() -> None:
    assert list(builder_hints()) == list(BUILDER_ARGUMENTS)
    assert not set(builder_hints()) & set(HINTS)


# ---------------------------------------------------------------------------- building


@pytest.mark.parametrize("mode", ERAS)
def test_a_host_builds_a_draft_that_compiles_in_small_calls(mode: str) -> None:
    async def test() -> None:
        service = builder_service()
        async with client(service, mode) as mcp:
            # GIVEN no draft yet
            before = text_of(await mcp.read_resource(draft_uri(FORM)))
            # WHEN the host starts the form, then adds and gates its fields
            made = await mcp.call_tool(
                "create_form", {"title": "Contact us", "steps": [{"title": "Contact"}]}
            )
            with pytest.raises(InvalidFormDefinition, match="declares no fields"):
                service.catalog.check(service.draft(ANA, FORM).document)
            added = structured(await mcp.call_tool("add_field", EMAIL))
            await mcp.call_tool("add_field", {"field": {"kind": "boolean", "label": "Call me"}})
            await mcp.call_tool("add_field", {"field": {"kind": "phone", "label": "Phone"}})
            gated = structured(
                await mcp.call_tool(
                    "set_conditional_logic",
                    {
                        "target": "field",
                        "id": "phone",
                        "when": {"field": "call_me", "op": "equals", "value": True},
                    },
                )
            )
            after = text_of(await mcp.read_resource(draft_uri(FORM)))
            prompt = await mcp.get_prompt(DRAFT_PROMPT)
        # THEN each call is the service's result, a sentence
        assert structured(made) == {
            "ok": True,
            "summary": 'Created form "Contact us" (contact-us) with 1 step (contact) and 0 fields.',
        }
        assert made.is_error is False
        assert added == {"ok": True, "summary": 'Added field "email" (email) to step "Contact".'}
        assert gated["ok"] is True, gated
        # AND the draft is ana's, and compiles
        compiled = service.catalog.check(service.draft(ANA, FORM).document)
        assert list(compiled.fields) == ["email", "call_me", "phone"]
        # AND the resource went from "no draft" to the outline the builder's agent keeps
        assert before == no_draft(FORM)
        assert after.splitlines() == [
            'Form "Contact us" (id contact-us)',
            'Step contact: "Contact"',
            '  email: email "Email"',
            '  call_me: boolean "Call me"',
            '  phone: phone "Phone" when call_me equals true',
        ]
        (message,) = prompt.messages
        assert isinstance(message.content, types.TextContent)
        assert message.content.text == f"The draft of the form 'contact-us':\n{after}"

    run(test)


@pytest.mark.parametrize("mode", ERAS)
def test_the_hosts_tool_call_id_makes_a_resent_edit_a_replay(mode: str) -> None:
    async def test() -> None:
        service = builder_service()
        ids = {TOOL_CALL_ID_META: "toolu_email", CHAT_ID_META: "chat-1"}
        meta = cast("types.RequestParamsMeta", ids)
        async with client(service, mode) as mcp:
            await mcp.call_tool("create_form", {"title": "Contact us", "steps": [{"title": "C"}]})
            first = structured(await mcp.call_tool("add_field", EMAIL, meta=meta))
        # WHEN the host sends the same call again, on another connection, under the same ids
        async with client(service, mode) as mcp:
            again = structured(await mcp.call_tool("add_field", EMAIL, meta=meta))
            other = await mcp.call_tool(
                "add_field", {"field": {"kind": "url", "label": "Web"}}, meta=meta
            )
        # THEN it is the first result, replayed: one field was added
        assert again == {**first, "replayed": True}
        steps = service.draft(ANA, FORM).document.steps
        assert [item.id for step in steps for item in step.items] == ["email"]
        # AND the same id with other input is refused as data, as over HTTP
        assert other.is_error is True
        assert structured(other)["error"] == "tool_call_conflict"

    run(test)


@pytest.mark.parametrize("connection", ["c0ffee", None], ids=["stdio", "http"])
def test_two_chats_that_number_their_calls_alike_both_apply(connection: str | None) -> None:
    async def test() -> None:
        service = builder_service()

        def meta(chat: str | None) -> types.RequestParamsMeta:
            ids = {TOOL_CALL_ID_META: "call_0"} | ({CHAT_ID_META: chat} if chat else {})
            return cast("types.RequestParamsMeta", ids)

        backend = BuilderBackend(service, ANA, FORM)
        async with Client(build_server(backend, connection=connection)) as mcp:
            await mcp.call_tool("create_form", {"title": "Contact us", "steps": [{"title": "C"}]})
            first = structured(await mcp.call_tool("add_field", EMAIL, meta=meta("chat-a")))
            # WHEN a host's second chat sends its model's call_0 with the same input
            same = structured(await mcp.call_tool("add_field", EMAIL, meta=meta("chat-b")))
            # AND a host that names no chat sends it too
            unnamed = structured(await mcp.call_tool("add_field", EMAIL, meta=meta(None)))
        # THEN each applied as a call of its own chat
        assert [r["summary"].split('"')[1] for r in (first, same, unnamed)] == [
            "email",
            "email_2",
            "email_3",
        ]
        assert not any("replayed" in r for r in (first, same, unnamed))

    run(test)


def test_a_refusal_is_data_flagged_for_the_host() -> None:
    async def test() -> None:
        async with client(builder_service()) as mcp:
            empty = await mcp.call_tool("inspect_form", {})
            await mcp.call_tool("create_form", {"title": "Contact us", "steps": [{"title": "C"}]})
            only = await mcp.call_tool("delete_step", {"step": "c"})
            unnamed = await mcp.call_tool("update_field", {"updates": {"required": True}})
        assert (empty.is_error, structured(empty)["error"]) == (True, "no_draft")
        assert (only.is_error, structured(only)["error"]) == (True, "only_step")
        assert structured(only)["hint"]
        # MCP carries no editor selection: an edit that leaves out its field says so
        assert structured(unnamed)["error"] == "no_selection"

    run(test)


def test_an_unknown_tool_prompt_or_resource_is_a_protocol_error() -> None:
    async def test() -> None:
        async with client(builder_service()) as mcp:
            with pytest.raises(MCPError, match="Unknown tool: form_start"):
                await mcp.call_tool("form_start", {"form": "travel-claim"})
            with pytest.raises(MCPError, match="Unknown prompt: form_status"):
                await mcp.get_prompt("form_status")
            with pytest.raises(MCPError, match="Resource not found"):
                await mcp.read_resource(draft_uri("other-form"))
            (resource,) = (await mcp.list_resources()).resources
            (prompt,) = (await mcp.list_prompts()).prompts
        assert (resource.uri, resource.mime_type) == (draft_uri(FORM), "text/plain")
        assert prompt.name == DRAFT_PROMPT

    run(test)


def test_the_instructions_name_the_draft_and_its_resource() -> None:
    async def test() -> None:
        async with client(builder_service()) as mcp:
            instructions, info = mcp.instructions, mcp.server_info
        assert instructions is not None and info is not None
        assert repr(FORM) in instructions and draft_uri(FORM) in instructions
        assert info.title == "Formwork form builder"

    run(test)


# ---------------------------------------------------------------------------- tenants


def test_another_tenants_draft_is_exactly_a_missing_one() -> None:
    async def test() -> None:
        service = builder_service()
        async with client(service, principal=ANA) as ana:
            await ana.call_tool("create_form", {"title": "Contact us", "steps": [{"title": "C"}]})
            await ana.call_tool("add_field", EMAIL)
        reads: list[tuple[str, dict[str, Any]]] = [
            ("inspect_form", {}),
            ("inspect_form", {"scope": "field", "id": "email"}),
            ("add_field", EMAIL),
            ("undo_edit", {}),
        ]

        async def seen_by(principal: str, form_id: str) -> tuple[list[Any], str]:
            async with client(service, principal=principal, form_id=form_id) as mcp:
                results = [structured(await mcp.call_tool(t, a)) for t, a in reads]
                return results, text_of(await mcp.read_resource(draft_uri(form_id)))

        # WHEN bo, of another tenant, works on ana's form id; and ana on one she never made
        theirs, their_text = await seen_by(BO, FORM)
        missing, missing_text = await seen_by(ANA, "never-made")
        # THEN bo's answers are those of a draft that does not exist, word for word
        assert theirs == missing
        assert [r["error"] for r in theirs] == ["no_draft"] * 4
        assert their_text == no_draft(FORM) and missing_text == no_draft("never-made")
        # AND ana's draft is untouched, while a colleague of her tenant sees it
        assert service.draft(ANA, FORM).draft.version == 2
        async with client(service, principal=CY) as cy:
            shared = structured(await cy.call_tool("inspect_form", {}))
        assert shared["ok"] is True

    run(test)


# ---------------------------------------------------------------------------- over HTTP


def test_over_the_api_a_failure_the_model_cannot_fix_is_data_and_a_read_is_an_error() -> None:
    # GIVEN the builder's API answering a call with a 404 unknown_tool, then 503s
    seen: list[tuple[str, str]] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append((request.method, request.url.path))
        if request.url.path.endswith("/tools/no_such_tool"):
            return httpx.Response(404, json={"error": "unknown_tool", "message": "no such"})
        if request.url.path == "/builder/tools":
            return httpx.Response(200, json={"tools": builder_tool_definitions("mcp")})
        return httpx.Response(503, json={"message": "Service Unavailable"})

    async def test() -> None:
        transport = httpx.MockTransport(answer)
        retry = Retry(attempts=1)
        async with AsyncFormwork("http://api.test", "t", transport=transport, retry=retry) as api:
            backend = ApiBuilderBackend(api, FORM)
            unknown = await backend.call("no_such_tool", {}, "call_1")
            down = await backend.call("add_field", EMAIL, "call_2")
            server = build_server(backend)
            async with Client(server, mode="legacy") as mcp:
                names = [tool.name for tool in (await mcp.list_tools()).tools]
                with pytest.raises(MCPError, match="the draft could not be read"):
                    await mcp.read_resource(draft_uri(FORM))
        # THEN the unknown tool is the API's refusal, the outage backend_unavailable
        assert unknown == {"ok": False, "error": "unknown_tool", "message": "no such"}
        assert down["error"] == "backend_unavailable"
        assert "form builder did not answer" in down["message"]
        assert names == list(BUILDER_ARGUMENTS)
        # AND the draft was read with inspect_form on the form's tool route
        assert ("POST", f"/builder/forms/{FORM}/tools/inspect_form") in seen

    run(test)


# ---------------------------------------------------------------------------- the command


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--builder", "Contact Us", "--token", "t"], "--builder takes a form id"),
        (["--builder", FORM, "--conversation", "chat-1", "--token", "t"], "not both"),
        (["--builder", FORM], "give --token"),
        (["--token", "t"], "--conversation (or --builder FORM_ID)"),
    ],
)
def test_formwork_mcp_builder_refuses_what_it_cannot_serve(
    argv: list[str], said: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from formwork.cli import main

    for name in ("FORMWORK_TOKEN", "FORMWORK_CONVERSATION", "FORMWORK_BUILDER_FORM"):
        monkeypatch.delenv(name, raising=False)
    assert main(["mcp", *argv]) == 2
    assert said in capsys.readouterr().err
