"""The Bedrock Agents action group's contract: its operations, the arguments as Bedrock
carries them, and the OpenAPI schema the action group is created with
(``docs/clients.md#bedrock-agents``).

Bedrock hands the function each request-body property as text, whatever the schema says its
type is, so an argument that is an object, an array or any JSON value travels as a string of
JSON text (``wire_kind``); ``arguments_model`` declares each tool's arguments that way, with a
description on every one (Bedrock wants one, and takes no ``enum``), and ``decode_arguments``
reads them back into the input the HTTP API would get.

``register_operations`` puts one ``POST /<tool>`` per tool on a resolver. The handler
(``formwork.aws.bedrock_agent``) registers its routes with it; ``action_group_schema`` registers
the same operations on a resolver of its own and takes Powertools' document of them, made
plain for Bedrock (``for_bedrock``: OpenAPI 3.0, no references, no ``enum``, a description
and an operationId on every operation). So the schema cannot drift from the routes, and this
module never imports the handler (no import cycle, and the handler stays the invocation's
code only).

``python -m formwork.aws.bedrock_schema`` prints the schema, ``--write`` replaces
``infra/bedrock-agent/openapi.json`` (``SCHEMA_PATH``) with it, and ``--check`` fails while
that copy is stale (a test checks the same). The copy is the repository's: an installed
package does not ship it. Exit codes: 0 done (the copy is current); 1 the copy is stale; 2 a
usage error; 3 there is no copy here to check or write (an installed package, or a checkout
without it): the message says where it lives.
"""

from __future__ import annotations

import inspect
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from functools import cache, cached_property
from pathlib import Path
from typing import Annotated, Any, Final

from aws_lambda_powertools.event_handler import BedrockAgentResolver, Response
from aws_lambda_powertools.event_handler.openapi.params import Body
from pydantic import BaseModel, ConfigDict, Field, create_model

from forms.errors import BadRequest
from forms.surface.tools import TOOLS, ToolSpec
from formwork.aws.json_body import loads_strict

JSON: Final = "json"
"""The wire kind of an argument Bedrock cannot carry as it is: JSON text in a string."""
_SCALARS: Final = {"string": str, "boolean": bool, "integer": int, "number": float}
_JSON_EXAMPLES: Final = {
    "object": 'a JSON object as text, e.g. {"destination": "Lisbon", "nights": 3}',
    "array": 'a JSON array as text, e.g. ["phone"]',
    None: 'the answer as JSON text: "Lisbon" (text in quotes), 3, true',
}
MISSING_DESCRIPTIONS: Final = {
    "field": "The field id to change (leave out with clear_memory)",
    "action": "What to do with the field",
    "reason": "Why the form is closed, in a few words",
}
"""Descriptions for the arguments the tool surface leaves undescribed (Bedrock wants one on
every property; the compact surface saves the tokens)."""

SCHEMA_TITLE: Final = "Formwork form tools"
SCHEMA_DESCRIPTION: Final = (
    "Tools for filling in forms with the user, one operation per tool. Every answer is a JSON "
    "object that leads with ok and a one-sentence summary; when ok is false, error, message "
    "and hint say what went wrong and what to send instead. Arguments that hold JSON (values, "
    "decline, value) are JSON text in a string."
)

SCHEMA_PATH: Final = Path(__file__).resolve().parents[1] / "infra/bedrock-agent/openapi.json"
"""The checked-in copy of the schema, the one the action group is created with."""
NO_COPY: Final = 3
"""``--check`` and ``--write``'s exit code when there is no copy here (not shipped)."""


WHEN_REFUSED: Final = {
    "error": "When ok is false: a stable code",
    "message": "When ok is false: what was wrong",
    "hint": "When ok is false: what to send instead",
    "status_line": "Where the form stands now",
}
"""Bedrock's words for the keys of a result beyond ``ok`` and ``summary``: its schema has no
``anyOf`` to say a refusal carries them, so each key says when it comes."""

RESULT_WORDS: Final = {
    "ok": "Whether the call landed",
    "summary": "What the call did, in one sentence",
}
"""``ToolResult``'s words for ``ok`` and ``summary``, written out: the handler registers its
operations without making the tool result's classes, which it never uses
(``tests/unit/test_cold_bedrock.py`` holds them to the model's)."""


@cache
def action_result(result: type[BaseModel] | None = None) -> type[BaseModel]:
    """What Bedrock is told of a tool's result model: ``ok`` and ``summary`` in the model's
    own words, the refusal's keys and the status line in Bedrock's (``WHEN_REFUSED``), each a
    plain optional string; the rest is "other keys". Without ``result``, the form tools'
    (``ToolResult``), its words read from ``RESULT_WORDS``: the handler registers its
    operations with it and never makes the result's classes."""
    own = (
        RESULT_WORDS
        if result is None
        else {k: result.model_fields[k].description for k in RESULT_WORDS}
    )
    fields: dict[str, Any] = {"ok": (bool, Field(description=own["ok"]))}
    for key in ("summary", *WHEN_REFUSED):
        words = WHEN_REFUSED.get(key) or own[key]
        fields[key] = (str | None, Field(default=None, description=words))
    return create_model(
        "ActionResult", __doc__="A tool's result. Other keys depend on the tool.", **fields
    )


