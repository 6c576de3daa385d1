"""An instance's stored size as the in-memory store measures it: to the byte what its state's
JSON takes, without serialising the whole state on every commit (``forms.storage.sizes``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

import forms.storage.sizes
from forms.errors import SizeLimit
from forms.instance import (
    FormInstance,
    HookState,
    InstanceState,
    OutboxEntry,
    RecallOwed,
    Recollection,
    Rejection,
    StepOverride,
)
from forms.marked import Marked
from forms.storage.contract import append_values, make_instance, seeded_log
from forms.storage.memory import InMemoryFormStore
from forms.storage.sizes import check_instance, instance_bytes, state_bytes, text_bytes

WHEN = datetime(2026, 3, 4, 5, 6, 7, 891_011, tzinfo=UTC)
ODD = 'é"\\\n\t\x01\u2028日本 [form: x]'
"""Text that JSON escapes, or writes in more than one byte per character."""


def _full_state() -> InstanceState:
    """A state with something in every part, in text JSON escapes or writes in many bytes."""
    return InstanceState(
        status="completed",
        closed_reason=ODD,
        hooks={
            "field.a.filled": HookState(holds=True, count=3),
            ODD: HookState(holds=True, count=12_345, basis=ODD * 3),
            "form.closed": HookState(),
        },
        override=StepOverride(step=ODD, kind="focus", by="agent"),
        rejections=[Rejection(key="h:1", hook_id="h", message=ODD * 40, at=WHEN)],
        outbox={
            ODD: OutboxEntry(
                key=ODD,
                hook_id="h",
                occurrence=1,
                kind="approval",
                deadline=WHEN,
                created_at=WHEN - timedelta(days=1),
                error=ODD,
                subject={"a": [1, 2.5, None, ODD], ODD: {"x": True}},
            )
        },
        updated_at=datetime(2026, 3, 4, tzinfo=UTC) + timedelta(microseconds=7),
        recalled={
            "weight": Recollection(
                use="offer",
                key=ODD,
                value={"kg": 70},
                shown=ODD,
                entry=0,
                fact_revision=2,
                stated_at=WHEN,
            )
        },
        recall_owed=RecallOwed(since=WHEN, named=(ODD, "b")),
    )


def _instance(state: InstanceState) -> FormInstance:
    return make_instance(
        "inst-é", form_id="intake-日本", state=state, history={ODD: seeded_log(["x"], WHEN)}
    )


def _exact(state: InstanceState) -> int:
    return text_bytes(state.model_dump_json())


@pytest.mark.parametrize(
    "state",
    [InstanceState(updated_at=WHEN), _full_state()],
    ids=["empty", "every-part"],
)
def test_a_states_size_is_its_jsons_to_the_byte_before_and_after_hooks_change(
    state: InstanceState,
) -> None:
    # GIVEN a state as the engine holds it (its hook states in a ``Marked``), measured once
    state = state.model_copy(update={"hooks": Marked(state.hooks)})
    assert state_bytes(state) == _exact(state)
    # WHEN a commit's copy of its hook states replaces one, adds one and re-sets one as it was
    hooks: Marked[HookState] = Marked.copy_of(state.hooks)
    hooks["field.a.filled"] = HookState(holds=False, count=4, basis="d" * 24)
    hooks[ODD + "2"] = HookState(holds=True, count=1)
    for hook_id, hook in list(hooks.items()):
        hooks[hook_id] = hook
    copied = Marked.copy_of(hooks)
    changed = state.model_copy(update={"hooks": copied})
    # THEN it is still measured to the byte, without measuring it all again
    assert copied.size is not None
    assert state_bytes(changed) == _exact(changed)
    # AND a removal drops what was kept, and the state is measured again, to the byte
    del hooks[ODD + "2"]
    assert hooks.size is None
    assert state_bytes(state.model_copy(update={"hooks": hooks})) == _exact(
        state.model_copy(update={"hooks": hooks})
    )
    # AND hook states in a plain dict are measured the same
    plain = state.model_copy(update={"hooks": dict(state.hooks)})
    assert state_bytes(plain) == _exact(plain)


def test_every_kind_of_hook_change_keeps_the_size_exact() -> None:
    # GIVEN a measured state with hook states in a ``Marked``
    hooks: Marked[HookState] = Marked({"form.closed": HookState()})
    state = InstanceState(updated_at=WHEN, hooks=hooks).model_copy(update={"hooks": hooks})
    assert state_bytes(state) == _exact(state)
    # WHEN hooks of every shape of id and state are set, one by one
    ids = ["field.a.filled", "step.x/y.complete", 'q"uote', "back\\slash", "tab\tid", "é", "\x7f"]
    states = [
        HookState(),
        HookState(holds=True, count=1),
        HookState(holds=False, count=10**15),
        HookState(holds=True, count=2, basis="0123456789abcdef01234567"),
        HookState(holds=True, count=3, basis='"é\\\n'),
    ]
    for hook_id in ids:
        for hook in states:
            hooks[hook_id] = hook
            # THEN after each the state is measured to the byte
            assert state_bytes(state) == _exact(state), (hook_id, hook)


def test_changes_over_a_chain_of_copies_are_measured_once_read() -> None:
    # GIVEN a measured state, and a chain of copies of its hook states, each changing some
    state = _full_state()
    state = state.model_copy(update={"hooks": Marked(state.hooks)})
    assert state_bytes(state) == _exact(state)
    first = Marked.copy_of(state.hooks)
    first["field.a.filled"] = HookState(holds=False, count=9)
    first["new"] = HookState(holds=True, count=1)
    second = Marked.copy_of(first)
    second["field.a.filled"] = state.hooks["field.a.filled"]  # back as it was
    second["other"] = HookState(basis="b" * 24)
    # WHEN each is read / THEN each is measured to the byte, the source unchanged
    for hooks in (second, first, state.hooks):
        changed = state.model_copy(update={"hooks": hooks})
        assert state_bytes(changed) == _exact(changed)


@pytest.mark.parametrize(
    "state",
    [InstanceState(updated_at=WHEN), _full_state()],
    ids=["empty", "every-part"],
)
def test_an_instance_is_refused_at_the_same_size_with_its_states_text_or_without(
    state: InstanceState, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN an instance, and its exact stored size
    instance = _instance(state)
    size = instance_bytes(instance, state.model_dump_json())
    assert instance_bytes(instance) == size
    # WHEN the limit is its size / THEN it passes, measured either way
    monkeypatch.setattr(forms.storage.sizes, "ITEM_LIMIT", size)
    check_instance(instance)
    check_instance(instance, state.model_dump_json())
    # WHEN the limit is a byte less / THEN it is refused either way, with the same size
    monkeypatch.setattr(forms.storage.sizes, "ITEM_LIMIT", size - 1)
    with pytest.raises(SizeLimit) as without_text:
        check_instance(instance)
    with pytest.raises(SizeLimit) as with_text:
        check_instance(instance, state.model_dump_json())
    assert without_text.value.size == with_text.value.size == size


def test_a_memory_commit_does_not_serialise_the_whole_state_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN a stored instance with a thousand hook states
    hooks: Marked[HookState] = Marked({f"field.f{n}.filled": HookState() for n in range(1_000)})
    store = InMemoryFormStore()
    store.create(make_instance(state=InstanceState(updated_at=WHEN, hooks=hooks)))
    current = store.get("inst-1")

    # WHEN a commit changes one of them, with serialising a whole state refused
    def whole_state(*args: object, **kwargs: object) -> str:
        raise AssertionError("the whole state was serialised")

    monkeypatch.setattr(InstanceState, "model_dump_json", whole_state)
    changed = Marked.copy_of(current.state.hooks)
    changed["field.f7.filled"] = HookState(holds=True, count=1)
    state = current.state.model_copy(update={"hooks": changed})
    after = store.commit(append_values(current, "name", ["Ada"], WHEN, state=state))
    # THEN it is stored, measured from what changed
    assert store.get("inst-1").state.hooks["field.f7.filled"].count == 1
    monkeypatch.undo()
    assert instance_bytes(after) == instance_bytes(after, after.state.model_dump_json())
