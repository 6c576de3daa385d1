"""The form tools in OpenAI's strict mode (``forms.surface.strict``), held to two judges: the
``openai`` SDK's own strict pass and validation, and a checker of the published rules of
structured outputs, for every example form and for all of them at once. Then what strict mode
is for: a call that fits the schema fills the form, and one that does not fit is refused by
the schema before it is sent."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator, Sequence
from typing import Any, cast

import pytest
from jsonschema import Draft202012Validator
from openai.lib._parsing._completions import validate_input_tools
from openai.lib._pydantic import _ensure_strict_json_schema
from openai.types.chat import ChatCompletionFunctionToolParam
from openai.types.responses import FunctionToolParam
from pydantic import TypeAdapter

from forms import Caller, FormDef, Step, field
from forms.compiled import CompiledForm
from forms.examples import EXAMPLES
from forms.registry import FormRegistry
from forms.surface.formats import STRICT_FORMATS, StrictFormat, tool_definitions
from forms.surface.strict import (
    NotStrict,
    strict_arguments,
    strict_definitions,
    strict_schema,
)
from forms.surface.tools import TOOLS
from tests.support import TRAVEL_ANSWERS, service_for

REGISTRY = FormRegistry(EXAMPLES)
FORMS = REGISTRY.forms()
SELECTIONS = [[form] for form in FORMS] + [FORMS]
SELECTION_IDS = [form.id for form in FORMS] + ["all"]
ALICE = Caller("alice", "conv-1")


# ---------------------------------------------------------------------------- the rules

TYPES = {"string", "number", "integer", "boolean", "object", "array", "null"}
ANY_TYPE = {"type", "description", "title", "enum", "const", "anyOf", "$ref", "$defs"}
BY_TYPE = {
    "string": {"pattern", "format"},
    "number": {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"},
    "integer": {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"},
    "array": {"items", "minItems", "maxItems"},
    "object": {"properties", "required", "additionalProperties"},
}
FORMATS = {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
MAX_PROPERTIES, MAX_DEPTH, MAX_ENUM_VALUES, MAX_STRING_CHARS = 5000, 10, 1000, 120_000
BEYOND_REGEX = re.compile(r"\(\?[=!<]|\\[1-9]")


def strict_mode_problems(schema: dict[str, Any]) -> list[str]:
    """What OpenAI's published structured-outputs rules refuse in a function's parameters:
    the root is an object (not an ``anyOf``); every node says its ``type`` (or is an
    ``anyOf`` or a ``$ref``); each keyword is one strict mode supports, for the node's types
    (strings: ``pattern`` and nine ``format``s; numbers: bounds and ``multipleOf``; arrays:
    ``items``, ``minItems``, ``maxItems``), so no ``default``, ``oneOf``, ``allOf``, ``not``,
    ``minLength``...; every object has ``additionalProperties: false`` and lists every
    property in ``required``; at most 5,000 properties, 10 levels of nesting, 1,000 enum values,
    120,000 characters of property names, enum values and definition names; patterns without
    lookaround or backreferences."""
    problems: list[str] = []
    counts = {"properties": 0, "enum": 0, "chars": 0}
    defs = schema.get("$defs", {})
    counts["chars"] += sum(len(name) for name in defs)

    def check(node: Any, where: str, depth: int) -> None:
        if not isinstance(node, dict):
            problems.append(f"{where}: not a schema")
            return
        if depth > MAX_DEPTH:
            problems.append(f"{where}: nested deeper than {MAX_DEPTH}")
        kinds = node.get("type")
        kinds = set(kinds) if isinstance(kinds, list) else {kinds} if kinds else set()
        if not kinds and "anyOf" not in node and "$ref" not in node:
            problems.append(f"{where}: no type")
        if kinds - TYPES:
            problems.append(f"{where}: type {sorted(kinds - TYPES)}")
        allowed = ANY_TYPE.union(*(BY_TYPE.get(kind, set()) for kind in kinds))
        for keyword in sorted(set(node) - allowed):
            problems.append(f"{where}: {keyword} is not supported")
        if "format" in node and node["format"] not in FORMATS:
            problems.append(f"{where}: format {node['format']}")
        if "pattern" in node:
            re.compile(node["pattern"])
            if BEYOND_REGEX.search(node["pattern"]):
                problems.append(f"{where}: pattern {node['pattern']}")
        if "$ref" in node:
            name = node["$ref"].removeprefix("#/$defs/")
            if name not in defs or set(node) - {"$ref", "description"}:
                problems.append(f"{where}: $ref {node['$ref']}")
        enum = node.get("enum", [node["const"]] if "const" in node else [])
        counts["enum"] += len(enum)
        counts["chars"] += sum(len(v) for v in enum if isinstance(v, str))
        if "object" in kinds:
            properties = node.get("properties", {})
            counts["properties"] += len(properties)
            counts["chars"] += sum(len(name) for name in properties)
            if node.get("additionalProperties") is not False:
                problems.append(f"{where}: additionalProperties is not false")
            if sorted(node.get("required", [])) != sorted(properties):
                problems.append(f"{where}: not every property is required")
            for name, prop in properties.items():
                check(prop, f"{where}.{name}", depth + 1)
        if "array" in kinds:
            if "items" not in node:
                problems.append(f"{where}: an array without items")
            else:
                check(node["items"], f"{where}[]", depth + 1)
        for i, branch in enumerate(node.get("anyOf", [])):
            check(branch, f"{where}|{i}", depth)

    if schema.get("type") != "object" or "anyOf" in schema:
        problems.append("root: not an object")
    check(schema, "root", 1)
    for name, definition in defs.items():
        check(definition, f"$defs.{name}", 1)
    if counts["properties"] > MAX_PROPERTIES:
        problems.append(f"{counts['properties']} properties")
    if counts["enum"] > MAX_ENUM_VALUES:
        problems.append(f"{counts['enum']} enum values")
    if counts["chars"] > MAX_STRING_CHARS:
        problems.append(f"{counts['chars']} characters of names and values")
    return problems


def test_the_rules_refuse_the_compact_surface() -> None:
    # GIVEN the compact form tools (an open map of values, optional keys, a value of any type)
    problems = {tool.name: strict_mode_problems(tool.input_schema()) for tool in TOOLS}
    # THEN the checker finds what strict mode refuses, so passing it means something
    assert "root: not every property is required" in problems["form_fill"]
    assert "root.values: additionalProperties is not false" in problems["form_fill"]
    assert "root.value: no type" in problems["form_revise"]
    assert "root.form: maxLength is not supported" in problems["form_start"]
    assert "root: not an object" in strict_mode_problems({"type": "object", "anyOf": []})
    assert strict_mode_problems(
        {
            "type": "object",
            "properties": {"a": {"type": "string", "default": "x", "format": "uri"}},
            "required": ["a"],
            "additionalProperties": False,
        }
    ) == ["root.a: default is not supported", "root.a: format uri"]


# ---------------------------------------------------------------------------- the judges


def parameters(fmt: StrictFormat, forms: Sequence[CompiledForm]) -> Iterator[dict[str, Any]]:
    for entry in strict_definitions(fmt, forms):
        yield entry["function"]["parameters"] if fmt == "openai-strict" else entry["parameters"]


@pytest.mark.parametrize("forms", SELECTIONS, ids=SELECTION_IDS)
@pytest.mark.parametrize("fmt", STRICT_FORMATS)
def test_every_schema_keeps_the_published_rules(fmt: StrictFormat, forms: list[Any]) -> None:
    for schema in parameters(fmt, forms):
        assert strict_mode_problems(schema) == []
        Draft202012Validator.check_schema(schema)


@pytest.mark.parametrize("forms", SELECTIONS, ids=SELECTION_IDS)
def test_the_sdks_strict_pass_finds_nothing_to_change(forms: list[Any]) -> None:
    # GIVEN each strict schema, and the openai SDK's own pass that makes a schema strict (what
    # pydantic_function_tool and response_format=Model run)
    for schema in parameters("openai-strict", forms):
        copied = copy.deepcopy(schema)
        # WHEN it runs over the schema / THEN the schema is already what it would make
        assert _ensure_strict_json_schema(copied, path=(), root=copied) == schema


@pytest.mark.parametrize("forms", SELECTIONS, ids=SELECTION_IDS)
def test_the_sdk_takes_the_tools_as_strict_function_tools(forms: list[Any]) -> None:
    chat = strict_definitions("openai-strict", forms)
    responses = strict_definitions("openai-responses-strict", forms)
    # the SDK's check before it parses arguments: every tool a strict function tool
    assert validate_input_tools(cast(Any, chat)) == chat
    assert_fits(ChatCompletionFunctionToolParam, chat)
    assert_fits(FunctionToolParam, responses)
    assert all(entry["strict"] is True for entry in responses)


def assert_fits(shape: Any, entries: list[dict[str, Any]]) -> None:
    """Each entry validates as the SDK's TypedDict, with no key it does not declare."""
    adapter: TypeAdapter[Any] = TypeAdapter(shape)
    for entry in entries:
        assert adapter.validate_python(entry) == entry
        assert set(entry) <= set(shape.__annotations__), set(entry) - set(shape.__annotations__)
        assert shape.__required_keys__ <= set(entry)


