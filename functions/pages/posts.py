"""What every page route shares: reading an HTML form post, and the one refusal.

* ``form_post``: the fields of a browser's ``application/x-www-form-urlencoded`` post, or None
  for anything a page's own form never sends (another content type, too large, not UTF-8,
  malformed, a field it does not take or one sent twice). The form page, the fact editor and
  the approver's queue all read their posts here, each with its own size and field limits;
  a None is the refusal page, like a bad cookie.
* ``refused``: the one refusal page (``render.refusal``), the reason logged and never shown.

Jinja2 loads with the first page rendered, not with this module.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl

from functions.routing import logger

if TYPE_CHECKING:
    from aws_lambda_powertools.event_handler import Response

FORM_TYPE = "application/x-www-form-urlencoded"
NONCE = re.compile(r"[A-Za-z0-9_-]{16,64}")
"""A nonce a page renders into a form as the post's idempotency key."""


def form_post(
    event: Mapping[str, Any],
    *,
    max_bytes: int,
    max_fields: int,
    fields: Collection[str] | None = None,
    repeated: str | None = None,
) -> tuple[dict[str, str], list[str]] | None:
    """An HTML form post's fields (each once) and the entries of its ``repeated`` field (the
    one field that may come several times), or None: another content type, over ``max_bytes``
    (decoded) or ``max_fields`` pairs, not UTF-8, malformed, a field outside ``fields`` (when
    given) or one sent twice."""
    headers = {str(k).lower(): str(v) for k, v in (event.get("headers") or {}).items()}
    if headers.get("content-type", "").split(";")[0].strip().lower() != FORM_TYPE:
        return None
    raw = event.get("body") or ""
    if not isinstance(raw, str) or len(raw) > 2 * max_bytes:
        return None
    try:
        if event.get("isBase64Encoded"):
            raw = base64.b64decode(raw, validate=True).decode("utf-8")
        if len(raw.encode("utf-8")) > max_bytes:
            return None
        pairs = parse_qsl(
            raw,
            keep_blank_values=True,
            strict_parsing=bool(raw),
            errors="strict",
            max_num_fields=max_fields,
        )
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    single: dict[str, str] = {}
    values: list[str] = []
    for name, text in pairs:
        if repeated is not None and name == repeated:
            values.append(text)
        elif (fields is None or name in fields) and name not in single:
            single[name] = text
        else:
            return None
    return single, values


def refused(why: str) -> Response[str]:
    """The one refusal page; ``why`` goes to the log only."""
    from functions.pages import render

    logger.info("page refused", extra={"reason": why})
    return render.refusal()
