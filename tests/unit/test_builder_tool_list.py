"""One list of the builder tools (``forms.documents.BUILDER_TOOLS``): nothing else names them.

Every place that needs the builder tools derives them from the list: the editing tools'
arguments and every tool's (``TOOL_ARGUMENTS``, ``BUILDER_ARGUMENTS``, and so the builder's
routes, its OpenAPI operations, ``GET /builder/tools`` and the agents), the edit each tool
applies, the hint of a broken rule's refusal, and MCP's annotations. The form tools' list is
held the same way (``test_tool_list.py``, whose reading of literals this reuses).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from forms.app.builder_tools import BUILDER_ARGUMENTS
from forms.app.catalog import Catalog
from forms.documents import BUILDER_TOOLS, BUILDER_TOOLS_BY_NAME, TOOL_ARGUMENTS
from forms.examples.travel_claim import travel_claim
from forms.registry import FormRegistry
from forms.storage.documents import InMemoryFormDocumentStore
from forms.storage.drafts import InMemoryDraftStore
from forms.surface.tools import TOOLS_BY_NAME
from formwork.mcp.tools import builder_hints, mcp_tool
from tests.support import TickingClock, builder_for
from tests.unit.test_tool_list import lists_naming

REGISTRY = Path("forms/documents/edit_tools.py")
NAMES = frozenset(BUILDER_TOOLS_BY_NAME)


def test_no_list_of_builder_tool_names_outside_the_builder_tools_list() -> None:
    # GIVEN every module that ships, WHEN its literal lists, tuples, sets and dict keys are read
    found = lists_naming(NAMES, besides=(REGISTRY,))
    # THEN none names two or more builder tools: what needs them derives them from the list
    assert found == []


def test_the_arguments_and_the_annotations_are_the_lists_in_its_order() -> None:
    # GIVEN the list's names, in order
    names = [tool.name for tool in BUILDER_TOOLS]
    assert len(set(names)) == len(names)
    assert not set(names) & set(TOOLS_BY_NAME), "a builder tool is named like a form tool"
    # THEN every tool's arguments, the editing tools' and MCP's annotations follow it
    assert list(BUILDER_ARGUMENTS) == names == list(builder_hints())
    assert list(TOOL_ARGUMENTS) == [t.name for t in BUILDER_TOOLS if t.does == "edit"]
    for tool in BUILDER_TOOLS:
        assert BUILDER_ARGUMENTS[tool.name] is tool.arguments
        shown = mcp_tool({"name": tool.name, "inputSchema": {}}).annotations
        assert shown is not None and shown.title == tool.title
        assert shown.read_only_hint is (tool.does == "read")
        if tool.does != "read":
            assert (shown.destructive_hint, shown.idempotent_hint) == (
                tool.destructive,
                tool.idempotent,
            )
    # AND every editing tool but create_form (which starts the draft) names its edit
    for tool in BUILDER_TOOLS:
        assert (tool.edit is not None) is (tool.does == "edit" and tool.name != "create_form")


def test_every_tool_of_the_list_is_served_and_a_name_not_in_it_is_refused() -> None:
    # GIVEN a builder service with a draft
    catalog = Catalog(FormRegistry([travel_claim]), InMemoryFormDocumentStore(), timer=lambda: 0.0)
    builder = builder_for(
        InMemoryDraftStore(), catalog, clock=TickingClock(datetime(2026, 3, 1, tzinfo=UTC))
    )
    started = builder.call(
        "acme/alice", "list-form", "create_form", "c0", {"title": "T", "steps": [{"title": "S"}]}
    )
    assert started["ok"] is True, started
    for n, tool in enumerate(BUILDER_TOOLS):
        # WHEN each tool of the list is called (with no arguments: most refuse them)
        result = builder.call("acme/alice", "list-form", tool.name, f"c{n + 1}", {})
        # THEN the service knows it
        assert result.get("error") != "unknown_tool", (tool.name, result)
    # AND a name not in the list is no tool, and the refusal names the list's, in its order
    refused = builder.call("acme/alice", "list-form", "delete_form", "c-x", {})
    assert refused["error"] == "unknown_tool"
    assert refused["hint"] == "The tools are: " + ", ".join(t.name for t in BUILDER_TOOLS) + "."
