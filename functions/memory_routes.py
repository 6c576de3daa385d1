"""The memory routes: the verified principal's facts as a chatbot backend states them and as
the user reads, confirms, corrects, deletes and exports them, and the user's memory switch.

* ``PUT /memory/facts/{key}``: state a fact (a value, or the words to read it from, or both;
  a period of world time; ``correction``). ``forms.memory.plan_statement`` decides what is
  appended, or refuses: its ``Refusal`` is answered as it is (``error``, ``message``,
  ``hint``, ``did_you_mean``) with the status ``REFUSAL_STATUS`` gives it, and nothing is
  written.
* ``GET /memory/facts``: the facts in force, each with its decay class, its age, and what
  recall would do with it now (``forms.memory.plan_recall`` on the key's own type: fill,
  offer, or nothing and why).
* ``GET /memory/facts/{key}[?as_of=...]``: one key: the fact in force, its timeline, every
  revision; with ``as_of``, what was believed at that system time.
* ``POST /memory/facts/{key}/confirm``: the user says the fact is still right (its age
  starts again).
* ``DELETE /memory/facts/{key}``: forget it: recall never returns it, and every earlier
  revision's content is erased in the same write.
* ``GET /memory/export``: everything memory holds of the caller, with history.
* ``GET /memory/settings`` and ``PUT /memory/settings``: the caller's switch.

Whose memory: the principal the JWT authorizer verified (``principal_from_event``), always.
A principal or user id in a body is dropped by the request models; one in the query string is
never read. Another principal's fact, in the same tenant or another, is answered exactly like
a missing one.

Memory off (the deployment's ``FORMWORK_MEMORY``, or the caller's switch) refuses a statement
and a confirmation (409 ``memory_off``) before anything is planned, and writes nothing. What
is stored stays readable, exportable and deletable: the user's control over their data does not
depend on the switch.

Writes follow ``forms.memory``'s processing model: read the key's head, plan the revision on
it, append it compare-and-set; on ``FactConflict`` plan again on the head the conflict carries
(``ATTEMPTS`` times, then 409 ``busy``). The fact key is a path segment checked here rather
than by a schema pattern, so a malformed one (400) and one the vocabulary lacks (404) both
come back with the keys it most likely meant.

Nothing of memory (the vocabulary, the fact store, the planning functions) is imported with
this module: a route loads it when it is first called (hence the imports inside the handlers,
each marked ``noqa: PLC0415``), so a cold start that serves the form tools never pays for it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from itertools import groupby
from typing import TYPE_CHECKING, Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body, Path, Query
from aws_lambda_powertools.event_handler.openapi.types import OpenAPIResponse
from pydantic.json_schema import SkipJsonSchema

from functions.auth import principal_from_event
from functions.http import (
    JSON_HEADERS,
    ApiError,
    _body_text,
    _check_content_type,
    parse_json_body,
)
from functions.models import (
    ConfirmRequest,
    FactChange,
    FactDeleted,
    FactDetail,
    FactList,
    FactStatementRequest,
    MemoryExport,
    MemoryRefusal,
    MemorySettingsBody,
    MemorySettingsRequest,
    Unauthorized,
)
from functions.openapi import DESCRIBED, json_body
from functions.routing import log_rejection, logger, request_app

if TYPE_CHECKING:
    from forms.memory import Fact, FactHead, FactKey, FactRevision, Refusal
    from formwork.bootstrap import App

router = Router()  # type: ignore[no-untyped-call]

ATTEMPTS = 5
"""Appends tried on a key that keeps moving before the write is answered 409 ``busy``."""

REFUSAL_STATUS = {
    "unknown_fact_key": 404,
    "no_fact": 404,
    "not_stored": 422,
    "no_value": 422,
    "no_rule": 422,
    "invalid_value": 422,
    "words_disagree": 422,
    "invalid_period": 422,
}
"""The status of each ``forms.memory.Refusal`` code: 404 for a key or fact that is not there,
422 for a statement the key's rules refuse."""

FactKeyPath = Annotated[
    str,
    Path(
        description="A key of the fact vocabulary: a dotted lowercase name such as "
        "person.height_cm (docs/memory.md lists them)",
    ),
]


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


def _answer_refusal(refused: MemoryRefused) -> Response[str]:
    log_rejection(refused.status, refused.code)
    body: dict[str, Any] = {"error": refused.code, "message": refused.message}
    if refused.hint:
        body["hint"] = refused.hint
    if refused.did_you_mean:
        body["did_you_mean"] = refused.did_you_mean
    return _json(refused.status, body)