# ---------------------------------------------------------------------------- arguments


def wire_kind(prop: Mapping[str, Any]) -> str:
    """How an argument of the tool's JSON schema travels through Bedrock: as the scalar it is
    (``string``, ``boolean``, ``integer``, ``number``), or as ``JSON`` text in a string."""
    kind = prop.get("type")
    return kind if isinstance(kind, str) and kind in _SCALARS else JSON


def describe(name: str, prop: Mapping[str, Any]) -> str:
    """A property's description for Bedrock: the surface's (or ``MISSING_DESCRIPTIONS``'),
    the allowed values of an enum (Bedrock takes no ``enum``), the JSON an argument holds."""
    text = str(prop.get("description") or MISSING_DESCRIPTIONS.get(name, name.replace("_", " ")))
    if isinstance(prop.get("enum"), list):
        text += ". One of: " + ", ".join(str(v) for v in prop["enum"])
    if wire_kind(prop) == JSON:
        text += "; " + _JSON_EXAMPLES.get(prop.get("type"), _JSON_EXAMPLES[None])
    return text


def arguments_model(spec: ToolSpec) -> type[BaseModel] | None:
    """The tool's arguments as Bedrock carries them (None for a tool without arguments):
    each scalar as its type, each JSON argument as a string; required as the tool says. Other
    properties are let through, for the service to refuse as it refuses them over HTTP."""
    schema = spec.input_schema()
    properties: Mapping[str, Mapping[str, Any]] = schema.get("properties") or {}
    if not properties:
        return None
    required = set(schema.get("required") or ())
    fields: dict[str, Any] = {}
    for name, prop in properties.items():
        kind = wire_kind(prop)
        wire: Any = str if kind == JSON else _SCALARS[kind]
        description = describe(name, prop)
        if name in required:
            fields[name] = (wire, Field(description=description))
        else:
            fields[name] = (wire | None, Field(default=None, description=description))
    title = "".join(part.title() for part in spec.name.split("_")) + "Arguments"
    model: type[BaseModel] = create_model(title, __config__=ConfigDict(extra="allow"), **fields)
    return model


def decode_arguments(spec: ToolSpec, arguments: BaseModel | None) -> dict[str, Any]:
    """The tool's input as the HTTP API would receive it: the arguments the model sent, JSON
    text parsed (a blank one counts as left out); a ``BadRequest`` when one does not parse,
    or is not the JSON kind the tool takes."""
    if arguments is None:
        return {}
    properties = spec.input_schema().get("properties") or {}
    sent = {**arguments.model_dump(exclude_unset=True), **(arguments.model_extra or {})}
    payload: dict[str, Any] = {}
    for name, value in sent.items():
        prop = properties.get(name)
        if prop is None or wire_kind(prop) != JSON:
            payload[name] = value
        elif isinstance(value, str) and value.strip():
            payload[name] = parse_json_argument(name, value, prop.get("type"))
    return payload


def parse_json_argument(name: str, text: str, expected: str | None) -> Any:
    """The JSON value of an argument sent as JSON text, or a ``BadRequest`` naming it."""
    shape = _JSON_EXAMPLES.get(expected, _JSON_EXAMPLES[None])
    try:
        value = loads_strict(text)
    except RecursionError:
        raise BadRequest(f"{name} is nested too deep", f"send {name} as {shape}") from None
    except ValueError as exc:
        why = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
        raise BadRequest(
            f"{name} is not valid JSON text ({why[:120]})", f"send {name} as {shape}"
        ) from None
    wanted = {"object": dict, "array": list}.get(expected or "")
    if wanted is not None and not isinstance(value, wanted):
        raise BadRequest(f"{name} must be a JSON {expected}", f"send {name} as {shape}")
    return value


# ---------------------------------------------------------------------------- operations


Run = Callable[[ToolSpec, BaseModel | None], Response[str]]
"""``run(spec, arguments)``: the answer to one operation, its arguments as the model read
them (None for a tool without arguments)."""


def register_operations(resolver: BedrockAgentResolver, run: Run) -> None:
    """One ``POST /<tool>`` operation per tool on ``resolver``, its body the tool's arguments
    model, answered by ``run``. The handler registers its routes with this, and the schema is
    Powertools' document of the same registration, so the two cannot drift apart."""
    for spec in TOOLS:
        _register(resolver, spec, run)


class _Operation:
    """One tool's operation, as Powertools calls it: ``operation(arguments)``. Its signature
    (the body is the tool's ``arguments_model``) is built when Powertools first reads it, on
    the operation's first request or the schema's generation, not when the handler registers
    it: a cold start builds the arguments models of the tools it is asked for, not all six."""

    def __init__(self, spec: ToolSpec, run: Run) -> None:
        self.spec = spec
        self.run = run
        self.__name__ = spec.name

    def __call__(self, arguments: BaseModel | None = None) -> Response[str]:
        return self.run(self.spec, arguments)

    @cached_property
    def __signature__(self) -> inspect.Signature:
        """Powertools reads the operation's body from its signature: the tool's model."""
        model = arguments_model(self.spec)
        if model is None:
            return inspect.Signature()
        body = Body(description=f"The arguments of {self.spec.name}")
        kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
        arguments = inspect.Parameter("arguments", kind, annotation=Annotated[model, body])
        return inspect.Signature([arguments])


