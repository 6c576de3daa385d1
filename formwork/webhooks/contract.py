"""The behaviour every ``DeliveryLog`` adapter must show, as a reusable pytest suite.

Subclass ``DeliveryLogContract`` in a test module (its name must start with ``Test``) and
override the ``log`` fixture to return a fresh, empty log::

    class TestInMemoryDeliveryLog(DeliveryLogContract):
        @pytest.fixture
        def log(self) -> DeliveryLog:
            return InMemoryDeliveryLog()

The tests go through the port only (and, at the end, through the rules written over it) and
assume nothing about timing. Every instant is an explicit, whole-second datetime.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from pydantic import JsonValue

from forms.storage.races import race
from formwork.webhooks.log import (
    DEFAULT_LEASE,
    Claimed,
    DeliveryConflict,
    DeliveryLog,
    DeliveryRecord,
    InProgress,
    Replay,
    Reused,
    bind_signature,
    claim_delivery,
    finish_delivery,
)

T0 = datetime(2025, 3, 10, 9, 0, tzinfo=UTC)
SIGNED = "9f2c" * 16
"""A signed request's digest (sha256 hex, as ``signed_digest`` gives it)."""
OTHER_SIGNED = "0a1b" * 16
RACERS = 8


def at(seconds: int) -> datetime:
    """A fixed instant ``seconds`` after ``T0``."""
    return T0 + timedelta(seconds=seconds)


def delivery_record(
    delivery: str = "d-1",
    *,
    source: str = "crm",
    digest: str = "A",
    version: int = 1,
    state: str = "pending",
    outcome: dict[str, JsonValue] | None = None,
    metadata: dict[str, JsonValue] | None = None,
    claimed_at: datetime = T0,
    expires_at: datetime | None = None,
) -> DeliveryRecord:
    """A record as ``claim_delivery`` writes one: a 60-second lease, kept for a week."""
    return DeliveryRecord.model_validate(
        {
            "source": source,
            "delivery": delivery,
            "digest": digest,
            "state": state,
            "version": version,
            "claimed_at": claimed_at,
            "lease_until": claimed_at + DEFAULT_LEASE,
            "expires_at": expires_at or claimed_at + timedelta(days=7),
            "outcome": outcome,
            "metadata": metadata or {},
        }
    )


def bind(
    log: DeliveryLog, delivery: str, now: int, *, source: str = "crm", signed: str = SIGNED
) -> str:
    """Bind a signed request to ``delivery`` at ``at(now)``, the binding expiring at ``at(360)``."""
    return log.bind(source, signed, delivery, expires_at=at(360), now=at(now))