router.exception_handler(MemoryRefused)(_answer_refusal)


def refusals(*statuses: int, **described: str) -> dict[int, OpenAPIResponse]:
    """The OpenAPI entries of a memory route's refusals: ``MemoryRefusal`` (``ErrorBody``
    with the hint and the likely keys), and 401 as every route has it."""
    entries: dict[int, OpenAPIResponse] = {}
    for status in statuses:
        text = described.get(f"s{status}") or DESCRIBED[status]
        entries[status] = json_body(Unauthorized if status == 401 else MemoryRefusal, text)
    return entries


_S400 = "A malformed fact key (bad_request, with did_you_mean); " + DESCRIBED[400]
_S404_KNOWN = "A key the vocabulary does not have (unknown_fact_key, with did_you_mean)"
_S404_FACT = (
    "The caller has no fact of that key (no_fact): never stated, deleted, or another "
    "principal's, all alike; with did_you_mean when the key is not in the vocabulary"
)
_S409 = "The key kept changing under the write (busy): nothing was written; send it again"


# ---------------------------------------------------------------------------- facts


@router.put(
    "/memory/facts/<key>",
    summary="State a fact",
    description="Records a fact of the verified principal (never of one a body names): a value, "
    "or the words the user said it in (a rule reads the value from them, and the fact records "
    "the rule), or both (they must agree); optionally when it became or stopped being true "
    "(valid_from, valid_until); correction=true when the value in force was wrong. A value "
    "that contradicts the one in force closes that one's period instead of deleting it; the "
    "same value again is a confirmation. Refused, with nothing written: a key the vocabulary "
    "lacks (404), a key never stored (not_stored), words no rule reads (no_rule), a value the "
    "key's type refuses (invalid_value), memory off (409).",
    responses={
        200: json_body(FactChange, "Recorded: the change, and the fact in force now"),
        **refusals(
            400,
            401,
            404,
            409,
            413,
            415,
            422,
            s400=_S400,
            s404=_S404_KNOWN,
            s409="Memory is off, for the caller or the deployment (memory_off); or the key "
            "kept changing under the write (busy). Nothing was written",
            s415=DESCRIBED[415] + " (a form-encoded body included)",
            s422="The body's shape (invalid_request), or the statement refused: not_stored, "
            "no_value, no_rule, invalid_value, words_disagree, invalid_period (with hint)",
        ),
    },
    tags=["memory"],
)
def state_fact(
    key: FactKeyPath, statement: Annotated[FactStatementRequest, Body()]
) -> Response[str]:
    from forms.memory import Source, Statement, plan_statement  # noqa: PLC0415

    app, principal = _app(), _principal()
    _checked_put_body(app)
    known = _known_key(app, key)
    _require_memory_on(app, principal)
    said = Statement(
        key=known.key,
        value=statement.value,
        words=statement.words,
        source=Source(kind="api"),
        valid_from=statement.valid_from,
        valid_until=statement.valid_until,
        correction=statement.correction,
    )
    now = app.utc_now()
    appended, after = _append(
        app,
        principal,
        known.key,
        lambda head: plan_statement(said, head, vocabulary=app.vocabulary, now=now),
    )
    return _changed(app, appended, after)


@router.get(
    "/memory/facts",
    summary="The caller's facts",
    description="Every fact in force of the verified principal, by key: its value and where it "
    "came from, its decay class and age, and what recall would do with it now (fill an empty "
    "field, offer it for the agent to ask about, or nothing, and why). Listed with memory off "
    "too (use=none, reason=memory_off).",
    responses={
        200: json_body(FactList, "The facts (empty when there are none)"),
        **refusals(400, 401, s400="An event that is not API Gateway's (bad_request)"),
    },
    tags=["memory"],
)
def list_facts() -> dict[str, Any]:
    app, principal = _app(), _principal()
    on = _memory_on(app, principal)
    lines = _lines(app, app.facts.current(principal), on=on, now=app.utc_now())
    return {"memory_enabled": on, "facts": lines}


