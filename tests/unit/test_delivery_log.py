"""The in-memory delivery log: the delivery log contract, plus what is particular to a dict."""

from __future__ import annotations

import pytest

from formwork.webhooks import DeliveryLog, InMemoryDeliveryLog
from formwork.webhooks.contract import DeliveryLogContract, bind, delivery_record


class TestInMemoryDeliveryLog(DeliveryLogContract):
    @pytest.fixture
    def log(self) -> DeliveryLog:
        return InMemoryDeliveryLog()


def test_inspection_lists_records_and_bindings_as_snapshots() -> None:
    # GIVEN a log with one record and one binding
    log = InMemoryDeliveryLog()
    log.put(delivery_record(metadata={"k": 1}), None)
    bind(log, "d-1", 0)
    # WHEN a test inspects it and changes what it got
    (listed,) = log.records()
    listed.metadata["k"] = 2
    # THEN it saw what is stored, and the log did not change
    assert log.get("crm", "d-1") == delivery_record(metadata={"k": 1})
    assert list(log.bindings().values()) == ["d-1"]
