"""The builder service: a builder agent's tool calls on durable drafts (``forms.app.builder``).

One test per requirement: a form built entirely through ``call`` and published, replay by
tool-call id, a conflicting reuse of an id, Stop (cancelled) and its replay, undo and redo over
the edit log, a lost compare-and-set planned again, busy, tenants apart, per-tenant limits,
bad input as data, and the 1 read + 1 write budget of a call.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from forms.app.builder import CANCELLED, BuilderService, NotPublishable
from forms.app.catalog import Catalog
from forms.documents import Limits, Selection
from forms.errors import NotFound, UnknownForm
from forms.examples.travel_claim import travel_claim
from forms.instance import CallRecord
from forms.registry import FormRegistry
from forms.storage.documents import InMemoryFormDocumentStore, PublishConflict
from forms.storage.drafts import (
    Draft,
    DraftCommit,
    DraftStore,
    DraftSummary,
    EditEntry,
    InMemoryDraftStore,
)
from tests.support import TickingClock, builder_for

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
ANA = "acme/ana"
CY = "acme/cy"
BO = "globex/bo"
FORM = "contact-us"
CHAT = "chat-1"


class Counting(DraftStore):
    """A draft store that counts what a call asks of it, and can let another writer commit
    first (``race``: how many of the next commits lose to an edit landing just before)."""

    def __init__(self, inner: DraftStore) -> None:
        self.inner = inner
        self.asked: list[str] = []
        self.race = 0

    def take(self) -> list[str]:
        asked, self.asked = self.asked, []
        return asked

    def get(self, tenant: str, form_id: str) -> Draft:
        self.asked.append("get")
        return self.inner.get(tenant, form_id)

    def commit(self, commit: DraftCommit) -> Draft:
        self.asked.append("commit")
        if self.race:
            self.race -= 1
            self._another_edit(commit.tenant, commit.form_id)
        return self.inner.commit(commit)

    def _another_edit(self, tenant: str, form_id: str) -> None:
        """Another container adds an "Email" field to the draft."""
        now = self.inner.get(tenant, form_id)
        other = builder_for(self.inner, catalog(), clock=TickingClock(T0))
        call_id = f"other-{now.version}"
        assert other.call(ANA, form_id, "add_field", call_id, EMAIL)["ok"]

    def history(self, tenant: str, form_id: str) -> list[EditEntry]:
        self.asked.append("history")
        return self.inner.history(tenant, form_id)

    def list_drafts(self, tenant: str) -> list[DraftSummary]:
        self.asked.append("list")
        return self.inner.list_drafts(tenant)

    def record_call(self, tenant: str, form_id: str, call: Any) -> None:
        self.asked.append("record_call")
        self.inner.record_call(tenant, form_id, call)

    def get_call(self, tenant: str, form_id: str, call_id: str) -> CallRecord | None:
        self.asked.append("get_call")
        return self.inner.get_call(tenant, form_id, call_id)


EMAIL = {"field": {"kind": "email", "label": "Email"}}


def catalog() -> Catalog:
    return Catalog(FormRegistry([travel_claim]), InMemoryFormDocumentStore(), timer=lambda: 0.0)


@pytest.fixture
def store() -> Counting:
    return Counting(InMemoryDraftStore())


@pytest.fixture
def forms() -> Catalog:
    return catalog()


@pytest.fixture
def builder(store: Counting, forms: Catalog) -> BuilderService:
    return builder_for(store, forms, clock=TickingClock(T0))


class Turn:
    """A builder agent's calls on one draft, each with a fresh tool-call id."""

    def __init__(self, builder: BuilderService, principal: str = ANA, form_id: str = FORM):
        self.builder = builder
        self.principal = principal
        self.form_id = form_id
        self.n = 0

    def __call__(self, tool: str, selection: Any = None, **payload: Any) -> dict[str, Any]:
        self.n += 1
        return self.builder.call(
            self.principal,
            self.form_id,
            tool,
            f"call-{self.n}",
            payload,
            selection=selection,
            chat=CHAT,
        )


