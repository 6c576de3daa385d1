"""Handing a conversation over to another form (issue 27): the engine's plan, a checkpoint's
``HandOver`` effect and ``form_start`` with ``from``, in process."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import pytest
from pydantic import Field

from forms import Caller, Checkpoint, FormDef, FormRegistry, HandOver, Step, field
from forms.compiler import compile_form
from forms.errors import InvalidFormDefinition
from forms.handover import check_handover, target_id
from forms.storage.memory import InMemoryFormStore
from tests.support import Session, service_for

ALICE = Caller("alice", "conv-1")
fired: list[str] = []


class Basics(Step):
    title = "Basics"

    company: Annotated[str, Field(min_length=2)] = field("Company")
    revenue: int = field("Annual revenue (EUR)")
    size: Literal["small", "medium"] = field("Company size")
    referral: str | None = field("Referral code")
    phone: str | None = field("Phone")


quote = FormDef(
    id="quote",
    version=1,
    title="Quote",
    steps=[Basics],
    hands_over_to={"enterprise": {"revenue": "annual_revenue", "phone": None}},
    checkpoints=[
        Checkpoint(
            "big",
            when=lambda v: v.revenue is not None and v.revenue > 1_000_000,
            run=lambda ctx: HandOver("enterprise", "annual revenue over 1M"),
        )
    ],
)


class Company(Step):
    title = "Company"

    company: Annotated[str, Field(min_length=2)] = field(
        "Company", on_fill=lambda ctx: fired.append(f"company:{ctx.instance_id}")
    )
    annual_revenue: int = field("Annual revenue (EUR)")
    size: Literal["small", "medium", "large"] = field("Company size")
    referral: str | None = field("Referral code")
    phone: Annotated[str, Field(pattern=r"^\+\d{6,15}$")] | None = field("Phone")
    seats: int = field("Seats")


enterprise = FormDef(id="enterprise", version=1, title="Enterprise application", steps=[Company])


class Complaint(Step):
    title = "Complaint"

    company: Annotated[str, Field(min_length=5)] = field("Company")
    size: Literal["small", "medium", "large"] = field("Company size")
    what: str = field("What went wrong")


complaint = FormDef(id="complaint", version=1, title="Complaint", steps=[Complaint])


@pytest.fixture(autouse=True)
def _clear() -> None:
    fired.clear()


def session() -> Session:
    return Session(service_for(quote, enterprise, complaint), ALICE)


def test_a_checkpoint_hands_over_with_the_answers_carried_and_renamed() -> None:
    s = session()
    s.ok("form_start", form="quote", values={"company": "Acme", "size": "small"})
    s.ok("form_fill", form="quote", decline=["referral"])
    # WHEN an answer makes the checkpoint's rule hold
    result = s.ok("form_fill", form="quote", values={"revenue": 2_000_000})
    # THEN the quote closed handed over, naming the target, and is not a failure
    assert result["closed"] == "handed_over"
    (source, target) = s.store.list_conversation("alice", "conv-1")
    assert source.state.status == "handed_over"
    assert source.state.handed_to is not None
    key = f"{source.id}:checkpoint.big:1"
    assert source.state.handed_to.instance == target.id == target_id(key)
    assert source.state.closed_reason == (
        f"handed over to enterprise {target.id}: annual revenue over 1M"
    )
    # AND the target started in the same conversation with every carried answer, renamed
    assert target.form_id == "enterprise" and target.state.status == "open"
    values = {f: log.in_force() for f, log in target.history.items()}
    assert {f: r.value for f, r in values.items() if r and r.kind == "value"} == {
        "company": "Acme",
        "annual_revenue": 2_000_000,
        "size": "small",
    }
    # AND the decline travelled as a decline; each revision says where it came from
    referral = values["referral"]
    assert referral is not None and referral.kind == "decline"
    revenue = values["annual_revenue"]
    assert revenue is not None and revenue.by == "handover" and revenue.actor == source.id
    assert revenue.note == f"from quote {source.id} field revenue revision 0"
    assert target.state.handed_from is not None and target.state.handed_from.instance == source.id
    # AND the target's own hooks fired on its rising edges, as for any start
    assert fired == [f"company:{target.id}"]
    # AND the source keeps its whole history and can be read after
    read = s.ok("form_read", form="quote", instance=source.id, part="revenue")
    assert "2000000" in str(read)
    assert s.ok("form_read", form="quote", instance=source.id)["outcome"] == "handed_over"


def test_the_tool_hands_over_what_fits_and_reports_the_rest() -> None:
    s = session()
    s.ok("form_start", form="quote", values={"company": "Acme", "size": "medium"})
    s.ok("form_fill", form="quote", values={"phone": "call me"})
    # WHEN the agent starts a complaint from the quote (the user changed their mind)
    payload = {"form": "complaint", "from": "quote", "values": {"what": "late"}}
    result = s.call("form_start", payload)
    assert result["ok"] is True, result
    # THEN same ids carry where the type takes the value; the rest is reported, not carried
    assert result["handed_over_from"]
    assert result["not_carried"] == {
        "company": "complaint refuses it for 'company': string should have at least 5 "
        'characters, got the string "Acme"',
        "phone": "complaint has no field 'phone'",
    }
    source, target = s.store.list_conversation("alice", "conv-1")
    assert source.state.status == "handed_over" and target.id == result["instance"]
    assert target.history["size"].in_force().value == "medium"  # type: ignore[union-attr]
    assert target.history["what"].in_force().by == "agent"  # type: ignore[union-attr]
    assert "company" not in target.history
    assert "handed over from Quote" in result["summary"]
    # AND the quote's status answers with where it went
    listed = s.ok("form_list")
    assert "handed_over" in str(listed)


def test_a_retried_handover_call_applies_once() -> None:
    s = session()
    s.ok("form_start", form="quote", values={"company": "Acme"})
    first = s.call("form_start", {"form": "enterprise", "from": "quote"}, call_id="h-1")
    again = s.call("form_start", {"form": "enterprise", "from": "quote"}, call_id="h-1")
    assert first["ok"] and again.get("replayed") is True
    assert again["instance"] == first["instance"]
    assert [i.form_id for i in s.store.list_conversation("alice", "conv-1")] == [
        "quote",
        "enterprise",
    ]


def test_a_handover_from_a_closed_form_is_refused_and_changes_nothing() -> None:
    s = session()
    started = s.ok("form_start", form="quote", values={"company": "Acme"})
    s.ok("form_abandon", form="quote", reason="no longer needed")
    refused = s.call("form_start", {"form": "enterprise", "from": started["instance"]})
    assert refused["ok"] is False
    assert len(s.store.list_conversation("alice", "conv-1")) == 1


def test_another_principals_instance_cannot_be_handed_over() -> None:
    s = session()
    started = s.ok("form_start", form="quote", values={"company": "Acme"})
    bob = Caller("bob", "conv-1")
    refused = s.call("form_start", {"form": "enterprise", "from": started["instance"]}, caller=bob)
    assert refused["ok"] is False and refused["error"] in ("unknown_form", "unknown_instance")
    assert s.store.list_conversation("bob", "conv-1") == []
    assert s.store.get(started["instance"]).state.status == "open"


@pytest.mark.parametrize("where", ["conversation index", "call record"])
def test_a_crash_between_the_halves_leaves_neither(
    where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = InMemoryFormStore()
    s = Session(service_for(quote, enterprise, complaint, store=store), ALICE)
    started = s.ok("form_start", form="quote", values={"company": "Acme"})
    before = store.get(started["instance"])
    # GIVEN the store's one write fails after one half of it (the target's index, or the
    # last thing written, the call record)
    if where == "conversation index":
        monkeypatch.setattr(store, "_by_conversation", _Exploding(store._by_conversation))
    else:

        def crash(*args: Any) -> None:
            raise RuntimeError("crashed between the halves")

        monkeypatch.setattr(store, "_keep_call", crash)
    # WHEN the agent hands the quote over
    result = s.call("form_start", {"form": "enterprise", "from": "quote"})
    assert result["ok"] is False
    monkeypatch.undo()
    # THEN neither half landed: the quote is open as it was, there is no target, no record
    assert store.list_conversation("alice", "conv-1") == [before]
    assert store.get_call("alice", "conv-1", "call-2") is None
    # AND the call sent again hands over once
    again = s.call("form_start", {"form": "enterprise", "from": "quote"}, call_id="call-2")
    assert again["ok"] is True
    assert [i.state.status for i in store.list_conversation("alice", "conv-1")] == [
        "handed_over",
        "open",
    ]


class _Exploding(dict[Any, Any]):
    """A conversation index whose write fails: the target's half of a handover."""

    def setdefault(self, key: Any, default: Any = None) -> Any:
        raise RuntimeError("crashed between the halves")


