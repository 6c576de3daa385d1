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
a missing one. A body reaches a route only after ``functions.http.precheck`` checked it (JSON
content type, size, strict JSON), like every other route's.

Memory off (the deployment's ``FORMWORK_MEMORY``, or the caller's switch) refuses a statement
and a confirmation (409 ``memory_off``) before anything is planned, and writes nothing. What
is stored stays readable, exportable and deletable: the user's control over their data does not
depend on the switch.

Writes go through memory's one write loop (``forms.app.facts.write_fact``): read the key's
head, plan the revision on it, append it compare-and-set; on ``FactConflict`` plan again on the
head the conflict carries (``ATTEMPTS`` appends, then 409 ``busy``). The fact key is a path
segment checked here rather than by a schema pattern, so a malformed one (400) and one the
vocabulary lacks (404) both come back with the keys it most likely meant.

What the routes answer, and the OpenAPI text describing it, is ``functions.memory_bodies``.
Nothing of memory (the vocabulary, the fact store, the planning functions) is imported with
this module: a route loads it when it is first called (hence the imports inside the handlers,
allowed for this module in ``pyproject.toml``), so a cold start that serves the form tools
never pays for it.
"""

from __future__ import annotations

import re
from datetime import datetime
from itertools import groupby
from typing import TYPE_CHECKING, Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body, Path, Query
from pydantic.json_schema import SkipJsonSchema

from forms.errors import NotFound, SizeLimit, TooManyConflicts
from functions.auth import principal_from_event
from functions.memory_bodies import (
    OPERATIONS,
    MemoryRefused,
    answer_refusal,
    deleted,
    json_response,
    no_fact,
    refused,
    settings_body,
)
from functions.models import ConfirmRequest, FactStatementRequest, MemorySettingsRequest
from functions.routing import logger, request_app

if TYPE_CHECKING:
    from forms.app.facts import FactPlan, Written
    from forms.memory import FactKey
    from formwork.bootstrap import App

router = Router()  # type: ignore[no-untyped-call]
router.exception_handler(MemoryRefused)(answer_refusal)

ATTEMPTS = 5
"""Appends tried on a key that keeps moving before the write is answered 409 ``busy``."""

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
    from forms.memory import Source, Statement, plan_statement

    app, principal = _app(), _principal()
    known = _known_key(app, key)
    _require_memory_on(app, principal)
    now = app.utc_now()
    if statement.stated_at is not None and statement.stated_at > now:
        raise MemoryRefused(
            422,
            "invalid_request",
            "stated_at is in the future: it says when the user said it",
            "leave it out for now, or send the time of the conversation it comes from",
        )
    given = statement.source
    said = Statement(
        key=known.key,
        value=statement.value,
        words=statement.words,
        source=Source(kind=given.kind, ref=given.ref) if given else Source(kind="api"),
        stated_at=statement.stated_at,
        valid_from=statement.valid_from,
        valid_until=statement.valid_until,
        correction=statement.correction,
    )
    written = _write(
        app,
        principal,
        known.key,
        lambda head: plan_statement(said, head, vocabulary=app.vocabulary, now=now),
    )
    return _changed(app, written)


@router.get("/memory/facts", **OPERATIONS["list"])
def list_facts() -> dict[str, Any]:
    from forms.surface.facts import fact_lines

    app, principal = _app(), _principal()
    on = _memory_on(app, principal)
    now = app.utc_now()
    lines = fact_lines(
        app.facts.current(principal, now), app.vocabulary, app.decay_policy, on=on, now=now
    )
    return {"memory_enabled": on, "facts": lines}


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
    from forms.memory import FactHistory
    from forms.surface.facts import fact_body, fact_lines, revision_body

    app, principal = _app(), _principal()
    _well_formed_key(app, key)
    then = _instant(as_of) if as_of is not None else None
    try:
        revisions = app.facts.history(principal, key)
    except NotFound:
        raise no_fact(app.vocabulary, key) from None
    history = FactHistory(revisions)
    head = history.head()
    now = app.utc_now()
    current = head.at(now) if head is not None else None  # as recall reads it now
    on = _memory_on(app, principal) if current is not None else False
    vocabulary = app.vocabulary
    lines = fact_lines([current] if current else [], vocabulary, app.decay_policy, on=on, now=now)
    body: dict[str, Any] = {
        "key": key,
        "current": lines[0] if lines else None,
        "timeline": [fact_body(vocabulary, period) for period in history.timeline(as_of=then)],
        "history": [revision_body(revision) for revision in revisions],
    }
    if then is not None:
        believed = history.as_of(then)
        body["as_of"] = then.isoformat()
        body["believed"] = fact_body(vocabulary, believed) if believed is not None else None
    return body


@router.post("/memory/facts/<key>/confirm", **OPERATIONS["confirm"])
def confirm_fact(
    key: FactKeyPath, confirmation: Annotated[ConfirmRequest | None, Body()] = None
) -> Response[str]:
    from forms.memory import Source, plan_confirmation

    app, principal = _app(), _principal()
    _well_formed_key(app, key)
    _require_memory_on(app, principal)
    now = app.utc_now()
    written = _write(
        app,
        principal,
        key,
        lambda head: plan_confirmation(head, source=Source(kind="api"), now=now),
    )
    return _changed(app, written)


@router.delete("/memory/facts/<key>", **OPERATIONS["delete"])
def delete_fact(key: FactKeyPath) -> dict[str, Any]:
    from forms.memory import Source, plan_deletion

    app, principal = _app(), _principal()
    _well_formed_key(app, key)
    now = app.utc_now()
    written = _write(
        app,
        principal,
        key,
        lambda head: plan_deletion(head, source=Source(kind="api"), now=now),
    )
    logger.info("fact deleted", extra={"fact_key": key})
    return deleted(written.revision, written.head)


@router.get("/memory/export", **OPERATIONS["export"])
def export_memory() -> dict[str, Any]:
    from forms.surface.facts import fact_body, revision_body

    app, principal = _app(), _principal()
    now = app.utc_now()
    heads = {head.key: head for head in app.facts.heads(principal)}
    keys = []
    for key, group in groupby(app.facts.export(principal), key=lambda revision: revision.key):
        head = heads.get(key)
        current = head.at(now) if head is not None else None  # as recall reads it now
        keys.append(
            {
                "key": key,
                "current": fact_body(app.vocabulary, current) if current is not None else None,
                "history": [revision_body(revision) for revision in group],
            }
        )
    return {
        "principal": principal,
        "exported_at": now.isoformat(),
        "settings": _settings(app, principal),
        "facts": keys,
    }


# ---------------------------------------------------------------------------- settings


@router.get("/memory/settings", **OPERATIONS["settings"])
def get_memory_settings() -> dict[str, Any]:
    app = _app()
    return _settings(app, _principal())


@router.put("/memory/settings", **OPERATIONS["switch"])
def put_memory_settings(request: Annotated[MemorySettingsRequest, Body()]) -> dict[str, Any]:
    from forms.memory import MemorySettings

    app, principal = _app(), _principal()
    app.facts.put_settings(
        principal, MemorySettings(enabled=request.enabled, changed_at=app.utc_now())
    )
    logger.info("memory switched", extra={"enabled": request.enabled})
    return _settings(app, principal)


# ---------------------------------------------------------------------------- inside


def _app() -> App:
    return request_app(router.context)


def _principal() -> str:
    """The verified principal: whose memory every route reads and writes."""
    settings = _app().settings
    return principal_from_event(router.current_event.raw_event, settings.tenant_claim)


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


def _well_formed_key(app: App, key: str) -> None:
    """400 when ``key`` is not a dotted lowercase name, with the keys it likely meant."""
    from forms.memory.vocabulary import KEY_MAX_LENGTH, KEY_PATTERN

    if len(key) <= KEY_MAX_LENGTH and re.fullmatch(KEY_PATTERN, key):
        return
    raise MemoryRefused(
        400,
        "bad_request",
        f"fact key {key[:60]!r} is not a dotted lowercase name such as 'person.height_cm' (at "
        f"most {KEY_MAX_LENGTH} characters)",
        did_you_mean=app.vocabulary.did_you_mean(key[:200]),
    )


def _known_key(app: App, key: str) -> FactKey:
    """The vocabulary's key: 400 when malformed, 404 ``unknown_fact_key`` when it has none."""
    _well_formed_key(app, key)
    if key in app.vocabulary:
        return app.vocabulary.get(key)
    raise MemoryRefused(
        404,
        "unknown_fact_key",
        f"unknown fact key {key!r}",
        hint="use a key of the memory vocabulary",
        did_you_mean=app.vocabulary.did_you_mean(key),
    )


