"""The routes of the dev gateway: the template's ``HttpApi`` events, and the one API Gateway
picks for a request (literal segments first, then parameters, then greedy ones)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote


@dataclass(frozen=True, slots=True)
class Route:
    """One ``HttpApi`` event of a function in the template."""

    method: str
    """Upper-case HTTP method, or ``ANY``."""
    path: str
    """The route's path as declared (``/conversations/{conversation_id}/status``), or
    ``$default``."""
    function: str
    """Logical id of the function the route invokes."""
    authorized: bool = True
    """False for a route declared with ``Auth: {Authorizer: NONE}`` (webhooks sign their own
    requests): no token is asked for and the event carries no authorizer claims."""

    @property
    def key(self) -> str:
        return "$default" if self.path == "$default" else f"{self.method} {self.path}"

    @property
    def segments(self) -> tuple[str, ...]:
        return tuple(self.path.strip("/").split("/")) if self.path != "/" else ()

    def match(self, method: str, raw_path: str) -> dict[str, str] | None:
        """Path parameters when this route takes the request, else None."""
        if self.path == "$default":
            return {}
        if self.method not in ("ANY", method):
            return None
        wanted = self.segments
        given = tuple(raw_path.strip("/").split("/")) if raw_path.strip("/") else ()
        params: dict[str, str] = {}
        for n, segment in enumerate(wanted):
            if segment.startswith("{") and segment.endswith("+}"):
                rest = given[n:]
                if not rest or not all(rest):
                    return None
                params[segment[1:-2]] = unquote("/".join(rest))
                return params
            if n >= len(given) or not given[n]:
                return None
            if segment.startswith("{") and segment.endswith("}"):
                params[segment[1:-1]] = unquote(given[n])
            elif segment != given[n]:
                return None
        return params if len(given) == len(wanted) else None

    def specificity(self) -> tuple[int, int, int]:
        """API Gateway prefers literal segments, then plain parameters, then greedy ones, and
        an exact method over ANY."""
        literal = sum(1 for s in self.segments if not s.startswith("{"))
        greedy = sum(1 for s in self.segments if s.endswith("+}"))
        return (literal, -greedy, int(self.method != "ANY"))


def select_route(
    routes: Sequence[Route], method: str, raw_path: str
) -> tuple[Route, dict[str, str]] | None:
    """The route API Gateway would pick for the request (and its path parameters)."""
    matches = [
        (route, params)
        for route in routes
        if route.path != "$default" and (params := route.match(method, raw_path)) is not None
    ]
    if matches:
        return max(matches, key=lambda pair: pair[0].specificity())
    default = next((r for r in routes if r.path == "$default"), None)
    return (default, {}) if default is not None else None


def routes_from_template(template: Mapping[str, Any]) -> list[Route]:
    """Every ``HttpApi`` event of every serverless function, in template order."""
    routes: list[Route] = []
    for logical_id, resource in template.get("Resources", {}).items():
        if resource.get("Type") != "AWS::Serverless::Function":
            continue
        for event in (resource.get("Properties", {}).get("Events") or {}).values():
            if event.get("Type") != "HttpApi":
                continue
            props = event.get("Properties") or {}
            path = props.get("Path", "$default")
            method = str(props.get("Method", "ANY")).upper()
            auth = props.get("Auth") or {}
            routes.append(
                Route(
                    "ANY" if method == "X-AMAZON-APIGATEWAY-ANY-METHOD" else method,
                    path,
                    logical_id,
                    authorized=auth.get("Authorizer") != "NONE",
                )
            )
    return routes