@router.get(
    "/memory/facts/<key>",
    summary="One fact, with its history",
    description="The verified principal's fact of that key: the fact in force (null once "
    "deleted), the periods of world time each value held (timeline), and every revision "
    "(history; a deletion erases earlier revisions' content and keeps their records). With "
    "as_of (an ISO 8601 date-time with a time zone), the timeline as believed at that system "
    "time and the fact then in force (believed): what we believed then.",
    responses={
        200: json_body(FactDetail, "The fact and its history"),
        **refusals(
            400,
            401,
            404,
            s400="A malformed fact key (with did_you_mean) or as_of (bad_request); an event "
            "that is not API Gateway's",
            s404=_S404_FACT,
        ),
    },
    tags=["memory"],
)
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
    from forms.errors import NotFound  # noqa: PLC0415
    from forms.memory import FactHistory  # noqa: PLC0415

    app, principal = _app(), _principal()
    _well_formed_key(app, key)
    then = _instant(as_of) if as_of is not None else None
    try:
        revisions = app.facts.history(principal, key)
    except NotFound:
        raise _no_fact(app, key) from None
    history = FactHistory(revisions)
    head = history.head()
    now = app.utc_now()
    current = head.fact if head is not None else None
    on = _memory_on(app, principal) if current is not None else False
    body: dict[str, Any] = {
        "key": key,
        "current": _lines(app, [current], on=on, now=now)[0] if current is not None else None,
        "timeline": [_fact(app, period) for period in history.timeline(as_of=then)],
        "history": [_revision(revision) for revision in revisions],
    }
    if then is not None:
        believed = history.as_of(then)
        body["as_of"] = then.isoformat()
        body["believed"] = _fact(app, believed) if believed is not None else None
    return body


@router.post(
    "/memory/facts/<key>/confirm",
    summary="Confirm a fact is still right",
    description="The user says the fact in force is still right: a confirmed revision, and the "
    "fact's age starts again (a weight confirmed today is offered as fresh). The body is {}.",
    responses={
        200: json_body(FactChange, "Confirmed: the fact in force, with its confirmed_at"),
        **refusals(
            400,
            401,
            404,
            409,
            413,
            415,
            422,
            s400=_S400,
            s404=_S404_FACT,
            s409="Memory is off, for the caller or the deployment (memory_off); or the key "
            "kept changing under the write (busy). Nothing was written",
            s422="The body is not {} (invalid_request)",
        ),
    },
    tags=["memory"],
)
def confirm_fact(
    key: FactKeyPath, confirmation: Annotated[ConfirmRequest, Body()]
) -> Response[str]:
    from forms.memory import Source, plan_confirmation  # noqa: PLC0415

    app, principal = _app(), _principal()
    _well_formed_key(app, key)
    _require_memory_on(app, principal)
    now = app.utc_now()
    appended, after = _append(
        app,
        principal,
        key,
        lambda head: plan_confirmation(head, source=Source(kind="api"), now=now),
    )
    return _changed(app, appended, after)


@router.delete(
    "/memory/facts/<key>",
    summary="Forget a fact",
    description="Deletes the verified principal's fact of that key: recall never returns it "
    "again, and the content (value, words, derivation) of every earlier revision is erased in "
    "the same write; their records (kind, times, source) stay in the history. Allowed with "
    "memory off. The key can be stated again later.",
    responses={
        200: json_body(FactDeleted, "Forgotten"),
        **refusals(400, 401, 404, 409, s400=_S400, s404=_S404_FACT, s409=_S409),
    },
    tags=["memory"],
)
def delete_fact(key: FactKeyPath) -> dict[str, Any]:
    from forms.memory import Source, plan_deletion  # noqa: PLC0415

    app, principal = _app(), _principal()
    _well_formed_key(app, key)
    now = app.utc_now()
    appended, after = _append(
        app,
        principal,
        key,
        lambda head: plan_deletion(head, source=Source(kind="api"), now=now),
    )
    logger.info("fact deleted", extra={"fact_key": key})
    return {
        "key": key,
        "change": "deleted",
        "revision": appended.seq,
        "erased": after.erased,
        "recorded_at": appended.recorded_at.isoformat(),
    }


@router.get(
    "/memory/export",
    summary="Everything memory holds of the caller",
    description="The verified principal's memory settings and every key ever stated, each "
    "with the fact in force (null once deleted) and every revision, as JSON to keep. Allowed "
    "with memory off.",
    responses={
        200: json_body(MemoryExport, "The export"),
        **refusals(400, 401, s400="An event that is not API Gateway's (bad_request)"),
    },
    tags=["memory"],
)
def export_memory() -> dict[str, Any]:
    app, principal = _app(), _principal()
    heads = {head.key: head for head in app.facts.heads(principal)}
    revisions = app.facts.export(principal)
    keys = []
    for key, group in groupby(revisions, key=lambda revision: revision.key):
        head = heads.get(key)
        current = head.fact if head is not None else None
        keys.append(
            {
                "key": key,
                "current": _fact(app, current) if current is not None else None,
                "history": [_revision(revision) for revision in group],
            }
        )
    return {
        "principal": principal,
        "exported_at": app.utc_now().isoformat(),
        "settings": _settings(app, principal),
        "facts": keys,
    }


