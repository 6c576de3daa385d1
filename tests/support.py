"""Small helpers the test suites share."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Sequence

    from forms import FormDef, FormService
    from forms.app.hooks import HookRunner
    from forms.instance import FormInstance, OutboxEntry
    from forms.storage import FormStore


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
    clock: TickingClock | None = None,
    **options: Any,
) -> FormService:
    """A ``FormService`` over ``definitions``: an in-memory store, hooks run in process (unless
    ``dispatch=False``), a ticking clock from ``T0``, instance ids ``fi_1``, ``fi_2``, ... and
    no backoff between conflict retries; ``options`` go to ``FormService`` as they are."""
    from forms import FormRegistry, FormService, InMemoryFormStore, InProcessDispatcher

    ids = itertools.count(1)
    options.setdefault("backoff", lambda attempt: None)
    return FormService(
        FormRegistry(definitions),
        store if store is not None else InMemoryFormStore(),
        InProcessDispatcher() if dispatch else None,
        clock=clock if clock is not None else TickingClock(T0),
        new_id=lambda: f"fi_{next(ids)}",
        **options,
    )
