"""What the tool API's route modules share: its Logger, Metrics and Tracer, and the App a
request is served by.

The Tracer is ``LazyTracer``. Powertools' ``Tracer()`` imports the X-Ray SDK as it is built,
even with tracing off, and that import with its default patches (botocore among them) cost
about twice ``import boto3``. Here the SDK is imported only when tracing is on, on the first
invocation rather than at import, and botocore is patched only once something imports it.
With tracing off (outside Lambda, or ``POWERTOOLS_TRACE_DISABLED``) it is never imported.

``lambda_handler`` (``formwork.aws.api``) puts the request's App in the resolver's context
(``append_context``, which Powertools clears after every request); a route reads it with
``request_app(router.context)``, where ``router`` is its module's Powertools ``Router`` (its
context is the resolver's once included) or the resolver itself. Beside it goes who is
calling, as the checks before routing verified it: ``request_verified(router)``.

The roles a token's roles claim lists (``roles_from_claims``) are read the same way by every
route that takes a role: the approvals', the builder's publish and the operators'.
"""

import functools
import json
import os
import re
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, cast

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.event_handler.api_gateway import Response, Router
from aws_lambda_powertools.metrics import MetricUnit, single_metric

from forms.app.conversation import Caller
from formwork.aws.api_errors import JSON_HEADERS
from formwork.aws.auth import Verified, context_from_claims, verify
from formwork.bootstrap import App

SERVICE = os.getenv("POWERTOOLS_SERVICE_NAME") or "formwork"
NAMESPACE = os.getenv("POWERTOOLS_METRICS_NAMESPACE") or "Formwork"

logger = Logger(service=SERVICE)
metrics = Metrics(namespace=NAMESPACE, service=SERVICE)

Handler = TypeVar("Handler", bound=Callable[..., Any])

TRACED_MODULES = ("botocore", "httplib")
"""What the Tracer patches: AWS calls (DynamoDB, Secrets Manager) and outbound HTTP (webhook
notifications go through ``urllib``, so ``http.client``). Powertools' default patches every
library the X-Ray SDK knows that is installed, importing each one (requests, sqlite3...),
although the function uses none of the others. botocore is patched when it is imported (a
post-import hook; the X-Ray SDK's patch imports ``botocore.client``, about half an ``import
boto3``, which a request that never touches AWS, such as ``GET /tools``, does not need)."""


class LazyTracer:
    """Powertools' ``Tracer``, built on the first traced invocation instead of at import.

    Whether tracing is on is Powertools' own rule, read once when a handler is decorated (as
    ``Tracer()`` reads it once when built): off outside Lambda, under SAM local or Chalice, or
    with ``POWERTOOLS_TRACE_DISABLED``. When it is off the handler is returned as it is and the
    X-Ray SDK is never imported; when it is on (``Tracing: Active`` in ``template.yaml`` runs
    the function in Lambda) the first invocation builds the Tracer, which imports the SDK and
    patches ``TRACED_MODULES``, and every invocation is traced exactly as
    ``Tracer.capture_lambda_handler`` traces it (cold start annotation included).
    """

    def __init__(self, service: str) -> None:
        self.service = service
        self._tracer: Tracer | None = None

    @staticmethod
    def enabled() -> bool:
        # Powertools' own decision (environment only), so both agree on when to trace.
        return not Tracer._is_tracer_disabled()

    @property
    def tracer(self) -> Tracer:
        """The Tracer (built, and the X-Ray SDK imported, on first use), ``TRACED_MODULES``
        patched: each now, or when it is first imported if it is not yet."""
        if self._tracer is None:
            from wrapt import when_imported  # the X-Ray SDK's own dependency

            built = self._tracer = Tracer(service=self.service, auto_patch=False)
            for name in TRACED_MODULES:
                if name == "botocore":
                    # Every client is made by a botocore Session; once botocore.session has
                    # run, botocore.client has been imported completely (the hook of
                    # botocore.client itself runs before the package holds it).
                    when_imported("botocore.session")(lambda _module: built.patch(["botocore"]))
                else:
                    built.patch([name])
        return self._tracer

    def capture_lambda_handler(
        self, *, capture_response: bool | None = None, capture_error: bool | None = None
    ) -> Callable[[Handler], Handler]:
        """``Tracer.capture_lambda_handler`` (same options; ``None`` reads Powertools'
        environment variables), wrapped on the first invocation when tracing is on, and not
        at all when it is off."""

        def decorate(handler: Handler) -> Handler:
            if not self.enabled():
                return handler
            traced: Callable[..., Any] | None = None

            @functools.wraps(handler)
            def first_traced(event: Any, context: Any, **kwargs: Any) -> Any:
                nonlocal traced
                if traced is None:
                    traced = self.tracer.capture_lambda_handler(
                        handler, capture_response=capture_response, capture_error=capture_error
                    )
                return traced(event, context, **kwargs)

            return cast("Handler", first_traced)

        return decorate


