"""The user's fact editor in this process: the ``/memory`` routes' answers without HTTP.

``InProcessFactEditor`` calls what ``functions/memory_routes.py`` calls, memory's use cases
(``forms.app.memory_api.MemoryApi``: is the key known, is memory on, the one write loop, the
reads, the switch), and renders their answers and refusals as the routes do, without the
request.

Each method answers ``(status, body)`` as its route does (``docs/http-api.md``, Memory), with
the deployment's switch on, so the demo prints the same lines over either transport. The
bodies are the routes' own (``forms.surface.facts``, which needs no Lambda layer);
``tests/unit/test_demo_output.py`` checks that both answer the same requests alike.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from forms.app.loop import CommitPolicy
from forms.app.memory_api import FactRefused, MemoryApi
from forms.memory import DecayPolicy, Source, Statement, Vocabulary
from forms.storage.facts import FactStore
from forms.surface.facts import REFUSAL_STATUS, changed

STATUS = {"bad_request": 400, "memory_off": 409, "busy": 409, "size_limit": 413}
"""The status of a use case's refusal beside the planner's (``formwork.aws.memory_bodies``)."""

Answer = tuple[int, dict[str, Any]]


class InProcessFactEditor:
    """The memory routes' behaviour on ``facts``, with ``vocabulary``, ``policy``, ``clock``
    and ``commits`` (the one ``CommitPolicy`` of every commit loop) the service's; every
    method takes the principal a verified token would carry."""

    def __init__(
        self,
        facts: FactStore,
        vocabulary: Vocabulary,
        policy: DecayPolicy,
        clock: Callable[[], datetime],
        commits: CommitPolicy,
    ) -> None:
        self.memory = MemoryApi(facts, vocabulary, policy, True, clock, commits)

    def state_fact(self, principal: str, key: str, body: Mapping[str, Any]) -> Answer:
        """``PUT /memory/facts/{key}``."""
        try:
            self.memory.known(key)
            self.memory.require_on(principal)
            try:
                said = Statement.model_validate({**body, "key": key, "source": Source(kind="api")})
            except ValidationError as invalid:
                return _refused(FactRefused("invalid_request", str(invalid.errors()[0]["msg"])))
            written = self.memory.state(
                principal,
                key,
                value=said.value,
                words=said.words,
                stated_at=said.stated_at,
                valid_from=said.valid_from,
                valid_until=said.valid_until,
                correction=said.correction,
            )
        except FactRefused as refusal:
            return _refused(refusal)
        assert written is not None  # no replay key: applied or refused
        return 200, changed(self.memory.vocabulary, written.revision, written.head)

    def read_fact(self, principal: str, key: str, as_of: datetime | None = None) -> Answer:
        """``GET /memory/facts/{key}[?as_of=...]``."""
        try:
            return 200, self.memory.read(principal, key, as_of)
        except FactRefused as refusal:
            return _refused(refusal)

    def list_facts(self, principal: str) -> Answer:
        """``GET /memory/facts``."""
        return 200, self.memory.lines(principal)

    def switch_memory(self, principal: str, enabled: bool) -> Answer:
        """``PUT /memory/settings``."""
        return 200, self.memory.switch(principal, enabled)


def _refused(refusal: FactRefused) -> Answer:
    """A refusal as the routes answer it: nothing was written."""
    body: dict[str, Any] = {"error": refusal.code, "message": refusal.message}
    if refusal.hint:
        body["hint"] = refusal.hint
    if refusal.did_you_mean:
        body["did_you_mean"] = list(refusal.did_you_mean)
    return STATUS.get(refusal.code) or REFUSAL_STATUS.get(refusal.code, 422), body
