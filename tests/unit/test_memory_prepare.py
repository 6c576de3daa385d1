"""Memory's one-time preparation, and what the recall deadline measures: the fact store's time,
never the loading of memory's code nor the start's own work.

The timers here are memory's own (``Timer``, moved by the test): a slow preparation or a slow
start is one that moves it, so nothing sleeps and nothing depends on the machine.
"""

from __future__ import annotations

import itertools
import threading
from concurrent.futures import Executor, Future
from typing import Any

from forms import FormInstance, FormRegistry, FormService, InMemoryFormStore
from forms.app import memory as metrics
from forms.app.hooks import InProcessDispatcher
from forms.app.memory import Memory
from forms.examples import health_check
from forms.instance import NewCall
from tests.support import T0, TickingClock, form_service
from tests.unit.memory_for_tests import ALICE, DAY, Inline, RecordingFacts, Talk, Timer

BORN = "1990-04-02"


class SlowToPrepare(Memory):
    """Memory whose one-time preparation takes ``seconds`` on its own timer (a cold process
    loading its code), counting how often it ran."""

    def __init__(self, *args: Any, seconds: float, timer: Timer, **kwargs: Any) -> None:
        super().__init__(*args, timer=timer, **kwargs)
        self.seconds, self.clock, self.loads = seconds, timer, 0

    def _load(self) -> None:
        self.loads += 1
        self.clock.advance(self.seconds)
        super()._load()


class SlowToCommit(InMemoryFormStore):
    """A form store whose creating commit takes ``seconds`` on ``timer`` (the start's own
    work, slow on a cold process), the store's other requests as fast as ever."""

    def __init__(self, timer: Timer, seconds: float) -> None:
        super().__init__()
        self.timer, self.seconds = timer, seconds

    def create(self, instance: FormInstance, call: NewCall | None = None) -> None:
        self.timer.advance(self.seconds)
        super().create(instance, call)


def alice_said() -> RecordingFacts:
    facts = RecordingFacts()
    facts.stated("alice", "person.date_of_birth", BORN, at=T0 - 600 * DAY)
    facts.requests.clear()
    return facts


def service(memory: Memory, store: InMemoryFormStore | None = None) -> FormService:
    ids = itertools.count(1)
    return form_service(
        FormRegistry([health_check]),
        store if store is not None else InMemoryFormStore(),
        InProcessDispatcher(),
        clock=TickingClock(T0),
        new_id=lambda: f"fi_{next(ids)}",
        backoff=lambda attempt: None,
        memory=memory,
    )


def born(talk: Talk, instance_id: str) -> Any:
    answer = talk.store.get(instance_id).field("date_of_birth").in_force()
    return answer.value if answer is not None else None


def test_a_slow_first_preparation_does_not_spend_the_recall_deadline() -> None:
    # GIVEN memory whose preparation takes a second on its timer, against a 200 ms deadline
    counted: list[str] = []
    timer = Timer()
    memory = SlowToPrepare(
        alice_said(), seconds=1.0, timer=timer, executor=Inline(), count=counted.append
    )
    talk = Talk(service(memory), ALICE)
    # WHEN alice's first form starts in the process
    first = talk.start("health-check")
    # THEN the preparation ran once, before the deadline's clock: memory filled her birth date
    assert memory.loads == 1
    assert born(talk, first["instance"]) == BORN
    assert metrics.RECALL_TIMEOUT not in counted
    # WHEN a second form starts, in another conversation
    again = Talk(service(memory), ALICE.__class__("alice", "conv-2"))
    second = again.start("health-check")
    # THEN nothing was prepared again, and memory filled it as well
    assert memory.loads == 1
    assert born(again, second["instance"]) == BORN


def test_recording_the_first_answer_prepares_before_its_own_deadline() -> None:
    # GIVEN memory not prepared yet, whose preparation takes a second, and no recall before
    counted: list[str] = []
    timer = Timer()
    facts = alice_said()
    memory = SlowToPrepare(facts, seconds=1.0, timer=timer, executor=Inline(), count=counted.append)
    talk = Talk(service(memory), ALICE)
    # WHEN the first thing memory does in the process is record an answer (a form_fill)
    memory.call("alice", "conv-1", None).remember((), T0)  # nothing to record: no preparation
    assert memory.loads == 0
    talk.start("health-check")
    talk.fill("health-check", weight_kg=71)
    # THEN it was recorded, and the preparation ran once in all
    assert counted.count(metrics.RECORDED) == 1
    assert memory.loads == 1


def test_a_read_in_time_is_used_however_long_the_starts_own_commit_took() -> None:
    # GIVEN a fast fact store, and a form store whose creating commit takes a second (the
    # start's own work on a cold process), both on memory's timer; deadline 200 ms
    counted: list[str] = []
    timer = Timer()
    memory = Memory(alice_said(), timer=timer, executor=Inline(), count=counted.append)
    talk = Talk(service(memory, SlowToCommit(timer, 1.0)), ALICE)
    # WHEN alice starts the form: the read finished long before the call asked for it
    result = talk.start("health-check")
    # THEN the read is used: the deadline measures the store, not the start
    assert born(talk, result["instance"]) == BORN
    assert metrics.RECALL_TIMEOUT not in counted


def test_preparation_runs_once_when_calls_race_for_it() -> None:
    # GIVEN memory whose preparation holds until the test lets it go
    entered, release = threading.Event(), threading.Event()
    loads: list[str] = []

    class Held(Memory):
        def _load(self) -> None:
            loads.append(threading.current_thread().name)
            entered.set()
            release.wait()

    memory = Held(RecordingFacts(), executor=Inline())
    first = threading.Thread(target=memory.prepare, name="first")
    second = threading.Thread(target=memory.prepare, name="second")
    # WHEN two calls prepare at once, the second while the first is still loading
    first.start()
    assert entered.wait(10)
    second.start()
    release.set()
    first.join(10)
    second.join(10)
    # THEN it loaded once, and both came back
    assert loads == ["first"]
    assert not first.is_alive() and not second.is_alive()


def test_a_failing_preparation_costs_memory_nothing_more_than_the_failure() -> None:
    # GIVEN memory whose preparation raises
    class Broken(Memory):
        def _load(self) -> None:
            raise ImportError("a module could not load")

    counted: list[str] = []
    memory = Broken(alice_said(), timer=Timer(), executor=Inline(), count=counted.append)
    talk = Talk(service(memory), ALICE)
    # WHEN alice starts the form / THEN the call lands, and memory still did its work
    result = talk.start("health-check")
    assert result["ok"] is True
    assert born(talk, result["instance"]) == BORN
    assert counted == [metrics.FILLED]


class Refusing(Executor):
    """An executor that records what it is given and runs nothing (it must not be given the
    preparation's work: an executor passed in is the caller's, its threads too)."""

    def __init__(self) -> None:
        self.given: list[object] = []

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
        self.given.append(fn)
        future: Future[Any] = Future()
        future.set_result(None)
        return future


def test_preparation_leaves_an_executor_it_was_given_alone() -> None:
    executor = Refusing()
    memory = Memory(RecordingFacts(), executor=executor)
    memory.prepare()
    assert executor.given == []
