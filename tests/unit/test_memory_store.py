"""The in-memory store: the storage contract, plus what is particular to keeping it in a dict."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from forms import FormInstance, compile_form
from forms.engine import Transition
from forms.instance import apply_commit
from forms.storage import FormStore, InMemoryFormStore
from forms.storage.contract import (
    T0,
    FormStoreContract,
    append_values,
    at,
    make_instance,
    seeded_log,
)
from forms.storage.outbox_contract import OutboxScanContract, Stores
from tests.unit.forms_for_tests import fill, filled, trip_form


class TestInMemoryFormStore(FormStoreContract):
    @pytest.fixture
    def store(self) -> FormStore:
        return InMemoryFormStore()


class TestInMemoryOutboxScan(OutboxScanContract):
    @pytest.fixture
    def stores(self) -> Stores:
        store = InMemoryFormStore(page_size=1)
        return store, store


def test_commit_shares_untouched_logs_instead_of_copying_them() -> None:
    # GIVEN an instance with a long log on one field
    store = InMemoryFormStore()
    store.create(make_instance(history={"big": seeded_log(list(range(10_000)), T0)}))
    before = store.get("inst-1")
    # WHEN a commit touches only another field
    after = store.commit(append_values(before, "small", ["x"], at(1)))
    # THEN both snapshots share the very same immutable log: nothing was copied
    assert after.history["big"].revisions is before.history["big"].revisions
    assert store.get("inst-1").history["big"].revisions is before.history["big"].revisions


def test_reads_share_one_read_only_instance() -> None:
    # GIVEN a stored instance
    store = InMemoryFormStore()
    store.create(make_instance())
    # WHEN it is read twice
    first, second = store.get("inst-1"), store.get("inst-1")
    # THEN both reads are the instance the store keeps, not copies of it
    assert first is second
    # AND nothing in it can be changed: every container and the model refuse
    for change in (
        first.history.clear,
        first.state.outbox.clear,
        first.state.hooks.clear,
        first.state.recalled.clear,
        first.state.rejections.clear,
        first.state.page_edits.clear,
    ):
        with pytest.raises(TypeError):
            change()
    with pytest.raises(ValidationError):
        first.version = 5  # type: ignore[misc]


def _planned_on_a_read() -> tuple[InMemoryFormStore, FormInstance, Transition]:
    """A store holding a trip instance, and a fill planned on a read of it."""
    form = compile_form(trip_form())
    store = InMemoryFormStore()
    store.create(filled(form, {"name": "Ann"}))
    read = store.get("fi_1")
    return store, read, fill(form, read, {"age": 30}, at(1))


def test_a_commit_the_engine_planned_on_what_is_stored_is_applied_once() -> None:
    # GIVEN a fill planned by the engine on what the store holds
    store, read, step = _planned_on_a_read()
    # WHEN it is committed
    result = store.commit(step.commit)
    # THEN the store hands back the instance the engine built (not applied again, nor
    # copied: sealed where it stands), and keeps that very instance
    assert result is step.after
    kept = store.get("fi_1")
    assert kept is result
    assert kept == apply_commit(read, step.commit)
    # AND none of it can be changed any more
    with pytest.raises(TypeError):
        result.state.hooks.clear()
    with pytest.raises(TypeError):
        result.history.clear()


def test_a_planned_commit_on_another_instance_is_applied_to_what_is_stored() -> None:
    # GIVEN a fill planned on a copy of the stored instance whose principal was changed
    form = compile_form(trip_form())
    store = InMemoryFormStore()
    store.create(filled(form, {"name": "Ann"}))
    read = store.get("fi_1")
    other = read.model_copy(update={"principal": "mallory"})
    step = fill(form, other, {"age": 30}, at(1))
    # WHEN it is committed
    result = store.commit(step.commit)
    # THEN it is applied to the stored instance: the change lands, the principal stays
    assert result is not step.after
    assert result.principal == "alice"
    assert result.field("age").in_force() is not None
    assert store.get("fi_1") == result


def test_a_planned_commit_whose_state_was_replaced_is_applied_with_that_state() -> None:
    # GIVEN a planned fill whose commit then gets another state
    store, _, step = _planned_on_a_read()
    state = step.commit.state.model_copy(update={"status": "abandoned"})
    # WHEN that commit is stored
    result = store.commit(step.commit.model_copy(update={"state": state}))
    # THEN the store keeps the commit's state, not the one the engine planned
    assert result.state.status == "abandoned"
    assert store.get("fi_1").state.status == "abandoned"
    assert result.field("age") == step.after.field("age")