def started(builder: BuilderService, principal: str = ANA) -> Turn:
    turn = Turn(builder, principal)
    made = turn("create_form", title="Contact us", steps=[{"title": "Contact"}])
    assert made == {"ok": True, "summary": made["summary"]}, made
    return turn


# ---------------------------------------------------------------------- a whole build


def test_a_small_form_is_built_through_calls_published_and_served(
    builder: BuilderService, forms: Catalog
) -> None:
    # GIVEN a builder agent making a contact form in small calls
    turn = started(builder)
    assert turn("add_field", field={"kind": "short_text", "label": "Full name"})["ok"]
    added = turn("add_field", **EMAIL)
    assert added["summary"] == 'Added field "email" (email) to step "Contact".'
    # WHEN it adds a field, inspects it and gates it in the same turn
    assert turn("add_field", field={"kind": "boolean", "label": "Call me back"})["ok"]
    assert turn("add_field", field={"kind": "phone", "label": "Phone"})["ok"]
    seen = turn("inspect_form", scope="field", id="phone")
    assert (seen["ok"], seen["step"], seen["position"]) == (True, "contact", 3)
    gated = turn(
        "set_conditional_logic",
        target="field",
        id="phone",
        when={"field": "call_me_back", "op": "equals", "value": "true"},
    )
    assert gated["ok"], gated
    # AND makes the selected field optional, sent as a model-typical string
    optional = turn("update_field", selection={"field": "email"}, updates={"required": "no"})
    assert optional["notes"] == {
        "coerced": [{"at": "updates.required", "sent": "no", "stored": False}]
    }
    # THEN the draft holds it all, with an edit log of every applied call
    view = builder.draft(ANA, FORM)
    assert [i.id for i in view.document.steps[0].items] == [
        "full_name",
        "email",
        "call_me_back",
        "phone",
    ]
    assert len(view.log) == 7 and view.log[-1].in_force and view.log[-1].by == ANA
    assert [line.call_id for line in view.log] == [f"call-{n}" for n in (1, 2, 3, 4, 5, 7, 8)]
    assert view.as_json()["undo"] == optional["summary"]
    # AND a person publishes it, and the tenant's next call can start it
    published = builder.publish(CY, FORM)
    assert (published.version, published.by) == (1, CY)
    form = forms.latest(FORM, ANA)
    assert list(form.fields) == ["full_name", "email", "call_me_back", "phone"]
    with pytest.raises(UnknownForm):
        forms.latest(FORM, BO)


def test_inspect_form_reads_the_live_draft_and_records_nothing(
    builder: BuilderService, store: Counting
) -> None:
    turn = started(builder)
    store.take()
    outline = builder.call(ANA, FORM, "inspect_form", "look", {})
    form = outline["form"]
    assert outline["ok"] and isinstance(form, dict) and form["title"] == "Contact us"
    assert store.take() == ["get"]
    assert store.inner.get_call("acme", FORM, "look") is None
    assert turn("inspect_form", scope="step")["step"]["id"] == "contact"  # the only step
    none_yet = builder.call(ANA, "nothing-here", "inspect_form", "look-2", {"scope": "form"})
    assert none_yet["error"] == "no_draft"


# ---------------------------------------------------------------------- idempotency


def test_a_replayed_call_returns_its_first_result_and_applies_nothing(
    builder: BuilderService,
) -> None:
    started(builder)
    first = builder.call(ANA, FORM, "add_field", "add-email", EMAIL, chat=CHAT)
    before = builder.draft(ANA, FORM).draft
    # WHEN the stream replays the same call (same id, same input)
    again = builder.call(ANA, FORM, "add_field", "add-email", EMAIL, chat=CHAT)
    # THEN it gets the first result, marked, and the draft has one email field
    assert again == {**first, "replayed": True}
    after = builder.draft(ANA, FORM)
    assert after.draft == before
    assert [i.id for i in after.document.steps[0].items] == ["email"]