def test_the_responses_shape_validates_for_every_tool_set() -> None:
    from forms.app.builder import BUILDER_ARGUMENTS
    from forms.surface.formats import model_tools

    for tools in (TOOLS, model_tools(BUILDER_ARGUMENTS)):
        entries = tool_definitions("openai-responses", tools)
        assert_fits(FunctionToolParam, entries)
        # not strict: the API's default for a Responses function tool is strict, so it is said
        assert [e["strict"] for e in entries] == [False] * len(entries)
        assert [e["parameters"] for e in entries] == [t.input_schema() for t in tools]


# ---------------------------------------------------------------------------- the typing


def values_of(fmt: StrictFormat, forms: Sequence[CompiledForm], tool: str) -> dict[str, Any]:
    by_name = dict(zip([t.name for t in TOOLS], parameters(fmt, forms), strict=True))
    return by_name[tool]


@pytest.mark.parametrize("form", FORMS, ids=[f.id for f in FORMS])
def test_values_are_the_forms_fields_the_agent_writes(form: CompiledForm) -> None:
    schema = values_of("openai-strict", [form], "form_fill")
    values = schema["properties"]["values"]
    writable = [f.id for f in form.fields.values() if not f.decided_by_approver]
    assert list(values["properties"]) == writable
    assert schema["properties"]["form"]["enum"] == [form.id]
    # each answer is its field's type, or null ("not given")
    for field_id, answer in values["properties"].items():
        check = Draft202012Validator(answer)
        assert check.is_valid(None), field_id
    declinable = [f.id for f in form.fields.values() if f.declinable and f.id in writable]
    decline = schema["properties"].get("decline")
    assert (decline["anyOf"][0]["items"]["enum"] if decline else []) == declinable


