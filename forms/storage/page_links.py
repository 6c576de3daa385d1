"""Which page links have been used: the port (``PageLinkLedger``) and its in-memory adapter.

A page link (``docs/pages.md``) is single-use: the first time it is exchanged for a session
cookie its id (a random ``jti``) is claimed here, and every later exchange of the same link
finds it claimed and is refused. A claim is kept until the link would have expired anyway
(``expires_at``); after that the link's own expiry refuses it, so nothing needs to outlive it.

Claims are scoped by principal (``tenant/sub``): one principal's claims can neither be read
nor collide with another's, whatever ids they carry.

A claim may name its **holder**: a digest of the browser's entry cookie (set by the link's
entry page), and when it was made. The browser whose first post spent the link, but whose
answer it never saw (the button pressed again on a slow network: the browser dropped the first
answer, session cookie and all), posts again with the same entry cookie; ``holder`` lets the
page route recognise it for a short while and open its session, where any other browser is
refused.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod


class PageLinkLedger(ABC):
    """The used page links, each claimed at most once."""

    @abstractmethod
    def claim(
        self, principal: str, link_id: str, expires_at: int, holder: str = "", at: int = 0
    ) -> bool:
        """Record that ``principal``'s link ``link_id`` is used (kept until ``expires_at``,
        unix seconds), by ``holder`` (a digest, or empty) at ``at`` (unix seconds). True the
        first time; False when it was claimed before (the first claim stands)."""

    @abstractmethod
    def holder(self, principal: str, link_id: str) -> tuple[str, int] | None:
        """Who claimed ``principal``'s link ``link_id`` and when (``(holder, at)``), or None
        when it is not claimed."""


class InMemoryPageLinkLedger(PageLinkLedger):
    """The ledger in this process's memory (tests, an in-memory local run)."""

    def __init__(self) -> None:
        self._claimed: dict[tuple[str, str], tuple[int, str, int]] = {}
        self._lock = threading.Lock()

    def claim(
        self, principal: str, link_id: str, expires_at: int, holder: str = "", at: int = 0
    ) -> bool:
        with self._lock:
            key = (principal, link_id)
            if key in self._claimed:
                return False
            self._claimed[key] = (expires_at, holder, at)
            return True

    def holder(self, principal: str, link_id: str) -> tuple[str, int] | None:
        with self._lock:
            found = self._claimed.get((principal, link_id))
        return None if found is None else (found[1], found[2])
