"""The delivery log in this process's memory: production code for tests and a single process."""

from __future__ import annotations

import threading
from datetime import datetime

from formwork.webhooks.log import DeliveryConflict, DeliveryLog, DeliveryRecord


class InMemoryDeliveryLog(DeliveryLog):
    """The delivery log in this process's memory (tests, a single local process).

    One lock makes ``put`` and ``bind`` atomic. Records are frozen, but their ``outcome`` and
    ``metadata`` are dicts, so a record is copied on the way in and on the way out: what a
    caller holds is never what the log holds.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._records: dict[tuple[str, str], DeliveryRecord] = {}
        self._bindings: dict[tuple[str, str], tuple[str, datetime]] = {}

    def get(self, source: str, delivery: str) -> DeliveryRecord | None:
        with self._lock:
            return _copy(self._records.get((source, delivery)))

    def put(self, record: DeliveryRecord, expected_version: int | None) -> None:
        with self._lock:
            current = self._records.get((record.source, record.delivery))
            if (current.version if current else None) != expected_version:
                subject = f"{record.source}/{record.delivery}"
                raise DeliveryConflict(_copy(current), subject=subject, expected=expected_version)
            self._records[(record.source, record.delivery)] = record.model_copy(deep=True)

    def bind(
        self, source: str, signed: str, delivery: str, *, expires_at: datetime, now: datetime
    ) -> str:
        with self._lock:
            bound = self._bindings.get((source, signed))
            if bound is not None and bound[0] != delivery and bound[1] > now:
                return bound[0]
            self._bindings[(source, signed)] = (delivery, expires_at)
            return delivery

    def records(self) -> list[DeliveryRecord]:
        """Every stored record (for tests and inspection)."""
        with self._lock:
            return [record.model_copy(deep=True) for record in self._records.values()]

    def bindings(self) -> dict[tuple[str, str], str]:
        """Every binding, ``(source, signed digest) -> delivery`` (for tests and inspection)."""
        with self._lock:
            return {key: value[0] for key, value in self._bindings.items()}


def _copy(record: DeliveryRecord | None) -> DeliveryRecord | None:
    return record.model_copy(deep=True) if record is not None else None