def test_an_approvers_field_is_not_offered() -> None:
    purchase = REGISTRY.latest("purchase-request")
    values = values_of("openai-strict", [purchase], "form_fill")["properties"]["values"]
    assert "finance_decision" not in values["properties"]


def test_the_revise_value_takes_every_shape_of_the_forms_answers() -> None:
    schema = values_of("openai-strict", FORMS, "form_revise")["properties"]["value"]
    check = Draft202012Validator(schema)
    assert all(check.is_valid(v) for v in ["Lisbon", 1950, 12.5, True, None])
    assert not check.is_valid({"a": 1}) and not check.is_valid([1])


def test_a_call_that_fits_the_schema_fills_the_travel_claim() -> None:
    # GIVEN the strict form_fill of the travel claim, and a call that fits it: every answer,
    # the other fields null
    travel = REGISTRY.latest("travel-claim")
    schema = values_of("openai-strict", [travel], "form_fill")
    ids = list(schema["properties"]["values"]["properties"])
    call = {
        "form": "travel-claim",
        "instance": None,
        "values": {k: TRAVEL_ANSWERS.get(k) for k in ids},
        "decline": None,
        "submit": False,
    }
    Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER).validate(call)
    # WHEN the tools read it as a strict call
    service = service_for(*EXAMPLES)
    assert service.call(ALICE, "form_start", "c1", {"form": "travel-claim"})["ok"]
    result = service.call(ALICE, "form_fill", "c2", strict_arguments(call))
    # THEN every answer is saved, nothing is refused for its null, and the claim is complete
    assert result["ok"] is True, result
    assert "rejected" not in result and "unknown" not in result
    assert "complete" in result["status_line"]


def test_the_schema_refuses_what_the_field_refuses() -> None:
    travel = REGISTRY.latest("travel-claim")
    schema = values_of("openai-strict", [travel], "form_fill")
    nulls = dict.fromkeys(schema["properties"]["values"]["properties"])
    check = Draft202012Validator(schema)

    def fits(**values: Any) -> bool:
        call = {"form": "travel-claim", "instance": None, "decline": None, "submit": False}
        return check.is_valid({**call, "values": {**nulls, **values}})

    assert fits(mode="rail", receipts_attached=True, total="1950.00")
    assert not fits(mode="boat")
    assert not fits(receipts_attached="yes")
    assert not fits(staff_id="ab12")
    assert not fits(distance_km=0)
    assert not fits(nights=3)  # no such field
    assert not check.is_valid({"form": "travel-claim", "values": nulls})  # keys left out
    assert not check.is_valid({**dict.fromkeys(["instance", "decline"]), "form": "x"})


