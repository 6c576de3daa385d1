"""Finding pending outbox entries in the DynamoDB adapter's table: the scan and stream images.

Both read instance home items (``forms.storage.dynamodb`` has the layout): their ``state``
attribute is the instance state as JSON, so an item whose outbox holds a pending entry contains
``PENDING_MARK`` in it (nothing else in a state has a ``status`` that can be ``pending``).
``DynamoDBOutboxScan`` is the ``OutboxScan`` port on one Scan of the table, filtered on that
mark; ``state_of`` reads a DynamoDB Streams image of an item the same way, for the relay.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from forms.instance import InstanceState
from forms.storage.dynamodb import HOME_PREFIX
from forms.storage.port import OutboxScan

PENDING_MARK = '"status":"pending"'
"""What the JSON of a STATE item's ``state`` contains when some outbox entry is pending."""


def state_of(image: Mapping[str, Any]) -> tuple[str, InstanceState] | None:
    """The instance id and state of a home item (attribute values already deserialized, as
    in a stream record's image) whose outbox holds a pending entry; None for any other item."""
    sk, instance_id, state = image.get("sk"), image.get("instance_id"), image.get("state")
    if not (isinstance(sk, str) and sk.startswith(HOME_PREFIX) and isinstance(instance_id, str)):
        return None
    if not isinstance(state, str) or PENDING_MARK not in state:
        return None
    return instance_id, InstanceState.model_validate_json(state)


class DynamoDBOutboxScan(OutboxScan):
    """One paged Scan of the whole table, filtered to home items with a pending entry.

    The filter only trims what comes back: DynamoDB charges a scan for every item it reads,
    so a sweep costs the table's size in read units (``docs/dispatch.md`` has the numbers and
    the alternatives). ``page_size`` caps the items each page reads (DynamoDB's ``Limit``).
    """

    def __init__(self, client: Any, table: str, *, page_size: int | None = None) -> None:
        self._client = client
        self._table = table
        self.page_size = page_size

    def pending(
        self, keep_going: Callable[[], bool] | None = None
    ) -> Iterator[tuple[str, InstanceState]]:
        request: dict[str, Any] = {
            "TableName": self._table,
            "FilterExpression": "begins_with(sk, :home) AND contains(#state, :pending)",
            "ProjectionExpression": "sk, instance_id, #state",
            "ExpressionAttributeNames": {"#state": "state"},
            "ExpressionAttributeValues": {
                ":home": {"S": HOME_PREFIX},
                ":pending": {"S": PENDING_MARK},
            },
        }
        if self.page_size is not None:
            request["Limit"] = self.page_size
        while True:
            page = self._client.scan(**request)
            for item in page.get("Items", []):
                found = state_of({name: value.get("S") for name, value in item.items()})
                if found is not None:
                    yield found
            last = page.get("LastEvaluatedKey")
            if not last or (keep_going is not None and not keep_going()):
                return
            request["ExclusiveStartKey"] = last
