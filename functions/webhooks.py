"""Webhooks over HTTP, inbound: the route ``POST /webhooks/{source}``.

An external system (a CRM, say) starts a form session for one of its users. The route sits
outside the JWT authorizer; the request proves itself with an HMAC signature instead
(``formwork.webhooks`` has the scheme). In order, cheapest first, nothing stored until the end:

1. before routing (``precheck``, which is ``formwork.aws.http.precheck_webhook``: the handler
   calls it without loading this module): content type JSON (415), body within the size
   limit (413);
2. the source is configured (``FORMWORK_WEBHOOK_SOURCES``; any other is refused like a bad
   signature, before any secret is looked up) and the signature matches one of its secrets
   (401), then the timestamp is within the tolerance (401); the signature is checked on the
   raw bytes before the body is parsed. The scheme is Standard Webhooks' (``webhook-id``,
   ``webhook-timestamp``, ``webhook-signature``) when its signature header is present, else
   the deprecated ``X-Formwork-*`` one (accepted until ``LEGACY_HEADERS_UNTIL``);
3. a delivery id (``webhook-id``, or ``X-Formwork-Delivery``) is present (400), the body
   is a valid ``WebhookStart`` (400/422) naming a principal of the deployment's shape
   (``tenant/sub`` unless it is single-tenant: 422 ``principal_without_tenant``) and a
   registered form (422), and the source may start that form for that principal's tenant
   (403 ``tenant_not_allowed``, ``form_not_allowed``: its ``SourceLimits``);
4. under the deprecated scheme, whose signature does not cover the id, the signed request is
   bound to its delivery id (409 ``signature_reused`` when it came before under another id: a
   captured request replayed);
5. the delivery id is claimed (409 ``delivery_reused`` for other content under a used id,
   409 ``delivery_in_progress`` with ``Retry-After`` while another attempt holds it; a
   re-delivery of the same content answers 200 with the first outcome);
6. ``form_start`` runs as ``Caller(principal, conversation_id, source="webhook")`` under the
   tool-call id ``webhook:{source}:{delivery}``, so seed values are revisions by ``webhook``
   and a re-run replays rather than starting a second session. 201 with the instance.

The parts come from the request's ``App`` (``formwork.bootstrap``): the webhook settings, the
delivery log (DynamoDB on the forms table, or memory), the inbound secret source
(``formwork.webhooks.secrets``: ``FORMWORK_WEBHOOK_SECRETS`` when set, else Secrets Manager
``<prefix><source>``) and the clock; tests pass them to ``bootstrap(...)``.

The outbound side, signed notifications to other systems (``deliver``, ``notifier``), is
``formwork.aws.notify``; its names are importable from here too (a forms module may import
``notifier`` from either).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from forms.app.conversation import Caller
from forms.errors import ToolError
from forms.principals import tenant_of
from formwork.aws.http import ApiError, _check_json, _header, is_webhook
from formwork.aws.http import precheck_webhook as precheck
from formwork.aws.notify import (
    USER_AGENT,
    DeliveryFailed,
    HttpPost,
    check_url,
    deliver,
    notifier,
    outbound_secret,
    urllib_post,
)
from formwork.webhooks import (
    DELIVERY_HEADER,
    ID_HEADER,
    LEGACY_HEADERS_UNTIL,
    SIGNATURE_HEADER,
    STANDARD_SIGNATURE_HEADER,
    STANDARD_TIMESTAMP_HEADER,
    TIMESTAMP_HEADER,
    Claimed,
    DeliveryLog,
    DeliveryRecord,
    InProgress,
    NotAllowed,
    Replay,
    Reused,
    SecretsUnavailable,
    SignatureRefused,
    SourceLimits,
    WebhookStart,
    bind_signature,
    check_delivery,
    check_source,
    claim_delivery,
    finish_delivery,
    release_delivery,
    tool_call_id,
    verify,
    verify_standard,
)

if TYPE_CHECKING:
    from forms.app.service import FormService
    from formwork.bootstrap import App

__all__ = [
    "USER_AGENT",
    "WEBHOOK_AUTH_SCHEME",
    "DeliveryFailed",
    "HttpPost",
    "check_url",
    "deliver",
    "is_webhook",
    "notifier",
    "outbound_secret",
    "precheck",
    "receive",
    "urllib_post",
]

_log = logging.getLogger("formwork.webhooks")

WEBHOOK_AUTH_SCHEME = "Formwork-HMAC-SHA256"


def _refused(error: SignatureRefused) -> ApiError:
    return ApiError(401, error.code, error.message, {"WWW-Authenticate": WEBHOOK_AUTH_SCHEME})


def receive(
    event: Mapping[str, Any], source: str, app: App
) -> tuple[int, dict[str, Any], dict[str, str]]:
    """Handle one prechecked webhook event with ``app``'s parts: status, JSON body and extra
    headers, or raise ``ApiError`` for a refusal. The steps, in the module docstring's order:
    the signature (``_signed``), the payload and what the source may start (``_form_allowed``),
    the delivery's claim (``_claimed``), then the start."""
    configured = app.webhook_settings
    body = str(event.get("body") or "").encode("utf-8")
    moment = app.now()
    signed = _signed(event, source, app, body, moment)
    payload = _payload(body)
    form_id = _form_allowed(app, source, signed, payload)
    at = datetime.fromtimestamp(moment, UTC)
    log = app.delivery_log
    # A standard signature covers the id, so it cannot come again under another; the
    # deprecated one does not, so the signed request is bound to the id it came under.
    if not signed.standard and not bind_signature(
        log, source, signed.timestamp, body, signed.delivery, now=at, tolerance=configured.tolerance
    ):
        raise ApiError(
            409,
            "signature_reused",
            "this signed request was already delivered under another delivery id",
        )
    claim = _claimed(log, source, signed.delivery, payload, at)
    if isinstance(claim, Replay):
        _log.info("webhook replayed", extra={"source": source, "delivery": signed.delivery})
        return 200, {**(claim.record.outcome or {}), "replayed": True}, {}
    return _start(app.service, log, claim.record, payload, form_id, at)