def test_null_answers_of_a_strict_call_are_not_given() -> None:
    call = {"form": "f", "values": {"a": None, "b": 0, "c": False, "d": ""}, "decline": None}
    kept = {"b": 0, "c": False, "d": ""}  # blanks that are sent are refused as ever
    assert strict_arguments(call) == {"form": "f", "values": kept, "decline": None}
    assert strict_arguments({"form": "f", "values": None}) == {"form": "f", "values": None}
    assert strict_arguments({"action": "set", "value": None}) == {"action": "set", "value": None}


# ---------------------------------------------------------------------------- edge cases


class Profile(Step):
    title = "Profile"

    nickname: str = field("Nickname")
    scores: dict[str, int] | None = field("Scores")


class Handle(Step):
    title = "Handle"

    nickname: str = field("Nickname")


class Player(Step):
    title = "Player"

    nickname: int = field("Nickname")
    level: int = field("Level")


def compiled(form_id: str, step: type[Step]) -> CompiledForm:
    return FormRegistry([FormDef(id=form_id, version=1, title=form_id, steps=[step])]).latest(
        form_id
    )


def test_a_field_two_forms_share_takes_either_answer() -> None:
    # GIVEN two forms with a field "nickname": text in one, a whole number in the other
    handle, player = compiled("handle", Handle), compiled("player", Player)
    schema = values_of("openai-strict", [handle, player], "form_fill")["properties"]
    # THEN the tools name both forms, and each field once, in the forms' order
    assert schema["form"]["enum"] == ["handle", "player"]
    answers = schema["values"]["properties"]
    assert list(answers) == ["nickname", "level"]
    # AND the shared field takes either's answer (or null)
    check = Draft202012Validator(answers["nickname"])
    assert all(check.is_valid(v) for v in ["Ana", 7, None])
    assert not check.is_valid(True)
    # AND forms whose fields are all required offer no decline
    assert "decline" not in schema


def test_an_open_map_cannot_be_strict() -> None:
    form = compiled("p", Profile)
    with pytest.raises(NotStrict, match="p field 'scores': a map with open keys"):
        strict_definitions("openai-strict", [form])


@pytest.mark.parametrize(
    ("schema", "strict"),
    [
        ({"type": "string", "minLength": 2, "default": "x"}, {"type": "string"}),
        ({"type": "string", "format": "uri"}, {"type": "string"}),
        ({"type": "string", "pattern": "^(?=a)b$"}, {"type": "string"}),
        ({"const": "x"}, {"type": "string", "enum": ["x"]}),
        (
            {"enum": [1, "a"]},
            {"anyOf": [{"type": "integer", "enum": [1]}, {"type": "string", "enum": ["a"]}]},
        ),
        ({"oneOf": [{"type": "integer"}, {"type": "null"}]}, {"type": ["integer", "null"]}),
        (
            {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}]},
            {"type": "array", "items": {"anyOf": [{"type": "integer"}, {"type": "string"}]}},
        ),
        (
            {
                "$defs": {
                    "P": {"type": "object", "properties": {"x": {"type": "integer", "default": 3}}}
                },
                "$ref": "#/$defs/P",
            },
            {
                "type": "object",
                "properties": {"x": {"type": "integer"}},
                "required": ["x"],
                "additionalProperties": False,
            },
        ),
    ],
)
def test_strict_schema_keeps_only_what_strict_mode_takes(
    schema: dict[str, Any], strict: dict[str, Any]
) -> None:
    assert strict_schema(schema) == strict
    assert json.dumps(strict_schema(strict)) == json.dumps(strict)  # strict already: unchanged


@pytest.mark.parametrize(
    "schema",
    [
        {},
        {"type": "object", "additionalProperties": {"type": "integer"}},
        {
            "$defs": {"R": {"type": "object", "properties": {"r": {"$ref": "#/$defs/R"}}}},
            "$ref": "#/$defs/R",
        },
    ],
    ids=["any value", "open map", "recursive"],
)
def test_what_strict_mode_cannot_express_is_refused(schema: dict[str, Any]) -> None:
    with pytest.raises(NotStrict):
        strict_schema(schema)
