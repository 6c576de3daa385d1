"""The builder over HTTP: API Gateway events through ``formwork.aws.api.lambda_handler``.

A builder agent builds a draft through ``POST /builder/forms/{form_id}/tools/{tool_name}``
(replay by id, Stop, the editor's selection, undo), its editor reads it
(``GET /builder/forms[/{form_id}]``), a person with the publisher role publishes it
(``POST .../publish``) and anyone of the tenant reads the version back
(``GET /forms/{form_id}/versions/{version}``). Another tenant sees none of it. Then the
envelope's refusals, the settings and the App parts the routes are served by.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

from forms.app.builder import BUILDER_ARGUMENTS, BuilderService
from forms.app.catalog import Catalog
from forms.documents import Limits
from forms.storage.documents import InMemoryFormDocumentStore
from forms.storage.drafts import InMemoryDraftStore
from forms.surface.formats import FORMATS, model_tools, tool_definitions
from formwork.bootstrap import bootstrap
from formwork.config import ConfigError, Settings
from tests.functional.conftest import SETTINGS, Api, RecordingStore, build_event, make_service
from tests.functional.test_cold_start import BUILDER, run
from tests.support import T0

FORM = "contact-us"
ANA: dict[str, str] = {"sub": "ana", "tenant": "acme"}
PUBLISHER: dict[str, str] = {"sub": "cy", "tenant": "acme", "roles": "[form_publisher audit]"}
OTHER: dict[str, str] = {"sub": "bo", "tenant": "globex", "roles": "[form_publisher]"}


class Builder:
    """The builder routes as a builder agent, its editor and a publisher use them."""

    def __init__(self, api: Api) -> None:
        self.api = api
        self.ids = itertools.count(1)

    def call(
        self,
        tool: str,
        form: str = FORM,
        claims: dict[str, Any] = ANA,
        tool_call_id: str | None = None,
        **envelope: Any,
    ) -> dict[str, Any]:
        """A tool call that must be answered 200 (applied or refused as data); its result."""
        body = {"tool_call_id": tool_call_id or f"toolu_{next(self.ids)}", **envelope}
        response = self.api.post(f"/builder/forms/{form}/tools/{tool}", body, claims=claims)
        assert response.status == 200, response
        result: dict[str, Any] = response.json()
        return result

    def draft(self, form: str = FORM, claims: dict[str, Any] = ANA) -> dict[str, Any]:
        response = self.api.get(f"/builder/forms/{form}", claims=claims)
        assert response.status == 200, response
        draft: dict[str, Any] = response.json()
        return draft

    def item_ids(self, form: str = FORM) -> list[str]:
        steps = self.draft(form)["document"]["steps"]
        return [item["id"] for step in steps for item in step["items"]]


def unix_clock() -> Any:
    """The App's clock (Unix seconds): a second per reading from ``T0``."""
    ticks = itertools.count(int(T0.timestamp()))
    return lambda: float(next(ticks))


@pytest.fixture
def api() -> Api:
    return Api.over(make_service(), clock=unix_clock())


@pytest.fixture
def builder(api: Api) -> Builder:
    return Builder(api)


def started(builder: Builder) -> Builder:
    made = builder.call(
        "create_form", input={"title": "Contact us", "steps": [{"title": "Contact"}]}
    )
    assert made == {
        "ok": True,
        "summary": 'Created form "Contact us" (contact-us) with 1 step (contact) and 0 fields.',
    }
    return builder


EMAIL = {"field": {"kind": "email", "label": "Email"}}


# ---------------------------------------------------------------------------- building


