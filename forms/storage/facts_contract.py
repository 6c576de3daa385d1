"""The fact store's contract: one suite every ``FactStore`` adapter passes.

Subclass ``FactStoreContract`` in a test module and give it a ``facts`` fixture. Each test
reads GIVEN / WHEN / THEN and checks one of the port's promises (``forms.storage.facts``). The
tests are grouped by promise, one module each: reading and the history
(``facts_contract_history``), one write at a time, once (``facts_contract_writes``), and what
is a principal's own (``facts_contract_principals``). The principals, keys and statements they
share live in ``forms.storage.facts_contract_builders`` (no pytest there) and are importable
from here too.
"""

from __future__ import annotations

from typing import Any

import pytest

from forms.storage.facts_contract_builders import (
    ANA,
    API,
    BOB,
    DAY,
    T0,
    VOCABULARY,
    WEIGHT,
    revision,
    say,
)
from forms.storage.facts_contract_history import FactHistoryContract
from forms.storage.facts_contract_principals import FactPrincipalContract
from forms.storage.facts_contract_writes import FactWriteContract

__all__ = [
    "ANA",
    "API",
    "BOB",
    "DAY",
    "T0",
    "VOCABULARY",
    "WEIGHT",
    "FactHistoryContract",
    "FactPrincipalContract",
    "FactStoreContract",
    "FactWriteContract",
    "revision",
    "say",
]


class FactStoreContract(FactHistoryContract, FactWriteContract, FactPrincipalContract):
    """Tests every ``FactStore`` adapter must pass. Override ``facts`` in a subclass."""

    @pytest.fixture
    def facts(self) -> Any:
        raise NotImplementedError
