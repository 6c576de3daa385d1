"""The one JSON parser for request bodies (``parse_json_body``): every route that reads JSON,
the checks before routing and the webhook route alike. It refuses what two readers of one body
could disagree on (a key twice), what a store cannot hold (unpaired surrogates) and what no
tool input needs (nesting past ``MAX_JSON_DEPTH``, ``NaN``)."""

from __future__ import annotations

import json
from typing import Any, NoReturn

from formwork.aws.api_errors import ApiError

MAX_JSON_DEPTH = 32
"""Deepest nesting of arrays and objects a request body may have (tool inputs are shallow)."""


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not JSON")


class DuplicateKey(ValueError):
    """An object of the JSON text holds ``key`` twice."""

    def __init__(self, key: str) -> None:
        super().__init__(f"the key {key[:60]!r} comes twice in one object")
        self.key = key


def _unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook``: an object, unless a key comes twice (plain ``json.loads`` would
    keep the last one silently, so two readers of one body could disagree on what it says)."""
    value = dict(pairs)
    if len(value) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKey(key)
            seen.add(key)
    return value


def loads_strict(text: str) -> Any:
    """``json.loads``, refusing what two readers of one text could read differently: an object
    that holds a key twice (``DuplicateKey``) and ``NaN`` / ``Infinity`` (``ValueError``), as
    well as what is not JSON; nesting too deep for the parser raises ``RecursionError``. The
    one strict reading of JSON text the API does: request bodies here, and the arguments
    Bedrock's agents send as JSON text (``formwork.aws.bedrock_schema``)."""
    return json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_unique_object)


def parse_json_body(text: str) -> Any:
    """The JSON value of a request body, or an ``ApiError`` (400) saying what is wrong with it.

    Refused: an empty body, text that is not JSON, ``NaN`` / ``Infinity``, nesting deeper than
    ``MAX_JSON_DEPTH``, unpaired UTF-16 surrogates (all ``malformed_json``), and an object that
    holds the same key twice, at any depth (``duplicate_key``).
    """
    if not text.strip():
        raise ApiError(
            400, "malformed_json", 'the request body is empty; send {"tool_call_id", "input"}'
        )
    try:
        value = loads_strict(text)
    except RecursionError:
        raise _too_deep() from None
    except DuplicateKey as exc:
        raise ApiError(
            400,
            "duplicate_key",
            f"the request body has the key {exc.key[:60]!r} twice in one object; send it once",
        ) from None
    except ValueError as exc:
        message = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
        raise ApiError(
            400, "malformed_json", f"the request body is not valid JSON: {message[:200]}"
        ) from None
    _walk(value)
    return value


def _check_json(text: str) -> None:
    """``parse_json_body`` for callers that only need the verdict."""
    parse_json_body(text)


def _walk(value: Any) -> None:
    """Reject nesting past ``MAX_JSON_DEPTH`` and strings no UTF-8 store can hold."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, str):
            _check_text(node)
            continue
        if not isinstance(node, dict | list):
            continue
        if depth >= MAX_JSON_DEPTH:
            raise _too_deep()
        if isinstance(node, dict):
            for key, item in node.items():
                _check_text(key)
                stack.append((item, depth + 1))
        else:
            stack.extend((item, depth + 1) for item in node)


def _check_text(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ApiError(
            400, "malformed_json", "the request body holds an unpaired UTF-16 surrogate"
        ) from None


def _too_deep() -> ApiError:
    return ApiError(
        400, "malformed_json", f"the request body is nested more than {MAX_JSON_DEPTH} deep"
    )
