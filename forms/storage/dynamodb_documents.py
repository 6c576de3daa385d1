"""``FormDocumentStore`` on the forms table, beside the instances (own key space).

Per tenant, one partition for the catalog and one per form for its versions::

    T#<tenant>#CATALOG / CATALOG            forms (JSON: form id -> latest version, in the
                                            order first published), v (N): the item's version
    T#<tenant>#F#<form_id> / V#<version:06d>  document (JSON), by, at (written once)

``<tenant>`` has ``%`` and ``#`` escaped, so no tenant reads another's keys. A publish is one
transaction: the version item with ``attribute_not_exists`` and the catalog with a condition
on its ``v``; when another publish got there first, the catalog is read again and the next
version tried (bounded), so concurrent publishes get distinct versions. Reading a version is
one GetItem; the catalog one GetItem. All reads are strongly consistent.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import TYPE_CHECKING, Any

from forms.documents.model import STORED
from forms.storage.documents import FormDocumentStore, Published, document_text
from forms.storage.dynamodb_requests import escape as _escape
from forms.storage.dynamodb_requests import item_too_large
from forms.storage.dynamodb_requests import s as _s
from forms.storage.sizes import text_bytes, too_large

if TYPE_CHECKING:
    from forms.documents.model import FormDocument

_CATALOG = "CATALOG"


class DynamoDBFormDocumentStore(FormDocumentStore):
    """Published documents in the forms table, through a low-level boto3 DynamoDB client: the
    primitives of ``FormDocumentStore``, whose logic is the port's."""

    def __init__(self, client: Any, table_name: str, *, attempts: int = 20) -> None:
        self._client = client
        self._table = table_name
        self._attempts = attempts

    def _stored_text(self, document: FormDocument) -> str:
        return document_text(document)

    def _add(self, published: Published, text: str, forms: dict[str, int], catalog: int) -> bool:
        tenant, form_id = published.tenant, published.form_id
        item = {
            "pk": _s(_catalog_key(tenant)),
            "sk": _s(_CATALOG),
            "forms": _s(json.dumps(forms)),
            "v": {"N": str(catalog + 1)},
        }
        condition = "attribute_not_exists(pk)" if catalog == 0 else "v = :v"
        catalog_put: dict[str, Any] = {
            "TableName": self._table,
            "Item": item,
            "ConditionExpression": condition,
        }
        if catalog:
            catalog_put["ExpressionAttributeValues"] = {":v": {"N": str(catalog)}}
        version_put = {
            "TableName": self._table,
            "Item": {
                "pk": _s(_form_key(tenant, form_id)),
                "sk": _s(f"V#{published.version:06d}"),
                "document": _s(text),
                "by": _s(published.by),
                "at": _s(published.at.isoformat()),
            },
            "ConditionExpression": "attribute_not_exists(pk)",
        }
        try:
            self._client.transact_write_items(
                TransactItems=[{"Put": catalog_put}, {"Put": version_put}]
            )
        except Exception as exc:
            if item_too_large(exc):  # past what document_text measured: the same refusal
                raise too_large("published_version", text_bytes(text), form_id) from None
            if isinstance(exc, self._client.exceptions.TransactionCanceledException):
                return False  # another publish of this tenant landed first: read again
            raise
        return True

    def _read_version(self, tenant: str, form_id: str, version: int) -> Published | None:
        item = self._client.get_item(
            TableName=self._table,
            Key={"pk": _s(_form_key(tenant, form_id)), "sk": _s(f"V#{version:06d}")},
            ConsistentRead=True,
        ).get("Item")
        if item is None:
            return None
        from forms.documents.model import FormDocument

        return Published(
            tenant,
            version,
            FormDocument.model_validate_json(item["document"]["S"], context=STORED),
            item["by"]["S"],
            datetime.fromisoformat(item["at"]["S"]),
        )

    def _read_catalog(self, tenant: str) -> tuple[dict[str, int], int]:
        item = self._client.get_item(
            TableName=self._table,
            Key={"pk": _s(_catalog_key(tenant)), "sk": _s(_CATALOG)},
            ConsistentRead=True,
        ).get("Item")
        if item is None:
            return {}, 0
        forms: dict[str, int] = json.loads(item["forms"]["S"])
        return forms, int(item["v"]["N"])


def _catalog_key(tenant: str) -> str:
    return f"T#{_escape(tenant)}#CATALOG"


def _form_key(tenant: str, form_id: str) -> str:
    return f"T#{_escape(tenant)}#F#{form_id}"