def test_a_draft_is_built_through_the_tool_route_and_read_by_its_editor(builder: Builder) -> None:
    # GIVEN a builder agent that started a contact form
    started(builder)
    # WHEN it adds fields, inspects one and gates it, in small calls
    added = builder.call("add_field", input=EMAIL)
    assert added["ok"] and added["summary"] == 'Added field "email" (email) to step "Contact".'
    builder.call("add_field", input={"field": {"kind": "boolean", "label": "Call me back"}})
    builder.call("add_field", input={"field": {"kind": "phone", "label": "Phone"}})
    seen = builder.call("inspect_form", input={"scope": "field", "id": "phone"})
    assert (seen["ok"], seen["step"], seen["position"]) == (True, "contact", 2)
    gated = builder.call(
        "set_conditional_logic",
        input={
            "target": "field",
            "id": "phone",
            "when": {"field": "call_me_back", "op": "equals", "value": True},
        },
    )
    assert gated["ok"], gated
    # THEN the editor reads the draft as built, with an edit log of every applied call
    draft = builder.draft()
    assert builder.item_ids() == ["email", "call_me_back", "phone"]
    phone = draft["document"]["steps"][0]["items"][2]
    assert phone["when"] == {"field": "call_me_back", "op": "equals", "value": True}
    assert draft["form_id"] == FORM and draft["version"] == 5
    assert [line["tool"] for line in draft["log"]] == [
        "create_form",
        "add_field",
        "add_field",
        "add_field",
        "set_conditional_logic",
    ]
    assert draft["log"][-1]["in_force"] and draft["log"][-1]["by"] == "acme/ana"
    assert draft["undo"] == gated["summary"] and draft["redo"] is None
    assert draft["changed_by"] == "acme/ana"
    # AND the tenant's drafts list it
    listed = builder.api.get("/builder/forms", claims=ANA)
    assert listed.status == 200
    assert [(d["form_id"], d["title"], d["edits"]) for d in listed.json()["drafts"]] == [
        (FORM, "Contact us", 5)
    ]


def test_an_edit_falls_back_to_the_editors_selection(builder: Builder) -> None:
    # GIVEN a draft with an email field, selected in the editor
    started(builder).call("add_field", input=EMAIL)
    # WHEN the model says "make this optional" with a model-typical string, naming no field
    result = builder.call(
        "update_field", input={"updates": {"required": "no"}}, selection={"field": "email"}
    )
    # THEN the selected field changed, and the result says what was read as a boolean
    assert result["summary"] == 'Updated field "email": required.'
    assert result["notes"] == {
        "coerced": [{"at": "updates.required", "sent": "no", "stored": False}]
    }
    assert builder.draft()["document"]["steps"][0]["items"][0]["required"] is False
    # AND without a selection, the same call is refused as data, applying nothing
    refused = builder.call("update_field", input={"updates": {"required": True}})
    assert (refused["ok"], refused["error"]) == (False, "no_selection")
    # AND a step selection places a new field in that step
    builder.call("add_step", input={"title": "Details"})
    placed = builder.call(
        "add_field",
        input={"field": {"kind": "long_text", "label": "Message"}},
        selection={"step": "details"},
    )
    assert placed["summary"] == 'Added field "message" (long_text) to step "Details".'


def test_undo_and_redo_move_over_the_edit_log(builder: Builder) -> None:
    # GIVEN a draft with an email field
    started(builder).call("add_field", input=EMAIL)
    # WHEN the model undoes the edit
    undone = builder.call("undo_edit")
    # THEN the field is gone from the draft, and kept in its log
    assert undone == {
        "ok": True,
        "summary": 'Undid: Added field "email" (email) to step "Contact".',
    }
    draft = builder.draft()
    assert builder.item_ids() == []
    assert [line["in_force"] for line in draft["log"]] == [True, False]
    assert draft["redo"] == 'Added field "email" (email) to step "Contact".'
    # AND redo brings it back; nothing more to undo past create_form
    assert builder.call("redo_edit")["summary"].startswith("Redid: ")
    assert builder.item_ids() == ["email"]
    builder.call("undo_edit")
    assert builder.call("undo_edit")["error"] == "nothing_to_undo"


def test_a_replayed_call_returns_its_first_result_and_applies_nothing(builder: Builder) -> None:
    # GIVEN an add_field the client sent once
    started(builder)
    first = builder.call("add_field", tool_call_id="toolu_email", chat_id="chat-1", input=EMAIL)
    version = builder.draft()["version"]
    # WHEN the same call is sent again in its chat (a retry, a resumed stream)
    again = builder.call("add_field", tool_call_id="toolu_email", chat_id="chat-1", input=EMAIL)
    # THEN it gets the first result, marked replayed, and the draft did not move
    assert again == {**first, "replayed": True}
    assert builder.draft()["version"] == version
    assert builder.item_ids() == ["email"]
    # AND the same id with other input is a conflict, as data
    other = builder.call(
        "add_field",
        tool_call_id="toolu_email",
        chat_id="chat-1",
        input={"field": {"kind": "url", "label": "Web"}},
    )
    assert (other["ok"], other["error"]) == (False, "tool_call_conflict")
    # AND the identity keys of an envelope are ignored, never honoured
    replay = builder.call(
        "add_field", tool_call_id="toolu_email", chat_id="chat-1", input=EMAIL, user_id="cy"
    )
    assert replay == {**first, "replayed": True}


