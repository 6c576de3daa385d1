"""The in-process dispatcher passes the dispatcher contract (the Temporal dispatcher passes the
same suite against a real dev server: ``tests/integration/test_temporal_dispatch.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from forms import FormRegistry, InMemoryFormStore, InProcessDispatcher
from forms.app.dispatcher_contract import FORMS, RUNS, DispatcherContract, Wiring
from tests.support import form_service


class TestInProcessDispatcher(DispatcherContract):
    @pytest.fixture
    def wiring(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Wiring:
        monkeypatch.setenv(RUNS, str(tmp_path))
        service = form_service(
            FormRegistry(FORMS), InMemoryFormStore(), InProcessDispatcher(), backoff=lambda n: None
        )

        def settle(instance_id: str) -> None:
            del instance_id  # the runs happened inside the call that fired them

        return Wiring(service, settle)
