"""What the builder does for the model: ids from labels, unique ids, and the grid.

Layout is not the model's job. Items sit on the editor's 12-column grid (``model.Grid``); an
item whose ``x`` or ``y`` is not known (a new item, a moved one, one whose width changed, one
that never had a layout) is *packed*: placed right after the item before it in the step, on
the same row when it fits (``x + w <= 12``), else at the start of the next row; then, in item
order, an item that overlaps one placed before it moves down until it does not, so the grid
stays a valid layout (no two items overlap) and its rows follow the order the agent asks in;
an item in the way of one before it is packed again the same way.
``w`` defaults to 12 and ``h`` to 1; display blocks get their defaults (``BLOCK_DEFAULTS``)
under whatever was sent.

Ids: an id left out is derived from the label (``"Work email"`` -> ``work_email``); an id in
use (or one a step class reserves, such as ``step_id``) becomes ``<id>_2``, ``<id>_3``, ...
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from forms.documents.kinds import KINDS

COLUMNS = 12
BLOCK_DEFAULTS: Mapping[str, Mapping[str, Mapping[str, int]]] = {
    kind.name: {"layout": dict(kind.layout)} for kind in KINDS if kind.layout is not None
}
"""What a display block gets unless the call says otherwise (its kind's ``layout``, in
``forms.documents.kinds``): a full-width row."""

_NOT_WORD = re.compile(r"[^a-z0-9]+")
_MAX_ID = 63


def derive_id(text: str, fallback: str, separator: str = "_") -> str:
    """``text`` as an id: lowercase words joined by ``separator``, starting with a letter
    (``fallback`` when nothing of it is left)."""
    words = _NOT_WORD.sub(" ", text.lower()).split()
    joined = separator.join(words)
    if not joined:
        return fallback
    if not joined[0].isalpha():
        joined = f"{fallback}{separator}{joined}"
    return joined[:_MAX_ID].rstrip(separator)


def unique_id(wanted: str, taken: Collection[str]) -> str:
    """``wanted`` if free, else ``wanted_2``, ``wanted_3``, ... (within the id length)."""
    if wanted not in taken:
        return wanted
    n = 2
    while True:
        suffix = f"_{n}"
        candidate = wanted[: _MAX_ID - len(suffix)] + suffix
        if candidate not in taken:
            return candidate
        n += 1


def merge(base: Mapping[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    """``patch`` over ``base``: nested mappings merged key by key, anything else replaced
    (a list too: options are replaced whole). A ``None`` in ``patch`` removes the key."""
    merged = dict(base)
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        elif isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def with_block_defaults(item: Mapping[str, Any]) -> dict[str, Any]:
    """``item`` over its kind's defaults (only display blocks have any)."""
    return merge(BLOCK_DEFAULTS.get(str(item.get("kind")), {}), item)


@dataclass(slots=True)
class _Box:
    x: int
    y: int
    w: int
    h: int

    def overlaps(self, other: _Box) -> bool:
        return (
            self.x < other.x + other.w
            and other.x < self.x + self.w
            and self.y < other.y + other.h
            and other.y < self.y + self.h
        )


def pack(items: list[dict[str, Any]]) -> None:
    """Give every item of a step a whole layout, in place (see the module docstring)."""
    placed: list[_Box] = []
    for item in items:
        layout = dict(item.get("layout") or {})
        w = int(layout.get("w", COLUMNS))
        h = int(layout.get("h", 1))
        x, y = layout.get("x"), layout.get("y")
        if x is None or y is None:
            x, y = _next_to(placed[-1] if placed else None, x, w)
        box = _Box(int(x), int(y), w, h)  # past the grid: the document says so
        if any(b.overlaps(box) for b in placed):  # in the way of what comes before: flow it
            box.x, box.y = _next_to(placed[-1], None, w)
        while colliding := [b for b in placed if b.overlaps(box)]:
            box.y = max(b.y + b.h for b in colliding)
        placed.append(box)
        item["layout"] = {"x": box.x, "y": box.y, "w": box.w, "h": box.h}


def _next_to(previous: _Box | None, x: int | None, w: int) -> tuple[int, int]:
    """Where an item ``w`` wide goes after ``previous``: its row if there is room (at ``x``
    when given), else the start (or ``x``) of the next row."""
    if previous is None:
        return x or 0, 0
    start = previous.x + previous.w if x is None else x
    if start >= previous.x + previous.w and start + w <= COLUMNS:
        return start, previous.y
    return (0 if x is None else x), previous.y + previous.h