def test_a_cancelled_call_applies_nothing_and_replays_as_cancelled(builder: Builder) -> None:
    # GIVEN a draft, and a person who pressed Stop while the model was adding a field
    started(builder)
    version = builder.draft()["version"]
    # WHEN the chat backend answers the outstanding call as cancelled
    stopped = builder.call(
        "add_field", tool_call_id="toolu_stop", chat_id="chat-1", input=EMAIL, cancelled=True
    )
    # THEN it is answered cancelled and nothing was applied
    assert (stopped["ok"], stopped["error"]) == (False, "cancelled")
    assert builder.draft()["version"] == version and builder.item_ids() == []
    # AND a later replay of that id (a resumed stream, not cancelled) gets the same answer
    resumed = builder.call("add_field", tool_call_id="toolu_stop", chat_id="chat-1", input=EMAIL)
    assert resumed == {**stopped, "replayed": True}
    assert builder.item_ids() == []


def test_two_chats_that_number_their_calls_alike_both_apply(builder: Builder) -> None:
    # GIVEN a chat on the draft whose model server numbered its add_field call_0
    started(builder)
    first = builder.call("add_field", tool_call_id="call_0", chat_id="chat-a", input=EMAIL)
    # WHEN a second chat sends call_0 with the same input, then call_0 with other input
    same = builder.call("add_field", tool_call_id="call_0", chat_id="chat-b", input=EMAIL)
    web = {"field": {"kind": "url", "label": "Web"}}
    other = builder.call("add_field", tool_call_id="call_0", chat_id="chat-c", input=web)
    # THEN both applied: neither was answered with the first chat's result
    assert (first["ok"], same["ok"], other["ok"]) == (True, True, True), (same, other)
    assert same == {"ok": True, "summary": 'Added field "email_2" (email) to step "Contact".'}
    assert builder.item_ids() == ["email", "email_2", "web"]
    # AND within the second chat the id is still a replay
    again = builder.call("add_field", tool_call_id="call_0", chat_id="chat-b", input=EMAIL)
    assert again == {**same, "replayed": True}
    assert builder.item_ids() == ["email", "email_2", "web"]


def test_two_agent_chats_over_http_whose_server_numbers_calls_both_apply(
    builder: Builder,
) -> None:
    from collections.abc import Mapping
    from urllib.parse import urlsplit

    from formwork.agents import BuilderAgent, Completion, HttpBackend, ToolCall, Usage

    class Numbering:
        """A model server that numbers its calls call_0, call_1, ... in every response."""

        def __init__(self, *responses: list[tuple[str, dict[str, Any]]]) -> None:
            self.responses = list(responses)

        def complete(self, system: str, transcript: Any, tools: Any) -> Completion:
            if not self.responses:
                return Completion((), "Done.", Usage())
            calls = self.responses.pop(0)
            made = tuple(ToolCall(name, args, f"call_{n}") for n, (name, args) in enumerate(calls))
            return Completion(made, "", Usage())

    def send(
        method: str, url: str, headers: Mapping[str, str], body: bytes | None
    ) -> tuple[int, bytes]:
        """The HTTP backend's requests, through the Lambda handler as API Gateway sends them."""
        path = urlsplit(url).path
        if method == "GET":
            answer = builder.api.get(path, claims=ANA)
        else:
            answer = builder.api.post(path, (body or b"").decode(), claims=ANA)
        return answer.status, answer.text.encode()

    def chat(*responses: list[tuple[str, dict[str, Any]]]) -> Any:
        backend = HttpBackend("https://api.example.test", "unused", FORM, send=send)
        return BuilderAgent(Numbering(*responses), backend).run_turn([], "Build it.")

    # GIVEN a first chat whose add_field went out as call_0
    started(builder)
    assert chat([("add_field", EMAIL)]).calls[0].result["ok"]
    # WHEN a second chat on the draft sends call_0 with the same input, then call_0 and call_1
    web = {"field": {"kind": "url", "label": "Web"}}
    second = chat(
        [("add_field", EMAIL)], [("add_field", web), ("delete_field", {"field": "email"})]
    )
    # THEN every call of the second chat applied
    results = [c.result for c in second.calls]
    assert [r["ok"] for r in results] == [True, True, True], results
    assert results[0] == {"ok": True, "summary": 'Added field "email_2" (email) to step "Contact".'}
    assert builder.item_ids() == ["email_2", "web"]