def test_the_declared_mapping_is_checked_when_both_forms_meet() -> None:
    bad = FormDef(
        id="quote2",
        version=1,
        title="Quote",
        steps=[Basics],
        hands_over_to={"complaint": {}},
    )
    problems = check_handover(compile_form(bad), compile_form(complaint), {})
    assert problems == [
        "hands_over_to['complaint']: 'company' -> 'company': the types differ "
        "(string, at least 2 chars -> string, at least 5 chars)"
    ]
    fits = check_handover(
        compile_form(quote), compile_form(enterprise), {"revenue": "annual_revenue", "phone": None}
    )
    assert fits == []
    with pytest.raises(InvalidFormDefinition, match="renames 'nope'"):
        FormRegistry(
            [
                FormDef(
                    id="q3",
                    version=1,
                    title="Q",
                    steps=[Basics],
                    hands_over_to={"x": {"nope": "y"}},
                )
            ]
        )


# ---------------------------------------------------------------------- documents

SHORT_INTAKE: dict[str, Any] = {
    "id": "short-intake",
    "title": "Short intake",
    "steps": [
        {
            "id": "basics",
            "title": "Basics",
            "items": [
                {"kind": "short_text", "id": "full_name", "label": "Full name"},
                {"kind": "integer", "id": "employees", "label": "Employees", "minimum": 1},
                {"kind": "short_text", "id": "nickname", "label": "Nickname", "required": False},
            ],
        }
    ],
    "checkpoints": [
        {
            "id": "too_big",
            "when": {"field": "employees", "op": "greater_than", "value": 50},
            "then": [
                {
                    "action": "hand_over",
                    "form": "long-intake",
                    "reason": "over 50 employees",
                    "rename": [
                        {"field": "employees", "to": "headcount"},
                        {"field": "nickname", "to": None},
                    ],
                }
            ],
        }
    ],
}

