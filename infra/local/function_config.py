"""What the local stack knows of a function, read from ``template.yaml``: its handler, timeout,
memory and environment (``FunctionConfig``), and how a local invocation fails
(``FunctionError``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


class FunctionError(RuntimeError):
    """The function failed: it raised, timed out, died, or returned something unusable."""


@dataclass(frozen=True, slots=True)
class FunctionConfig:
    """What a local execution environment needs to know about one function."""

    logical_id: str
    handler: str
    """``module.attribute`` as in the template's ``Handler``."""
    timeout: float = 3.0
    memory_mb: int = 128
    environment: Mapping[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"formwork-local-{self.logical_id}"


def functions_from_template(
    template: Mapping[str, Any],
    parameters: Mapping[str, str] | None = None,
    resources: Mapping[str, str] | None = None,
) -> dict[str, FunctionConfig]:
    """The template's functions with their environment resolved for a local run.

    ``!Ref`` to a parameter takes ``parameters[name]``, else the parameter's ``Default``;
    ``!Ref`` to a resource takes ``resources[logical_id]`` (its local physical name). Values
    that need a deployed stack (``!GetAtt``, ``!Sub``) are left out.
    """
    parameters = parameters or {}
    resources = resources or {}
    declared = template.get("Parameters", {})

    def resolve(value: Any) -> str | None:
        if isinstance(value, bool):
            return str(value).lower()
        if isinstance(value, str | int | float):
            return str(value)
        if isinstance(value, dict) and set(value) == {"Ref"}:
            name = value["Ref"]
            if name in parameters:
                return parameters[name]
            if name in declared:
                return str(declared[name].get("Default", ""))
            return resources.get(name)
        return None

    defaults = template.get("Globals", {}).get("Function", {})
    functions: dict[str, FunctionConfig] = {}
    for logical_id, resource in template.get("Resources", {}).items():
        if resource.get("Type") != "AWS::Serverless::Function":
            continue
        props = {**defaults, **resource.get("Properties", {})}
        variables = {
            **(defaults.get("Environment") or {}).get("Variables", {}),
            **(resource.get("Properties", {}).get("Environment") or {}).get("Variables", {}),
        }
        environment = {k: v for k, raw in variables.items() if (v := resolve(raw)) is not None}
        functions[logical_id] = FunctionConfig(
            logical_id=logical_id,
            handler=str(props["Handler"]),
            timeout=float(props.get("Timeout", 3)),
            memory_mb=int(props.get("MemorySize", 128)),
            environment=environment,
        )
    return functions


def environment_names(template: Mapping[str, Any]) -> list[str]:
    """Every variable the template's ``Environment`` gives a function (``Globals`` first, then
    each function's), in template order, once each: the settings a deployment passes."""
    sources = [template.get("Globals", {}).get("Function", {})]
    sources += [
        resource.get("Properties", {})
        for resource in template.get("Resources", {}).values()
        if resource.get("Type") == "AWS::Serverless::Function"
    ]
    names: dict[str, None] = {}
    for properties in sources:
        names.update(dict.fromkeys((properties.get("Environment") or {}).get("Variables", {})))
    return list(names)