def test_a_call_without_a_chat_id_is_never_taken_for_another(builder: Builder) -> None:
    # GIVEN a client that sends no chat_id
    started(builder)
    builder.call("add_field", tool_call_id="call_0", input=EMAIL)
    # WHEN it sends call_0 again
    again = builder.call("add_field", tool_call_id="call_0", input=EMAIL)
    # THEN the call ran again and says what it did (nothing was recorded under the id)
    assert again == {"ok": True, "summary": 'Added field "email_2" (email) to step "Contact".'}
    # AND a malformed chat_id is refused like a malformed tool_call_id
    response = builder.api.post(
        f"/builder/forms/{FORM}/tools/add_field",
        {"tool_call_id": "c9", "chat_id": "a chat", "input": EMAIL},
        claims=ANA,
    )
    assert response.status == 422 and builder.item_ids() == ["email", "email_2"]


def test_plan_limits_are_their_own_error() -> None:
    # GIVEN a deployment whose plan allows one field per draft
    settings = Settings(tenant_claim="tenant", builder_max_fields=1)
    builder = started(Builder(Api.over(make_service(), settings)))
    builder.call("add_field", input=EMAIL)
    # WHEN the model adds a second
    refused = builder.call("add_field", input={"field": {"kind": "url", "label": "Web"}})
    # THEN it is refused as data with the limit's own code, and nothing was applied
    assert (refused["ok"], refused["error"]) == (False, "plan_limit")
    assert builder.item_ids() == ["email"]


# ---------------------------------------------------------------------------- tools


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_builder_tools_in_each_vendor_format(api: Api, fmt: str) -> None:
    # WHEN a builder chat backend fetches the tools in its vendor's format
    response = api.get("/builder/tools", query={"format": fmt})
    # THEN it gets every builder tool, in order, in that shape
    assert response.status == 200
    expected = tool_definitions(fmt, model_tools(BUILDER_ARGUMENTS))  # type: ignore[arg-type]
    assert response.json()["tools"] == json.loads(json.dumps(expected))
    assert len(expected) == len(BUILDER_ARGUMENTS)


def test_a_builder_tool_is_its_argument_models_name_docstring_and_schema(api: Api) -> None:
    tools = api.get("/builder/tools").json()["tools"]
    assert [t["name"] for t in tools] == list(BUILDER_ARGUMENTS)
    add_field = tools[list(BUILDER_ARGUMENTS).index("add_field")]
    assert add_field["description"].startswith("Add a field or display block")
    schema = add_field["input_schema"]
    assert schema["required"] == ["field"] and schema["additionalProperties"] is False
    # the description is the tool's, not repeated in its schema
    assert "description" not in schema
    # an item is shown as a field, a text block or a divider, each with only its kinds' keys
    item = schema["$defs"]["FieldItem"]
    assert item["required"] == ["kind", "label"] and "email" in item["properties"]["kind"]["enum"]
    assert {"options", "minimum"} <= set(item["properties"]) and "text" not in item["properties"]
    block = schema["$defs"]["TextBlock"]
    assert set(block["properties"]) == {"kind", "id", "text", "layout"}
    # titles are dropped, a property named title is kept; the recursive rule is one $defs entry
    create = tools[0]["input_schema"]
    assert "title" in create["properties"] and "title" in create["required"]
    assert create["$defs"]["Rule"]["properties"]["all"]["items"] == {"$ref": "#/$defs/Rule"}
    assert '"title": "' not in json.dumps(create["$defs"])
    # a partial update may send null (it clears a key): the schema says so
    updates = tools[list(BUILDER_ARGUMENTS).index("update_field")]["input_schema"]
    assert updates["$defs"]["FieldUpdates"]["properties"]["help"] == {"type": ["string", "null"]}


