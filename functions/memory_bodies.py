"""What the memory routes answer, and how the OpenAPI document describes it.

``formwork.aws.memory_routes`` reads the request and the fact store; this module turns what it
read into the JSON a caller gets, and holds each route's summary, description and documented
answers (``OPERATIONS``), so the routes module is the handlers alone.

* **Answers.** A fact, a revision, a statement's outcome and a listed fact are
  ``forms.surface.facts``'s (the demo's in-process fact editor answers with the same); this
  module adds the deletion's answer.
* **Refusals.** ``MemoryRefused`` is an ``ApiError`` with the ``hint`` and ``did_you_mean`` a
  ``forms.app.memory_api.FactRefused`` carries, answered as ``MemoryRefusal``
  (``answer_refusal``), with the status ``STATUS`` or ``REFUSAL_STATUS`` gives its code.
* **Descriptions.** ``OPERATIONS[name]`` is the keyword arguments of a route's decorator.

Nothing of memory is imported with this module, so a cold start that serves the form tools
never pays for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.types import OpenAPIResponse

from formwork.aws.http import ApiError
from formwork.aws.models import (
    FactChange,
    FactDeleted,
    FactDetail,
    FactList,
    MemoryExport,
    MemoryRefusal,
    MemorySettingsBody,
    Unauthorized,
)
from formwork.aws.openapi import DESCRIBED, json_body
from formwork.aws.routing import json_response, log_rejection

if TYPE_CHECKING:
    from forms.app.memory_api import FactRefused
    from forms.memory import FactHead, FactRevision

# ---------------------------------------------------------------------------- refusals


class MemoryRefused(ApiError):
    """A refusal with the hint and the keys it likely meant (``MemoryRefusal``)."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        hint: str | None = None,
        did_you_mean: Sequence[str] = (),
    ) -> None:
        super().__init__(status, code, message)
        self.hint = hint
        self.did_you_mean = list(did_you_mean)


def answer_refusal(refused: MemoryRefused) -> Response[str]:
    """The exception handler of ``MemoryRefused``: ``{"error", "message", "hint"?,
    "did_you_mean"?}`` with its status."""
    log_rejection(refused.status, refused.code)
    body: dict[str, Any] = {"error": refused.code, "message": refused.message}
    if refused.hint:
        body["hint"] = refused.hint
    if refused.did_you_mean:
        body["did_you_mean"] = refused.did_you_mean
    return json_response(refused.status, body)


STATUS: dict[str, int] = {
    "bad_request": 400,
    "unknown_fact_key": 404,
    "no_fact": 404,
    "memory_off": 409,
    "busy": 409,
    "size_limit": 413,
}
"""The status of each ``forms.app.memory_api.FactRefused`` code beside the planner's
(``forms.surface.facts.REFUSAL_STATUS``); any other code is a 422."""


def refused(refusal: FactRefused) -> MemoryRefused:
    """A use case's refusal, answered as it is with its status."""
    from forms.surface.facts import REFUSAL_STATUS

    status = STATUS.get(refusal.code) or REFUSAL_STATUS.get(refusal.code, 422)
    return MemoryRefused(
        status, refusal.code, refusal.message, refusal.hint, did_you_mean=refusal.did_you_mean
    )


# ---------------------------------------------------------------------------- answers


def deleted(appended: FactRevision, after: FactHead) -> dict[str, Any]:
    """A deletion's answer: its revision, and how many revisions now hold no content."""
    return {
        "key": appended.key,
        "change": "deleted",
        "revision": appended.seq,
        "erased": after.erased,
        "recorded_at": appended.recorded_at.isoformat(),
    }


# ---------------------------------------------------------------------------- descriptions


def refusals(*statuses: int, **described: str) -> dict[int, OpenAPIResponse]:
    """The OpenAPI entries of a memory route's refusals: ``MemoryRefusal`` (``ErrorBody``
    with the hint and the likely keys), and 401 as every route has it. ``described``
    overrides a status's description (key ``s404``)."""
    entries: dict[int, OpenAPIResponse] = {}
    for status in statuses:
        text = described.get(f"s{status}") or DESCRIBED[status]
        entries[status] = json_body(Unauthorized if status == 401 else MemoryRefusal, text)
    return entries


def _operation(
    summary: str, description: str, answer: OpenAPIResponse, failures: dict[int, OpenAPIResponse]
) -> dict[str, Any]:
    """A route decorator's keyword arguments: 200 is ``answer``, then the refusals."""
    responses = {200: answer, **failures}
    return {
        "summary": summary,
        "description": description,
        "responses": responses,
        "tags": ["memory"],
    }


_S400_EVENT = "An event that is not API Gateway's (bad_request)"
_S400_KEY = "A malformed fact key (bad_request, with did_you_mean); " + DESCRIBED[400]
_S404_FACT = (
    "The caller has no fact of that key (no_fact): never stated, deleted, or another "
    "principal's, all alike; with did_you_mean when the key is not in the vocabulary"
)
_S409_WRITE = (
    "Memory is off, for the caller or the deployment (memory_off); or the key kept changing "
    "under the write (busy). Nothing was written"
)
_S413_WRITE = (
    DESCRIBED[413] + "; or the fact's stored record would pass one stored item (size_limit): "
    "nothing was written"
)
_S415_PUT = DESCRIBED[415] + " (a form-encoded body included)"


