"""The tool specs in each model vendor's tool-definition shape.

Every vendor reduces a tool to a name, a description and a JSON schema of its input; only the
envelope differs. One pydantic model per tool (``forms.surface.tools``) produces all of them.

Any tool set goes through the same shapes (a ``Tool``: a name, a description, an input
schema): the form tools (``ToolSpec``, the default), and a set given as a mapping of tool name
-> argument model whose docstring is the tool's description (``model_tools``: the builder's
``BUILDER_ARGUMENTS``).

The form tools also come in OpenAI's strict mode (``STRICT_FORMATS``), typed for a set of
forms: ``forms.surface.strict``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal, NamedTuple, Protocol

from pydantic import BaseModel

from forms.surface.tools import TOOLS

Format = Literal["generic", "openai", "openai-responses", "anthropic", "bedrock", "mcp"]
FORMATS: tuple[Format, ...] = (
    "generic",
    "openai",
    "openai-responses",
    "anthropic",
    "bedrock",
    "mcp",
)
"""The shapes every tool set takes (the form tools, the builder's)."""
StrictFormat = Literal["openai-strict", "openai-responses-strict"]
STRICT_FORMATS: tuple[StrictFormat, ...] = ("openai-strict", "openai-responses-strict")
"""The form tools in OpenAI's strict mode: Chat Completions' shape, and the Responses API's."""
ToolFormat = Literal[Format, StrictFormat]
TOOL_FORMATS: tuple[ToolFormat, ...] = (*FORMATS, *STRICT_FORMATS)
"""What ``GET /tools`` offers."""


class Tool(Protocol):
    """What a vendor shape reads of a tool."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    def input_schema(self) -> dict[str, Any]: ...


class ModelTool(NamedTuple):  # a tenth of a dataclass's cost to create, at import
    """A tool whose argument model says it all: the model's docstring is the description, its
    JSON schema the input schema (``model_input_schema``)."""

    name: str
    args: type[BaseModel]

    @property
    def description(self) -> str:
        return " ".join(inspect.cleandoc(self.args.__doc__ or "").split())

    def input_schema(self) -> dict[str, Any]:
        return model_input_schema(self.args)


def model_tools(arguments: Mapping[str, type[BaseModel]]) -> tuple[ModelTool, ...]:
    """The tools of a mapping tool name -> argument model, in its order."""
    return tuple(ModelTool(name, model) for name, model in arguments.items())


_NAMED_SCHEMAS = ("properties", "patternProperties", "$defs", "definitions")
"""Keywords whose value maps names (a property named ``title``, say) to schemas."""
_NULL = {"type": "null"}


def model_input_schema(model: type[BaseModel]) -> dict[str, Any]:
    """``model``'s JSON schema as a model reads it, with nothing that says nothing: no titles,
    no ``default`` null, false or empty list (leaving a key out says as much), no description
    at the top (the model's docstring, which the tool's description already is), descriptions
    on one line, and ``X | None`` of a plain type as ``{"type": [X, "null"]}``. Unlike
    ``forms.surface.tools.compact_schema`` it keeps ``$defs`` with every ``$ref`` to them (an
    argument model may be recursive: a rule holding rules) and every ``null`` the model shows
    (in a partial update, ``null`` clears a key: it is a value the model may send; a model
    hides a ``None`` that is only a default with ``SkipJsonSchema``). A property named like a
    keyword (``title``) is a property, and is kept."""

    def walk(node: Any, named: bool = False) -> Any:
        if isinstance(node, list):
            return [walk(item) for item in node]
        if not isinstance(node, dict):
            return node
        if named:
            return {key: walk(value) for key, value in node.items()}
        out = {
            key: one_line(value) if key == "description" else walk(value, key in _NAMED_SCHEMAS)
            for key, value in node.items()
            if key != "title" and not (key == "default" and _says_nothing(value))
        }
        return as_nullable(out)

    schema: dict[str, Any] = walk(model.model_json_schema())
    schema.pop("description", None)  # the model's docstring: the tool's description already
    return schema


def as_nullable(node: dict[str, Any], kinds: frozenset[str] | None = None) -> dict[str, Any]:
    """``{"anyOf": [{"type": X, ...}, {"type": "null"}]}`` as ``{"type": [X, "null"], ...}``
    (the same schema, a third of the tokens; an ``enum`` gets ``null`` too); a ``$ref`` or a
    union stays an ``anyOf``, and so does an X not in ``kinds`` (None: any)."""
    branches = node.get("anyOf")
    if not isinstance(branches, list) or len(branches) != 2 or _NULL not in branches:
        return node
    (other,) = [b for b in branches if b != _NULL]
    kind = other.get("type")
    if not isinstance(kind, str) or "const" in other or (kinds is not None and kind not in kinds):
        return node
    merged = {**other, "type": [other["type"], "null"]}
    if "enum" in other:
        merged["enum"] = [*other["enum"], None]
    return {**merged, **{k: v for k, v in node.items() if k != "anyOf"}}


def _says_nothing(default: Any) -> bool:
    """A default the schema need not show: ``null``, ``false`` or an empty list (``0`` says
    something)."""
    return default is None or default is False or default == []


def one_line(text: Any) -> Any:
    """A docstring or description as one line (a line break costs a token, and says nothing)."""
    return " ".join(inspect.cleandoc(text).split()) if isinstance(text, str) else text


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


def _openai_responses(tool: Tool) -> dict[str, Any]:
    """Responses API ``tools`` entry: flat, and ``strict`` said (the API's default is true)."""
    return {
        "type": "function",
        "name": tool.name,
        "description": tool.description,
        "parameters": tool.input_schema(),
        "strict": False,
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
    "openai-responses": _openai_responses,
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