def test_the_form_tools_are_unchanged_by_the_builder_tools(api: Api) -> None:
    # the form tools' route still answers the form tools, byte for byte as the surface says
    response = api.get("/tools", query={"format": "openai"})
    assert response.json()["tools"] == json.loads(json.dumps(tool_definitions("openai")))
    assert api.get("/builder/tools", query={"format": "gemini"}).status == 400


# ---------------------------------------------------------------------------- publishing


def test_publishing_needs_the_publisher_role_then_the_version_is_served(
    api: Api, builder: Builder
) -> None:
    # GIVEN a draft that compiles
    started(builder).call("add_field", input=EMAIL)
    draft = builder.draft()
    # WHEN its author, who lacks the publisher role, publishes it
    refused = api.post(f"/builder/forms/{FORM}/publish", {}, claims=ANA)
    # THEN 403, and nothing was published
    assert refused.status == 403 and refused.json()["error"] == "forbidden"
    assert "form_publisher" in refused.json()["message"]
    assert api.get(f"/forms/{FORM}/versions/1", claims=ANA).status == 404
    # WHEN a person of the tenant with the role publishes it (no body at all)
    published = api.send(build_event("POST", f"/builder/forms/{FORM}/publish", claims=PUBLISHER))
    # THEN it is version 1 of the tenant's form
    assert published.status == 200, published
    assert published.json() == {"form": FORM, "version": 1}
    # AND anyone of the tenant reads that version back, as the draft was
    version = api.get(f"/forms/{FORM}/versions/1", claims=ANA)
    assert version.status == 200
    assert version.json()["document"] == draft["document"]
    assert (version.json()["form"], version.json()["version"]) == (FORM, 1)
    assert version.json()["published_by"] == "acme/cy"
    # AND the tenant's catalog serves it (the form tools' registry, once switched onto it)
    assert [f.id for f in api.app.catalog.forms("acme/ana")][-1] == FORM
    # AND a publish expecting the version it saw gets the next one; a stale one is a 409
    again = api.post(f"/builder/forms/{FORM}/publish", {"expected": 1}, claims=PUBLISHER)
    assert again.json() == {"form": FORM, "version": 2}
    stale = api.post(f"/builder/forms/{FORM}/publish", {"expected": 1}, claims=PUBLISHER)
    assert stale.status == 409 and stale.json()["error"] == "publish_conflict"
    assert api.get(f"/forms/{FORM}/versions/3", claims=ANA).status == 404


def test_a_draft_that_does_not_compile_is_422_with_every_problem(
    api: Api, builder: Builder
) -> None:
    # GIVEN a draft with a step and no field yet
    started(builder)
    # WHEN it is published
    response = api.post(f"/builder/forms/{FORM}/publish", {}, claims=PUBLISHER)
    # THEN 422 not_publishable lists what to fix, and nothing was published
    assert response.status == 422
    body = response.json()
    assert body["error"] == "not_publishable"
    assert body["problems"] == ["form 'contact-us': step 'contact' declares no fields"]
    assert api.get(f"/forms/{FORM}/versions/1", claims=ANA).status == 404
    # AND a draft taking a code form's id cannot be published either
    Builder(api).call(
        "create_form", form="travel-claim", input={"title": "Mine", "steps": [{"title": "A"}]}
    )
    taken = api.post("/builder/forms/travel-claim/publish", {}, claims=PUBLISHER)
    assert taken.status == 422 and "form of this deployment" in taken.json()["problems"][0]


def test_the_publisher_role_is_the_deployments_setting() -> None:
    # GIVEN a deployment whose publishers hold "editors" (read from the roles claim it names)
    settings = Settings(tenant_claim="tenant", roles_claim="groups", publisher_role="editors")
    api = Api.over(make_service(), settings)
    started(Builder(api)).call("add_field", input=EMAIL)
    path = f"/builder/forms/{FORM}/publish"
    # THEN the default role no longer publishes, and the configured one does
    assert api.post(path, {}, claims=PUBLISHER).status == 403
    editor = {"sub": "ed", "tenant": "acme", "groups": '["editors"]'}
    assert api.post(path, {}, claims=editor).json() == {"form": FORM, "version": 1}


# ---------------------------------------------------------------------------- tenants


