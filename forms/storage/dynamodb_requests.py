"""What the DynamoDB adapters share: attribute values, escaping a key part, the reasons of a
cancelled write and the port's error for one (``refused``: the one place DynamoDB's
``ConditionalCheckFailed`` and ``TransactionConflict`` become ``CallRecorded`` or
``Conflict``), and the three requests they all make (a strongly consistent GetItem, a
strongly consistent paged Query of one partition, a Put action for a transaction), and a
call record's two primitives (``add_call``, ``read_call``).

Every adapter keeps its own key layout (``docs/dynamodb.md``); this is only the wire. The
clients are boto3's ``dynamodb`` clients (low level, attribute values typed as ``{"S": ...}``),
which is what the Lambda functions already load; the resource API would add its own import and
type conversions to the cold start for nothing these adapters need.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from forms.errors import CallRecorded, Conflict, StoreError
from forms.instance import CallRecord, NewCall

MAX_TRANSACTION_ACTIONS = 100
"""DynamoDB's limit on the actions of one TransactWriteItems."""
MAX_TRANSACTION_BYTES = 4_000_000
"""DynamoDB's limit on the total size of one TransactWriteItems (4 MB), with some headroom."""
CALL = "C#"
"""The sort keys of call records (one per tool-call id, written once) start with this."""
CHECK_FAILED = "ConditionalCheckFailed"
TRANSACTION_CONFLICT = "TransactionConflict"


def s(text: str) -> dict[str, str]:
    """A string attribute value."""
    return {"S": text}


def n(number: int) -> dict[str, str]:
    """A number attribute value."""
    return {"N": str(number)}


def escape(part: str) -> str:
    """A key part with ``%`` and the separator ``#`` escaped, so parts never run together."""
    return part.replace("%", "%25").replace("#", "%23")


def reason_codes(exc: Any) -> list[str]:
    """The per-action cancellation codes of a TransactionCanceledException, in action order;
    for a plain conditional write that failed (ConditionalCheckFailedException), the one code."""
    response = getattr(exc, "response", {}) or {}
    reasons = response.get("CancellationReasons")
    if reasons is None:
        code = response.get("Error", {}).get("Code", "")
        return ["ConditionalCheckFailed"] if code == "ConditionalCheckFailedException" else []
    return [str(r.get("Code", "")) for r in reasons]


def refused(
    exc: Any,
    *,
    kind: str,
    subject: str,
    expected: int,
    current: Callable[[], Any],
    recorded: Callable[[], CallRecorded] | None = None,
    guarded: int = 1,
) -> StoreError:
    """The port's error for a conditional write DynamoDB cancelled (a
    TransactionCanceledException, or a single write's ConditionalCheckFailedException), for
    every adapter alike:

    * ``CallRecorded`` (``recorded()`` reads the first record) when the write carried a call
      record, listed last, and its ``attribute_not_exists`` failed: the id is taken;
    * ``Conflict`` carrying ``current()`` (what is stored now, read again) when one of the
      first ``guarded`` actions (the head's version condition, and for a fact its revision's
      place) failed its condition, or a concurrent transaction held the items: another
      writer got there first;
    * else a ``StoreError`` naming the codes (the caller may know better: a handover's target
      that exists)."""
    codes = reason_codes(exc)
    if recorded is not None and codes[-1:] == [CHECK_FAILED]:
        return recorded()
    if CHECK_FAILED in codes[:guarded] or TRANSACTION_CONFLICT in codes:
        return Conflict(subject, expected, current(), kind=kind)
    return StoreError(f"write to {kind} {subject!r} cancelled: {codes}")


def item_too_large(exc: BaseException) -> bool:
    """Whether DynamoDB refused a write because an item passed its size limit: a
    ``ValidationException`` (PutItem, or a whole transaction) or a transaction cancelled with a
    ``ValidationError`` reason, either saying the item size was exceeded. The adapters check
    sizes before they write (``forms.storage.sizes``); this maps a write their estimate let
    through to the same refusal, never to an internal error."""
    response = getattr(exc, "response", None)
    if not isinstance(response, Mapping):
        return False
    error = response.get("Error") or {}
    texts = [str(error.get("Message", ""))] if error.get("Code") == "ValidationException" else []
    texts += [
        str(reason.get("Message", ""))
        for reason in response.get("CancellationReasons") or ()
        if isinstance(reason, Mapping) and reason.get("Code") == "ValidationError"
    ]
    return any("item size" in text.lower() for text in texts)


