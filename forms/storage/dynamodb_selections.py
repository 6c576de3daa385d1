"""``SelectionStore`` on the forms table, in each draft's own partition::

    T#<tenant>#D#<form_id> / S#<person>    selection (JSON), at: when it was chosen

(``<person>`` escaped like the tenant and form id, so no key reads another's.)

- ``get`` is one consistent GetItem.
- ``put`` is one TransactWriteItems: a ``ConditionCheck`` that the draft's head exists
  (``attribute_exists(pk)``) and the selection's ``Put`` (a ``Delete`` to clear it). A draft
  the tenant does not have cancels the transaction: ``NotFound``, nothing written.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from forms.documents.edit_arguments import Selection
from forms.errors import NotFound, StoreError
from forms.storage.dynamodb_drafts import _draft_key
from forms.storage.dynamodb_requests import escape, get_item, reason_codes, s
from forms.storage.selections import SelectionStore

_HEAD = "HEAD"
_SELECTION = "S#"


class DynamoDBSelectionStore(SelectionStore):
    """Selections beside their drafts, through a low-level boto3 DynamoDB client."""

    def __init__(self, client: Any, table_name: str) -> None:
        self._client = client
        self._table = table_name

    def get(self, tenant: str, form_id: str, person: str) -> Selection | None:
        item = get_item(self._client, self._table, _draft_key(tenant, form_id), _sk(person))
        if item is None:
            return None
        return Selection.model_validate_json(item["selection"]["S"])

    def put(
        self, tenant: str, form_id: str, person: str, selection: Selection | None, at: datetime
    ) -> None:
        pk = _draft_key(tenant, form_id)
        check = {
            "ConditionCheck": {
                "TableName": self._table,
                "Key": {"pk": s(pk), "sk": s(_HEAD)},
                "ConditionExpression": "attribute_exists(pk)",
            }
        }
        key = {"pk": s(pk), "sk": s(_sk(person))}
        change: dict[str, Any]
        if selection is None:
            change = {"Delete": {"TableName": self._table, "Key": key}}
        else:
            text = selection.model_dump_json(exclude_none=True)
            item = {**key, "selection": s(text), "at": s(at.isoformat())}
            change = {"Put": {"TableName": self._table, "Item": item}}
        try:
            self._client.transact_write_items(TransactItems=[check, change])
        except self._client.exceptions.TransactionCanceledException as exc:
            if reason_codes(exc)[:1] == ["ConditionalCheckFailed"]:
                raise NotFound(f"no draft of form {form_id!r}") from None
            raise StoreError(f"selection on draft {form_id!r} not stored") from exc


def _sk(person: str) -> str:
    return _SELECTION + escape(person)