def test_another_tenant_sees_nothing_of_a_tenants_drafts_and_forms(
    api: Api, builder: Builder
) -> None:
    # GIVEN acme's published contact form
    started(builder).call("add_field", input=EMAIL)
    assert api.post(f"/builder/forms/{FORM}/publish", {}, claims=PUBLISHER).status == 200
    # WHEN globex (a publisher there) asks for it
    draft = api.get(f"/builder/forms/{FORM}", claims=OTHER)
    drafts = api.get("/builder/forms", claims=OTHER)
    version = api.get(f"/forms/{FORM}/versions/1", claims=OTHER)
    publish = api.post(f"/builder/forms/{FORM}/publish", {}, claims=OTHER)
    look = Builder(api).call("inspect_form", claims=OTHER)
    # THEN the draft and the version are 404s exactly like ones that do not exist
    missing_draft = api.get("/builder/forms/nothing-here", claims=ANA)
    missing_version = api.get("/forms/nothing-here/versions/1", claims=ANA)
    assert (draft.status, version.status, publish.status) == (404, 404, 404)
    assert draft.text == missing_draft.text.replace("nothing-here", FORM)
    assert version.text == missing_version.text.replace("nothing-here", FORM)
    assert publish.text == draft.text
    # AND its drafts list is empty, and its model finds no draft
    assert drafts.status == 200 and drafts.json() == {"drafts": []}
    assert look["error"] == "no_draft"
    # AND the same form id in globex is a draft of its own, acme's untouched
    Builder(api).call(
        "create_form", claims=OTHER, input={"title": "Theirs", "steps": [{"title": "A"}]}
    )
    assert Builder(api).draft(claims=OTHER)["document"]["title"] == "Theirs"
    assert builder.draft()["document"]["title"] == "Contact us"


# ---------------------------------------------------------------------------- refusals

ENVELOPE = {"tool_call_id": "toolu_1", "input": {}}


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "code"),
    [
        ("GET", "/builder/forms/Contact", None, 400, "bad_request"),
        ("GET", "/builder/forms/1-form", None, 400, "bad_request"),
        ("GET", "/builder/forms/" + "a" * 64, None, 400, "bad_request"),
        ("POST", "/builder/forms/Contact/tools/add_step", ENVELOPE, 400, "bad_request"),
        ("POST", "/builder/forms/a_b/publish", {}, 400, "bad_request"),
        ("GET", "/forms/contact-us/versions/0", None, 400, "bad_request"),
        ("GET", "/forms/contact-us/versions/x", None, 400, "bad_request"),
        ("GET", "/forms/contact-us/versions/-1", None, 400, "bad_request"),
        ("GET", "/forms/contact-us/versions/99999999999", None, 400, "bad_request"),
        ("GET", "/forms/Contact/versions/1", None, 400, "bad_request"),
        ("POST", "/builder/forms/c/tools/form_fill", ENVELOPE, 404, "unknown_tool"),
        ("POST", "/builder/forms/c/tools/publish", ENVELOPE, 404, "unknown_tool"),
        # no such tool, whatever the body: a 404, not the body's 422 (as on the form tools)
        ("POST", "/builder/forms/c/tools/form_fill", {}, 404, "unknown_tool"),
        ("POST", "/builder/forms/c/tools/nope", [], 404, "unknown_tool"),
        ("POST", "/builder/forms/c/tools/nope", "null", 404, "unknown_tool"),
        ("POST", "/builder/forms/c/tools/add_step", {}, 422, "invalid_request"),
        ("POST", "/builder/forms/c/tools/add_step", [], 422, "invalid_request"),
        ("POST", "/builder/forms/c/tools/add_step", "null", 422, "invalid_request"),
        ("POST", "/builder/forms/c/tools/add_step", {**ENVELOPE, "x": 1}, 422, "invalid_request"),
        (
            "POST",
            "/builder/forms/c/tools/add_step",
            {**ENVELOPE, "input": []},
            422,
            "invalid_request",
        ),
        (
            "POST",
            "/builder/forms/c/tools/add_step",
            {**ENVELOPE, "tool_call_id": "bad id"},
            422,
            "invalid_request",
        ),
        (
            "POST",
            "/builder/forms/c/tools/add_step",
            {**ENVELOPE, "cancelled": "yes"},
            422,
            "invalid_request",
        ),
        (
            "POST",
            "/builder/forms/c/tools/add_step",
            {**ENVELOPE, "selection": {"field": "a", "row": 1}},
            422,
            "invalid_request",
        ),
        (
            "POST",
            "/builder/forms/c/tools/add_step",
            {**ENVELOPE, "selection": "email"},
            422,
            "invalid_request",
        ),
        ("POST", "/builder/forms/c/tools/add_step", '{"a": 1, "a": 2}', 400, "duplicate_key"),
        ("POST", "/builder/forms/c/tools/add_step", "{", 400, "malformed_json"),
        ("POST", "/builder/forms/c/publish", {"expected": "1"}, 422, "invalid_request"),
        ("POST", "/builder/forms/c/publish", {"expected": True}, 422, "invalid_request"),
        ("POST", "/builder/forms/c/publish", {"expected": -1}, 422, "invalid_request"),
        ("POST", "/builder/forms/c/publish", {"version": 1}, 422, "invalid_request"),
        ("POST", "/builder/forms/c/publish", [], 422, "invalid_request"),
        ("POST", "/builder/forms/c/publish", "{", 400, "malformed_json"),
        ("PUT", "/builder/forms/c", {}, 404, "route_not_found"),
        ("DELETE", "/builder/forms/c", None, 404, "route_not_found"),
        ("GET", "/builder/forms/c/publish", None, 404, "route_not_found"),
    ],
)
def test_malformed_requests_are_refused_never_a_500(
    api: Api, method: str, path: str, body: Any, status: int, code: str
) -> None:
    # GIVEN a publisher (so the role is not what refuses the publish requests)
    text = None if body is None else body if isinstance(body, str) else json.dumps(body)
    # WHEN the request arrives
    response = api.send(build_event(method, path, body=text, claims=PUBLISHER))
    # THEN it is the refusal expected, as JSON, and nothing was stored
    assert (response.status, response.json()["error"]) == (status, code), response
    assert api.get("/builder/forms", claims=PUBLISHER).json() == {"drafts": []}


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/builder/tools"),
        ("GET", "/builder/forms"),
        ("GET", f"/builder/forms/{FORM}"),
        ("POST", f"/builder/forms/{FORM}/tools/add_step"),
        ("POST", f"/builder/forms/{FORM}/publish"),
        ("GET", f"/forms/{FORM}/versions/1"),
    ],
)
def test_every_builder_route_needs_a_verified_principal(api: Api, method: str, path: str) -> None:
    body = json.dumps(ENVELOPE) if method == "POST" else None
    response = api.send(build_event(method, path, body=body, claims=None))
    assert response.status == 401 and response.json()["error"] == "unauthorized"


