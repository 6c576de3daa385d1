"""Webhooks over HTTP, outbound: signed notifications of how a form ended (completed,
terminated, or handed over to another form).

``deliver`` POSTs a ``FormEvent`` signed as inbound requests are (Standard Webhooks;
``formwork.webhooks`` has the scheme) and raises ``DeliveryFailed`` on anything but a 2xx,
so whoever calls it (an executor run by a Temporal activity) retries. ``notifier`` wraps it
as an executor for ``FormDef.on_complete``. Its secrets are a separate set
(``FORMWORK_NOTIFY_SECRETS``, else Secrets Manager ``<notify prefix><name>``): a receiver of
notifications holds nothing that verifies as an inbound request. A notifier reads them from
the source it is given, else from this process's App (``formwork.process``): it is built with
the form definitions, before any App exists.

The inbound route, ``POST /webhooks/{source}``, is ``formwork.aws.webhooks``.
"""

from __future__ import annotations

import ipaddress
import time
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from functools import cache
from typing import TYPE_CHECKING, Any, Protocol

from formwork import process
from formwork.webhooks import (
    FormEvent,
    HandedOverTo,
    SecretsUnavailable,
    check_source,
    delivery_headers,
    event_body,
    form_event,
)

if TYPE_CHECKING:
    from urllib.request import OpenerDirector

    from forms.state import HookContext
    from formwork.webhooks import Ending, SecretSource

USER_AGENT = "formwork-webhooks/1"


class DeliveryFailed(Exception):
    """An outbound delivery attempt failed; raise it out so the caller's retry policy retries.

    ``status`` is the receiver's HTTP status (None: no answer). ``retryable`` is False for a
    4xx other than 408, 425 and 429: retrying the same request will not change the answer.
    """

    def __init__(self, status: int | None, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.retryable = status is None or status >= 500 or status in (408, 425, 429)


class HttpPost(Protocol):
    def __call__(
        self, url: str, body: bytes, headers: Mapping[str, str], timeout: float
    ) -> int: ...


@cache
def _opener() -> OpenerDirector:
    """The opener ``urllib_post`` uses, built on the first POST: ``urllib.request`` (with
    ``http.client`` and ``email``) is for sending, not for building a notifier."""
    import urllib.request

    class _NoRedirects(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: Any, **kwargs: Any) -> None:
            return None  # a 3xx is an answer (not a 2xx), never followed

    return urllib.request.build_opener(_NoRedirects)


def urllib_post(url: str, body: bytes, headers: Mapping[str, str], timeout: float) -> int:
    """POST with the standard library; the HTTP status (redirects are not followed)."""
    import urllib.error
    import urllib.request

    request = urllib.request.Request(url, data=body, headers=dict(headers), method="POST")
    try:
        with _opener().open(request, timeout=timeout) as response:
            response.read(65536)
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


def check_url(url: str) -> str:
    """An https URL, or http to a loopback address (local development); else ValueError."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    if parts.scheme == "https" and host:
        return url
    if parts.scheme == "http" and host:
        try:
            loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = False
        if loopback:
            return url
    raise ValueError(f"webhook URLs must be https (http only to loopback): {url!r}")


def deliver(
    url: str,
    secret: str | Sequence[str],
    payload: FormEvent,
    *,
    timestamp: int,
    http: HttpPost = urllib_post,
    timeout: float = 10.0,
) -> int:
    """POST ``payload`` to ``url``, signed with ``secret`` (or with each of several, during a
    rotation) at ``timestamp``; the 2xx status. The headers are Standard Webhooks' (and the
    deprecated ``X-Formwork-*`` ones until ``LEGACY_HEADERS_UNTIL``).

    Raises ``DeliveryFailed`` on a non-2xx answer or no answer. Pass a fresh ``timestamp`` on
    every attempt (a receiver refuses stale ones); the delivery id stays the payload's.
    """
    check_url(url)
    body = event_body(payload)
    headers = {
        **delivery_headers(payload, body, secret, timestamp=timestamp),
        "User-Agent": USER_AGENT,
    }
    try:
        status = http(url, body, headers, timeout)
    except OSError as exc:
        raise DeliveryFailed(None, f"no answer from the webhook receiver: {exc}") from exc
    if not 200 <= status < 300:
        raise DeliveryFailed(status, f"the webhook receiver answered {status}")
    return status


def outbound_secret(name: str, secrets: SecretSource | None = None) -> str:
    """The current (first) outbound secret named ``name`` (``outbound_secrets``' first)."""
    return outbound_secrets(name, secrets)[0]


def outbound_secrets(name: str, secrets: SecretSource | None = None) -> tuple[str, ...]:
    """The outbound secrets named ``name``, newest first, from ``secrets`` (default: this
    process's App's outbound source: ``FORMWORK_NOTIFY_SECRETS``, else Secrets Manager
    ``<notify prefix><name>``); never an inbound source's secret. A notification is signed
    with each, so a receiver holding either side of a rotation verifies it."""
    source = secrets if secrets is not None else process.app().secret_source("outbound")
    try:
        keys = source.keys_for(name) if check_source(name) else ()
    except SecretsUnavailable as exc:
        raise DeliveryFailed(
            None, f"the outbound secret {name!r} could not be read: {exc}"
        ) from None
    if not keys:
        raise DeliveryFailed(None, f"no outbound (notify) secret named {name!r} is configured")
    return tuple(keys)


def ending(context: HookContext) -> Ending:
    """How the form ``context`` describes ended, as its event says it: ``handed_over`` when
    it closed by a handover (and knows where to), ``terminated`` for a termination or an
    abandonment, else ``completed`` (an ``on_complete`` executor runs on an open instance)."""
    if context.status == "handed_over" and context.handed_to is not None:
        return "handed_over"
    return "completed" if context.status in ("open", "completed") else "terminated"


def notifier(
    url: str,
    *,
    secret: str,
    secrets: SecretSource | None = None,
    http: HttpPost | None = None,
    clock: Callable[[], float] | None = None,
    timeout: float = 10.0,
) -> Callable[[HookContext], None]:
    """An executor that notifies ``url`` of how a form ended: use it as ``FormDef.on_close``
    (``form.completed``; ``form.terminated`` with the reason, for a termination or an
    abandonment; ``form.handed_over`` with the reason and where it went, for a handover) or
    as ``FormDef.on_complete`` (completions only).

    ``secret`` names the outbound secret (a ``FORMWORK_NOTIFY_SECRETS`` key, or Secrets
    Manager ``<notify prefix><secret>``), a set apart from inbound sources' secrets, read
    from ``secrets`` when given, else from this process's App when a notice goes out. The
    delivery id is the hook occurrence's idempotency key, so every
    retry carries the same one. A failed delivery raises, and the hook runner retries.
    """
    check_url(url)
    if not check_source(secret):
        raise ValueError(f"secret names are 1-32 lower-case letters, digits, _ and -: {secret!r}")

    def notify(context: HookContext) -> None:
        moment = clock() if clock is not None else time.time()
        ended = ending(context)
        payload = form_event(
            context,
            occurred_at=context.occurred_at or datetime.fromtimestamp(moment, UTC),
            status=ended,
            closed_reason=context.closed_reason if ended != "completed" else None,
            handed_over_to=(
                HandedOverTo.of(context.handed_to) if context.handed_to is not None else None
            ),
        )
        deliver(
            url,
            outbound_secrets(secret, secrets),
            payload,
            timestamp=int(moment),
            http=http or urllib_post,
            timeout=timeout,
        )

    notify.__qualname__ = notify.__name__ = f"notify_{secret.replace('-', '_')}"
    return notify
