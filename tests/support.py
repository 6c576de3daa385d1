"""Small helpers the test suites share."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from forms.storage.memory import InMemoryFormStore

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from forms import Caller, FormDef, FormService
    from forms.app.builder import BuilderService
    from forms.app.catalog import Catalog
    from forms.app.hooks import Dispatcher, HookRunner
    from forms.app.loop import CommitPolicy
    from forms.app.memory_api import MemoryApi
    from forms.documents import Limits
    from forms.instance import Commit, FormInstance, NewCall, OutboxEntry
    from forms.memory import DecayPolicy, Vocabulary
    from forms.registry import Forms
    from forms.storage import FormStore
    from forms.storage.drafts import DraftStore
    from forms.storage.facts import FactStore
    from forms.storage.selections import SelectionStore
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


def commit_policy(
    *,
    backoff: Callable[[int], None] | None = None,
    max_conflict_retries: int | None = None,
    max_overtaken: int | None = None,
    replay_window: timedelta | None = None,
) -> CommitPolicy:
    """A ``CommitPolicy`` as a test asks for one: the loop's budgets and replay window unless
    given, and jittered sleeps between attempts unless ``backoff`` is given (what the App
    wires: ``formwork.services.build_commit_policy``)."""
    from forms.app.calls import DEFAULT_REPLAY_WINDOW
    from forms.app.loop import MAX_CONFLICT_RETRIES, MAX_OVERTAKEN, CommitPolicy
    from forms.app.service import jittered_backoff

    return CommitPolicy(
        MAX_CONFLICT_RETRIES if max_conflict_retries is None else max_conflict_retries,
        MAX_OVERTAKEN if max_overtaken is None else max_overtaken,
        jittered_backoff if backoff is None else backoff,
        DEFAULT_REPLAY_WINDOW if replay_window is None else replay_window,
    )


def form_service(
    registry: Forms,
    store: FormStore,
    dispatcher: Dispatcher | None = None,
    *,
    clock: Callable[[], datetime] | None = None,
    new_id: Callable[[], str] | None = None,
    timer: Callable[[], float] | None = None,
    policy: CommitPolicy | None = None,
    **options: Any,
) -> FormService:
    """A ``FormService`` wired as a test asks: each part given, or the real one (the UTC
    clock, random instance ids, ``time.monotonic``); ``policy`` given, or ``commit_policy``
    of the policy's keywords in ``options`` (``backoff``, ``max_conflict_retries``,
    ``max_overtaken``, ``replay_window``); the rest of ``options`` (``memory``, ``count``) go
    to ``FormService`` as they are."""
    import time

    from forms.app.service import FormService, new_instance_id, utc_now

    if policy is None:
        keywords = ("backoff", "max_conflict_retries", "max_overtaken", "replay_window")
        policy = commit_policy(**{k: options.pop(k) for k in keywords if k in options})
    return FormService(
        registry,
        store,
        dispatcher,
        clock=clock if clock is not None else utc_now,
        new_id=new_id if new_id is not None else new_instance_id,
        timer=timer if timer is not None else time.monotonic,
        policy=policy,
        **options,
    )


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
    between conflict retries; ``options`` go to ``form_service`` as they are."""
    from forms import FormRegistry, InMemoryFormStore, InProcessDispatcher

    ids = itertools.count(1)
    options.setdefault("backoff", lambda attempt: None)
    options.setdefault("new_id", lambda: f"fi_{next(ids)}")
    return form_service(
        registry if registry is not None else FormRegistry(definitions),
        store if store is not None else InMemoryFormStore(),
        dispatcher if dispatcher is not None else InProcessDispatcher() if dispatch else None,
        clock=clock if clock is not None else TickingClock(T0),
        **options,
    )


def builder_for(
    drafts: DraftStore,
    catalog: Catalog,
    *,
    clock: Callable[[], datetime],
    limits: Callable[[str], Limits] | None = None,
    selections: SelectionStore | None = None,
    max_conflict_retries: int = 5,
    backoff: Callable[[int], None] | None = None,
) -> BuilderService:
    """A ``BuilderService`` on ``drafts`` and ``catalog`` as a test asks: the default
    ``Limits`` for every tenant unless ``limits``, no stored selection unless ``selections``,
    and a flat budget of ``max_conflict_retries`` retries (``backoff(n)`` before retry ``n``,
    0-based; none by default)."""
    from forms.app.builder import BuilderService
    from forms.app.loop import CommitPolicy, no_wait
    from forms.documents import Limits

    wait = backoff if backoff is not None else no_wait
    return BuilderService(
        drafts,
        catalog,
        clock=clock,
        limits=limits if limits is not None else lambda tenant: Limits(),
        policy=CommitPolicy.counted(max_conflict_retries + 1, lambda retry: wait(retry - 1)),
        selections=selections,
    )


FACT_ATTEMPTS = 5
"""Appends a test's ``MemoryApi`` tries on a key that keeps moving (``memory_api_for``)."""


def memory_api_for(
    facts: FactStore,
    vocabulary: Vocabulary,
    policy: DecayPolicy,
    deployment: bool,
    clock: Callable[[], datetime],
) -> MemoryApi:
    """Memory's use cases as a test asks for them: ``FACT_ATTEMPTS`` appends in all on a key
    that keeps moving, no wait between them."""
    from forms.app.loop import CommitPolicy
    from forms.app.memory_api import MemoryApi

    commits = CommitPolicy.counted(FACT_ATTEMPTS)
    return MemoryApi(facts, vocabulary, policy, deployment, clock, commits)


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


def exact_types(value: Any) -> Any:
    """``value`` with each part paired with its type, so two answers compared through it agree
    in types as well as in values (``1 == 1.0 == True`` would not tell them apart)."""
    if isinstance(value, dict):
        return (type(value), [(exact_types(k), exact_types(v)) for k, v in value.items()])
    if isinstance(value, list | tuple):
        return (type(value), [exact_types(item) for item in value])
    return (type(value), repr(value))