def _whole_read() -> dict[int, OpenAPIResponse]:
    """The refusals of a route that reads the caller's memory as a whole (no key, no body)."""
    return refusals(400, 401, s400=_S400_EVENT)


def _fact_write(**described: str) -> dict[int, OpenAPIResponse]:
    """The refusals of a statement or a confirmation: one key, a body, memory on."""
    return refusals(
        400,
        401,
        404,
        409,
        413,
        415,
        422,
        s400=_S400_KEY,
        s409=_S409_WRITE,
        s413=_S413_WRITE,
        **described,
    )


OPERATIONS: dict[str, dict[str, Any]] = {
    "state": _operation(
        "State a fact",
        "Records a fact of the verified principal (never of one a body names): a value, or the "
        "words the user said it in (a rule reads the value from them, and the fact records the "
        "rule), or both (they must agree); optionally when it became or stopped being true "
        "(valid_from, valid_until); correction=true when the value in force was wrong. A value "
        "that contradicts the one in force closes that one's period instead of deleting it; the "
        "same value again is a confirmation. Refused, with nothing written: a key the "
        "vocabulary lacks (404), a key never stored (not_stored), words no rule reads "
        "(no_rule), a value the key's type refuses (invalid_value), memory off (409).",
        json_body(FactChange, "Recorded: the change, and the fact in force now"),
        _fact_write(
            s404="A key the vocabulary does not have (unknown_fact_key, with did_you_mean)",
            s415=_S415_PUT,
            s422="The body's shape (invalid_request), or the statement refused: not_stored, "
            "no_value, no_rule, invalid_value, words_disagree, invalid_period (with hint)",
        ),
    ),
    "list": _operation(
        "The caller's facts",
        "Every fact in force of the verified principal, by key: its value and where it came "
        "from, its decay class and age, and what recall would do with it now (fill an empty "
        "field, offer it for the agent to ask about, or nothing, and why). Listed with memory "
        "off too (use=none, reason=memory_off).",
        json_body(FactList, "The facts (empty when there are none)"),
        _whole_read(),
    ),
    "read": _operation(
        "One fact, with its history",
        "The verified principal's fact of that key: the fact in force (null once deleted), the "
        "periods of world time each value held (timeline), and every revision (history; a "
        "deletion erases earlier revisions' content and keeps their records). With as_of (an "
        "ISO 8601 date-time with a time zone), the timeline as believed at that system time and "
        "the fact then in force (believed): what we believed then.",
        json_body(FactDetail, "The fact and its history"),
        refusals(
            400,
            401,
            404,
            s400="A malformed fact key (with did_you_mean) or as_of (bad_request); an event "
            "that is not API Gateway's",
            s404=_S404_FACT,
        ),
    ),
    "confirm": _operation(
        "Confirm a fact is still right",
        "The user says the fact in force is still right: a confirmed revision, and the fact's "
        "age starts again (a weight confirmed today is offered as fresh). The body may be left "
        "out; sent, it is {}.",
        json_body(FactChange, "Confirmed: the fact in force, with its confirmed_at"),
        _fact_write(
            s404=_S404_FACT,
            s415="A body sent as something other than UTF-8 JSON (unsupported_media_type); "
            "no body at all is fine",
            s422="A body other than {} (invalid_request)",
        ),
    ),
    "delete": _operation(
        "Forget a fact",
        "Deletes the verified principal's fact of that key: recall never returns it again, and "
        "the content (value, words, derivation) of every earlier revision is erased in the "
        "same write; their records (kind, times, source) stay in the history. Allowed with "
        "memory off. The key can be stated again later.",
        json_body(FactDeleted, "Forgotten"),
        refusals(
            400,
            401,
            404,
            409,
            s400=_S400_KEY,
            s404=_S404_FACT,
            s409="The key kept changing under the write (busy): nothing was written; send it again",
        ),
    ),
    "export": _operation(
        "Everything memory holds of the caller",
        "The verified principal's memory settings and every key ever stated, each with the fact "
        "in force (null once deleted) and every revision, as JSON to keep. Allowed with memory "
        "off.",
        json_body(MemoryExport, "The export"),
        _whole_read(),
    ),
    "settings": _operation(
        "The caller's memory switch",
        "Whether memory is on for the verified principal (on unless turned off), and whether "
        "the deployment has memory on at all (FORMWORK_MEMORY).",
        json_body(MemorySettingsBody, "The switch"),
        _whole_read(),
    ),
    "switch": _operation(
        "Turn memory on or off for the caller",
        '{"enabled": false}: from now on no fact of the verified principal is recorded or '
        "recalled (the server checks it before it reads any fact); what is stored stays, "
        'readable, exportable and deletable. {"enabled": true} turns it back on.',
        json_body(MemorySettingsBody, "The switch, as stored"),
        refusals(
            400,
            401,
            413,
            415,
            422,
            s415=_S415_PUT,
            s422='The body is not {"enabled": true|false} (invalid_request)',
        ),
    ),
}
"""Each memory route's summary, description and documented answers, by the route's name."""
