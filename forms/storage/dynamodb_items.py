"""The items ``DynamoDBFormStore`` keeps an instance in: its keys, the home item (header,
version, per-field heads, state, and the sparse indexes' keys), and the revision items a
commit appends (``pack``: a commit's new revisions in parts below the item limit). The layout
is ``forms.storage.dynamodb``'s docstring's; nothing here sends a request."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, TypeAdapter

from forms.instance import FieldHistory, FormInstance, Revision
from forms.storage.approvals import sortable
from forms.storage.dynamodb_requests import escape as _escape
from forms.storage.dynamodb_requests import s as _s
from forms.storage.sizes import check, text_bytes

DYNAMODB_ITEM_LIMIT = 400_000
"""DynamoDB's item size limit (400 KB)."""
HOME_PREFIX = "I#"
"""The sort keys of instance homes in a conversation's partition start with this."""
INSTANCE_PREFIX = "I#"
"""The partition key of an instance's own items (HOME, revisions) is this and its id."""
HOME_SK = "HOME"
REVISIONS = "R#"
ITEM_OVERHEAD = 200
"""Bytes reserved in a revision item for its keys and other attributes besides the payload."""

Parts = TypeAdapter(dict[str, list[Revision]])


class Header(BaseModel):
    """The instance's identity, as stored on its home item."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    form_id: str
    form_version: int
    principal: str
    conversation_id: str
    created_at: datetime


class Head(BaseModel):
    """What a home item keeps of one field's log (``FieldHistory.head``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    cursor: int
    count: int
    redo: int | None = None
    entries: dict[int, Revision] = {}


Heads = TypeAdapter(dict[str, Head])


class Known:
    """An instance this store read or wrote, with each field's head as JSON text.

    The text of a head that a commit does not touch is reused as is, so a commit serialises
    only the fields it changes.
    """

    __slots__ = ("heads", "instance")

    def __init__(self, instance: FormInstance, heads: dict[str, str]) -> None:
        self.instance = instance
        self.heads = heads


def head_text(log: FieldHistory) -> str:
    """A field's head as JSON text, as a home item stores it."""
    head = Head(cursor=log.cursor, count=log.count, redo=log.redo_target(), entries=log.head())
    return head.model_dump_json()


def slim_head(log: FieldHistory) -> str:
    """A field's head without its entries (read from the log when needed)."""
    return Head(cursor=log.cursor, count=log.count, redo=log.redo_target()).model_dump_json()


def heads_text(heads: Mapping[str, str]) -> str:
    return "{" + ",".join(f"{json.dumps(f)}:{text}" for f, text in heads.items()) + "}"


def field_of(
    load: Callable[[], dict[str, tuple[Revision, ...]]], field_id: str
) -> Callable[[], tuple[Revision, ...]]:
    def revisions() -> tuple[Revision, ...]:
        return load().get(field_id, ())

    return revisions


def revision_items(
    pk: str, version: int, appended: Mapping[str, tuple[Revision, ...]], max_item_bytes: int
) -> list[dict[str, Any]]:
    """The items holding ``appended``, split so no payload passes ``max_item_bytes``."""
    limit = max_item_bytes - len(pk.encode()) - ITEM_OVERHEAD
    items = []
    for part, payload in enumerate(pack(appended, limit)):
        check("revision", text_bytes(payload))  # one revision alone past an item
        items.append(
            {
                "pk": _s(pk),
                "sk": _s(f"{REVISIONS}{version:010d}#{part:03d}"),
                "revs": _s(payload),
            }
        )
    if len(items) > 999:
        raise ValueError(f"{len(items)} revision items in one write; nothing was stored")
    return items


# ---------------------------------------------------------------------- keys


def instance_key(instance_id: str) -> str:
    return f"{INSTANCE_PREFIX}{instance_id}"


def home_key(instance: FormInstance) -> tuple[str, str]:
    """Where an instance's home item is: its conversation's partition, by creation instant."""
    return (
        conversation_key(instance.principal, instance.conversation_id),
        f"{HOME_PREFIX}{sortable(instance.created_at)}#{instance.id}",
    )


def conversation_key(principal: str, conversation_id: str) -> str:
    """The index partition of one principal's conversation; '#' and '%' escaped, so unambiguous."""
    return f"P#{_escape(principal)}#C#{_escape(conversation_id)}"


def item_key(pk: str, sk: str) -> dict[str, Any]:
    return {"pk": _s(pk), "sk": _s(sk)}


# ---------------------------------------------------------------------- packing and assembling


def pack(appended: Mapping[str, tuple[Revision, ...]], limit: int) -> Iterator[str]:
    """JSON objects ``{field_id: [revision, ...]}`` of at most ``limit`` bytes each, in order.

    Concatenating each field's lists across the parts, in order, gives back ``appended``. A
    single revision larger than ``limit`` gets a part of its own.
    """
    part: dict[str, list[str]] = {}
    size = 2  # "{}"
    for field_id, revisions in appended.items():
        name = len(json.dumps(field_id, ensure_ascii=False).encode()) + 3  # "id":[] and a comma
        for revision in revisions:
            text = revision.model_dump_json()
            cost = len(text.encode()) + 1 + (0 if field_id in part else name)
            if part and size + cost > limit:
                yield _dump_part(part)
                part, size = {}, 2
                cost = len(text.encode()) + 1 + name
            part.setdefault(field_id, []).append(text)
            size += cost
    if part:
        yield _dump_part(part)


def _dump_part(part: dict[str, list[str]]) -> str:
    body = ",".join(
        json.dumps(field_id, ensure_ascii=False) + ":[" + ",".join(revisions) + "]"
        for field_id, revisions in part.items()
    )
    return "{" + body + "}"
