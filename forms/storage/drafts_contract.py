"""The contract every ``DraftStore`` adapter must pass (pytest; subclass it and give a
``drafts`` fixture). ``tests/unit/test_draft_store.py`` runs it on the in-memory adapter,
``tests/integration/test_dynamodb_drafts.py`` on DynamoDB. One test per promise of the port."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from forms.documents.model import FormDocument
from forms.errors import CallRecorded, NotFound, SizeLimit
from forms.instance import CallRecord, NewCall
from forms.storage.drafts import Draft, DraftCommit, DraftConflict, DraftStore, EditEntry, Move
from forms.storage.races import landed
from forms.storage.sizes import ITEM_LIMIT

T0 = datetime(2026, 1, 1, tzinfo=UTC)
ANA = "acme/ana"


def document(fields: int = 0, title: str = "Intake", form_id: str = "intake") -> FormDocument:
    """A draft's document: one step of ``fields`` short-text fields."""
    items: list[dict[str, Any]] = [
        {"kind": "short_text", "id": f"f{n}", "label": f"Field {n}"} for n in range(fields)
    ]
    return FormDocument.model_validate(
        {"id": form_id, "title": title, "steps": [{"id": "s", "title": "S", "items": items}]}
    )


def bulky(fields: int) -> FormDocument:
    """A document of ``fields`` fields with 2,000-character help texts: about 2.2 KB each, so
    160 pass ``ITEM_LIMIT`` and 150 stay below it."""
    items: list[dict[str, Any]] = [
        {"kind": "short_text", "id": f"f{n}", "label": f"Field {n}", "help": "h" * 2_000}
        for n in range(fields)
    ]
    return FormDocument.model_validate(
        {"id": "intake", "title": "Intake", "steps": [{"id": "s", "title": "S", "items": items}]}
    )


def call(call_id: str, result: str = "done") -> NewCall:
    record = CallRecord(tool="add_field", fingerprint="f" + call_id, result={"r": result}, at=T0)
    return NewCall(call_id=call_id, record=record)


def edit(
    draft: Draft | None,
    doc: FormDocument,
    *,
    tenant: str = "acme",
    form_id: str = "intake",
    call_id: str | None = None,
    expected: int | None = None,
    recorded: NewCall | None = None,
) -> DraftCommit:
    """The commit of one edit on top of ``draft`` (None: a new draft)."""
    version = draft.version if draft is not None else 0
    at = T0 + timedelta(minutes=version)
    entry = EditEntry(
        tool="add_field",
        call_id=call_id or f"call-{version}",
        by=ANA,
        at=at,
        summary=f"Edit {version + 1}.",
        document=doc,
        prev=draft.cursor if draft is not None else -1,
    )
    return DraftCommit(
        tenant,
        form_id,
        version if expected is None else expected,
        ANA,
        at,
        edit=entry,
        call=recorded,
    )


def move(draft: Draft, way: Move, recorded: NewCall | None = None) -> DraftCommit:
    return DraftCommit(draft.tenant, draft.form_id, draft.version, ANA, T0, move=way, call=recorded)


def fields(draft: Draft) -> int:
    return len(draft.document.steps[0].items)


