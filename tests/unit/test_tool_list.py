"""One list of the form tools (``forms.surface.tools.TOOLS``): nothing else names them.

Every place that needs the tools derives them from the list: the HTTP routes and the OpenAPI
document, the Bedrock action group, ``GET /tools`` in every shape, MCP's annotations, and which
calls are recorded. The one place that cannot derive them, the service's function for each
tool, is held to the list by calling every tool in it.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from forms import Caller
from forms.app.calls import WRITE_TOOLS
from forms.examples.travel_claim import travel_claim
from forms.surface.formats import FORMATS, tool_definitions
from forms.surface.tool_result import ToolResult
from forms.surface.tools import TOOLS, TOOLS_BY_NAME, WRITES
from formwork.aws.api import openapi_json
from formwork.aws.bedrock_schema import action_group_schema, action_result
from formwork.mcp.ask import ASK_TOOL
from formwork.mcp.tools import HINTS, mcp_tool
from tests.support import Session, service_for

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ("forms", "functions", "formwork", "workflows", "infra", "examples")
"""The packages whose code runs in a deployment or a host (not the tests, nor the benches)."""
REGISTRY = Path("forms/surface/tools.py")
SERVICE = Path("forms/app/service.py")
"""The service's function for each tool: the application layer's, which the surface below it
cannot name; ``test_every_tool_of_the_list_is_served_and_only_writes_are_recorded`` holds it
to the list."""

NAMES = frozenset(TOOLS_BY_NAME)

CALLS = {
    "form_list": {},
    "form_start": {"form": "travel-claim", "values": {"destination": "Lisbon"}},
    "form_read": {"form": "travel-claim"},
    "form_fill": {"form": "travel-claim", "values": {"mode": "rail"}},
    "form_revise": {"form": "travel-claim", "field": "mode", "action": "undo"},
    "form_abandon": {"form": "travel-claim", "reason": "the trip was cancelled"},
}
"""One call of each tool, in the list's order, that lands on the travel claim."""


def _collections(tree: ast.AST) -> Iterator[tuple[int, set[str]]]:
    """Every list, tuple, set and dict (its keys) literal, with the strings it holds, except a
    module's ``__all__`` (which names what the module exports, the tools' functions among them,
    not a list of tools)."""
    exports = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
    }
    for node in ast.walk(tree):
        if id(node) in exports:
            continue
        if isinstance(node, ast.List | ast.Tuple | ast.Set):
            items: list[ast.expr | None] = list(node.elts)
        elif isinstance(node, ast.Dict):
            items = list(node.keys)
        else:
            continue
        strings = {
            i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)
        }
        yield node.lineno, strings


def _name(shape: dict[str, Any]) -> str:
    """A tool's name in any vendor's shape (at the top, in ``function`` or in ``toolSpec``)."""
    inner = shape.get("function") or shape.get("toolSpec") or shape
    return str(inner["name"])


def lists_naming(names: frozenset[str], *, besides: Iterable[Path]) -> list[str]:
    """Each literal list, tuple, set or dict's keys in a shipped module (but ``besides``) that
    names two or more of ``names``, as ``path:line [names]``."""
    found = []
    for package in SHIPPED:
        for path in sorted((ROOT / package).rglob("*.py")):
            relative = path.relative_to(ROOT)
            if relative in besides:
                continue
            for line, strings in _collections(ast.parse(path.read_text(encoding="utf-8"))):
                named = strings & names
                if len(named) >= 2:
                    found.append(f"{relative}:{line} {sorted(named)}")
    return found


def test_no_list_of_tool_names_outside_the_tools_list() -> None:
    # GIVEN every module that ships, WHEN its literal lists, tuples, sets and dict keys are read
    found = lists_naming(NAMES, besides=(REGISTRY, SERVICE))
    # THEN none names two or more form tools: what needs the tools derives them from the list
    assert found == []


def test_every_tool_of_the_list_is_served_and_only_writes_are_recorded() -> None:
    # GIVEN a service, and one call for each tool of the list
    assert list(CALLS) == [tool.name for tool in TOOLS], "a new tool needs a call here"
    session = Session(service_for(travel_claim), Caller("alice", "conv-list"))
    for name, payload in CALLS.items():
        # WHEN each is called, then sent again under the same id
        first = session.call(name, payload, call_id=f"first-{name}")
        again = session.call(name, payload, call_id=f"first-{name}")
        # THEN the service answers it, and replays exactly the writes the list names
        assert first["ok"] is True, (name, first)
        assert again.get("replayed", False) is TOOLS_BY_NAME[name].writes, (name, again)
    assert WRITE_TOOLS == WRITES == {tool.name for tool in TOOLS if tool.writes}
    # AND a name not in the list is no tool, and the refusal names the list's
    refused = session.call("form_submit", {})
    assert (refused["ok"], refused["message"]) == (False, "there is no tool 'form_submit'")
    assert refused["hint"] == "the tools are: " + ", ".join(TOOLS_BY_NAME)


def test_every_schema_and_shape_lists_the_tools_of_the_list_in_its_order() -> None:
    # GIVEN the tools' list
    order = [tool.name for tool in TOOLS]
    # THEN GET /tools names them in every format, in the list's order
    for fmt in FORMATS:
        shapes = tool_definitions(fmt)
        names = [
            s.get("name") or s.get("function", {}).get("name") or s["toolSpec"]["name"]
            for s in shapes
        ]
        assert names == order, fmt
    # AND the OpenAPI document has one operation per tool, answered with its result model
    paths = json.loads(openapi_json())["paths"]
    for tool in TOOLS:
        operation = paths[f"/conversations/{{conversation_id}}/tools/{tool.name}"]["post"]
        assert operation["operationId"] == tool.name
        schema = operation["responses"]["200"]["content"]["application/json"]["schema"]
        assert schema == {"$ref": f"#/components/schemas/{tool.result.__name__}"}
    # AND the Bedrock action group one operation per tool, named as the list names them
    bedrock = action_group_schema()["paths"]
    assert [path.lstrip("/") for path in bedrock] == order
    # AND MCP's annotations are the list's, plus form_ask (MCP's own)
    assert list(HINTS) == [*order, ASK_TOOL]
    for tool in TOOLS:
        annotations = mcp_tool(tool_definitions("mcp", [tool])[0]).annotations
        assert annotations is not None and annotations.title == tool.title
        assert annotations.read_only_hint is (not tool.writes)


def test_the_bedrock_result_is_a_projection_of_the_one_result_model() -> None:
    # GIVEN the result Bedrock is told of (it cannot say anyOf, so it has words of its own)
    told = action_result(ToolResult)
    # THEN each of its keys is a key of the one tool result model, and ok and summary say
    # what the model says of them
    assert set(told.model_fields) <= set(ToolResult.model_fields)
    for key in ("ok", "summary"):
        assert told.model_fields[key].description == ToolResult.model_fields[key].description
