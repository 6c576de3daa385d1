"""The behaviour every ``PageLinkLedger`` adapter must show, as a reusable pytest suite.

Subclass ``PageLinkLedgerContract`` in a test module (its name must start with ``Test``) and
override the ``ledger`` fixture to return a fresh, empty ledger::

    class TestInMemoryPageLinkLedger(PageLinkLedgerContract):
        @pytest.fixture
        def ledger(self) -> PageLinkLedger:
            return InMemoryPageLinkLedger()
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from forms.storage.page_links import PageLinkLedger

UNTIL = 1_800_000_000
"""An expiry (unix seconds) for the claims the suite makes."""


class PageLinkLedgerContract:
    @pytest.fixture
    def ledger(self) -> PageLinkLedger:
        raise NotImplementedError("override the ledger fixture")

    def test_a_link_is_claimed_once(self, ledger: PageLinkLedger) -> None:
        assert ledger.claim("acme/alice", "link-1", UNTIL)
        assert not ledger.claim("acme/alice", "link-1", UNTIL)
        assert ledger.claim("acme/alice", "link-2", UNTIL)

    def test_claims_are_per_principal(self, ledger: PageLinkLedger) -> None:
        # the same link id under another sub, another tenant, or a principal that differs
        # only by what a key would have to escape, is another link
        assert ledger.claim("acme/alice", "link", UNTIL)
        for other in ("acme/bob", "globex/alice", "acme/alice#x", "acme/alice%23x"):
            assert ledger.claim(other, "link", UNTIL), other
        assert not ledger.claim("acme/alice#x", "link", UNTIL)

    def test_of_claims_racing_on_one_link_exactly_one_wins(self, ledger: PageLinkLedger) -> None:
        with ThreadPoolExecutor(8) as pool:
            won = list(pool.map(lambda _: ledger.claim("acme/alice", "race", UNTIL), range(8)))
        assert won.count(True) == 1

    def test_a_claim_names_its_holder_and_the_first_claim_stands(
        self, ledger: PageLinkLedger
    ) -> None:
        assert ledger.holder("acme/alice", "link-h") is None
        assert ledger.claim("acme/alice", "link-h", UNTIL, holder="h1", at=1_700_000_000)
        assert not ledger.claim("acme/alice", "link-h", UNTIL, holder="h2", at=1_700_000_005)
        assert ledger.holder("acme/alice", "link-h") == ("h1", 1_700_000_000)
        # another principal's link of the same id is not this one
        assert ledger.holder("acme/bob", "link-h") is None
        # a claim naming no holder has an empty one
        assert ledger.claim("acme/alice", "link-n", UNTIL)
        assert ledger.holder("acme/alice", "link-n") == ("", 0)
