"""What a DynamoDB adapter last read or wrote of an aggregate, so that a write planned on it
reads nothing more: the write's compare-and-set condition refuses it if the aggregate moved
on, so remembering is safe. The draft and fact stores keep their heads here; the instance
store keeps its own (``forms.storage.dynamodb_reads``: it remembers homes too)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

from forms.errors import Versioned

Key = TypeVar("Key", bound=Hashable)
Value = TypeVar("Value", bound=Versioned)


class Remembered(Generic[Key, Value]):
    """The last value (None: known to be missing) kept of up to ``size`` keys, the least
    recently kept forgotten first; thread-safe."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._lock = threading.Lock()
        self._known: OrderedDict[Key, Value | None] = OrderedDict()

    def keep(self, key: Key, value: Value | None) -> None:
        """Remember ``value`` as what ``key`` holds now."""
        with self._lock:
            self._known[key] = value
            self._known.move_to_end(key)
            while len(self._known) > self._size:
                self._known.popitem(last=False)

    def at(self, key: Key, version: int) -> tuple[bool, Value | None]:
        """``(True, value)`` when the remembered value of ``key`` is exactly ``version`` (0: it
        was missing), else ``(False, None)``."""
        with self._lock:
            if key not in self._known:
                return False, None
            known = self._known[key]
        found = known.version if known is not None else 0
        return (True, known) if found == version else (False, None)