# ---------------------------------------------------------------------------- the App


def test_a_builder_request_loads_the_builder_and_no_aws_library_on_an_in_memory_app() -> None:
    # GIVEN a fresh interpreter with an App on an in-memory store
    code = (
        "import sys, json\n"
        "from formwork.aws.local import invoke\n"
        "from tests.functional.conftest import build_event\n"
        "from formwork.bootstrap import bootstrap\n"
        "from formwork.config import Settings\n"
        "from forms.storage.memory import InMemoryFormStore\n"
        "app = bootstrap(Settings(), store=InMemoryFormStore())\n"
        "tools = invoke(build_event('GET', '/builder/tools'), app=app)['statusCode']\n"
        "body = json.dumps({'tool_call_id': 't1', 'input': {'title': 'Hi'}})\n"
        "event = build_event('POST', '/builder/forms/hi/tools/create_form', body=body)\n"
        "made = json.loads(invoke(event, app=app)['body'])['ok']\n"
        f"loaded = [m for m in {BUILDER!r} if m in sys.modules]\n"
        "aws = [m for m in ('boto3', 'botocore.client') if m in sys.modules]\n"
        "print(json.dumps([tools, made, loaded, aws]))\n"
    )
    # WHEN the builder tools are listed and a draft is started
    tools, made, loaded, aws = run(code)
    # THEN the builder and its in-memory stores loaded then, and no AWS library
    assert (tools, made, aws) == (200, True, [])
    assert set(loaded) == set(BUILDER) - {
        "forms.storage.dynamodb_drafts",
        "forms.storage.dynamodb_documents",
    }