LONG_INTAKE: dict[str, Any] = {
    "id": "long-intake",
    "title": "Long intake",
    "steps": [
        {
            "id": "company",
            "title": "Company",
            "items": [
                {"kind": "short_text", "id": "full_name", "label": "Full name"},
                {"kind": "integer", "id": "headcount", "label": "Headcount", "minimum": 1},
                {"kind": "short_text", "id": "nickname", "label": "Nickname", "required": False},
                {"kind": "short_text", "id": "sector", "label": "Sector"},
            ],
        }
    ],
}


def _documents() -> tuple[FormDef, FormDef]:
    from forms.documents import FormDocument, to_definition

    short = to_definition(FormDocument.model_validate(SHORT_INTAKE))
    long = to_definition(FormDocument.model_validate(LONG_INTAKE))
    return short, long


def test_a_document_hands_over_by_its_checkpoint_rule() -> None:
    short, long = _documents()
    assert short.hands_over_to == {"long-intake": {"employees": "headcount", "nickname": None}}
    s = Session(service_for(short, long), ALICE)
    s.ok("form_start", form="short-intake", values={"full_name": "Ada", "nickname": "A"})
    result = s.ok("form_fill", form="short-intake", values={"employees": 80})
    assert result["closed"] == "handed_over"
    assert result["handed_over_to"]["form"] == "long-intake"
    # the status line is where the conversation goes on: the long intake's
    assert result["status_line"].startswith("[form: long-intake]")
    source, target = s.store.list_conversation("alice", "conv-1")
    assert {f: log.in_force().value for f, log in target.history.items()} == {  # type: ignore[union-attr]
        "full_name": "Ada",
        "headcount": 80,
    }
    assert target.state.handed_from is not None
    assert target.state.handed_from.dropped == {
        "nickname": "the handover to long-intake leaves it behind"
    }
    read = s.ok("form_read", form="long-intake")
    assert read["handed_over_from"] == {"form": "short-intake", "instance": source.id}


