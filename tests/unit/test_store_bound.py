"""The in-memory store's size bound on a commit costs what the commit adds, and refuses
exactly what the full measure refuses.

A commit's write bounds the instance it stores from what the store keeps beside the instance
it was planned on (``forms.storage.memory._Kept``: what the bound counted of its ids and logs)
plus the logs the commit starts (``sizes.keys_bytes_after``), where it joined every id and log
name again. Checked here against the full computation on random instances and commits: the
bound is the one ``_instance_bound`` gives, and a store whose limit sits among the sizes its
commits reach refuses a commit exactly when the exact size (``instance_bytes``) passes it,
through hand-overs that land and hand-overs undone half-way, after which what the store keeps
beside each instance is what it would compute of it afresh.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import forms.storage.sizes
from forms.errors import ConflictError, SizeLimit
from forms.instance import (
    CallRecord,
    Commit,
    FieldChange,
    FormInstance,
    HookState,
    InstanceState,
    NewCall,
    apply_commit,
)
from forms.marked import Marked
from forms.storage.contract_builders import T0, at, call, make_instance, value_revision
from forms.storage.memory import InMemoryFormStore, _places
from forms.storage.sizes import (
    FIXED,
    _instance_bound,
    instance_bytes,
    keys_bytes,
    keys_bytes_after,
    state_bound,
)

NAMES = st.sampled_from(["a", "name", "é", "日本", 'q"\\', "x" * 40, "\u2028", "b"])
"""Field ids: short and long, ASCII and not, with characters JSON escapes."""
TEXTS = st.text(max_size=6) | st.sampled_from(["", "日本語", "x" * 300])


def _state(data: st.DataObject, seconds: int) -> InstanceState:
    hooks = data.draw(st.dictionaries(NAMES, st.builds(HookState, holds=st.booleans())))
    return InstanceState(
        updated_at=at(seconds),
        status=data.draw(st.sampled_from(["open", "completed"])),
        hooks=Marked(hooks) if data.draw(st.booleans()) else hooks,
        closed_reason=data.draw(st.none() | TEXTS),
        page_edits=data.draw(st.lists(NAMES, max_size=2)),
    )


def _commit(data: st.DataObject, instance: FormInstance, seconds: int) -> Commit:
    """A commit on ``instance`` appending one value (of a drawn length) to each of some
    fields, known or new, with a new state."""
    changes = {}
    for field_id in data.draw(st.lists(NAMES, max_size=3, unique=True)):
        log = instance.field(field_id)
        value = data.draw(TEXTS)
        revision = value_revision(value, at(seconds), prev=log.cursor)
        changes[field_id] = FieldChange(append=(revision,), cursor=log.count)
    return Commit(
        instance_id=instance.id,
        expected_version=instance.version,
        fields=changes,
        state=_state(data, seconds),
    )


def _instance(data: st.DataObject, instance_id: str = "inst-1") -> FormInstance:
    made = make_instance(
        instance_id,
        principal=data.draw(st.sampled_from(["alice", "t/ü"])),
        form_id=data.draw(st.sampled_from(["intake", "日本"])),
        state=_state(data, 0),
    )
    for seconds in range(data.draw(st.integers(0, 2))):
        made = apply_commit(made, _commit(data, made, seconds + 1))
    return made.snapshot()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_commits_bound_from_the_stored_instances_keys_is_the_full_bound(
    data: st.DataObject,
) -> None:
    # GIVEN a stored instance and a commit on it
    stored = _instance(data)
    commit = _commit(data, stored, 9)
    # WHEN the commit's bound is made from what was counted of the stored instance
    after = apply_commit(stored, commit)
    keys = keys_bytes_after(
        keys_bytes(stored.__dict__), stored.history, after.history, commit.fields
    )
    # THEN it is the bound of the instance it makes, measured afresh
    assert keys == keys_bytes(after.__dict__)
    assert FIXED + keys + state_bound(after.state.__dict__) == _instance_bound(after)


class _Unmade(NewCall):
    """A call whose record cannot be made: the write that carries it is undone half-way."""

    def record_json(self) -> str:
        raise RuntimeError("the record could not be made")


def _kept_afresh(store: InMemoryFormStore) -> dict[str, Any]:
    """What the store keeps beside each instance, computed afresh from the instance."""
    found = {}
    for instance_id, (instance, *_) in store._kept.items():
        fields = instance.__dict__
        key = (fields["principal"], fields["conversation_id"])
        places = _places(fields, fields["state"].__dict__)
        found[instance_id] = (instance, key, keys_bytes(fields), fields["history"], places)
    return found


def _attempt(store: InMemoryFormStore, data: st.DataObject, seconds: int) -> None:
    """A commit or a hand-over on ``inst-1``, as stored; the stored size is checked against
    the limit whatever happens."""
    current = store.get("inst-1")
    commit = _commit(data, current, seconds)
    exact = instance_bytes(apply_commit(current, commit))
    target = None
    if data.draw(st.integers(0, 4)) == 0:
        target = make_instance(f"inst-t{seconds}", principal=current.principal, created_at=T0)
        if data.draw(st.booleans()):
            record = CallRecord(tool="form_handover", fingerprint="f", result={}, at=T0)
            commit = commit.model_copy(update={"call": _Unmade(call_id="u", record=record)})
    try:
        if target is None:
            store.commit(commit)
        else:
            store.hand_over(commit, target)
    except SizeLimit as refused:  # the source first, then the target
        limit = forms.storage.sizes.ITEM_LIMIT
        assert refused.size == (exact if exact > limit else instance_bytes(target or current))
        assert refused.size > limit
        return
    except RuntimeError:  # the hand-over undone half-way: nothing of it stands
        assert store.get("inst-1") is current
        return
    assert exact <= forms.storage.sizes.ITEM_LIMIT
    assert target is None or instance_bytes(target) <= forms.storage.sizes.ITEM_LIMIT
    assert store.get("inst-1").version == current.version + 1


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_the_store_refuses_a_commit_exactly_when_its_exact_size_passes_the_limit(
    data: st.DataObject,
) -> None:
    # GIVEN a store holding an instance, with a limit among the sizes its commits reach
    store = InMemoryFormStore()
    store.create(_instance(data), call("c-0"))
    limit = instance_bytes(store.get("inst-1")) + data.draw(st.integers(0, 1_500))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(forms.storage.sizes, "ITEM_LIMIT", limit)
        # WHEN commits and hand-overs are tried on it, some too large, some undone
        for seconds in range(10, 10 + data.draw(st.integers(1, 6))):
            _attempt(store, data, seconds)
            # THEN each is refused exactly when its exact size passes the limit, and what the
            # store keeps beside each instance is what it would compute of it afresh
            assert store._kept == _kept_afresh(store)


def test_a_write_planned_on_an_instance_no_longer_held_is_measured_afresh() -> None:
    # GIVEN two commits planned on the same stored instance, the first written
    store = InMemoryFormStore()
    store.create(make_instance())
    stored = store.get("inst-1")
    planned = [
        Commit(
            instance_id="inst-1",
            expected_version=0,
            fields={name: FieldChange(append=(value_revision("x" * size, at(1)),), cursor=0)},
            state=stored.state.model_copy(update={"updated_at": at(1)}),
        )
        for name, size in (("a", 1), ("b", 900))
    ]
    store.commit(planned[0])
    late = apply_commit(stored, planned[1])
    # WHEN the second is written on the instance it was planned on, past the limit
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(forms.storage.sizes, "ITEM_LIMIT", instance_bytes(late) - 1)
        # THEN its size is its own, measured afresh (not from what is held beside the first)
        with pytest.raises(SizeLimit) as refused:
            store._write(planned[1], stored, late, None)
    assert refused.value.size == instance_bytes(late)
    # WHEN it fits / THEN it loses the race, and the store keeps what it held
    with pytest.raises(ConflictError):
        store._write(planned[1], stored, late, None)
    assert store._kept == _kept_afresh(store)
