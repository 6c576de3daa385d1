"""Small helpers the test suites share."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from forms.storage.memory import InMemoryFormStore

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from forms import Caller, FormDef, FormService
    from forms.app.hooks import Dispatcher, HookRunner
    from forms.instance import Commit, FormInstance, NewCall, OutboxEntry
    from forms.registry import Forms
    from forms.storage import FormStore
    from formwork.bootstrap import App
    from formwork.config import Settings
    from formwork.webhook_settings import WebhookSettings


class Deferred:
    """A dispatcher that runs nothing: a tool-call Lambda that died right after its commit.
    It keeps the entries handed to it, for a test that dispatches them itself."""

    def __init__(self) -> None:
        self.entries: list[OutboxEntry] = []

    def dispatch(
        self, runner: HookRunner, entries: Sequence[OutboxEntry], instance: FormInstance
    ) -> None:
        del runner, instance
        self.entries += entries


class TickingClock:
    """A clock for ``FormService(clock=...)`` that moves one second per reading, so every
    revision and commit gets a distinct, predictable time. ``now`` may be moved by a test."""

    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


TRAVEL_ANSWERS: dict[str, Any] = {
    "full_name": "Ana Ferreira",
    "staff_id": "AB1234",
    "destination": "Lisbon",
    "departure_date": "2025-03-03",
    "return_date": "2025-03-07",
    "mode": "air",
    "flight_number": "TP1234",
    "total": 1950,
    "cost_centre": "CC-104",
    "manager_email": "joao.silva@example.com",
    "receipts_attached": True,
}
"""Every answer of the example travel claim, within policy: it completes."""


class FakeSecretsManager:
    """``get_secret_value``, the one call of boto3's Secrets Manager client that Powertools'
    ``SecretsProvider`` makes: the secrets given, ``error`` (a code) for every read, and
    ``ResourceNotFoundException`` for a name it does not hold. ``calls`` lists the reads."""

    def __init__(self, secrets: dict[str, str], error: str | None = None) -> None:
        self.secrets = secrets
        self.error = error
        self.calls: list[str] = []

    def get_secret_value(self, SecretId: str) -> dict[str, str]:  # noqa: N803 (boto3's name)
        from botocore.exceptions import ClientError

        self.calls.append(SecretId)
        if self.error or SecretId not in self.secrets:
            code = self.error or "ResourceNotFoundException"
            raise ClientError({"Error": {"Code": code}}, "GetSecretValue")
        return {"SecretString": self.secrets[SecretId]}


T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
"""The instant test services start their clock at."""


def service_for(
    *definitions: FormDef,
    dispatch: bool = True,
    store: FormStore | None = None,
    clock: Callable[[], datetime] | None = None,
    dispatcher: Dispatcher | None = None,
    registry: Forms | None = None,
    **options: Any,
) -> FormService:
    """A ``FormService`` over ``definitions`` (or over ``registry``, a ``Catalog`` say): an
    in-memory store, hooks run in process (unless ``dispatch=False``, or by ``dispatcher`` when
    given), a ticking clock from ``T0``, instance ids ``fi_1``, ``fi_2``, ... and no backoff
    between conflict retries; ``options`` go to ``FormService`` as they are."""
    from forms import FormRegistry, FormService, InMemoryFormStore, InProcessDispatcher

    ids = itertools.count(1)
    options.setdefault("backoff", lambda attempt: None)
    options.setdefault("new_id", lambda: f"fi_{next(ids)}")
    return FormService(
        registry if registry is not None else FormRegistry(definitions),
        store if store is not None else InMemoryFormStore(),
        dispatcher if dispatcher is not None else InProcessDispatcher() if dispatch else None,
        clock=clock if clock is not None else TickingClock(T0),
        **options,
    )


def app_for(
    service: FormService | None = None,
    *,
    settings: Settings | None = None,
    webhook_settings: WebhookSettings | None = None,
    **parts: Any,
) -> App:
    """An App for a test: ``formwork.bootstrap.bootstrap`` with ``service`` (or its parts) and
    ``parts`` as given, and the settings and webhook settings given or the defaults, never
    the environment of the shell that runs the tests. What is not given is built on first
    use, as in production: with the default settings, an in-memory delivery log."""
    from formwork.bootstrap import bootstrap
    from formwork.config import Settings
    from formwork.webhook_settings import WebhookSettings

    return bootstrap(
        settings if settings is not None else Settings(),
        service=service,
        webhook_settings=webhook_settings if webhook_settings is not None else WebhookSettings(),
        **parts,
    )


class Session:
    """One caller's side of a conversation with a service, as tests drive it: tool calls with
    numbered ids (``call-1``, ``call-2``, ...) unless a test names one, from ``caller`` unless
    a call names another. Harnesses add their form's moves on top."""

    def __init__(self, service: FormService, caller: Caller) -> None:
        self.service = service
        self.caller = caller
        self._ids = itertools.count(1)

    @property
    def store(self) -> FormStore:
        return self.service.store

    def call(
        self,
        tool: str,
        payload: object = None,
        *,
        caller: Caller | None = None,
        call_id: str | None = None,
        **fields: Any,
    ) -> dict[str, Any]:
        """The result of one call; ``fields`` are merged into a mapping ``payload`` (a payload
        of another type is sent as it is, for tests of bad input)."""
        if fields:
            payload = {**(payload if isinstance(payload, dict) else {}), **fields}
        call_id = call_id if call_id is not None else self.next_call_id()
        return self.service.call(caller or self.caller, tool, call_id, payload)

    def next_call_id(self) -> str:
        """The id the next call without one gets."""
        return f"call-{next(self._ids)}"

    def ok(self, tool: str, caller: Caller | None = None, **fields: Any) -> dict[str, Any]:
        """A call that must succeed; its result."""
        result = self.call(tool, None, caller=caller, **fields)
        assert result["ok"] is True, result
        return result


class RacingStore(InMemoryFormStore):
    """A form store on which, right after an instance is created, ``then`` runs once (the
    user's answer landing between a start's commit and the one memory or context defaults
    make right after it); every commit is kept, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.then: Any = None
        self.commits: list[Commit] = []

    def create(self, instance: FormInstance, call: NewCall | None = None) -> None:
        super().create(instance, call)
        then, self.then = self.then, None
        if then is not None:
            then()

    def commit(self, commit: Commit) -> FormInstance:
        self.commits.append(commit)
        return super().commit(commit)