def test_the_settings_read_the_builders_variables() -> None:
    env = {
        "FORMWORK_EXECUTORS": "formwork.examples.executors:EXECUTORS",
        "FORMWORK_PUBLISHER_ROLE": "editors",
        "FORMWORK_BUILDER_MAX_STEPS": "5",
        "FORMWORK_BUILDER_MAX_FIELDS": "40",
        "FORMWORK_CATALOG_TTL_SECONDS": "0.5",
    }
    settings = Settings.from_env(env)
    assert (settings.executors, settings.publisher_role) == (
        "formwork.examples.executors:EXECUTORS",
        "editors",
    )
    assert (settings.builder_max_steps, settings.builder_max_fields) == (5, 40)
    assert settings.catalog_ttl_seconds == 0.5
    # the defaults: no executors, form_publisher, the plan of Limits(), 5 s
    default = Settings.from_env({})
    assert (default.executors, default.publisher_role) == (None, "form_publisher")
    assert (default.builder_max_steps, default.builder_max_fields) == (
        Limits().max_steps,
        Limits().max_fields,
    )
    assert default.catalog_ttl_seconds == 5.0


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("FORMWORK_EXECUTORS", "formwork.examples.executors"),
        ("FORMWORK_PUBLISHER_ROLE", "form publisher"),
        ("FORMWORK_PUBLISHER_ROLE", "a,b"),
        ("FORMWORK_BUILDER_MAX_STEPS", "0"),
        ("FORMWORK_BUILDER_MAX_FIELDS", "many"),
        ("FORMWORK_BUILDER_MAX_FIELDS", "10001"),
        ("FORMWORK_CATALOG_TTL_SECONDS", "-1"),
        ("FORMWORK_CATALOG_TTL_SECONDS", "5s"),
        ("FORMWORK_CATALOG_TTL_SECONDS", "3601"),
    ],
)
def test_bad_builder_settings_name_the_variable(variable: str, value: str) -> None:
    with pytest.raises(ConfigError, match=variable):
        Settings.from_env({variable: value})


def test_the_form_id_pattern_is_the_documents() -> None:
    from forms.documents.model import FormDocument
    from formwork.aws.models import FORM_ID_PATTERN

    schema = FormDocument.model_json_schema()
    assert schema["properties"]["id"]["pattern"] == FORM_ID_PATTERN


def test_the_app_wires_the_builder_in_memory_beside_an_in_memory_store() -> None:
    # GIVEN an App over an in-memory form store
    app = bootstrap(SETTINGS, store=RecordingStore())
    # THEN the builder's stores are in memory too, and the parts are wired together
    assert isinstance(app.documents, InMemoryFormDocumentStore)
    assert isinstance(app.drafts, InMemoryDraftStore)
    assert isinstance(app.catalog, Catalog) and isinstance(app.builder, BuilderService)
    assert app.catalog.documents is app.documents and app.catalog.registry is app.registry
    assert app.catalog.ttl == 5.0 and app.catalog.executors == {}
    assert app.builder.store is app.drafts and app.builder.catalog is app.catalog
    assert app.builder.limits("acme") == Limits()


def test_the_app_puts_the_builder_on_the_table_beside_the_dynamodb_store() -> None:
    from forms.storage.dynamodb_documents import DynamoDBFormDocumentStore
    from forms.storage.dynamodb_drafts import DynamoDBDraftStore

    # GIVEN a deployment on a table (no request is made: the adapters are only built)
    app = bootstrap(Settings(table_name="formwork-forms"), dynamodb_client=object())
    assert isinstance(app.documents, DynamoDBFormDocumentStore)
    assert isinstance(app.drafts, DynamoDBDraftStore)


def test_the_app_loads_the_executors_the_settings_name() -> None:
    settings = Settings(executors="tests.functional.test_builder_api:EXECUTORS")
    app = bootstrap(settings, store=RecordingStore())
    assert app.catalog.executors == {"notify_crm": EXECUTORS["notify_crm"]}
    with pytest.raises(ConfigError, match="FORMWORK_EXECUTORS"):
        _ = bootstrap(Settings(executors="tests.support:T0"), store=RecordingStore()).catalog
    with pytest.raises(ConfigError, match="FORMWORK_EXECUTORS"):
        _ = bootstrap(Settings(executors="nowhere.at_all:X"), store=RecordingStore()).catalog


def _notify_crm(context: Any) -> None:
    del context


EXECUTORS = {"notify_crm": _notify_crm}
"""What ``FORMWORK_EXECUTORS`` names in ``test_the_app_loads_the_executors_the_settings_name``."""
