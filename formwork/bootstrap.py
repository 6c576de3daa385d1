"""The composition root: ``bootstrap(settings, **parts) -> App``, the one place that builds
the real adapters and wires them together.

An ``App`` holds the application's parts for one configuration: the settings; the clock, the
timer, the id source, the backoff between conflicted commits, the one commit policy every
aggregate's loop shares (``commit_policy``) and the work behind answers; where data is kept
(``storage``) and each store; the dispatcher, the ``FormService`` and the builder's and
memory's services (``builder``, ``memory``, ``memory_api``); the webhook route's parts. Every
service is built from the App's parts (never a default of its own), so ``bootstrap(clock=...)``
is the time of every write and link, and ``bootstrap(storage=InMemoryStorage())`` keeps
everything in memory. Every entry point takes its parts from one: the Lambda handlers serve
with their process's App (``formwork.process.app()``) or the ``app=`` they are given; the
hook worker's process (``formwork.worker``) and the benches make their own::

    app = bootstrap(Settings(tenant_claim="tenant"), service=service)
    response = formwork.aws.api.lambda_handler(event, LocalContext(), app=app)

A part given to ``bootstrap`` is used as it is; every other part, the settings included (read
from the environment), is built on first use and kept, under a lock: a warm Lambda container
builds its boto3 client and compiled forms once. The builders are by concern:
``formwork.references`` (what the settings name), ``formwork.storage`` (the storage kinds, the
DynamoDB client), ``formwork.services`` (the services, the dispatcher, the operator tools'
clients) and ``formwork.webhook_secrets`` (the webhook secret sources); the ``App`` that calls
them is ``formwork.application``'s. Each imports the engine, boto3 and pydantic
models inside, so a request that never touches storage (``GET /tools``) does not pay for them.
A ``service`` handed to ``bootstrap`` brings its own catalog (or registry) and clock.
"""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING, Final, Literal, Unpack

from formwork.application import App
from formwork.references import build_registry, load_attribute, load_forms
from formwork.services import build_dispatcher, service_parts
from formwork.storage import build_delivery_log, build_dynamodb_client, build_store
from formwork.webhook_secrets import build_secret_source, build_secrets_client

if TYPE_CHECKING:
    from forms.app.service import Dispatcher, FormService
    from formwork.config import Settings
    from formwork.services import Parts

__all__ = [  # and builders the tools call (the App looks them up on formwork.application)
    "FROM_SETTINGS",
    "App",
    "FromSettings",
    "bootstrap",
    "build_delivery_log",
    "build_dispatcher",
    "build_dynamodb_client",
    "build_registry",
    "build_secret_source",
    "build_secrets_client",
    "build_store",
    "load_attribute",
    "load_forms",
]


class FromSettings(Enum):
    """``bootstrap(dispatcher=FROM_SETTINGS)``, the default: the dispatcher ``FORMWORK_DISPATCH``
    names. (``dispatcher=None`` is a choice of its own: no dispatcher at all.)"""

    FROM_SETTINGS = "from settings"


FROM_SETTINGS: Final = FromSettings.FROM_SETTINGS


def bootstrap(
    settings: Settings | None = None,
    *,
    service: FormService | None = None,
    dispatcher: Dispatcher | Literal[FromSettings.FROM_SETTINGS] | None = FROM_SETTINGS,
    **given: Unpack[Parts],
) -> App:
    """The application for ``settings`` (default: the environment's, read on first use).

    Every other argument replaces the App's part of that name (``formwork.services.Parts``
    lists them; the App's property of that name says how it is built when not given).
    ``service`` is the whole ``FormService`` (then its registry, store, dispatcher and commit
    policy, which the builder and memory's use cases share, are its own: do not pass them
    too); ``dispatcher=None`` builds the service without a dispatcher (commits record their
    hooks and nothing runs them here: the Temporal worker).
    """
    if service is not None and (
        any(given.get(part) is not None for part in ("registry", "store", "commit_policy"))
        or dispatcher is not FROM_SETTINGS
    ):
        raise ValueError(
            "pass a service or its parts (registry, store, dispatcher, commit_policy), not both"
        )
    parts = service_parts(service) if service is not None else {}
    parts.update(
        {_RENAMED.get(name, name): part for name, part in given.items() if part is not None}
    )
    if dispatcher is not FROM_SETTINGS:
        parts["dispatcher"] = dispatcher
    return App(settings, parts)


_RENAMED: Final = {"secrets": "secrets.inbound", "notify_secrets": "secrets.outbound"}
"""``bootstrap``'s arguments whose App part has another name (``App.secret_source``)."""