@dataclass(frozen=True)
class _Signed:
    """A request whose signature matched: under which scheme, its delivery id, the time it
    was signed at and the limits of the source whose key matched."""

    standard: bool
    delivery: str
    timestamp: int
    limits: SourceLimits


def _signed(event: Mapping[str, Any], source: str, app: App, body: bytes, moment: float) -> _Signed:
    """Steps 2 and 3's first half: the source, the signature on the raw bytes, the timestamp,
    then the delivery id (401, 503 when the secrets cannot be read, 400)."""
    configured = app.webhook_settings
    # An unconfigured source costs nothing: no secret is looked up, and the answer is the
    # one a bad signature gets (verify refuses an empty key list after checking the headers).
    limits = configured.limits(source) if check_source(source) else None
    try:
        keys = app.secret_source("inbound").keys_for(source) if limits is not None else ()
    except SecretsUnavailable as exc:
        raise ApiError(503, "secrets_unavailable", str(exc), {"Retry-After": "30"}) from None
    # Standard Webhooks when its signature header is there; else the deprecated X-Formwork-*
    # scheme (accepted until LEGACY_HEADERS_UNTIL, docs/webhooks.md).
    standard = _header(event, STANDARD_SIGNATURE_HEADER) is not None
    id_header = ID_HEADER if standard else DELIVERY_HEADER
    delivery = _header(event, id_header.lower())
    try:
        if standard:
            timestamp = verify_standard(
                keys,
                delivery,
                _header(event, STANDARD_SIGNATURE_HEADER),
                _header(event, STANDARD_TIMESTAMP_HEADER),
                body,
                now=moment,
                tolerance=configured.tolerance,
            )
        else:
            timestamp = verify(
                keys,
                _header(event, SIGNATURE_HEADER.lower()),
                _header(event, TIMESTAMP_HEADER.lower()),
                body,
                now=moment,
                tolerance=configured.tolerance,
            )
    except SignatureRefused as exc:
        raise _refused(exc) from None
    if not check_delivery(delivery):
        raise ApiError(
            400,
            "bad_delivery_id",
            f"send a unique {id_header} header: 1-80 characters of letters, digits and . _ : @ -",
        )
    assert delivery is not None
    assert limits is not None  # the signature matched one of its keys
    if not standard:
        _log.warning(
            "webhook signed with the deprecated X-Formwork-* headers",
            extra={"source": source, "accepted_until": LEGACY_HEADERS_UNTIL},
        )
    return _Signed(standard, delivery, timestamp, limits)