def test_a_document_naming_a_field_it_does_not_have_does_not_build() -> None:
    from forms.documents import FormDocument, to_definition

    bad = {**SHORT_INTAKE, "checkpoints": [dict(SHORT_INTAKE["checkpoints"][0])]}
    bad["checkpoints"][0]["then"] = [
        {"action": "hand_over", "form": "long-intake", "rename": [{"field": "staff", "to": "x"}]}
    ]
    with pytest.raises(InvalidFormDefinition, match="hands over 'staff', which is not a field"):
        to_definition(FormDocument.model_validate(bad))


def test_a_re_fired_checkpoint_hands_over_once() -> None:
    from forms.app.hooks import run_hook

    short, long = _documents()
    service = service_for(short, long, dispatch=False)
    s = Session(service, ALICE)
    started = s.ok("form_start", form="short-intake", values={"full_name": "Ada"})
    s.ok("form_fill", form="short-intake", values={"employees": 80})
    key = f"{started['instance']}:checkpoint.too_big:1"
    loop = service._writer.loop
    # WHEN the entry is run twice (at least once: a relay and a sweeper both deliver it)
    first = run_hook(loop, started["instance"], key)
    second = run_hook(loop, started["instance"], key)
    # THEN one target, the first run's; the second found the entry done
    (source, target) = s.store.list_conversation("alice", "conv-1")
    assert target.id == target_id(key) and source.state.status == "handed_over"
    assert [e.key for e in first.added] == [e.key for e in target.state.outbox.values()]
    assert second.added == ()


def test_a_registry_refuses_a_declared_handover_whose_types_do_not_fit() -> None:
    misfit = FormDef(
        id="quote",
        version=1,
        title="Quote",
        steps=[Basics],
        hands_over_to={"complaint": {"revenue": None, "referral": None, "phone": None}},
    )
    # WHEN the two forms meet in one registry, in either order
    for forms in ([misfit, complaint], [complaint, misfit]):
        with pytest.raises(InvalidFormDefinition, match="'company' -> 'company'"):
            FormRegistry(forms)
    # AND forms whose declared handovers fit register as ever
    assert FormRegistry([quote, enterprise]).latest("quote").id == "quote"