def test_an_id_reused_for_other_input_is_a_conflict(builder: BuilderService) -> None:
    started(builder)
    builder.call(ANA, FORM, "add_field", "c1", EMAIL, chat=CHAT)
    other = builder.call(
        ANA, FORM, "add_field", "c1", {"field": {"kind": "url", "label": "Site"}}, chat=CHAT
    )
    assert other["ok"] is False and other["error"] == "tool_call_conflict"
    moved = builder.call(
        ANA, FORM, "add_field", "c1", EMAIL, selection={"step": "contact"}, chat=CHAT
    )
    assert moved["error"] == "tool_call_conflict"  # the selection is part of the call
    assert [i.id for i in builder.draft(ANA, FORM).document.steps[0].items] == ["email"]


def test_a_refusal_is_recorded_and_replayed_as_it_was(builder: BuilderService) -> None:
    started(builder)
    payload = {"step": "details", "field": {"kind": "url", "label": "Site"}}
    refused = builder.call(ANA, FORM, "add_field", "c1", payload, chat=CHAT)
    assert (refused["ok"], refused["error"]) == (False, "not_found")
    assert builder.call(ANA, FORM, "add_step", "c2", {"title": "Details"}, chat=CHAT)["ok"]
    # a retry under the id gets the first answer, even though it would apply now
    assert builder.call(ANA, FORM, "add_field", "c1", payload, chat=CHAT) == {
        **refused,
        "replayed": True,
    }
    assert builder.draft(ANA, FORM).document.steps[1].items == []


def test_tool_call_ids_are_the_chats_that_made_them(builder: BuilderService) -> None:
    started(builder)
    # GIVEN a chat whose add_field went out as call_0
    first = builder.call(ANA, FORM, "add_field", "call_0", EMAIL, chat="chat-a")
    # WHEN another chat on the draft sends call_0, with the same input and then with other
    same = builder.call(ANA, FORM, "add_field", "call_0", EMAIL, chat="chat-b")
    site = {"field": {"kind": "url", "label": "Site"}}
    other = builder.call(ANA, FORM, "add_field", "call_0", site, chat="chat-c")
    # THEN both applied, as new calls of their chats
    assert (first["ok"], same["ok"], other["ok"]) == (True, True, True), (same, other)
    assert "replayed" not in same and "replayed" not in other
    items = [i.id for i in builder.draft(ANA, FORM).document.steps[0].items]
    assert items == ["email", "email_2", "site"]
    # AND within its own chat the id is still a replay; the edit log keeps the id as sent
    assert builder.call(ANA, FORM, "add_field", "call_0", EMAIL, chat="chat-b") == {
        **same,
        "replayed": True,
    }
    assert [line.call_id for line in builder.draft(ANA, FORM).log[-3:]] == ["call_0"] * 3


def test_a_call_without_a_chat_is_recorded_nowhere(builder: BuilderService) -> None:
    started(builder)
    # WHEN a call without a chat is sent twice under one id
    first = builder.call(ANA, FORM, "add_field", "call_0", EMAIL)
    again = builder.call(ANA, FORM, "add_field", "call_0", EMAIL)
    # THEN each is answered with what it did: it is never taken for another call
    assert first["summary"] == 'Added field "email" (email) to step "Contact".'
    assert again["summary"] == 'Added field "email_2" (email) to step "Contact".'
    assert builder.store.get_call("acme", FORM, "call_0") is None
    # AND a chat id is checked as an id is
    bad = builder.call(ANA, FORM, "add_field", "c2", EMAIL, chat="a chat/1")
    assert (bad["ok"], bad["error"]) == (False, "bad_request")
    assert "chat_id" in str(bad["message"])


# ---------------------------------------------------------------------- Stop