def _register(resolver: BedrockAgentResolver, spec: ToolSpec, run: Run) -> None:
    operation = _Operation(spec, run)
    resolver.post(
        f"/{spec.name}",
        description=spec.description,
        summary=spec.name,
        operation_id=spec.name,
        responses={
            200: {
                "description": "The tool's result, also when the tool refused (ok false, with "
                "error, message and hint)",
                "content": {"application/json": {"model": action_result()}},
            },
        },
    )(operation)


# ---------------------------------------------------------------------------- the schema


def _not_served(spec: ToolSpec, arguments: BaseModel | None) -> Response[str]:
    raise NotImplementedError(f"{spec.name}: the schema's operations are only described")


def action_group_schema() -> dict[str, Any]:
    """The action group's OpenAPI schema, as Bedrock takes it: Powertools' document of the
    tools' operations (registered as the handler registers them), made plain
    (``for_bedrock``)."""
    described = BedrockAgentResolver(enable_validation=True, debug=False)
    register_operations(described, _not_served)
    document = json.loads(
        described.get_openapi_json_schema(
            title=SCHEMA_TITLE, version="1.0.0", description=SCHEMA_DESCRIPTION
        )
    )
    return for_bedrock(document)


def for_bedrock(document: dict[str, Any]) -> dict[str, Any]:
    """Powertools' document in the subset of OpenAPI 3.0 that Bedrock agents read: version
    ``3.0.0``; the validation 422 Powertools adds to every operation dropped (arguments that do
    not fit are a 200 ``bad_request``); every ``$ref`` inlined and the components gone; no
    ``title``, ``additionalProperties``, ``nullable``, ``default`` or one-branch ``anyOf``;
    no ``servers`` (Bedrock calls the Lambda function, not a URL)."""
    schemas = (document.get("components") or {}).get("schemas") or {}

    def plain(node: Any) -> Any:
        if isinstance(node, list):
            return [plain(item) for item in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            target = schemas[node["$ref"].rsplit("/", 1)[-1]]
            return plain({**target, **{k: v for k, v in node.items() if k != "$ref"}})
        out = {
            key: plain(value)
            for key, value in node.items()
            if key not in ("title", "additionalProperties", "nullable", "default")
        }
        branches = out.get("anyOf")
        if isinstance(branches, list) and len(branches) == 1:
            del out["anyOf"]
            out = {**branches[0], **out}
        return out

    paths: dict[str, Any] = {}
    for path, item in document.get("paths", {}).items():
        paths[path] = {}
        for method, operation in item.items():
            responses = {
                status: response
                for status, response in operation.get("responses", {}).items()
                if status != "422"
            }
            paths[path][method] = plain({**operation, "responses": responses})
    return {
        "openapi": "3.0.0",
        "info": document["info"],
        "paths": paths,
    }


def schema_json() -> str:
    """``action_group_schema()`` as the text of ``infra/bedrock-agent/openapi.json``."""
    return json.dumps(action_group_schema(), indent=2, ensure_ascii=False) + "\n"


def main(argv: Sequence[str] | None = None, write: Callable[[str], Any] | None = None) -> int:
    """``python -m formwork.aws.bedrock_schema [--write | --check]``: print the action group's
    schema; or write it to ``SCHEMA_PATH``; or exit 1 when that copy is not what the routes
    make now (regenerate it after a tool changes, then update the action group)."""
    args = list(sys.argv[1:] if argv is None else argv)
    out = write if write is not None else sys.stdout.write
    if not args:
        out(schema_json())
        return 0
    if args in (["--write"], ["--check"]) and not SCHEMA_PATH.is_file():
        where = "" if SCHEMA_PATH.parent.is_dir() else f" ({SCHEMA_PATH.parent} is not here)"
        out(
            f"{SCHEMA_PATH} does not exist{where}: the schema's copy is the repository's "
            "infra/bedrock-agent/openapi.json, which an installed package does not ship; "
            f"run {args[0]} in a checkout, or print the schema with no option and save it "
            "where you keep it\n"
        )
        return NO_COPY
    if args == ["--write"]:
        SCHEMA_PATH.write_text(schema_json(), encoding="utf-8")
        out(f"wrote {SCHEMA_PATH}\n")
        return 0
    if args == ["--check"]:
        if SCHEMA_PATH.read_text(encoding="utf-8") == schema_json():
            return 0
        out(f"{SCHEMA_PATH} is stale: python -m formwork.aws.bedrock_schema --write\n")
        return 1
    out("usage: python -m formwork.aws.bedrock_schema [--write | --check]\n")
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
