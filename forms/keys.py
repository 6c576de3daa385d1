"""Idempotency keys: ``{instance_id}:{hook_id}:{occurrence}``, built and read in one place.

A key names one occurrence of one hook of one instance: the same on every retry of that
occurrence, new on a genuine second crossing. Hook ids contain no ``:`` (``field.x.filled``,
``checkpoint.y``), so a key is read from the right; an instance id may not contain ``:``
either (the engine's ids never do). An approval's id is its occurrence's key.
"""

from __future__ import annotations

from typing import NamedTuple


class KeyParts(NamedTuple):
    instance_id: str
    hook_id: str
    occurrence: int


def idempotency_key(instance_id: str, hook_id: str, occurrence: int) -> str:
    return f"{instance_id}:{hook_id}:{occurrence}"


def parse_key(key: str) -> KeyParts:
    """The parts of a key; ``ValueError`` for anything that is not one."""
    parts = key.rsplit(":", 2)
    if len(parts) != 3 or not all(parts) or not parts[2].isdigit():
        raise ValueError(f"{key!r} is not an idempotency key")
    return KeyParts(parts[0], parts[1], int(parts[2]))


def occurrence_of(key: str) -> int | None:
    """The occurrence a key (or any text ending ``:<n>``) names, or None."""
    tail = key.rsplit(":", 1)[-1]
    return int(tail) if tail.isdigit() and ":" in key else None