class DraftStoreContract:
    @pytest.fixture
    def drafts(self) -> DraftStore:
        raise NotImplementedError

    def built(self, drafts: DraftStore, edits: int, tenant: str = "acme") -> Draft:
        """A draft after ``edits`` edits, the n-th leaving n - 1 fields."""
        draft: Draft | None = None
        for n in range(edits):
            draft = drafts.commit(edit(draft, document(n), tenant=tenant))
        assert draft is not None
        return draft

    # ------------------------------------------------------------------ reading

    def test_a_missing_draft_is_not_found_and_lists_nothing(self, drafts: DraftStore) -> None:
        with pytest.raises(NotFound):
            drafts.get("acme", "intake")
        with pytest.raises(NotFound):
            drafts.history("acme", "intake")
        assert drafts.list_drafts("acme") == []
        assert drafts.get_call("acme", "intake", "c1") is None

    def test_a_first_edit_starts_the_draft_and_reads_back(self, drafts: DraftStore) -> None:
        stored = drafts.commit(edit(None, document(1), call_id="c1"))
        read = drafts.get("acme", "intake")
        assert read == stored
        assert (read.version, read.count, read.cursor, read.redo) == (1, 1, 0, ())
        assert read.document == document(1)
        assert (read.current.tool, read.current.call_id, read.current.by) == (
            "add_field",
            "c1",
            ANA,
        )
        assert (read.current.summary, read.current.at, read.current.prev) == ("Edit 1.", T0, -1)
        assert (read.changed_by, read.changed_at) == (ANA, T0)
        assert (read.undo_target, read.redo_target) == (None, None)
        [line] = drafts.list_drafts("acme")
        assert (line.form_id, line.title, line.version, line.edits) == ("intake", "Intake", 1, 1)

    # ------------------------------------------------------------------ 1. history only grows

    def test_each_edit_appends_on_top_of_the_one_in_force(self, drafts: DraftStore) -> None:
        draft = self.built(drafts, 3)
        assert (draft.version, draft.count, draft.cursor, fields(draft)) == (3, 3, 2, 2)
        log = drafts.history("acme", "intake")
        assert [len(e.document.steps[0].items) for e in log] == [0, 1, 2]
        assert [e.prev for e in log] == [-1, 0, 1]
        assert [e.call_id for e in log] == ["call-0", "call-1", "call-2"]

    def test_undo_moves_to_prev_and_redo_back_losing_nothing(self, drafts: DraftStore) -> None:
        draft = self.built(drafts, 3)
        undone = drafts.commit(move(draft, "undo"))
        assert (undone.cursor, fields(undone), undone.version, undone.count) == (1, 1, 4, 3)
        assert (undone.undo_target, undone.redo_target) == (0, 2)
        twice = drafts.commit(move(undone, "undo"))
        assert (twice.cursor, twice.undo_target, twice.redo_target) == (0, None, 1)
        assert [step.summary for step in twice.redo] == ["Edit 2.", "Edit 3."]  # no log read
        again = drafts.commit(move(twice, "redo"))
        assert (again.cursor, again.redo_target, fields(again)) == (1, 2, 1)
        redone = drafts.commit(move(again, "redo"))
        assert (redone.cursor, redone.redo_target, fields(redone)) == (2, None, 2)
        assert drafts.get("acme", "intake") == redone
        assert len(drafts.history("acme", "intake")) == 3

    def test_an_edit_after_undo_branches_and_redo_follows_the_newest(
        self, drafts: DraftStore
    ) -> None:
        draft = drafts.commit(move(self.built(drafts, 3), "undo"))  # back on entry 1
        branched = drafts.commit(edit(draft, document(5)))
        assert (branched.cursor, branched.count, branched.current.prev, branched.redo) == (
            3,
            4,
            1,
            (),
        )
        back = drafts.commit(move(branched, "undo"))
        assert (back.cursor, back.redo_target) == (1, 3)  # the newest on top of 1, not 2
        log = drafts.history("acme", "intake")
        assert [len(e.document.steps[0].items) for e in log] == [0, 1, 2, 5]  # 2 is kept

    def test_nothing_to_undo_or_redo_stores_nothing(self, drafts: DraftStore) -> None:
        draft = self.built(drafts, 1)
        with pytest.raises(ValueError):
            drafts.commit(move(draft, "undo"))
        with pytest.raises(ValueError):
            drafts.commit(move(draft, "redo"))
        assert drafts.get("acme", "intake") == draft

    # ------------------------------------------------------------------ 2. compare-and-set

    def test_a_stale_version_conflicts_with_the_current_draft(self, drafts: DraftStore) -> None:
        first = self.built(drafts, 1)
        second = drafts.commit(edit(first, document(1)))
        with pytest.raises(DraftConflict) as raised:
            drafts.commit(edit(first, document(7), call_id="late", recorded=call("late")))
        assert raised.value.current == second
        assert drafts.get("acme", "intake") == second
        assert len(drafts.history("acme", "intake")) == 2
        assert drafts.get_call("acme", "intake", "late") is None
        with pytest.raises(DraftConflict) as again:  # starting a draft that exists
            drafts.commit(edit(None, document(7)))
        assert again.value.current == second

    def test_concurrent_commits_on_one_version_let_exactly_one_land(
        self, drafts: DraftStore
    ) -> None:
        base = self.built(drafts, 1)

        def commit(n: int) -> None:
            drafts.commit(edit(base, document(n + 1), call_id=f"race-{n}"))

        assert len(landed(6, commit, DraftConflict)) == 1
        assert drafts.get("acme", "intake").version == 2
        assert len(drafts.history("acme", "intake")) == 2

    # ------------------------------------------------------------------ 3 and 5. calls

    def test_a_commit_records_its_call_and_a_second_one_stores_nothing(
        self, drafts: DraftStore
    ) -> None:
        draft = drafts.commit(edit(None, document(0), recorded=call("c1", "first")))
        recorded = drafts.get_call("acme", "intake", "c1")
        assert recorded is not None and recorded.result == {"r": "first"}
        with pytest.raises(CallRecorded) as raised:
            drafts.commit(edit(draft, document(1), recorded=call("c1", "second")))
        assert raised.value.record.result == {"r": "first"}
        assert drafts.get("acme", "intake") == draft
        assert len(drafts.history("acme", "intake")) == 1
        with pytest.raises(CallRecorded):  # a move carries its call the same way
            drafts.commit(move(drafts.commit(edit(draft, document(1))), "undo", call("c1")))
        assert drafts.get("acme", "intake").cursor == 1

    def test_a_stale_commit_with_a_taken_id_stores_nothing(self, drafts: DraftStore) -> None:
        draft = drafts.commit(edit(None, document(0), recorded=call("c1")))
        with pytest.raises((CallRecorded, DraftConflict)):
            drafts.commit(edit(None, document(1), recorded=call("c1")))
        assert drafts.get("acme", "intake") == draft
        recorded = drafts.get_call("acme", "intake", "c1")
        assert recorded is not None and recorded.result == {"r": "done"}

    def test_a_call_that_changed_nothing_is_recorded_once(self, drafts: DraftStore) -> None:
        drafts.record_call("acme", "intake", call("c1", "refused"))  # no draft needed
        with pytest.raises(CallRecorded) as raised:
            drafts.record_call("acme", "intake", call("c1", "other"))
        assert raised.value.record.result == {"r": "refused"}
        with pytest.raises(CallRecorded):
            drafts.commit(edit(None, document(0), recorded=call("c1")))
        with pytest.raises(NotFound):
            drafts.get("acme", "intake")
        # AND the id is per draft: another form's draft may use it
        drafts.record_call("acme", "other", call("c1", "theirs"))
        other = drafts.get_call("acme", "other", "c1")
        assert other is not None and other.result == {"r": "theirs"}

    def test_one_call_id_raced_by_many_commits_lands_once(self, drafts: DraftStore) -> None:
        def start(n: int) -> None:
            drafts.commit(edit(None, document(n), recorded=call("same", str(n))))

        [winner] = landed(6, start, (CallRecorded, DraftConflict))
        recorded = drafts.get_call("acme", "intake", "same")
        assert recorded is not None and recorded.result == {"r": str(winner)}
        assert fields(drafts.get("acme", "intake")) == winner

    # ------------------------------------------------------------------ 4. snapshots

    def test_what_is_returned_or_handed_in_is_a_snapshot(self, drafts: DraftStore) -> None:
        mine = document(1)
        stored = drafts.commit(edit(None, mine))
        # WHEN callers change what they handed in and what they got back
        mine.steps[0].items.clear()
        stored.document.steps.clear()
        drafts.get("acme", "intake").document.steps[0].items.clear()
        drafts.history("acme", "intake")[0].document.steps.clear()
        # THEN the store holds what was committed
        read = drafts.get("acme", "intake")
        assert fields(read) == 1
        assert len(drafts.history("acme", "intake")[0].document.steps[0].items) == 1
        # AND what it returned does not change when the draft moves on
        drafts.commit(edit(read, document(2)))
        drafts.commit(move(drafts.get("acme", "intake"), "undo"))
        assert (read.version, fields(read)) == (1, 1)

    # ------------------------------------------------------------------ 6. tenants apart

    def test_another_tenants_draft_is_the_same_not_found_as_a_missing_one(
        self, drafts: DraftStore
    ) -> None:
        drafts.commit(edit(None, document(1), recorded=call("c1")))
        with pytest.raises(NotFound) as theirs:
            drafts.get("globex", "intake")
        with pytest.raises(NotFound) as missing:
            drafts.get("acme", "nothing")
        assert type(theirs.value) is type(missing.value)
        with pytest.raises(NotFound):
            drafts.history("globex", "intake")
        assert drafts.get_call("globex", "intake", "c1") is None
        assert drafts.list_drafts("globex") == []
        with pytest.raises(DraftConflict) as moved:  # as if there were none
            drafts.commit(edit(None, document(3), tenant="globex", expected=1))
        assert moved.value.current is None
        # AND the same form id in two tenants is two drafts, and one's call id is not the other's
        theirs_now = drafts.commit(edit(None, document(3), tenant="globex", recorded=call("c1")))
        assert (fields(theirs_now), fields(drafts.get("acme", "intake"))) == (3, 1)
        assert [d.form_id for d in drafts.list_drafts("globex")] == ["intake"]

    def test_a_tenant_lists_its_drafts_by_form_id(self, drafts: DraftStore) -> None:
        for form_id in ("zeta", "alpha"):
            drafts.commit(edit(None, document(0, form_id=form_id, title=form_id), form_id=form_id))
        zeta = drafts.get("acme", "zeta")
        drafts.commit(edit(zeta, document(1, form_id="zeta", title="Z"), form_id="zeta"))
        lines = drafts.list_drafts("acme")
        assert [(d.form_id, d.title, d.version) for d in lines] == [
            ("alpha", "alpha", 1),
            ("zeta", "Z", 2),
        ]

    def test_tenant_and_form_ids_cannot_collide_through_separators(
        self, drafts: DraftStore
    ) -> None:
        drafts.commit(edit(None, document(1), tenant="a#D#b", form_id="c"))
        drafts.commit(edit(None, document(2), tenant="a", form_id="b#D#c"))
        assert fields(drafts.get("a#D#b", "c")) == 1
        assert fields(drafts.get("a", "b#D#c")) == 2
        assert [d.form_id for d in drafts.list_drafts("a")] == ["b#D#c"]

    def test_a_draft_past_the_item_limit_is_refused_and_stores_nothing(
        self, drafts: DraftStore
    ) -> None:
        # GIVEN a draft of one edit
        draft = drafts.commit(edit(None, document(1), recorded=call("c0")))
        # WHEN an edit would make its document larger than one stored item takes
        with pytest.raises(SizeLimit) as refused:
            drafts.commit(edit(draft, bulky(160), recorded=call("c1")))
        # THEN it is refused with the sizes, and nothing of it is stored
        assert refused.value.item == "draft"
        assert refused.value.limit == ITEM_LIMIT < refused.value.size < ITEM_LIMIT + 20_000
        now = drafts.get("acme", "intake")
        assert (now.version, now.count, fields(now)) == (1, 1, 1)
        assert len(drafts.history("acme", "intake")) == 1
        assert drafts.get_call("acme", "intake", "c1") is None
        # AND an edit just under the limit lands and reads back whole
        landed = drafts.commit(edit(now, bulky(150), recorded=call("c2")))
        assert fields(landed) == fields(drafts.get("acme", "intake")) == 150
        assert drafts.history("acme", "intake")[-1].document == bulky(150)

    def test_a_long_history_reads_whole(self, drafts: DraftStore) -> None:
        draft = self.built(drafts, 40)
        assert (draft.count, fields(draft)) == (40, 39)
        assert [e.prev for e in drafts.history("acme", "intake")] == list(range(-1, 39))
