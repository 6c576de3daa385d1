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
from forms.errors import NotFound, StoreError
from forms.storage.documents import (
    FormDocumentStore,
    PublishConflict,
    Published,
    document_text,
)
from forms.storage.dynamodb_requests import escape as _escape
from forms.storage.dynamodb_requests import item_too_large
from forms.storage.dynamodb_requests import s as _s
from forms.storage.sizes import text_bytes, too_large

if TYPE_CHECKING:
    from forms.documents.model import FormDocument

_CATALOG = "CATALOG"


class DynamoDBFormDocumentStore(FormDocumentStore):
    """Published documents in the forms table, through a low-level boto3 DynamoDB client."""

    def __init__(self, client: Any, table_name: str, *, attempts: int = 20) -> None:
        self._client = client
        self._table = table_name
        self._attempts = attempts

    def publish(
        self,
        tenant: str,
        document: FormDocument,
        *,
        by: str,
        at: datetime,
        expected: int | None = None,
    ) -> Published:
        text = document_text(document)  # SizeLimit: nothing written
        for _ in range(self._attempts):
            forms, item_version = self._catalog(tenant)
            latest = forms.get(document.id, 0)
            if expected is not None and expected != latest:
                raise PublishConflict(document.id, expected, latest)
            version = latest + 1
            forms[document.id] = version
            catalog = {
                "pk": _s(_catalog_key(tenant)),
                "sk": _s(_CATALOG),
                "forms": _s(json.dumps(forms)),
                "v": {"N": str(item_version + 1)},
            }
            condition = "attribute_not_exists(pk)" if item_version == 0 else "v = :v"
            catalog_put: dict[str, Any] = {
                "TableName": self._table,
                "Item": catalog,
                "ConditionExpression": condition,
            }
            if item_version:
                catalog_put["ExpressionAttributeValues"] = {":v": {"N": str(item_version)}}
            version_put = {
                "TableName": self._table,
                "Item": {
                    "pk": _s(_form_key(tenant, document.id)),
                    "sk": _s(f"V#{version:06d}"),
                    "document": _s(text),
                    "by": _s(by),
                    "at": _s(at.isoformat()),
                },
                "ConditionExpression": "attribute_not_exists(pk)",
            }
            try:
                self._client.transact_write_items(
                    TransactItems=[{"Put": catalog_put}, {"Put": version_put}]
                )
            except Exception as exc:
                if item_too_large(exc):  # past what document_text measured: the same refusal
                    raise too_large("published_version", text_bytes(text), document.id) from None
                if isinstance(exc, self._client.exceptions.TransactionCanceledException):
                    continue  # another publish of this tenant landed first: read again
                raise
            return Published(tenant, version, document, by, at)
        raise StoreError(f"form {document.id!r}: {self._attempts} publishes in a row lost a race")

    def published(self, tenant: str, form_id: str, version: int) -> Published:
        item = self._client.get_item(
            TableName=self._table,
            Key={"pk": _s(_form_key(tenant, form_id)), "sk": _s(f"V#{version:06d}")},
            ConsistentRead=True,
        ).get("Item")
        if item is None:
            raise NotFound(f"no version {version} of form {form_id!r}")
        from forms.documents.model import FormDocument

        return Published(
            tenant,
            version,
            FormDocument.model_validate_json(item["document"]["S"], context=STORED),
            item["by"]["S"],
            datetime.fromisoformat(item["at"]["S"]),
        )

    def catalog(self, tenant: str) -> dict[str, int]:
        return self._catalog(tenant)[0]

    def _catalog(self, tenant: str) -> tuple[dict[str, int], int]:
        """The tenant's catalog and its item's version (0: no catalog yet)."""
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