# ---------------------------------------------------------------------------- settings


@router.get(
    "/memory/settings",
    summary="The caller's memory switch",
    description="Whether memory is on for the verified principal (on unless turned off), and "
    "whether the deployment has memory on at all (FORMWORK_MEMORY).",
    responses={
        200: json_body(MemorySettingsBody, "The switch"),
        **refusals(400, 401, s400="An event that is not API Gateway's (bad_request)"),
    },
    tags=["memory"],
)
def get_memory_settings() -> dict[str, Any]:
    app = _app()
    return _settings(app, _principal())


@router.put(
    "/memory/settings",
    summary="Turn memory on or off for the caller",
    description='{"enabled": false}: from now on no fact of the verified principal is recorded '
    "or recalled (the server checks it before it reads any fact); what is stored stays, "
    'readable, exportable and deletable. {"enabled": true} turns it back on.',
    responses={
        200: json_body(MemorySettingsBody, "The switch, as stored"),
        **refusals(
            400,
            401,
            413,
            415,
            422,
            s415=DESCRIBED[415] + " (a form-encoded body included)",
            s422='The body is not {"enabled": true|false} (invalid_request)',
        ),
    },
    tags=["memory"],
)
def put_memory_settings(request: Annotated[MemorySettingsRequest, Body()]) -> dict[str, Any]:
    from forms.memory import MemorySettings  # noqa: PLC0415

    app, principal = _app(), _principal()
    _checked_put_body(app)
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


def _checked_put_body(app: App) -> None:
    """What the checks before routing do for a ``POST`` body, for a ``PUT`` one (which they
    pass through): JSON content type (415), size (413), UTF-8 JSON without ``NaN``, deep
    nesting or a key twice (400). Powertools has parsed the body already, leniently (a
    form-encoded body, a key twice); this holds it to the same rules as every other body."""
    event = router.current_event.raw_event
    headers = event.get("headers") or {}
    content_type = next(
        (v for k, v in headers.items() if isinstance(k, str) and k.lower() == "content-type"),
        None,
    )
    _check_content_type(content_type if isinstance(content_type, str) else None)
    parse_json_body(_body_text(event, app.settings.max_body_bytes))


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
    from forms.memory.vocabulary import KEY_MAX_LENGTH, KEY_PATTERN  # noqa: PLC0415

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


def _no_fact(app: App, key: str) -> MemoryRefused:
    """The one answer for a fact that is not the caller's, whatever the reason."""
    likely = () if key in app.vocabulary else app.vocabulary.did_you_mean(key)
    return MemoryRefused(404, "no_fact", f"no fact {key} is in force", did_you_mean=likely)


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


def _append(
    app: App,
    principal: str,
    key: str,
    plan: Callable[[FactHead | None], FactRevision | Refusal],
) -> tuple[FactRevision, FactHead]:
    """Plan a revision on the key's head and append it, planning again on the head a lost
    race carries; the revision appended and the head after it. A refusal, nothing written."""
    from forms.memory import FactConflict, Refusal  # noqa: PLC0415

    head = app.facts.head(principal, key)
    for _ in range(ATTEMPTS):
        planned = plan(head)
        if isinstance(planned, Refusal):
            raise _refused(app, key, planned)
        try:
            return planned, app.facts.append(principal, planned)
        except FactConflict as moved:
            head = moved.current
        except ValueError as cannot:  # the revision cannot apply to the head (its period)
            raise MemoryRefused(422, "invalid_period", str(cannot)) from None
    raise MemoryRefused(
        409,
        "busy",
        f"fact {key} kept changing under the write: nothing was written",
        hint="send the request again",
    )


def _refused(app: App, key: str, refusal: Refusal) -> MemoryRefused:
    if refusal.code == "no_fact":
        return _no_fact(app, key)
    return MemoryRefused(
        REFUSAL_STATUS.get(refusal.code, 422),
        refusal.code,
        refusal.message,
        hint=refusal.hint,
        did_you_mean=refusal.did_you_mean,
    )