def test_a_cancelled_call_records_cancelled_and_a_replay_gets_the_same(
    builder: BuilderService, store: Counting
) -> None:
    started(builder)
    version = builder.draft(ANA, FORM).draft.version
    # WHEN the person pressed Stop while the model's add_field was on its way
    stopped = builder.call(ANA, FORM, "add_field", "c9", EMAIL, cancelled=True, chat=CHAT)
    # THEN the model loop gets an answer, and nothing was applied
    assert stopped == CANCELLED
    assert "nothing was applied" in str(stopped["message"])
    assert builder.draft(ANA, FORM).draft.version == version
    # AND a later replay of that id (the stream resumed) gets the same answer, applying nothing
    assert builder.call(ANA, FORM, "add_field", "c9", EMAIL, chat=CHAT) == {
        **CANCELLED,
        "replayed": True,
    }
    assert builder.draft(ANA, FORM).draft.version == version
    # AND a new call applies as usual
    assert builder.call(ANA, FORM, "add_field", "c10", EMAIL, chat=CHAT)["ok"]


def test_a_call_cancelled_after_it_applied_keeps_its_first_answer(
    builder: BuilderService,
) -> None:
    started(builder)
    applied = builder.call(ANA, FORM, "add_field", "c1", EMAIL, chat=CHAT)
    assert builder.call(ANA, FORM, "add_field", "c1", EMAIL, cancelled=True, chat=CHAT) == {
        **applied,
        "replayed": True,
    }


# ---------------------------------------------------------------------- undo and redo


def test_undo_and_redo_move_over_the_edit_log_and_lose_nothing(builder: BuilderService) -> None:
    turn = started(builder)
    assert turn("undo_edit")["error"] == "nothing_to_undo"
    turn("add_field", **EMAIL)
    turn("add_field", field={"kind": "url", "label": "Site"})
    # WHEN the last edit is undone
    undone = turn("undo_edit")
    assert undone == {"ok": True, "summary": 'Undid: Added field "site" (url) to step "Contact".'}
    assert [i.id for i in builder.draft(ANA, FORM).document.steps[0].items] == ["email"]
    # THEN redo brings it back, and says what
    redone = turn("redo_edit")
    assert redone["summary"].startswith('Redid: Added field "site"')
    assert [i.id for i in builder.draft(ANA, FORM).document.steps[0].items] == ["email", "site"]
    assert turn("redo_edit")["error"] == "nothing_to_redo"
    # AND an edit after an undo branches; the undone edit stays in the log
    turn("undo_edit")
    turn("add_field", field={"kind": "phone", "label": "Phone"})
    view = builder.draft(ANA, FORM)
    assert [i.id for i in view.document.steps[0].items] == ["email", "phone"]
    assert [line.summary.split('"')[1] for line in view.log[1:]] == ["email", "site", "phone"]
    assert [line.prev for line in view.log] == [-1, 0, 1, 1]
    # AND a replayed undo undoes nothing more
    back = builder.call(ANA, FORM, "undo_edit", "u1", {}, chat=CHAT)
    assert builder.call(ANA, FORM, "undo_edit", "u1", {}, chat=CHAT) == {**back, "replayed": True}
    assert [i.id for i in builder.draft(ANA, FORM).document.steps[0].items] == ["email"]


# ---------------------------------------------------------------------- concurrency


def test_a_lost_compare_and_set_is_planned_again_on_the_current_draft(
    builder: BuilderService, store: Counting
) -> None:
    started(builder)
    # GIVEN another container adds "email" between this call's read and its write
    store.race = 1
    mine = builder.call(ANA, FORM, "add_field", "mine", EMAIL)
    # THEN this call was planned again on the draft with that field, and both landed
    assert mine["ok"], mine
    assert mine["summary"] == 'Added field "email_2" (email) to step "Contact".'
    items = builder.draft(ANA, FORM).document.steps[0].items
    assert [i.id for i in items] == ["email", "email_2"]


def test_a_call_that_keeps_losing_is_busy_and_records_nothing(store: Counting) -> None:
    waits: list[int] = []
    builder = builder_for(
        store, catalog(), clock=TickingClock(T0), max_conflict_retries=2, backoff=waits.append
    )
    started(builder)
    store.race = 3
    busy = builder.call(ANA, FORM, "add_field", "mine", {"field": {"kind": "url", "label": "S"}})
    assert (busy["ok"], busy["error"]) == (False, "busy")
    assert waits == [0, 1]
    assert store.inner.get_call("acme", FORM, "mine") is None
    # AND sending the same call again applies it
    assert builder.call(ANA, FORM, "add_field", "mine", {"field": {"kind": "url", "label": "S"}})[
        "ok"
    ]


