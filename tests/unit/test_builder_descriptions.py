"""What the builder tools' schemas and descriptions say matches what the edits take: an item's
shape says per kind exactly which keys it takes (a heading takes no label), and every key a
description names is a key of that tool's schema."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from forms.app.builder import BUILDER_ARGUMENTS
from forms.documents.edit_fields import KEYS_OF_KIND
from forms.documents.edit_shapes import FIELD_DESCRIPTION, FieldItem
from forms.surface.formats import model_input_schema, model_tools

TOOLS = model_tools(BUILDER_ARGUMENTS)


def shown(tool: str) -> dict[str, Any]:
    return model_input_schema(BUILDER_ARGUMENTS[tool])


def walk(schema: Any) -> Iterator[dict[str, Any]]:
    if isinstance(schema, dict):
        yield schema
        for value in schema.values():
            yield from walk(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from walk(value)


@pytest.mark.parametrize(
    ("item", "fits"),
    [
        ({"kind": "heading", "text": "About you"}, True),
        ({"kind": "heading", "label": "About you"}, False),
        ({"kind": "heading", "text": "About you", "label": "About you"}, False),
        ({"kind": "divider", "text": "---"}, False),
        ({"kind": "paragraph", "text": "Read this.", "required": True}, False),
        ({"kind": "email", "label": "Email"}, True),
        ({"kind": "email", "text": "Email"}, False),
        ({"kind": "boolean", "label": "I agree", "must_be_true": True}, True),
    ],
)
def test_the_item_schema_takes_only_the_keys_of_the_item_s_kind(
    item: dict[str, Any], fits: bool
) -> None:
    # GIVEN the schema add_field and create_form show for an item
    for tool, arguments in (
        ("add_field", {"field": item}),
        ("create_form", {"title": "T", "steps": [{"title": "S", "items": [item]}]}),
    ):
        # WHEN an item is checked against it, THEN a key its kind does not take does not fit
        assert Draft202012Validator(shown(tool)).is_valid(arguments) is fits, (tool, item)


def test_the_field_description_says_exactly_the_keys_of_each_kind() -> None:
    # GIVEN the field shape's description, read back into the keys each kind adds
    by_kind = FIELD_DESCRIPTION.split(". By kind also: ")[1]
    said: dict[str, set[str]] = {}
    for part in by_kind.rstrip(".").split("; "):
        if part == "other kinds nothing more":
            continue
        kinds, keys = part.split(": ", 1)
        for kind in kinds.split(", "):
            said[kind] = keys_in(keys)
    # THEN each field kind takes the keys every field kind takes, and exactly those its part
    # of the description adds
    fields = {k: v for k, v in KEYS_OF_KIND.items() if "label" in v}
    common = frozenset.intersection(*fields.values())
    for kind, takes in fields.items():
        assert takes == common | said.get(kind, set()), kind
    # AND the field shape shows every one of them
    assert set(FieldItem.model_fields) == set().union(*fields.values())


def keys_in(text: str) -> set[str]:
    """The keys a list names (``a, b (what it is, required), c``), without their notes."""
    return {re.sub(r" \(.*", "", k) for k in re.split(r", (?![^()]*\))", text)}


def keys_of(schema: dict[str, Any]) -> set[str]:
    return {key for node in walk(schema) for key in node.get("properties", {})}


def enums_of(schema: dict[str, Any]) -> set[str]:
    values = {v for node in walk(schema) for v in node.get("enum", []) if isinstance(v, str)}
    return values | {n["const"] for n in walk(schema) if isinstance(n.get("const"), str)}


NAME = re.compile(r"\b[a-z]+(?:_[a-z]+)+\b")
"""A key as descriptions name them: a snake_case word (on_complete, closes_on_complete)."""


@pytest.mark.parametrize("tool", TOOLS, ids=lambda t: t.name)
def test_every_key_a_description_names_is_in_that_tool_s_schema(tool: Any) -> None:
    schema = tool.input_schema()
    texts = [tool.description]
    texts += [n["description"] for n in walk(schema) if isinstance(n.get("description"), str)]
    allowed = keys_of(schema) | enums_of(schema) | set(BUILDER_ARGUMENTS)
    for text in texts:
        named = set(NAME.findall(re.sub(r"\{\w+\}", "", text)))  # not {field_id} placeholders
        # THEN every key it names is one the schema has (or a tool, or a value it takes)
        assert named <= allowed, (tool.name, named - allowed)


def test_create_form_calls_what_a_step_holds_items() -> None:
    (create,) = [t for t in TOOLS if t.name == "create_form"]
    assert "items" in create.description and "items" in keys_of(create.input_schema())
    assert "fields in all" not in create.description
