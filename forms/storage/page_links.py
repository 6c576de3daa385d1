"""Which page links have been used: the port (``PageLinkLedger``) and its in-memory adapter.

A page link (``docs/pages.md``) is single-use: the first time it is exchanged for a session
cookie its id (a random ``jti``) is claimed here, and every later exchange of the same link
finds it claimed and is refused. A claim is kept until the link would have expired anyway
(``expires_at``); after that the link's own expiry refuses it, so nothing needs to outlive it.

Claims are scoped by principal (``tenant/sub``): one principal's claims can neither be read
nor collide with another's, whatever ids they carry.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod


class PageLinkLedger(ABC):
    """The used page links, each claimed at most once."""

    @abstractmethod
    def claim(self, principal: str, link_id: str, expires_at: int) -> bool:
        """Record that ``principal``'s link ``link_id`` is used (kept until ``expires_at``,
        unix seconds). True the first time; False when it was claimed before."""


class InMemoryPageLinkLedger(PageLinkLedger):
    """The ledger in this process's memory (tests, an in-memory local run)."""

    def __init__(self) -> None:
        self._claimed: dict[tuple[str, str], int] = {}
        self._lock = threading.Lock()

    def claim(self, principal: str, link_id: str, expires_at: int) -> bool:
        with self._lock:
            key = (principal, link_id)
            if key in self._claimed:
                return False
            self._claimed[key] = expires_at
            return True
