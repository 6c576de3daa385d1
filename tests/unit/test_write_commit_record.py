"""A write tool's call record rides on the commit its attempt's transition made, set in place
(``forms.app.writes``): every attempt hands the store a commit of its own, carrying the call,
and a write that keeps the person's page edits in step hands a copy with its state changed.
Nothing an attempt that lost holds is reused by the next."""

from __future__ import annotations

from typing import Any

from forms import Commit, FormDef, FormInstance, Step, field
from forms.app.conversation import Caller
from tests.support import service_for
from tests.unit.test_render_once import Overtaking


class Seeing(Overtaking):
    """``Overtaking``'s store (a rival write lands before each of the next ``lose`` commits
    that carry a call), noting every commit it is handed that carries one."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[Commit] = []

    def commit(self, commit: Commit) -> FormInstance:
        if commit.call is not None:
            self.seen.append(commit)
        return super().commit(commit)


class Trip(Step, title="Trip"):
    city: str = field("City")
    nights: int = field("Nights")


TRIP = FormDef(id="trip", version=1, title="Trip", steps=[Trip])
AGENT = Caller("alice", "conv-1")


def started() -> tuple[Any, Seeing]:
    store = Seeing()
    service = service_for(TRIP, store=store)
    assert service.call(AGENT, "form_start", "c0", {"form": "trip"})["ok"]
    store.seen.clear()
    return service, store


def test_each_attempt_hands_the_store_a_commit_of_its_own_carrying_the_call() -> None:
    # GIVEN a started trip whose next two commits a rival write beats
    service, store = started()
    store.lose = 2
    # WHEN a fill is sent
    result = service.call(AGENT, "form_fill", "c1", {"form": "trip", "values": {"city": "Faro"}})
    # THEN three attempts each handed the store their own commit, each carrying the call
    assert result["ok"] is True, result
    assert len(store.seen) == 3 and len({id(commit) for commit in store.seen}) == 3
    assert all(commit.call is not None and commit.call.call_id == "c1" for commit in store.seen)
    # AND each attempt's commit expected the version its attempt planned on
    assert [commit.expected_version for commit in store.seen] == [1, 2, 3]
    # AND what is stored is the last attempt's record: a retry answers the same result
    again = service.call(AGENT, "form_fill", "c1", {"form": "trip", "values": {"city": "Faro"}})
    assert again == {**result, "replayed": True}


def test_a_write_by_the_person_carries_its_record_and_its_page_edits() -> None:
    # GIVEN a started trip
    service, store = started()
    instance_id = store.list_conversation("alice", "conv-1")[0].id
    person = Caller("alice", "conv-1", source="user")
    # WHEN the person fills a field (the tools' write path, by ``user``)
    sent = {"form": "trip", "instance": instance_id, "values": {"nights": 3}}
    assert service.call(person, "form_fill", "p1", sent)["ok"] is True
    # THEN the commit carried the call and the field in its page edits
    (commit,) = store.seen
    assert commit.call is not None and commit.call.call_id == "p1"
    assert commit.state.page_edits == ["nights"]
    # AND the agent's next write carries its own call and clears them
    assert service.call(AGENT, "form_fill", "a1", {"form": "trip", "values": {"city": "Faro"}})[
        "ok"
    ]
    last = store.seen[-1]
    assert last.call is not None and last.call.call_id == "a1"
    assert last.state.page_edits == []