def largest_item(actions: list[dict[str, Any]]) -> int:
    """The estimated size (``item_bytes``) of the largest item the Put actions write."""
    return max((item_bytes(a.get("Put", {}).get("Item", {})) for a in actions), default=0)


def item_bytes(item: Mapping[str, Any]) -> int:
    """An upper estimate of an item's size: names plus string and number values."""
    total = 0
    for name, value in item.items():
        total += len(name.encode())
        for text in value.values():
            total += len(str(text).encode())
    return total


def get_item(client: Any, table: str, pk: str, sk: str) -> dict[str, Any] | None:
    """One item by its key, strongly consistent; None when there is none."""
    found: dict[str, Any] | None = client.get_item(
        TableName=table, Key={"pk": s(pk), "sk": s(sk)}, ConsistentRead=True
    ).get("Item")
    return found


def query_items(
    client: Any,
    table: str,
    pk: str,
    *,
    prefix: str | None = None,
    between: tuple[str, str] | None = None,
) -> Iterator[dict[str, Any]]:
    """The items of partition ``pk`` (those whose sort key starts with ``prefix``, or lies
    between the two bounds), in sort-key order: one strongly consistent Query, paged."""
    condition = "pk = :pk"
    values: dict[str, Any] = {":pk": s(pk)}
    if prefix is not None:
        condition += " AND begins_with(sk, :prefix)"
        values[":prefix"] = s(prefix)
    elif between is not None:
        condition += " AND sk BETWEEN :low AND :high"
        values[":low"], values[":high"] = s(between[0]), s(between[1])
    request: dict[str, Any] = {
        "TableName": table,
        "KeyConditionExpression": condition,
        "ExpressionAttributeValues": values,
        "ConsistentRead": True,
    }
    while True:
        page = client.query(**request)
        yield from page.get("Items", [])
        last = page.get("LastEvaluatedKey")
        if not last:
            return
        request["ExclusiveStartKey"] = last


def call_put(table: str, pk: str, call: NewCall) -> dict[str, Any]:
    """The Put action of a call's record in partition ``pk`` (a conversation's, a draft's),
    written once: its ``attribute_not_exists`` is what refuses the id a second time."""
    item = {"pk": s(pk), "sk": s(CALL + call.call_id), "record": s(call.record_json())}
    return put_action(table, item, "attribute_not_exists(pk)")


def add_call(client: Any, table: str, pk: str, call: NewCall) -> bool:
    """Put a call's record in partition ``pk`` unless its id is taken there (False): the
    ``_add_call`` primitive of ``forms.storage.calls.CallRecords``, one conditional PutItem."""
    try:
        client.put_item(**call_put(table, pk, call)["Put"])
    except client.exceptions.ConditionalCheckFailedException:
        return False
    return True


def read_call(client: Any, table: str, pk: str, call_id: str) -> CallRecord | None:
    """The record of ``call_id`` in partition ``pk``, strongly consistent, or None: the
    ``_read_call`` primitive of ``forms.storage.calls.CallRecords``, one GetItem."""
    item = get_item(client, table, pk, CALL + call_id)
    return CallRecord.model_validate_json(item["record"]["S"]) if item is not None else None


def transact(client: Any, actions: list[dict[str, Any]]) -> None:
    """One TransactWriteItems of ``actions``; ``ValueError`` (nothing sent, nothing stored)
    past DynamoDB's limits on a transaction's actions or size."""
    if len(actions) > MAX_TRANSACTION_ACTIONS:
        raise ValueError(
            f"this write needs {len(actions)} items, over DynamoDB's "
            f"{MAX_TRANSACTION_ACTIONS} per transaction; nothing was stored"
        )
    size = sum(item_bytes(a.get("Put", {}).get("Item", {})) for a in actions)
    if size > MAX_TRANSACTION_BYTES:
        raise ValueError(
            f"this write is {size} bytes, over DynamoDB's 4 MB per transaction; nothing was stored"
        )
    client.transact_write_items(TransactItems=actions)


def put_action(
    table: str,
    item: dict[str, Any],
    condition: str | None = None,
    *,
    names: dict[str, str] | None = None,
    values: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A ``Put`` action of a TransactWriteItems (its ``["Put"]`` is a PutItem request)."""
    put: dict[str, Any] = {"TableName": table, "Item": item}
    if condition is not None:
        put["ConditionExpression"] = condition
    if names:
        put["ExpressionAttributeNames"] = names
    if values:
        put["ExpressionAttributeValues"] = values
    return {"Put": put}