tracer = LazyTracer(SERVICE)

APP_KEY = "app"
"""The key of the request's App in the resolver's context."""
VERIFIED_KEY = "verified"
"""The key of the request's ``formwork.aws.auth.Verified`` in the resolver's context (``None``
on the routes that ask for no principal: the webhook and the pages)."""


def request_app(context: Mapping[str, Any]) -> App:
    """The App serving this request, from the resolver's (or an included router's) context."""
    found = context[APP_KEY]
    assert isinstance(found, App)
    return found


def request_verified(router: Router) -> Verified:
    """Who is calling, as ``formwork.aws.http.precheck`` verified it for this request (read from
    the event only when the request was not prechecked as one that names a principal;
    ``Unauthenticated`` then, as before routing)."""
    verified = router.context.get(VERIFIED_KEY)
    if isinstance(verified, Verified):
        return verified
    settings = request_app(router.context).settings
    return verify(router.current_event.raw_event, settings.tenant_claim)


def conversation_caller(router: Router, conversation_id: str) -> Caller:
    """The caller of a conversation's route: the verified principal, the conversation of the
    path, and the context defaults its verified claims carry (``FORMWORK_CONTEXT_CLAIMS``).
    The conversation id is checked by the route's parameter type (``ConversationId``), which
    every conversation route declares; it is not checked again here."""
    settings = request_app(router.context).settings
    verified = request_verified(router)
    return Caller(
        principal=verified.principal,
        conversation_id=conversation_id,
        context=context_from_claims(verified.claims, settings.context_claims),
    )


def count_call(metric: str, tool: str, result: Mapping[str, Any]) -> str:
    """Count one tool call as ``metric`` (``ToolCalls``, ``BuilderCalls``) with its ``tool``
    and outcome (``ok`` or the refusal's ``error`` code) as dimensions, whichever route or
    transport served it; the outcome, for the log line. ``tool`` must be a known tool's name
    (a dimension is never raw input)."""
    outcome = "ok" if result.get("ok") else str(result.get("error", "error"))
    with single_metric(
        name=metric,
        unit=MetricUnit.Count,
        value=1,
        namespace=NAMESPACE,
        default_dimensions=metrics.default_dimensions,
    ) as counted:
        counted.add_dimension(name="tool", value=tool)
        counted.add_dimension(name="outcome", value=outcome)
    return outcome


def json_response(status: int, body: Mapping[str, Any]) -> Response[str]:
    """``body`` as compact JSON under ``status``, with the API's JSON headers (``no-store``):
    what a route answers when it is not a plain 200 or needs its own status."""
    text = json.dumps(body, separators=(",", ":"))
    return Response(status, "application/json", text, headers=dict(JSON_HEADERS))


def log_rejection(status: int, code: str) -> None:
    logger.info("request refused", extra={"status": status, "error": code})


MAX_ROLES = 64
_ROLE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@/+=-]{0,127}")


def roles_from_claims(claims: Mapping[str, Any], claim: str) -> frozenset[str]:
    """The roles the token's ``claim`` lists, each entry taken whole, as the issuer sent it.

    The claim holds either a list of roles or one string of roles separated by whitespace:

    * a JSON array (or a JSON array as text, ``'["finance", "admins"]'``): each string in it is
      one role;
    * a string: roles separated by whitespace (the OAuth ``scope`` convention). API Gateway's
      JWT authorizer hands an array claim to the function in this shape, in brackets,
      ``"[finance admins]"``; the brackets are not part of the roles.

    Nothing is split on commas, and an entry of a list is never split: a group named
    ``sales,finance`` is one entry (malformed, so ignored), never ``finance``. Entries that are
    not 1-128 of letters, digits and ``. _ : @ / + = -`` are ignored (they could never match a
    role a definition names); at most ``MAX_ROLES`` count; no claim, no roles.
    """
    value = claims.get(claim)
    entries = _role_entries(value) if isinstance(value, str) else value
    if not isinstance(entries, list | tuple):
        return frozenset()
    roles = [entry for entry in entries if isinstance(entry, str) and _ROLE.fullmatch(entry)]
    return frozenset(roles[:MAX_ROLES])


def _role_entries(text: str) -> list[Any]:
    """The entries of a roles claim that arrived as one string."""
    stripped = text.strip()
    if stripped.startswith("[") and stripped.endswith("]"):
        try:
            loaded = json.loads(stripped)
        except ValueError:
            loaded = None
        if isinstance(loaded, list) and all(isinstance(entry, str) for entry in loaded):
            return loaded  # a JSON array as text
        stripped = stripped[1:-1]  # API Gateway's "[a b]"
    return stripped.split()
