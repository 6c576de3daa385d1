"""The memory routes: the verified principal's facts as a chatbot backend states them and as
the user reads, confirms, corrects, deletes and exports them, and the user's memory switch.

* ``PUT /memory/facts/{key}``: state a fact (a value, or the words to read it from, or both;
  a period of world time; ``correction``). ``forms.memory.plan_statement`` decides what is
  appended, or refuses: its ``Refusal`` is answered as it is (``error``, ``message``,
  ``hint``, ``did_you_mean``) with the status ``forms.surface.facts.REFUSAL_STATUS`` gives it, and
  nothing is written.
* ``GET /memory/facts``: the facts in force, each with its decay class, its age, and what
  recall would do with it now (``forms.memory.plan_recall`` on the key's own type: fill,
  offer, or nothing and why).
* ``GET /memory/facts/{key}[?as_of=...]``: one key: the fact in force, its timeline, every
  revision; with ``as_of``, what was believed at that system time.
* ``POST /memory/facts/{key}/confirm``: the user says the fact is still right (its age
  starts again). The body may be left out.
* ``DELETE /memory/facts/{key}``: forget it: recall never returns it, and every earlier
  revision's content is erased in the same write.
* ``GET /memory/export``: everything memory holds of the caller, with history.
* ``GET /memory/settings`` and ``PUT /memory/settings``: the caller's switch.

Whose memory: the principal the JWT authorizer verified (``principal_from_event``), always.
A principal or user id in a body is dropped by the request models; one in the query string is
never read. Another principal's fact, in the same tenant or another, is answered exactly like
a missing one. A body reaches a route only after ``formwork.aws.http.precheck`` checked it (JSON
content type, size, strict JSON), like every other route's.

Memory off (the deployment's ``FORMWORK_MEMORY``, or the caller's switch) refuses a statement
and a confirmation (409 ``memory_off``) before anything is planned, and writes nothing. What
is stored stays readable, exportable and deletable: the user's control over their data does not
depend on the switch.

The use cases (is memory on, is the key known, the fact write loop, the reads, the switch) are
``forms.app.memory_api.MemoryApi``'s, which the fact editor page (``formwork.aws.memory_pages``)
and the demo call too: a route parses the request, calls one, and renders its answer or its
``FactRefused`` (with the status ``formwork.aws.memory_bodies.STATUS`` gives). Writes go through
the one commit loop (``forms.app.facts.write_fact``, ``forms.app.loop.CommitPolicy``): read the
key's head, plan the revision on it, append it compare-and-set; on a ``Conflict`` plan again on
the head the conflict carries, within the App's one ``CommitPolicy`` (the budget of instance
and draft writes too), then 409 ``busy``. The fact key is a path segment checked by the use
case rather than by a schema pattern, so a malformed one (400) and one the vocabulary lacks
(404) both come back with the keys it most likely meant.

What the routes answer, and the OpenAPI text describing it, is ``formwork.aws.memory_bodies``.
Nothing of memory (the vocabulary, the fact store, the planning functions) is imported with
this module: a route loads it when it is first called (hence the imports inside the handlers,
allowed for this module in ``pyproject.toml``), so a cold start that serves the form tools
never pays for it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body, Path, Query
from pydantic.json_schema import SkipJsonSchema

from formwork.aws.auth import principal_from_event
from formwork.aws.memory_bodies import (
    OPERATIONS,
    MemoryRefused,
    answer_refusal,
    deleted,
    refused,
)
from formwork.aws.models import ConfirmRequest, FactStatementRequest, MemorySettingsRequest
from formwork.aws.routing import json_response, logger, request_app

if TYPE_CHECKING:
    from forms.app.facts import Written
    from forms.app.memory_api import MemoryApi
    from formwork.bootstrap import App

router = Router()  # type: ignore[no-untyped-call]
router.exception_handler(MemoryRefused)(answer_refusal)

FactKeyPath = Annotated[
    str,
    Path(
        description="A key of the fact vocabulary: a dotted lowercase name such as "
        "person.height_cm (docs/memory.md lists them)",
    ),
]

# ---------------------------------------------------------------------------- facts


@router.put("/memory/facts/<key>", **OPERATIONS["state"])
def state_fact(
    key: FactKeyPath, statement: Annotated[FactStatementRequest, Body()]
) -> Response[str]:
    from forms.memory import Source

    given = statement.source
    with _memory() as (memory, principal):
        written = memory.state(
            principal,
            key,
            value=statement.value,
            words=statement.words,
            source=Source(kind=given.kind, ref=given.ref) if given else None,
            stated_at=statement.stated_at,
            valid_from=statement.valid_from,
            valid_until=statement.valid_until,
            correction=statement.correction,
        )
    return _changed(memory, written)


@router.get("/memory/facts", **OPERATIONS["list"])
def list_facts() -> dict[str, Any]:
    with _memory() as (memory, principal):
        return memory.lines(principal)


@router.get("/memory/facts/<key>", **OPERATIONS["read"])
def get_fact(
    key: FactKeyPath,
    as_of: Annotated[
        SkipJsonSchema[None] | str,
        Query(
            description="A system time (ISO 8601 with a time zone): answer as believed then",
            examples=["2026-03-01T00:00:00Z"],
        ),
    ] = None,
) -> dict[str, Any]:
    with _memory() as (memory, principal):
        memory.well_formed(key)
        return memory.read(principal, key, _instant(as_of) if as_of is not None else None)


@router.post("/memory/facts/<key>/confirm", **OPERATIONS["confirm"])
def confirm_fact(
    key: FactKeyPath, confirmation: Annotated[ConfirmRequest | None, Body()] = None
) -> Response[str]:
    with _memory() as (memory, principal):
        written = memory.confirm(principal, key)
    return _changed(memory, written)


@router.delete("/memory/facts/<key>", **OPERATIONS["delete"])
def delete_fact(key: FactKeyPath) -> dict[str, Any]:
    with _memory() as (memory, principal):
        written = memory.delete(principal, key)
    assert written is not None  # no replay key: always applied or refused
    logger.info("fact deleted", extra={"fact_key": key})
    return deleted(written.revision, written.head)


@router.get("/memory/export", **OPERATIONS["export"])
def export_memory() -> dict[str, Any]:
    with _memory() as (memory, principal):
        return memory.export(principal)


# ---------------------------------------------------------------------------- settings


@router.get("/memory/settings", **OPERATIONS["settings"])
def get_memory_settings() -> dict[str, Any]:
    with _memory() as (memory, principal):
        return memory.settings(principal)


@router.put("/memory/settings", **OPERATIONS["switch"])
def put_memory_settings(request: Annotated[MemorySettingsRequest, Body()]) -> dict[str, Any]:
    with _memory() as (memory, principal):
        switched = memory.switch(principal, request.enabled)
    logger.info("memory switched", extra={"enabled": request.enabled})
    return switched


# ---------------------------------------------------------------------------- inside


def memory_api(app: App) -> MemoryApi:
    """Memory's use cases, the App's (``App.memory_api``: its fact store, vocabulary, decay
    policy, clock and the commit policy every aggregate's loop shares)."""
    return app.memory_api


@contextmanager
def _memory() -> Iterator[tuple[MemoryApi, str]]:
    """The use cases and the verified principal (whose memory every route reads and
    writes); a use case's ``FactRefused`` leaves as its answer."""
    from forms.app.memory_api import FactRefused

    app = request_app(router.context)
    principal = principal_from_event(router.current_event.raw_event, app.settings.tenant_claim)
    try:
        yield memory_api(app), principal
    except FactRefused as refusal:
        raise refused(refusal) from None


_INSTANT_OFFSET = re.compile(r"(T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?) (\d{2}:?\d{2})$")


def _instant(text: str) -> datetime:
    """``as_of`` as an aware datetime; 400 when it is not one. A ``+`` of the offset that a
    query string turned into a space is read as the ``+`` it was."""
    try:
        value = datetime.fromisoformat(_INSTANT_OFFSET.sub(r"\1+\2", text.strip()))
    except ValueError:
        value = None
    if value is None or value.tzinfo is None:
        raise MemoryRefused(
            400,
            "bad_request",
            f"as_of {text[:60]!r} is not an ISO 8601 date-time with a time zone",
            hint="send it as 2026-03-01T00:00:00Z",
        )
    return value


def _changed(memory: MemoryApi, written: Written | None) -> Response[str]:
    from forms.surface.facts import changed

    assert written is not None  # no replay key: always applied or refused
    revision = written.revision
    logger.info("fact changed", extra={"fact_key": revision.key, "change": revision.change})
    return json_response(200, changed(memory.vocabulary, revision, written.head))
