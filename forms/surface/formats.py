"""The tool specs in each model vendor's tool-definition shape.

Every vendor reduces a tool to a name, a description and a JSON schema of its input; only the
envelope differs. One pydantic model per tool (``forms.surface.tools``) produces all of them.

Any tool set goes through the same shapes (a ``Tool``: a name, a description, an input
schema): the form tools (``ToolSpec``, the default), and a set given as a mapping of tool name
-> argument model whose docstring is the tool's description (``model_tools``: the builder's
``BUILDER_ARGUMENTS``).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from pydantic import BaseModel

from forms.surface.tools import TOOLS

Format = Literal["generic", "openai", "anthropic", "bedrock", "mcp"]
FORMATS: tuple[Format, ...] = ("generic", "openai", "anthropic", "bedrock", "mcp")


class Tool(Protocol):
    """What a vendor shape reads of a tool."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    def input_schema(self) -> dict[str, Any]: ...


@dataclass(frozen=True, slots=True)
class ModelTool:
    """A tool whose argument model says it all: the model's docstring is the description, its
    JSON schema the input schema (``model_input_schema``)."""

    name: str
    args: type[BaseModel]

    @property
    def description(self) -> str:
        return inspect.cleandoc(self.args.__doc__ or "")

    def input_schema(self) -> dict[str, Any]:
        return model_input_schema(self.args)


def model_tools(arguments: Mapping[str, type[BaseModel]]) -> tuple[ModelTool, ...]:
    """The tools of a mapping tool name -> argument model, in its order."""
    return tuple(ModelTool(name, model) for name, model in arguments.items())


_NAMED_SCHEMAS = ("properties", "patternProperties", "$defs", "definitions")
"""Keywords whose value maps names (a property named ``title``, say) to schemas."""


def model_input_schema(model: type[BaseModel]) -> dict[str, Any]:
    """``model``'s JSON schema without titles and without ``default`` null or false (leaving a
    key out says as much). Unlike ``forms.surface.tools.compact_schema`` it keeps ``$defs``
    with every ``$ref`` to them (an argument model may be recursive: a rule holding rules) and
    every ``null`` branch (in a partial update, ``null`` clears a key: it is a value the model
    may send). A property named like a keyword (``title``) is a property, and is kept."""

    def walk(node: Any, named: bool = False) -> Any:
        if isinstance(node, list):
            return [walk(item) for item in node]
        if not isinstance(node, dict):
            return node
        if named:
            return {key: walk(value) for key, value in node.items()}
        return {
            key: walk(value, named=key in _NAMED_SCHEMAS)
            for key, value in node.items()
            if key != "title" and not (key == "default" and (value is None or value is False))
        }

    schema: dict[str, Any] = walk(model.model_json_schema())
    return schema


def _generic(tool: Tool) -> dict[str, Any]:
    return {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema()}


def _openai(tool: Tool) -> dict[str, Any]:
    """Chat Completions ``tools`` entry (also accepted by OpenAI-compatible endpoints)."""
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.input_schema(),
        },
    }


def _anthropic(tool: Tool) -> dict[str, Any]:
    """Messages API ``tools`` entry."""
    return {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema()}


def _bedrock(tool: Tool) -> dict[str, Any]:
    """Bedrock Converse ``toolConfig.tools`` entry."""
    return {
        "toolSpec": {
            "name": tool.name,
            "description": tool.description,
            "inputSchema": {"json": tool.input_schema()},
        }
    }


def _mcp(tool: Tool) -> dict[str, Any]:
    """Model Context Protocol ``tools/list`` entry."""
    return {"name": tool.name, "description": tool.description, "inputSchema": tool.input_schema()}


_SHAPES: dict[Format, Callable[[Tool], dict[str, Any]]] = {
    "generic": _generic,
    "openai": _openai,
    "anthropic": _anthropic,
    "bedrock": _bedrock,
    "mcp": _mcp,
}


def tool_definitions(
    fmt: Format = "generic", tools: Iterable[Tool] = TOOLS
) -> list[dict[str, Any]]:
    """Every tool of ``tools`` (default: the form tools) in ``fmt``'s shape, in their order."""
    shape = _SHAPES[fmt]
    return [shape(tool) for tool in tools]