def test_publishing_a_document_checks_its_handover_against_the_tenants_forms() -> None:
    from datetime import UTC, datetime

    from forms.app.catalog import Catalog
    from forms.documents import FormDocument
    from forms.storage.documents import InMemoryFormDocumentStore

    catalog = Catalog(FormRegistry([]), InMemoryFormDocumentStore(), timer=lambda: 0.0)
    at = datetime(2026, 3, 1, tzinfo=UTC)
    # GIVEN the long intake published with a headcount that is text
    narrowed = json_copy(LONG_INTAKE)
    narrowed["steps"][0]["items"][1] = {"kind": "short_text", "id": "headcount", "label": "H"}
    catalog.publish("acme/alice", FormDocument.model_validate(narrowed), at=at)
    # WHEN the short intake hands its integer over to it
    with pytest.raises(InvalidFormDefinition, match="'employees' -> 'headcount': the types differ"):
        catalog.publish("acme/alice", FormDocument.model_validate(SHORT_INTAKE), at=at)
    # THEN once the long intake takes an integer again, it publishes
    catalog.publish("acme/alice", FormDocument.model_validate(LONG_INTAKE), at=at, expected=1)
    catalog.publish("acme/alice", FormDocument.model_validate(SHORT_INTAKE), at=at)


def json_copy(value: Any) -> Any:
    import json

    return json.loads(json.dumps(value))


def test_the_source_closes_with_its_on_close_hook_whichever_trigger() -> None:
    closed: list[str] = []
    noted = FormDef(
        id="quote",
        version=1,
        title="Quote",
        steps=[Basics],
        hands_over_to=quote.hands_over_to,
        checkpoints=quote.checkpoints,
        on_close=lambda ctx: closed.append(f"{ctx.status}:{ctx.closed_reason}"),
    )
    s = Session(service_for(noted, enterprise, complaint), ALICE)
    s.ok("form_start", form="quote", values={"company": "Acme"})
    s.ok("form_fill", form="quote", values={"revenue": 2_000_000})
    s.ok("form_start", form="quote", values={"company": "Acme"})
    switched = s.call("form_start", {"form": "complaint", "from": "quote", "values": {"what": "x"}})
    assert switched["ok"] is True, switched
    assert [c.split(" fi_")[0] for c in closed] == [
        "handed_over:handed over to enterprise",
        "handed_over:handed over to complaint",
    ]


def test_memory_recall_fills_what_the_handover_left_empty_and_never_a_carried_answer() -> None:
    from forms.examples import health_check
    from forms.examples.pi_intake import pi_intake
    from tests.unit.memory_for_tests import ALICE as MEMORY_ALICE
    from tests.unit.memory_for_tests import BORN, RecordingFacts, alice_said, memory_service

    # GIVEN alice's memory holds a date of birth (BORN) and a height, and she tells the PI
    # intake another date of birth
    facts = alice_said(RecordingFacts())
    s = Session(memory_service(pi_intake, health_check, facts=facts), MEMORY_ALICE)
    told = {"full_name": "Alice Liddell", "date_of_birth": "1991-01-01"}
    s.ok("form_start", form="pi-intake", values=told)
    # WHEN the agent hands the intake over to the health check
    switched = s.call("form_start", {"form": "health-check", "from": "pi-intake"})
    assert switched["ok"] is True, switched
    target = s.store.get(switched["instance"])
    # THEN the date of birth is the one carried, not memory's; the height, left empty by the
    # handover, is memory's
    born = target.field("date_of_birth").in_force()
    assert born is not None and (born.value, born.by) == ("1991-01-01", "handover")
    assert born.value != BORN and target.field("date_of_birth").count == 1
    height = target.field("height_cm").in_force()
    assert height is not None and height.by == "memory"
    assert "date_of_birth" not in target.state.recalled


