"""The tools as a client sees them over HTTP: the OpenAPI document (valid OpenAPI 3.1, one
operation per tool with the tool's parameters), ``GET /tools`` in OpenAI's shapes (the
Responses API's, and strict mode typed for forms), and a strict conversation carried through
the tool-call route."""

from __future__ import annotations

import json
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from openai.types.responses import FunctionToolParam
from openapi_spec_validator import validate
from openapi_spec_validator.validation import OpenAPIV31SpecValidator
from pydantic import TypeAdapter

from forms import FormDef, Step, field
from forms.app.builder import BUILDER_ARGUMENTS
from forms.surface.formats import model_tools
from forms.surface.tools import TOOLS
from tests.functional.conftest import Api, build_event
from tests.support import TRAVEL_ANSWERS, service_for

TOOL_NAMES = [tool.name for tool in TOOLS]


@pytest.fixture
def document(api: Api) -> dict[str, Any]:
    response = api.get("/openapi.json")
    assert response.status == 200
    return dict(response.json())


def resolve(document: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = document["components"]["schemas"][schema["$ref"].rsplit("/", 1)[-1]]
    return schema


# ---------------------------------------------------------------------------- the document


def test_the_served_document_is_valid_openapi_3_1(document: dict[str, Any]) -> None:
    assert document["openapi"] == "3.1.0"
    validate(document, cls=OpenAPIV31SpecValidator)  # raises on the first problem


@pytest.mark.parametrize(
    ("prefix", "tools"),
    [
        ("/conversations/{conversation_id}/tools/", TOOLS),
        ("/builder/forms/{form_id}/tools/", model_tools(BUILDER_ARGUMENTS)),
    ],
    ids=["form tools", "builder tools"],
)
def test_every_tool_is_an_operation_with_its_parameters(
    document: dict[str, Any], prefix: str, tools: Any
) -> None:
    # GIVEN the document's operations on a tool-call route
    paths = [p for p in document["paths"] if p.startswith(prefix)]
    # THEN there is one per tool, in the tools' order, named after it
    assert paths == [prefix + tool.name for tool in tools]
    for tool in tools:
        operation = document["paths"][prefix + tool.name]["post"]
        assert operation["operationId"] == tool.name
        assert operation["description"].startswith(tool.description)
        assert "tool_name" not in {p["name"] for p in operation["parameters"]}
        # AND its body's input is the tool's argument model: every parameter, what is required
        body = resolve(document, operation["requestBody"]["content"]["application/json"]["schema"])
        assert body["required"] == ["tool_call_id"]
        (arguments, null) = body["properties"]["input"]["anyOf"]
        assert null == {"type": "null"}
        shown = resolve(document, arguments)
        model = tool.args.model_json_schema()
        assert list(shown["properties"]) == list(model["properties"])
        assert shown.get("required", []) == model.get("required", [])
        assert shown.get("additionalProperties") == model.get("additionalProperties")


def test_a_form_fill_body_is_checked_against_the_tools_schema(document: dict[str, Any]) -> None:
    # GIVEN the document's schema of a form_fill call, its references resolvable
    operation = document["paths"]["/conversations/{conversation_id}/tools/form_fill"]["post"]
    schema = operation["requestBody"]["content"]["application/json"]["schema"]
    check = Draft202012Validator({**schema, "components": document["components"]})
    # THEN a call as a model makes it fits, and one with a misspelt argument does not
    call = {"tool_call_id": "call_1", "input": {"form": "travel-claim", "values": {"mode": "air"}}}
    assert check.is_valid(call)
    assert not check.is_valid({**call, "input": {"form": "travel-claim", "valeus": {}}})
    assert not check.is_valid({**call, "input": {"form": "travel-claim", "submit": "yes"}})


def test_an_unknown_tool_is_still_answered_as_one(api: Api, document: dict[str, Any]) -> None:
    response = api.call("form_delete")
    assert (response.status, response.json()["error"]) == (404, "unknown_tool")
    assert "unknown_tool" in document["info"]["description"]


# ---------------------------------------------------------------------------- GET /tools


@pytest.mark.parametrize("path", ["/tools", "/builder/tools"])
def test_the_responses_shape_is_the_sdks(api: Api, path: str) -> None:
    response = api.get(path, query={"format": "openai-responses"})
    assert response.status == 200
    adapter: TypeAdapter[Any] = TypeAdapter(FunctionToolParam)
    for entry in response.json()["tools"]:
        assert adapter.validate_python(entry) == entry
        assert set(entry) == {"type", "name", "description", "parameters", "strict"}
        assert entry["strict"] is False


def test_strict_tools_are_typed_for_the_forms_named(api: Api) -> None:
    # WHEN strict tools are asked for two forms, by any spelling, one of them twice
    query = {"format": "openai-strict", "forms": "Travel Claim, health-check,travel-claim"}
    response = api.get("/tools", query=query)
    # THEN they are typed for those two, in that order
    assert response.status == 200
    tools = response.json()["tools"]
    assert [t["function"]["name"] for t in tools] == TOOL_NAMES
    assert all(t["function"]["strict"] is True for t in tools)
    fill = tools[TOOL_NAMES.index("form_fill")]["function"]["parameters"]
    assert fill["properties"]["form"]["enum"] == ["travel-claim", "health-check"]
    assert {"staff_id", "weight_kg"} <= set(fill["properties"]["values"]["properties"])


def test_strict_tools_default_to_every_form_the_caller_can_start(api: Api) -> None:
    response = api.get("/tools", query={"format": "openai-responses-strict"})
    assert response.status == 200
    start = response.json()["tools"][TOOL_NAMES.index("form_start")]
    forms = [form.id for form in api.service.registry.forms()]
    assert start["parameters"]["properties"]["form"]["enum"] == forms
    assert start["strict"] is True and "function" not in start


@pytest.mark.parametrize(
    ("query", "said"),
    [
        ({"format": "openai", "forms": "travel-claim"}, "forms goes with a strict format"),
        ({"format": "openai-strict", "forms": "nope"}, "no form 'nope'; forms you can start"),
        ({"format": "openai-strict", "forms": "travel-claim,,"}, "none empty"),
        ({"format": "openai-strict", "forms": ",".join(["travel-claim"] * 21)}, "1-20 form ids"),
    ],
)
def test_a_strict_export_that_cannot_be_made_is_a_400(
    api: Api, query: dict[str, str], said: str
) -> None:
    response = api.get("/tools", query=query)
    assert (response.status, response.json()["error"]) == (400, "bad_request")
    assert said in response.json()["message"]


class Scores(Step):
    title = "Scores"

    scores: dict[str, int] = field("Scores by round")


def test_a_form_strict_mode_cannot_type_is_named() -> None:
    api = Api.over(service_for(FormDef(id="league", version=1, title="League", steps=[Scores])))
    response = api.get("/tools", query={"format": "openai-strict"})
    assert response.status == 400
    assert response.json()["message"] == (
        "strict mode cannot type league field 'scores': a map with open keys"
    )
    assert api.get("/tools", query={"format": "openai"}).status == 200


# ---------------------------------------------------------------------------- a strict call


def strict_call(schema: dict[str, Any], **arguments: Any) -> dict[str, Any]:
    """A call as strict mode makes the model write it: every property, null where there is
    nothing to say; checked against ``schema``."""
    properties = schema["properties"]
    call = {name: arguments.get(name) for name in properties}
    if "values" in properties:
        call["values"] = {
            k: arguments.get("values", {}).get(k) for k in properties["values"]["properties"]
        }
    if "submit" in properties:
        call["submit"] = arguments.get("submit", False)
    Draft202012Validator(schema).validate(call)
    return call


def test_a_strict_conversation_fills_the_travel_claim(api: Api) -> None:
    # GIVEN the strict tools of the travel claim
    query = {"format": "openai-strict", "forms": "travel-claim"}
    tools = {
        t["function"]["name"]: t["function"]["parameters"]
        for t in api.get("/tools", query=query).json()["tools"]
    }

    def send(tool: str, call_id: str, **arguments: Any) -> dict[str, Any]:
        body = {"tool_call_id": call_id, "input": strict_call(tools[tool], **arguments)}
        event = build_event(
            "POST",
            f"/conversations/conv-1/tools/{tool}",
            query={"format": "openai-strict"},
            body=json.dumps(body),
        )
        response = api.send(event)
        assert response.status == 200
        return dict(response.json())

    # WHEN the model starts it with two answers, fills the rest, and submits, every call
    # carrying a null for each field it has no answer to
    first = {k: TRAVEL_ANSWERS[k] for k in ("full_name", "staff_id")}
    started = send("form_start", "c1", form="travel-claim", values=first)
    rest = {k: v for k, v in TRAVEL_ANSWERS.items() if k not in first}
    filled = send("form_fill", "c2", form="travel-claim", values=rest)
    submitted = send("form_fill", "c3", form="travel-claim", submit=True)
    # THEN nothing was refused for its nulls, and the claim is submitted
    assert started["ok"] and "rejected" not in started, started
    assert filled["ok"] and "rejected" not in filled and "unknown" not in filled, filled
    assert submitted["closed"] == "completed", submitted


def test_without_the_format_a_null_answer_is_refused_as_ever(api: Api) -> None:
    api.call("form_start", form="travel-claim")
    result = api.call(
        "form_fill", form="travel-claim", values={"destination": "Lisbon", "mode": None}
    )
    assert [r["field"] for r in result.json()["rejected"]] == ["mode"]
