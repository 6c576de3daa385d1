"""What the memory tests share: a fact store that records (and can fail or stall) its requests,
an executor that runs work as it is submitted, a timer a test moves, and a service with memory.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future
from datetime import datetime, timedelta
from typing import Any, TypeVar

from forms import Caller, FormDef, FormRegistry, FormService, InMemoryFormStore
from forms.app.behind import Behind
from forms.app.hooks import InProcessDispatcher
from forms.app.memory import Memory
from forms.errors import StoreError
from forms.memory import (
    FactRevision,
    MemorySettings,
    Source,
    Statement,
    Vocabulary,
    apply_revision,
    plan_statement,
)
from forms.memory.facts import FactHead
from forms.storage.facts import InMemoryFactStore
from forms.storage.port import FormStore
from tests.support import T0, Session, TickingClock, form_service

T = TypeVar("T")
DAY = timedelta(days=1)
ALICE = Caller("alice", "conv-1")
BOB = Caller("bob", "conv-1")


class Inline(Executor):
    """Runs work when it is submitted, on the caller's thread: deterministic."""

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        future: Future[T] = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except Exception as exc:
            future.set_exception(exc)
        return future


class Timer:
    """A monotonic timer a test moves (``advance``)."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


BORN = "1990-04-02"


class RecordingFacts(InMemoryFactStore):
    """The in-memory fact store, recording every request its primitives make (``requests``).
    ``fail`` makes each request raise; ``on_request`` runs before each (a test moves a timer
    there, or blocks on an event)."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[str] = []
        self.fail = False
        self.on_request: Callable[[str], None] | None = None

    def _request(self, name: str) -> None:
        self.requests.append(name)
        if self.on_request is not None:
            self.on_request(name)
        if self.fail:
            raise StoreError("the fact store is down")

    def _read_head(self, principal: str, key: str) -> FactHead | None:
        self._request("head")
        return super()._read_head(principal, key)

    def _read_heads(self, principal: str) -> list[FactHead]:
        self._request("heads")
        return super()._read_heads(principal)

    def _read_history(self, principal: str, key: str) -> list[FactRevision]:
        self._request("history")
        return super()._read_history(principal, key)

    def _read_all(self, principal: str) -> list[FactRevision]:
        self._request("export")
        return super()._read_all(principal)

    def _read_settings(self, principal: str) -> MemorySettings | None:
        self._request("settings")
        return super()._read_settings(principal)

    def _write_settings(self, principal: str, settings: MemorySettings) -> None:
        self._request("put_settings")
        super()._write_settings(principal, settings)

    def _write(
        self, principal: str, before: FactHead | None, after: FactHead, revision: FactRevision
    ) -> None:
        self._request("append")
        super()._write(principal, before, after, revision)

    # ------------------------------------------------------------------ for tests

    def stated(
        self,
        principal: str,
        key: str,
        value: Any = None,
        *,
        words: str | None = None,
        at: datetime,
    ) -> None:
        """Record that ``principal`` stated ``key`` at ``at`` (through the API), unrecorded."""
        head = super()._read_head(principal, key)
        planned = plan_statement(
            Statement(key=key, value=value, words=words, source=Source(kind="api"), stated_at=at),
            head,
            vocabulary=Vocabulary.default(),
            now=at,
        )
        assert isinstance(planned, FactRevision), planned
        history = super()._read_history
        after = apply_revision(head, planned, lambda: history(principal, key))
        super()._write(principal, head, after, planned)

    def memory_off(self, principal: str) -> None:
        super()._write_settings(principal, MemorySettings(enabled=False, changed_at=T0))

    def stall_listing(self) -> tuple[threading.Event, threading.Event]:
        """Make the listing of facts (``heads``) block until the test releases it: the events
        ``asked`` (set when the listing is asked for) and ``release``."""
        asked, release = threading.Event(), threading.Event()

        def stall(name: str) -> None:
            if name == "heads":
                asked.set()
                release.wait(timeout=30)

        self.on_request = stall
        return asked, release

    def head_of(self, principal: str, key: str) -> FactHead | None:
        """The key's head, unrecorded."""
        return super()._read_head(principal, key)


def alice_said(facts: RecordingFacts, *, weight_age: timedelta = 10 * DAY) -> RecordingFacts:
    """Alice's memory: a date of birth from long ago and a height in feet and inches (which
    fill), a weight (offered); the requests that made them are not recorded."""
    facts.stated("alice", "person.date_of_birth", BORN, at=T0 - 600 * DAY)
    facts.stated("alice", "person.height_cm", words="5'8\"", at=T0 - 100 * DAY)
    facts.stated("alice", "person.weight_kg", "70", at=T0 - weight_age)
    facts.requests.clear()
    return facts


def memory_service(
    *definitions: FormDef,
    facts: RecordingFacts,
    store: FormStore | None = None,
    timer: Callable[[], float] | None = None,
    executor: Executor | None = None,
    deadline: timedelta = timedelta(milliseconds=200),
    memory: bool = True,
    counted: list[str] | None = None,
    behind: Behind | None = None,
) -> FormService:
    """A service over ``definitions`` with memory on ``facts`` (or none: ``memory=False``),
    run inline, with a ticking clock from ``T0`` and instance ids ``fi_1``, ``fi_2``, ..."""
    ids = itertools.count(1)
    part = (
        Memory(
            facts,
            deadline=deadline,
            timer=timer or Timer(),
            executor=executor or Inline(),
            count=counted.append if counted is not None else None,
            behind=behind or Behind(),
        )
        if memory
        else None
    )
    return form_service(
        FormRegistry(definitions),
        store if store is not None else InMemoryFormStore(),
        InProcessDispatcher(),
        clock=TickingClock(T0),
        new_id=lambda: f"fi_{next(ids)}",
        backoff=lambda attempt: None,
        memory=part,
    )


class Talk(Session):
    """One caller's calls (``call-1``, ``call-2``, ...), each one that must succeed."""

    def start(self, form: str, **payload: Any) -> dict[str, Any]:
        return self.ok("form_start", form=form, **payload)

    def fill(self, form: str, **values: Any) -> dict[str, Any]:
        return self.ok("form_fill", form=form, values=values)

    def read(self, form: str, **payload: Any) -> dict[str, Any]:
        return self.ok("form_read", form=form, **payload)

    def revise(self, form: str, **payload: Any) -> dict[str, Any]:
        return self.call("form_revise", form=form, **payload)