def test_the_builder_sets_a_handover_checkpoint_checked_like_other_actions() -> None:
    from forms.documents import EditError, apply_edit

    draft = apply_edit(
        None,
        "create_form",
        {
            "title": "Short intake",
            "steps": [
                {
                    "title": "Basics",
                    "items": [{"kind": "integer", "label": "Employees", "id": "employees"}],
                }
            ],
        },
    ).document
    action: dict[str, Any] = {
        "action": "hand_over",
        "form": "long-intake",
        "rename": [{"field": "employees", "to": "headcount"}],
    }
    handover: dict[str, Any] = {
        "id": "too_big",
        "when": {"field": "employees", "op": "greater_than", "value": 50},
        "then": [action],
    }
    done = apply_edit(draft, "set_checkpoint", handover)
    assert done.summary == (
        'Added checkpoint "too_big": when employees greater than 50, hand over to long-intake.'
    )
    # AND a rename of a field the form does not have is refused, with the closest name
    wrong = {
        **handover,
        "then": [{**action, "rename": [{"field": "employes", "to": "x"}]}],
    }
    with pytest.raises(EditError) as raised:
        apply_edit(draft, "set_checkpoint", wrong)
    assert raised.value.code == "invalid_rule"
    assert "hands over 'employes', which is not a field" in raised.value.message
    assert "employees" in raised.value.message
    # AND the field a handover renames cannot be deleted from under it
    with pytest.raises(EditError) as deleted:
        apply_edit(done.document, "delete_field", {"field": "employees"})
    assert 'checkpoint "too_big"' in deleted.value.message


class Gated(Step):
    title = "Gated"

    has_company: bool = field("Has a company")
    company: str = field("Company", when=lambda v: v.has_company is True)


class Open(Step):
    title = "Open"

    has_company: bool = field("Has a company")
    company: str = field("Company")


gated = FormDef(id="gated", version=1, title="Gated", steps=[Gated])
opened = FormDef(id="opened", version=1, title="Opened", steps=[Open])


def test_a_held_answer_travels_as_the_answer_it_is_and_the_target_decides() -> None:
    from datetime import UTC, datetime

    from forms.handover import plan_handover

    s = Session(service_for(gated, opened), ALICE)
    s.ok("form_start", form="gated", values={"has_company": True, "company": "Acme"})
    s.ok("form_fill", form="gated", values={"has_company": False})  # company is held now
    (source,) = s.store.list_conversation("alice", "conv-1")
    src, dst = compile_form(gated), compile_form(opened)
    plan = plan_handover(src, source, dst, "fi_t", {}, datetime(2026, 3, 2, tzinfo=UTC))
    # THEN the held company is carried, and on the target, where it always applies, it counts
    assert plan.carried.revisions["company"].value == "Acme"
    assert plan.start.evaluation.fields["company"].status == "answered"
    assert plan.close.after.state.status == "handed_over"
    # AND the engine's plan is only a plan: nothing of it is stored until the app writes it
    assert [i.state.status for i in s.store.list_conversation("alice", "conv-1")] == ["open"]


class Ping(Step):
    title = "Ping"

    x: int = field("X")


def _bounce(to: str) -> FormDef:
    return FormDef(
        id=f"to-{to}",
        version=1,
        title=f"To {to}",
        steps=[Ping],
        hands_over_to={f"to-{'b' if to == 'a' else 'a'}": {}},
        checkpoints=[
            Checkpoint(
                "bounce",
                when=lambda v: v.x is not None and v.x > 0,
                run=lambda ctx: HandOver(f"to-{'b' if to == 'a' else 'a'}"),
            )
        ],
    )


def test_checkpoints_handing_over_back_and_forth_stop_at_the_knock_on_limit() -> None:
    from forms.instance import KNOCK_ON_LIMIT, LOOP_STOPPED

    s = Session(service_for(_bounce("a"), _bounce("b")), ALICE)
    s.ok("form_start", form="to-a", values={"x": 1})
    chain = s.store.list_conversation("alice", "conv-1")
    # THEN the forms handed each other over KNOCK_ON_LIMIT times, and the last one stopped
    assert [i.state.status for i in chain] == ["handed_over"] * KNOCK_ON_LIMIT + ["open"]
    last = chain[-1]
    assert last.state.handed_from is not None and last.state.handed_from.chain == KNOCK_ON_LIMIT
    (entry,) = last.state.outbox.values()
    assert entry.status == "failed" and entry.error is not None
    assert entry.error.startswith(LOOP_STOPPED)