def _memory_on(app: App, principal: str) -> bool:
    return app.settings.memory and app.facts.settings(principal).enabled


def _require_memory_on(app: App, principal: str) -> None:
    """409 ``memory_off`` unless memory is on for the deployment and for the principal."""
    if not app.settings.memory:
        raise MemoryRefused(
            409, "memory_off", "memory is off in this deployment: no fact is recorded"
        )
    if not app.facts.settings(principal).enabled:
        raise MemoryRefused(
            409,
            "memory_off",
            "your memory is off: no fact is recorded",
            hint='turn it on with PUT /memory/settings {"enabled": true}',
        )


def _write(
    app: App,
    principal: str,
    key: str,
    plan: FactPlan,
) -> Written:
    """``write_fact`` on the key's head, its outcomes as answers: a refusal as its 4xx, a
    revision that cannot apply to the head (its period) as 422, a key that kept moving as 409
    ``busy``, a fact past one stored item as 413 ``size_limit``. Nothing is written by any of
    them."""
    from forms.app.facts import Written, write_fact

    head = app.facts.head(principal, key)
    try:
        written = write_fact(app.facts, principal, key, plan, head=head, attempts=ATTEMPTS)
    except ValueError as cannot:
        raise MemoryRefused(422, "invalid_period", str(cannot)) from None
    except TooManyConflicts as busy:
        raise MemoryRefused(409, "busy", busy.message, hint="send the request again") from None
    except SizeLimit as big:  # can never be stored as it is: never a 500
        raise MemoryRefused(413, big.code, big.message, hint=big.hint) from None
    if not isinstance(written, Written):
        raise refused(app.vocabulary, key, written)
    return written


def _changed(app: App, written: Written) -> Response[str]:
    from forms.surface.facts import changed

    revision = written.revision
    logger.info("fact changed", extra={"fact_key": revision.key, "change": revision.change})
    return json_response(200, changed(app.vocabulary, revision, written.head))


def _settings(app: App, principal: str) -> dict[str, Any]:
    return settings_body(app.facts.settings(principal), deployment=app.settings.memory)