def test_a_call_costs_one_read_and_one_write(builder: BuilderService, store: Counting) -> None:
    started(builder)
    store.take()
    builder.call(ANA, FORM, "add_field", "c1", EMAIL, chat=CHAT)
    assert store.take() == ["get", "commit"]
    builder.call(ANA, FORM, "add_field", "c1", EMAIL, chat=CHAT)  # replayed: found by the write
    assert store.take() == ["get", "commit"]
    builder.call(ANA, FORM, "delete_step", "c2", {}, chat=CHAT)  # refused: recorded alone
    assert store.take() == ["get", "record_call"]
    builder.call(ANA, FORM, "undo_edit", "c3", {}, chat=CHAT)
    assert store.take() == ["get", "commit"]


# ---------------------------------------------------------------------- tenants and limits


def test_tenants_are_apart(builder: BuilderService) -> None:
    started(builder)
    builder.call(ANA, FORM, "add_field", "c1", EMAIL)
    # another tenant: the draft is not there, exactly as a missing one
    with pytest.raises(NotFound):
        builder.draft(BO, FORM)
    with pytest.raises(NotFound):
        builder.publish(BO, FORM)
    assert builder.drafts(BO) == []
    assert builder.call(BO, FORM, "inspect_form", "x", {})["error"] == "no_draft"
    # AND the same form id and call id there are its own
    theirs = builder.call(BO, FORM, "create_form", "c1", {"title": "Theirs"})
    assert theirs["ok"] and "replayed" not in theirs
    assert builder.draft(BO, FORM).document.title == "Theirs"
    assert builder.draft(ANA, FORM).document.title == "Contact us"
    assert [(d.form_id, d.title) for d in builder.drafts(ANA)] == [(FORM, "Contact us")]


def test_plan_limits_are_per_tenant(store: Counting) -> None:
    def limits(tenant: str) -> Limits:
        return Limits(max_steps=5, max_fields=1) if tenant == "acme" else Limits()

    builder = builder_for(store, catalog(), clock=TickingClock(T0), limits=limits)
    turn = started(builder)
    assert turn("add_field", **EMAIL)["ok"]
    over = turn("add_field", field={"kind": "url", "label": "Site"})
    assert (over["ok"], over["error"]) == (False, "plan_limit")
    theirs = started(builder, BO)
    assert (
        theirs("add_field", **EMAIL)["ok"]
        and theirs("add_field", field={"kind": "url", "label": "S"})["ok"]
    )


# ---------------------------------------------------------------------- the form's id


def test_the_draft_is_the_form_its_calls_name(builder: BuilderService) -> None:
    made = builder.call(ANA, "job-application", "create_form", "c1", {"title": "Apply now"})
    assert made["ok"]
    assert builder.draft(ANA, "job-application").document.id == "job-application"
    other = builder.call(ANA, "intake", "create_form", "c2", {"title": "X", "id": "not-intake"})
    message = other["message"]
    assert other["error"] == "invalid" and isinstance(message, str) and "'intake'" in message
    with pytest.raises(NotFound):
        builder.draft(ANA, "intake")


# ---------------------------------------------------------------------- publishing


def test_a_draft_that_does_not_compile_is_not_published_and_says_why(
    builder: BuilderService, forms: Catalog
) -> None:
    started(builder)  # one step, no fields
    with pytest.raises(NotPublishable) as refused:
        builder.publish(CY, FORM)
    assert refused.value.problems and refused.value.code == "not_publishable"
    assert all(p in refused.value.message for p in refused.value.problems)
    with pytest.raises(UnknownForm):
        forms.latest(FORM, ANA)


