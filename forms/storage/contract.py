"""The behaviour every ``FormStore`` adapter must show, as a reusable pytest suite.

Subclass ``FormStoreContract`` in a test module (its name must start with ``Test``) and override
the ``store`` fixture to return a fresh, empty store::

    class TestMemoryStore(FormStoreContract):
        @pytest.fixture
        def store(self) -> FormStore:
            return InMemoryFormStore()

The tests go through the public port only and assume nothing about timing. They are grouped by
the promise they test, one module each: creating and committing (``contract_commits``), what a
read gives (``contract_reads``), tool-call records (``contract_calls``) and the hand-over
(``contract_handover``). The helpers that build instances and commits from explicit datetimes
live in ``forms.storage.contract_builders`` (no pytest there) and are importable from here too;
tests may reuse them.
"""

from __future__ import annotations

import pytest

from forms.storage.contract_builders import (
    T0,
    append_values,
    at,
    busy_state,
    call,
    make_instance,
    move_cursor,
    seeded_log,
    value_revision,
)
from forms.storage.contract_calls import CallContract
from forms.storage.contract_commits import CommitContract
from forms.storage.contract_handover import HandOverContract
from forms.storage.contract_reads import ReadContract
from forms.storage.port import FormStore

__all__ = [
    "T0",
    "CallContract",
    "CommitContract",
    "FormStoreContract",
    "HandOverContract",
    "ReadContract",
    "append_values",
    "at",
    "busy_state",
    "call",
    "make_instance",
    "move_cursor",
    "seeded_log",
    "value_revision",
]


class FormStoreContract(CommitContract, ReadContract, CallContract, HandOverContract):
    """Tests every ``FormStore`` adapter must pass. Override ``store`` in a subclass."""

    @pytest.fixture
    def store(self) -> FormStore:
        raise NotImplementedError("override the `store` fixture with a fresh, empty store")