def _changed(app: App, appended: FactRevision, after: FactHead) -> Response[str]:
    assert after.fact is not None  # a statement or confirmation leaves a fact in force
    logger.info("fact changed", extra={"fact_key": appended.key, "change": appended.change})
    body: dict[str, Any] = {
        "key": appended.key,
        "change": appended.change,
        "revision": appended.seq,
        **_content(None, appended.derivation),
        "fact": _fact(app, after.fact),
    }
    return _json(200, body)


def _settings(app: App, principal: str) -> dict[str, Any]:
    stored = app.facts.settings(principal)
    return {
        "enabled": stored.enabled,
        "changed_at": stored.changed_at.isoformat() if stored.changed_at else None,
        "deployment_enabled": app.settings.memory,
    }


def _lines(app: App, facts: Sequence[Fact], *, on: bool, now: datetime) -> list[dict[str, Any]]:
    """Each fact with its decay class, age and what recall would do with it at ``now``: the
    recall plan of a field of the key's own type (``forms.memory.plan_recall``)."""
    from forms.memory import RecallField, RecallPlan, plan_recall  # noqa: PLC0415

    vocabulary = app.vocabulary
    fields = [
        RecallField(fact.key, fact.key, vocabulary.get(fact.key).type)
        for fact in facts
        if fact.key in vocabulary
    ]
    plan = (
        plan_recall(fields, facts, vocabulary=vocabulary, policy=app.decay_policy, now=now)
        if on
        else RecallPlan()
    )
    skipped = {skip.field_id: skip.reason for skip in plan.skipped}
    lines = []
    for fact in facts:
        line = _fact(app, fact)
        if fact.key in vocabulary:
            line["decay"] = vocabulary.get(fact.key).decay.value
        line["age_days"] = max(now - fact.last_seen, timedelta(0)).days
        recalled = plan.fills.get(fact.key) or plan.offers.get(fact.key)
        if recalled is not None:
            line["use"] = "fill" if fact.key in plan.fills else "offer"
            line["note"] = recalled.note()
        else:
            line["use"] = "none"
            line["reason"] = "memory_off" if not on else skipped.get(fact.key, "unknown_key")
        lines.append(line)
    return lines


def _fact(app: App, fact: Fact) -> dict[str, Any]:
    """A fact as the routes answer it: ISO 8601 times, absent keys for what it lacks."""
    key = app.vocabulary.get(fact.key) if fact.key in app.vocabulary else None
    body: dict[str, Any] = {"key": fact.key}
    if key is not None:
        body["label"] = key.label
    if fact.value is not None:
        body["value"] = fact.value
        body["shown"] = key.show(fact.value) if key is not None else str(fact.value)
    body.update(_content(fact.words, fact.derivation))
    body["source"] = fact.source.model_dump(exclude_none=True)
    body.update(
        _times(
            stated_at=fact.stated_at,
            confirmed_at=fact.confirmed_at,
            valid_from=fact.valid_from,
            valid_until=fact.valid_until,
            recorded_at=fact.recorded_at,
        )
    )
    body["revision"] = fact.revision
    if fact.erased:
        body["erased"] = True
    return body


def _revision(revision: FactRevision) -> dict[str, Any]:
    body: dict[str, Any] = {"key": revision.key, "seq": revision.seq, "change": revision.change}
    if revision.value is not None:
        body["value"] = revision.value
    body.update(_content(revision.words, revision.derivation))
    body["source"] = revision.source.model_dump(exclude_none=True)
    body.update(
        _times(
            stated_at=revision.stated_at,
            confirmed_at=revision.confirmed_at,
            valid_from=revision.valid_from,
            valid_until=revision.valid_until,
            recorded_at=revision.recorded_at,
        )
    )
    body["erased"] = revision.erased
    return body


def _content(words: str | None, derivation: Any) -> dict[str, Any]:
    content: dict[str, Any] = {}
    if words is not None:
        content["words"] = words
    if derivation is not None:
        content["derivation"] = {"rule": derivation.rule, "words": derivation.words}
    return content


def _times(**times: datetime | None) -> Mapping[str, str]:
    return {name: at.isoformat() for name, at in times.items() if at is not None}


def _json(status: int, body: Mapping[str, Any]) -> Response[str]:
    text = json.dumps(body, separators=(",", ":"))
    return Response(status, "application/json", text, headers=dict(JSON_HEADERS))