class DeliveryLogContract:
    """Tests every ``DeliveryLog`` adapter must pass. Override ``log`` in a subclass."""

    @pytest.fixture
    def log(self) -> DeliveryLog:
        raise NotImplementedError("override the log fixture with a fresh, empty delivery log")

    # ------------------------------------------------------------------ get and put

    def test_an_unknown_delivery_reads_as_none(self, log: DeliveryLog) -> None:
        assert log.get("crm", "d-1") is None

    def test_a_first_put_stores_the_record_as_given(self, log: DeliveryLog) -> None:
        # GIVEN a record with nested metadata and an outcome
        record = delivery_record(
            state="done",
            outcome={"ok": True, "instance": "fi_1", "result": {"rejected": [], "n": 2.5}},
            metadata={"crm_contact": "C-1187", "tags": ["a", None]},
        )
        # WHEN it is put where nothing is stored
        log.put(record, None)
        # THEN it reads back equal, down to its JSON
        got = log.get("crm", "d-1")
        assert got == record
        assert got is not None and got.model_dump_json() == record.model_dump_json()

    def test_a_put_on_the_stored_version_replaces_the_record(self, log: DeliveryLog) -> None:
        # GIVEN a stored record at version 1
        first = delivery_record()
        log.put(first, None)
        # WHEN a put expects version 1
        done = first.model_copy(update={"version": 2, "state": "done", "outcome": {"n": 1}})
        log.put(done, 1)
        # THEN the new record is what is stored
        assert log.get("crm", "d-1") == done

    def test_a_put_expecting_nothing_loses_to_a_stored_record(self, log: DeliveryLog) -> None:
        # GIVEN a stored record
        stored = delivery_record(metadata={"k": 1})
        log.put(stored, None)
        # WHEN another writer puts as if nothing were stored
        with pytest.raises(DeliveryConflict) as conflict:
            log.put(delivery_record(digest="B"), None)
        # THEN it loses, carrying the stored record, and nothing changed
        assert conflict.value.current == stored
        assert log.get("crm", "d-1") == stored

    def test_a_put_on_a_stale_version_loses_with_the_current_record(self, log: DeliveryLog) -> None:
        # GIVEN a record moved on to version 2 by one writer
        first = delivery_record()
        log.put(first, None)
        second = first.model_copy(update={"version": 2, "lease_until": at(1)})
        log.put(second, 1)
        # WHEN a writer still holding version 1 puts on top of it
        stale = first.model_copy(update={"version": 2, "state": "done", "outcome": {}})
        with pytest.raises(DeliveryConflict) as conflict:
            log.put(stale, 1)
        # THEN it loses, carrying version 2, and version 2 stays
        assert conflict.value.current == second
        assert log.get("crm", "d-1") == second

    def test_a_put_expecting_a_version_of_nothing_loses_with_nothing(
        self, log: DeliveryLog
    ) -> None:
        with pytest.raises(DeliveryConflict) as conflict:
            log.put(delivery_record(version=2), 1)
        assert conflict.value.current is None
        assert log.get("crm", "d-1") is None

    def test_records_are_kept_per_source_and_delivery(self, log: DeliveryLog) -> None:
        # GIVEN the same delivery id from two sources, and two ids from one source
        records = [
            delivery_record("d-1", source="crm", digest="A"),
            delivery_record("d-1", source="billing", digest="B"),
            delivery_record("d-2", source="crm", digest="C"),
        ]
        for record in records:
            log.put(record, None)
        # THEN each is its own record
        assert [log.get(r.source, r.delivery) for r in records] == records
        assert log.get("billing", "d-2") is None

    def test_an_expired_record_still_reads_as_stored(self, log: DeliveryLog) -> None:
        # GIVEN a record whose expiry passed long ago (the rules compare it; the log keeps it)
        old = delivery_record(claimed_at=datetime(2020, 1, 1, tzinfo=UTC))
        log.put(old, None)
        # THEN it reads back, and a put still has to expect its version
        assert log.get("crm", "d-1") == old
        with pytest.raises(DeliveryConflict):
            log.put(delivery_record(), None)

    def test_racing_first_puts_store_exactly_one(self, log: DeliveryLog) -> None:
        # GIVEN writers that all put version 1 of the same delivery at once
        def put(n: int) -> DeliveryRecord | None:
            try:
                log.put(delivery_record(digest=f"D{n}"), None)
            except DeliveryConflict as conflict:
                return conflict.current
            return None

        currents = race(RACERS, put)
        # THEN one won, and every loser was handed the winner's record
        stored = log.get("crm", "d-1")
        assert stored is not None
        losers = [current for current in currents if current is not None]
        assert len(losers) == RACERS - 1
        assert all(current == stored for current in losers)

    # ------------------------------------------------------------------ snapshots

    def test_changing_a_record_after_putting_it_changes_nothing_stored(
        self, log: DeliveryLog
    ) -> None:
        def put_as_given() -> DeliveryRecord:
            return delivery_record(state="done", outcome={"ok": True}, metadata={"k": [1]})

        record = put_as_given()
        log.put(record, None)
        # WHEN the caller changes the dicts inside the record it put
        assert record.outcome is not None
        record.outcome["ok"] = False
        record.metadata["k"] = "changed"
        # THEN what the log holds is what was put
        assert log.get("crm", "d-1") == put_as_given()

    def test_changing_a_record_read_changes_nothing_stored(self, log: DeliveryLog) -> None:
        log.put(delivery_record(state="done", outcome={"ok": True}, metadata={"k": 1}), None)
        got = log.get("crm", "d-1")
        assert got is not None and got.outcome is not None
        # WHEN the caller changes the dicts inside the record it read, or a conflict carried
        got.outcome["ok"] = False
        got.metadata["k"] = 2
        with pytest.raises(DeliveryConflict) as conflict:
            log.put(delivery_record(), None)
        carried = conflict.value.current
        assert carried is not None
        carried.metadata["k"] = 3
        # THEN a fresh read is what was stored
        again = log.get("crm", "d-1")
        assert again is not None
        assert (again.outcome, again.metadata) == ({"ok": True}, {"k": 1})

    def test_a_record_read_does_not_follow_later_writes(self, log: DeliveryLog) -> None:
        first = delivery_record()
        log.put(first, None)
        got = log.get("crm", "d-1")
        log.put(first.model_copy(update={"version": 2, "state": "done"}), 1)
        assert got == first

    # ------------------------------------------------------------------ bind

    def test_a_first_bind_takes_the_signed_request(self, log: DeliveryLog) -> None:
        assert bind(log, "d-1", 0) == "d-1"
        # AND a binding is not a delivery record
        assert log.get("crm", "d-1") is None

    def test_the_same_delivery_binds_again(self, log: DeliveryLog) -> None:
        # a sender's retry of one delivery carries the same signed request
        assert bind(log, "d-1", 0) == "d-1"
        assert bind(log, "d-1", 10) == "d-1"

    def test_another_delivery_gets_the_one_the_request_is_bound_to(self, log: DeliveryLog) -> None:
        # GIVEN a signed request bound to d-1
        bind(log, "d-1", 0)
        # WHEN it comes again under d-2 / THEN the answer is d-1, and it stays bound to d-1
        assert bind(log, "d-2", 10) == "d-1"
        assert bind(log, "d-1", 20) == "d-1"
        assert bind(log, "d-3", 30) == "d-1"

    def test_bindings_are_kept_per_source_and_signed_request(self, log: DeliveryLog) -> None:
        bind(log, "d-1", 0)
        assert bind(log, "d-2", 0, source="billing") == "d-2"
        assert bind(log, "d-3", 0, signed=OTHER_SIGNED) == "d-3"
        assert bind(log, "d-4", 0) == "d-1"

    def test_a_binding_expires_at_its_expiry_and_may_then_be_taken(self, log: DeliveryLog) -> None:
        # GIVEN a binding to d-1 that expires at at(360)
        bind(log, "d-1", 0)
        # THEN one second before, it still holds
        assert bind(log, "d-2", 359) == "d-1"
        # AND from its expiry on, another delivery takes it, and holds it from then
        assert log.bind("crm", SIGNED, "d-2", expires_at=at(720), now=at(360)) == "d-2"
        assert bind(log, "d-1", 361) == "d-2"

    def test_racing_binds_agree_on_one_delivery(self, log: DeliveryLog) -> None:
        answers = race(RACERS, lambda n: bind(log, f"d-{n}", 0))
        (winner,) = set(answers)
        assert winner in {f"d-{n}" for n in range(RACERS)}
        assert bind(log, "d-late", 1) == winner

    # ------------------------------------------------------------------ the rules on this log

    def test_the_delivery_rules_hold_on_this_log(self, log: DeliveryLog) -> None:
        # GIVEN a first claim
        first = claim_delivery(log, "crm", "d-1", "A", now=T0, metadata={"k": 1})
        assert isinstance(first, Claimed)
        assert log.get("crm", "d-1") == first.record
        # THEN a concurrent delivery waits, and other content under the id is refused
        assert isinstance(claim_delivery(log, "crm", "d-1", "A", now=at(1)), InProgress)
        assert isinstance(claim_delivery(log, "crm", "d-1", "B", now=at(1)), Reused)
        # WHEN it is finished / THEN the same content later replays its outcome
        finish_delivery(log, first.record, {"instance": "fi_1"})
        replay = claim_delivery(log, "crm", "d-1", "A", now=T0 + timedelta(hours=1))
        assert isinstance(replay, Replay) and replay.record.outcome == {"instance": "fi_1"}
        # AND a claim whose lease ran out is taken over, compare-and-set
        claim_delivery(log, "crm", "d-2", "A", now=T0)
        taken = claim_delivery(log, "crm", "d-2", "A", now=T0 + DEFAULT_LEASE * 2)
        assert isinstance(taken, Claimed) and taken.record.version == 2

    def test_a_signed_request_binds_to_one_delivery_until_its_window_closes(
        self, log: DeliveryLog
    ) -> None:
        # GIVEN a request signed at T0, accepted under d-1 (tolerance 300 s)
        signed_at = int(T0.timestamp())
        assert bind_signature(log, "crm", signed_at, b"{}", "d-1", now=T0)
        # THEN a retry under d-1 passes, and the same bytes under d-2 are a replay
        assert bind_signature(log, "crm", signed_at, b"{}", "d-1", now=at(5))
        assert not bind_signature(log, "crm", signed_at, b"{}", "d-2", now=at(300))
        # AND once the timestamp could no longer verify (and a minute more), it is forgotten
        assert bind_signature(log, "crm", signed_at, b"{}", "d-2", now=at(361))

    def test_racing_claims_of_one_delivery_give_one_claimant(self, log: DeliveryLog) -> None:
        outcomes = race(RACERS, lambda n: claim_delivery(log, "crm", "d-1", "A", now=T0))
        claimed = [o for o in outcomes if isinstance(o, Claimed)]
        assert len(claimed) == 1
        assert all(isinstance(o, InProgress) for o in outcomes if o is not claimed[0])
        assert log.get("crm", "d-1") == claimed[0].record