def test_not_publishable_is_a_tool_error_of_forms_errors_importable_where_it_was() -> None:
    from forms import errors
    from forms.app import builder, builder_tools

    # THEN it is one class, with the other tool errors, and the shells' imports still hold
    assert builder.NotPublishable is builder_tools.NotPublishable is errors.NotPublishable
    assert issubclass(errors.NotPublishable, errors.ToolError)
    refused = errors.NotPublishable("intake", ["step 'you' has no fields"])
    assert refused.problems == ("step 'you' has no fields",)
    assert refused.message == (
        "The draft 'intake' cannot be published yet (1 problem): step 'you' has no fields"
    )


def test_publishing_again_expects_the_version_the_publisher_saw(builder: BuilderService) -> None:
    started(builder)
    builder.call(ANA, FORM, "add_field", "c1", EMAIL)
    assert builder.publish(CY, FORM).version == 1
    builder.call(ANA, FORM, "update_field", "c2", {"field": "email", "updates": {"label": "Mail"}})
    assert builder.publish(CY, FORM, expected=1).version == 2
    with pytest.raises(PublishConflict):
        builder.publish(CY, FORM, expected=1)


# ---------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("form_id", "tool", "call_id", "payload", "selection", "error"),
    [
        ("Not An Id", "add_field", "c1", EMAIL, None, "bad_request"),
        (FORM, "add_field", "", EMAIL, None, "bad_request"),
        (FORM, "add_field", "c1", ["not", "an", "object"], None, "invalid"),
        (FORM, "paint_it", "c1", {}, None, "unknown_tool"),
        (FORM, "add_field", "c1", EMAIL, {"fields": "email"}, "invalid"),
        (FORM, "undo_edit", "c1", {"steps": 2}, None, "invalid"),
        (FORM, "add_field", "c1", {"field": {"label": 10**5000}}, None, "bad_request"),
    ],
)
def test_bad_input_comes_back_as_data(
    builder: BuilderService,
    form_id: str,
    tool: str,
    call_id: str,
    payload: Any,
    selection: Any,
    error: str | None,
) -> None:
    started(builder)
    result = builder.call(ANA, form_id, tool, call_id, payload, selection=selection)
    assert result["ok"] is False
    if error is not None:
        assert result["error"] == error, result


def test_a_selection_object_and_its_json_are_the_same_call(builder: BuilderService) -> None:
    started(builder)
    builder.call(ANA, FORM, "add_field", "c1", EMAIL, chat=CHAT)
    updates = {"updates": {"required": False}}
    first = builder.call(
        ANA, FORM, "update_field", "c2", updates, selection=Selection(field="email"), chat=CHAT
    )
    again = builder.call(
        ANA, FORM, "update_field", "c2", updates, selection={"field": "email"}, chat=CHAT
    )
    assert again == {**first, "replayed": True}


def test_the_builder_checks_fact_keys_against_the_deployments_vocabulary(store: Counting) -> None:
    from typing import Literal

    from forms.memory import Vocabulary, fact_key

    # GIVEN a deployment whose vocabulary adds a blood type key, and one with Formwork's alone
    blood = Vocabulary.default().extended(
        [fact_key("person.blood_type", "Blood type", Literal["A", "B", "AB", "O"], "never")]
    )
    extended = Catalog(
        FormRegistry([travel_claim], vocabulary=blood),
        InMemoryFormDocumentStore(),
        timer=lambda: 0.0,
    )
    field: dict[str, Any] = {
        "kind": "single_choice",
        "id": "blood",
        "label": "Blood type",
        "memory": "person.blood_type",
    }
    field["options"] = [{"value": v} for v in ("A", "B", "AB", "O")]
    # WHEN a builder sets the deployment's key on a field in each
    added = started(builder_for(store, extended, clock=TickingClock(T0)))(
        "add_field", step="contact", field=field
    )
    refused = started(builder_for(InMemoryDraftStore(), catalog(), clock=TickingClock(T0)))(
        "add_field", step="contact", field=field
    )
    # THEN the edit takes it where publishing would, and refuses it where publishing would
    assert added["ok"], added
    assert refused["ok"] is False and "person.blood_type" in refused["message"]