def _form_allowed(app: App, source: str, signed: _Signed, payload: WebhookStart) -> str:
    """Step 3's second half: the principal is of the deployment's shape (422), the form is
    registered (422) and the source may start it for the principal's tenant (403). The form's
    id."""
    if app.settings.tenant_claim is not None and tenant_of(payload.principal) is None:
        # Every token of a multi-tenant deployment is someone's in a tenant: a session for a
        # principal without one could be reached by no one but the webhook.
        raise ApiError(
            422,
            "principal_without_tenant",
            f"principal {payload.principal!r} names no tenant; this deployment's principals "
            "are tenant/sub",
        )
    try:
        form_id = app.service.registry.latest(payload.form, payload.principal).id
    except ToolError as exc:
        raise ApiError(422, exc.code, exc.message) from None
    try:
        signed.limits.check(source, payload.principal, form_id)
    except NotAllowed as exc:
        _log.warning(
            "webhook refused by the source's limits",
            extra={"source": source, "delivery": signed.delivery, "error": exc.code},
        )
        raise ApiError(403, exc.code, exc.message) from None
    return form_id


def _claimed(
    log: DeliveryLog, source: str, delivery: str, payload: WebhookStart, at: datetime
) -> Claimed | Replay:
    """Step 5: the delivery id claimed for this body (409 for another body under a used id,
    or while another attempt holds it), or the first outcome's replay."""
    claim = claim_delivery(
        log, source, delivery, payload.digest(), now=at, metadata=payload.metadata
    )
    if isinstance(claim, Reused):
        raise ApiError(
            409,
            "delivery_reused",
            "this delivery id was already used for a different body; use a new id",
        )
    if isinstance(claim, InProgress):
        raise ApiError(
            409,
            "delivery_in_progress",
            "this delivery is being handled; retry shortly",
            {"Retry-After": str(claim.retry_after)},
        )
    return claim


def _payload(body: bytes) -> WebhookStart:
    text = body.decode("utf-8")
    _check_json(text)
    try:
        return WebhookStart.model_validate_json(text)
    except ValidationError as exc:
        problems = []
        for error in exc.errors(include_url=False)[:5]:
            where = ".".join(str(p) for p in error["loc"][:4]) or "body"
            problems.append(f"{where}: {str(error['msg'])[:120]}")
        raise ApiError(422, "invalid_payload", "; ".join(problems)) from None


def _start(
    service: FormService,
    log: DeliveryLog,
    claimed: DeliveryRecord,
    payload: WebhookStart,
    form_id: str,
    at: datetime,
) -> tuple[int, dict[str, Any], dict[str, str]]:
    caller = Caller(payload.principal, payload.conversation_id, source="webhook")
    call_id = tool_call_id(claimed.source, claimed.delivery)
    result: dict[str, Any] = service.call(
        caller, "form_start", call_id, {"form": form_id, "values": payload.values}
    )
    instance = result.get("instance")
    if not result.get("ok") or not isinstance(instance, str):
        release_delivery(log, claimed, now=at)
        code = str(result.get("error") or "form_start_failed")
        message = str(result.get("message") or "the form could not be started")
        if code in ("internal_error", "definition_error"):
            _log.error("webhook form_start failed: %s", code)
            raise ApiError(500, "internal_error", "the session could not be started; retry")
        raise ApiError(422, code, message)
    outcome: dict[str, Any] = {
        "ok": True,
        "delivery": claimed.delivery,
        "form": form_id,
        "instance": instance,
        "conversation_id": payload.conversation_id,
        **({"status_line": result["status_line"]} if "status_line" in result else {}),
        "result": {k: v for k, v in result.items() if k != "replayed"},
    }
    finish_delivery(log, claimed, json.loads(json.dumps(outcome, default=str)))
    replayed = bool(result.get("replayed"))
    _log.info(
        "webhook started a session",
        extra={"source": claimed.source, "delivery": claimed.delivery, "instance": instance},
    )
    return (200 if replayed else 201), outcome, {}
