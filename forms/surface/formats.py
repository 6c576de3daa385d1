"""The tool specs in each model vendor's tool-definition shape.

Every vendor reduces a tool to a name, a description and a JSON schema of its input; only the
envelope differs. One pydantic model per tool (``forms.surface.tools``) produces all of them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Literal

from forms.surface.tools import TOOLS, ToolSpec

Format = Literal["generic", "openai", "anthropic", "bedrock", "mcp"]
FORMATS: tuple[Format, ...] = ("generic", "openai", "anthropic", "bedrock", "mcp")


def _generic(tool: ToolSpec) -> dict[str, Any]:
    return {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema()}


def _openai(tool: ToolSpec) -> dict[str, Any]:
    """Chat Completions ``tools`` entry (also accepted by OpenAI-compatible endpoints)."""
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.input_schema(),
        },
    }


def _anthropic(tool: ToolSpec) -> dict[str, Any]:
    """Messages API ``tools`` entry."""
    return {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema()}


def _bedrock(tool: ToolSpec) -> dict[str, Any]:
    """Bedrock Converse ``toolConfig.tools`` entry."""
    return {
        "toolSpec": {
            "name": tool.name,
            "description": tool.description,
            "inputSchema": {"json": tool.input_schema()},
        }
    }


def _mcp(tool: ToolSpec) -> dict[str, Any]:
    """Model Context Protocol ``tools/list`` entry."""
    return {"name": tool.name, "description": tool.description, "inputSchema": tool.input_schema()}


_SHAPES: dict[Format, Callable[[ToolSpec], dict[str, Any]]] = {
    "generic": _generic,
    "openai": _openai,
    "anthropic": _anthropic,
    "bedrock": _bedrock,
    "mcp": _mcp,
}


def tool_definitions(
    fmt: Format = "generic", tools: Iterable[ToolSpec] = TOOLS
) -> list[dict[str, Any]]:
    """Every tool in ``fmt``'s shape, in surface order."""
    shape = _SHAPES[fmt]
    return [shape(tool) for tool in tools]
