"""The builder tools as a model is shown them: compact schemas looser than the edits' models
(``forms.documents.edit_shapes``), valid in every vendor's shape, holding the models' keys, and
accepting every call the builder's scripts make, while the edits still refuse, as data, what
the models refuse."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any, get_args

import botocore.session
import pytest
from botocore.validate import ParamValidator
from jsonschema import Draft202012Validator

from forms.app.builder import BUILDER_ARGUMENTS
from forms.documents import EditError, apply_edit
from forms.documents.edit_arguments import FieldUpdates
from forms.documents.edit_fields import KEYS_OF_KIND
from forms.documents.edit_shapes import ITEM_SHAPES, Action, Rule
from forms.documents.model import (
    Action as ActionUnion,
)
from forms.documents.model import (
    AllOf,
    AnyOf,
    ComparisonOp,
    Condition,
    FormDocument,
    ItemKind,
    Not,
)
from forms.surface.formats import (
    FORMATS,
    Format,
    model_input_schema,
    model_tools,
    tool_definitions,
)
from formwork.examples.job_application import BUILD

TOOLS = model_tools(BUILDER_ARGUMENTS)


def shown(tool: str) -> dict[str, Any]:
    return model_input_schema(BUILDER_ARGUMENTS[tool])


def keys(model: Any) -> set[str]:
    return {field.alias or name for name, field in model.model_fields.items()}


def nodes(schema: Any) -> Iterator[dict[str, Any]]:
    if isinstance(schema, dict):
        yield schema
        for value in schema.values():
            yield from nodes(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from nodes(value)


# ---------------------------------------------------------------------------- the shapes


def test_each_item_shape_has_exactly_the_keys_of_its_kinds() -> None:
    # GIVEN the keys each item kind takes (what the edits validate)
    every_key = set().union(*KEYS_OF_KIND.values())
    defs = shown("add_field")["$defs"]
    kinds: list[str] = []
    for shape in ITEM_SHAPES:
        listed = defs[shape.__name__]["properties"]["kind"]
        named = listed.get("enum") or [listed["const"]]
        kinds += named
        # THEN each shape a model is shown takes exactly the keys its kinds take together
        assert keys(shape) == set().union(*(KEYS_OF_KIND[k] for k in named)), shape
    # AND the shapes cover every kind once, in order
    assert tuple(kinds) == get_args(ItemKind)
    # AND an update takes all of them but the rule (a new id is a rename)
    assert keys(FieldUpdates) == every_key - {"when"}


def test_the_flat_rule_and_action_have_every_key_of_every_form() -> None:
    assert keys(Rule) == keys(Condition) | keys(AllOf) | keys(AnyOf) | keys(Not)
    rule = shown("set_conditional_logic")["$defs"]["Rule"]
    assert tuple(rule["properties"]["op"]["enum"]) == get_args(ComparisonOp)
    members = get_args(get_args(ActionUnion)[0])
    assert keys(Action) == set().union(*(keys(m) for m in members))
    then = shown("set_checkpoint")["properties"]["then"]["items"]
    assert then["properties"]["action"]["enum"] == [
        get_args(m.model_fields["action"].annotation)[0] for m in members
    ]


# ---------------------------------------------------------------------------- the schemas


@pytest.mark.parametrize("tool", list(BUILDER_ARGUMENTS))
def test_every_shown_schema_is_valid_closed_and_typed(tool: str) -> None:
    schema = shown(tool)
    # THEN it is a JSON Schema (2020-12) of an object, its description left to the tool
    Draft202012Validator.check_schema(schema)
    assert schema["type"] == "object" and "description" not in schema
    for node in nodes(schema):
        # AND every object forbids unknown keys, every array says its items, nothing untyped
        if node.get("type") == "object" or "properties" in node:
            assert node.get("additionalProperties") is False, (tool, node)
        if "array" in (node.get("type") or ()):
            assert "items" in node, (tool, node)
        assert "title" not in node or isinstance(node["title"], dict), (tool, node)
    # AND each definition a $ref names is there
    for ref in {n["$ref"] for n in nodes(schema) if "$ref" in n}:
        assert ref.removeprefix("#/$defs/") in schema["$defs"], (tool, ref)


def test_bedrock_takes_the_tools_as_its_sdk_types_them() -> None:
    # GIVEN the Converse API's toolConfig as botocore models it
    model = botocore.session.get_session().get_service_model("bedrock-runtime")
    request = model.operation_model("Converse").input_shape
    assert request is not None
    config = request.members["toolConfig"]
    # WHEN the builder tools in the bedrock shape are validated against it
    report = ParamValidator().validate({"tools": tool_definitions("bedrock", TOOLS)}, config)
    # THEN botocore finds nothing wrong
    assert not report.has_errors(), report.generate_report()


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_carries_the_same_schemas_under_valid_names(fmt: Format) -> None:
    listed = tool_definitions(fmt, TOOLS)
    # every vendor: a name of letters, digits, _ and - (64 at most), a description, the schema
    for tool, entry in zip(TOOLS, listed, strict=True):
        text = json.dumps(entry)
        assert json.loads(text) == entry  # plain JSON
        assert tool.name.replace("_", "").isalnum() and len(tool.name) <= 64
        assert tool.description and "\n" not in tool.description
        assert json.dumps(tool.input_schema()) in text


# ---------------------------------------------------------------------------- looser, not laxer


@pytest.mark.parametrize("n", range(len(BUILD)))
def test_every_call_of_the_job_application_fits_the_schema_it_was_shown(n: int) -> None:
    call = BUILD[n]
    Draft202012Validator(shown(call.tool)).validate(dict(call.input))


def test_what_the_flat_schema_lets_through_the_edits_still_refuse() -> None:
    # GIVEN a draft, and an integer sent with options: the flat item's schema lets it through
    draft = apply_edit(None, "create_form", {"title": "Poll", "steps": [{"title": "Poll"}]})
    odd = {"field": {"kind": "integer", "label": "Age", "options": [{"value": "1"}]}}
    Draft202012Validator(shown("add_field")).validate(odd)
    # WHEN it is sent / THEN it is refused as data, naming the key and the kind's keys
    with pytest.raises(EditError) as raised:
        apply_edit(draft.document, "add_field", odd)
    assert raised.value.code == "invalid"
    assert 'kind "integer" takes no options' in raised.value.message
    # AND so is a rule mixing a condition with "all", which the flat rule lets through
    mixed = {
        "target": "step",
        "when": {"field": "age", "op": "answered", "all": [{"field": "age", "op": "answered"}]},
    }
    Draft202012Validator(shown("set_conditional_logic")).validate(mixed)
    with pytest.raises(EditError) as raised:
        apply_edit(draft.document, "set_conditional_logic", mixed)
    assert "a condition takes no all" in raised.value.message


def test_showing_the_shapes_leaves_the_documents_own_schema_alone() -> None:
    # GIVEN every builder tool's schema made (a shape stands in for document models there)
    for tool in BUILDER_ARGUMENTS:
        shown(tool)
    # THEN the document's JSON schema is what a fresh interpreter, without them, makes
    code = (
        "import json; from forms.documents.model import FormDocument; "
        "print(json.dumps(FormDocument.model_json_schema()))"
    )
    fresh = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(fresh.stdout) == FormDocument.model_json_schema()


def test_a_fact_key_is_shown_as_a_plain_string_and_checked_by_the_edits() -> None:
    # GIVEN the field item and the update, as shown: a key is any string (null clears one)
    assert shown("add_field")["$defs"]["FieldItem"]["properties"]["memory"] == {"type": "string"}
    assert shown("update_field")["$defs"]["FieldUpdates"]["properties"]["memory"] == {
        "type": ["string", "null"]
    }
    # WHEN a name that is no key goes through that schema
    draft = apply_edit(None, "create_form", {"title": "Poll", "steps": [{"title": "Poll"}]})
    sent = {"field": {"kind": "date", "label": "Born", "memory": "birthday"}}
    Draft202012Validator(shown("add_field")).validate(sent)
    # THEN the edit refuses it as data, naming the keys a date field can hold
    with pytest.raises(EditError) as raised:
        apply_edit(draft.document, "add_field", sent)
    assert raised.value.code == "invalid"
    assert "unknown fact key 'birthday'" in raised.value.message
    assert 'Keys field "born" (date) can hold: person.date_of_birth.' in (raised.value.hint or "")
