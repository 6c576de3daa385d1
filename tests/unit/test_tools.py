"""The tool surface through ``FormService.call``: happy paths, schemas, and bad input as data.

Nothing a model sends may raise out of ``call``; every refusal is ``ok: false`` with an error
code, a message and a hint, and a refused write leaves the stored instance exactly as it was.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from forms import (
    Caller,
    Checkpoint,
    FormDef,
    FormInstance,
    Step,
    field,
)
from forms.effects import Terminate
from forms.examples.travel_claim import travel_claim
from forms.operations import MAX_PATCH_FIELDS, MAX_VALUE_BYTES, MAX_VALUE_DEPTH
from forms.state import HookContext
from forms.surface.tools import TOOLS
from tests.support import Session, TickingClock, service_for

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
ALICE = Caller("alice", "conv-1")
BOB_SAME_CONVERSATION = Caller("bob", "conv-1")
ALICE_ELSEWHERE = Caller("alice", "conv-2")


# --------------------------------------------------------------------------- sample form


def turn_away(ctx: HookContext) -> Terminate:
    return Terminate(f"applicant is {ctx.values.age}, under 18")


class Applicant(Step):
    title = "Applicant"
    preview = "who is applying"

    name: str = field("Name")
    age: int = field("Age")
    member: bool = field("Existing member")


class Extras(Step):
    title = "Extras"
    preview = "notes and tags"

    notes: str | None = field("Notes")
    tags: list[str] | None = field("Tags")


signup = FormDef(
    id="signup",
    version=1,
    title="Club signup",
    description="Join the club.",
    steps=[Applicant, Extras],
    checkpoints=[
        Checkpoint("underage", when=lambda v: v.age is not None and v.age < 18, run=turn_away)
    ],
)


class Harness(Session):
    def __init__(self) -> None:
        super().__init__(service_for(travel_claim, signup, clock=TickingClock(T0)), ALICE)

    def start(self, form: str = "signup", caller: Caller = ALICE, **values: Any) -> str:
        instance: str = self.ok("form_start", caller, form=form, values=values or None)["instance"]
        return instance

    def stored(self, instance_id: str) -> FormInstance:
        return self.store.get(instance_id)


def refused(result: dict[str, Any], code: str) -> dict[str, Any]:
    """Assert the shape of an error-as-data result."""
    assert result["ok"] is False, result
    assert result["error"] == code, result
    assert isinstance(result["message"], str) and result["message"], result
    assert isinstance(result.get("hint"), str) and result["hint"], result
    return result


# --------------------------------------------------------------------------- schemas


def _walk(node: Any) -> list[Any]:
    found = [node]
    if isinstance(node, dict):
        for value in node.values():
            found += _walk(value)
    elif isinstance(node, list):
        for value in node:
            found += _walk(value)
    return found


@pytest.mark.parametrize("tool", TOOLS, ids=lambda t: t.name)
def test_tool_schemas_have_no_titles_and_no_null_branches(tool: Any) -> None:
    schema = tool.input_schema()
    nodes = _walk(schema)
    dicts = [n for n in nodes if isinstance(n, dict)]
    assert not any("title" in n for n in dicts)
    assert not any("$ref" in n or "$defs" in n for n in dicts)
    assert {"type": "null"} not in nodes
    assert not any(n.get("type") == "null" for n in dicts)
    assert not any("null" in n.get("type", []) for n in dicts if isinstance(n.get("type"), list))
    assert not any(n.get("default", "absent") is None for n in dicts)
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False


def test_tool_surface_is_six_tools_with_the_documented_required_arguments() -> None:
    required = {t.name: t.input_schema().get("required", []) for t in TOOLS}
    assert required == {
        "form_list": [],
        "form_start": ["form"],
        "form_read": ["form"],
        "form_fill": ["form"],
        "form_revise": ["form", "action"],
        "form_abandon": ["form", "reason"],
    }
    revise = next(t for t in TOOLS if t.name == "form_revise").input_schema()
    assert revise["properties"]["action"]["enum"] == [
        "set",
        "retract",
        "decline",
        "undo",
        "redo",
        "clear_memory",
    ]
    assert [t.name for t in TOOLS if t.writes] == [
        "form_start",
        "form_fill",
        "form_revise",
        "form_abandon",
    ]


# --------------------------------------------------------------------------- happy paths


def test_form_list_shows_the_catalogue_and_this_conversations_forms() -> None:
    h = Harness()
    first = h.start()
    listing = h.ok("form_list")
    assert listing["forms"] == [
        {
            "id": "travel-claim",
            "title": "Travel expense claim",
            "about": "Claim back the cost of a business trip.",
        },
        {"id": "signup", "title": "Club signup", "about": "Join the club."},
    ]
    assert listing["started"] == [{"form": "signup", "instance": first, "status": "open"}]
    assert isinstance(listing["summary"], str)


def test_form_start_saves_the_values_it_is_given() -> None:
    h = Harness()
    result = h.ok("form_start", form="signup", values={"name": "Ann", "Age": 30})
    assert result["instance"] == "fi_1"
    assert result["summary"] == "Started Club signup; saved 2 (name, age)."
    assert result["resolved"] == {"Age": "age"}
    assert result["status_line"].startswith('[form: signup] step 1/2 "Applicant" · pending: ')
    stored = h.stored("fi_1")
    assert (stored.principal, stored.conversation_id, stored.form_version) == (
        "alice",
        "conv-1",
        1,
    )
    assert stored.field("age").in_force().value == 30  # type: ignore[union-attr]


def test_form_read_defaults_to_the_open_step() -> None:
    h = Harness()
    h.start(name="Ann")
    read = h.ok("form_read", form="signup")
    assert (read["form"], read["instance"], read["step"]) == ("signup", "fi_1", "applicant")
    assert [f["id"] for f in read["fields"]] == ["name", "age", "member"]


@pytest.mark.parametrize(
    ("part", "key", "expected"),
    [("outline", "steps", 2), ("Extras", "step", "extras"), ("Existing member", "id", "member")],
)
def test_form_read_parts(part: str, key: str, expected: Any) -> None:
    h = Harness()
    h.start()
    read = h.ok("form_read", form="signup", part=part)
    value = read[key]
    assert (len(value) if isinstance(value, list) else value) == expected


def test_form_fill_saves_any_fields_of_any_step() -> None:
    h = Harness()
    h.start()
    result = h.ok("form_fill", form="signup", values={"tags": ["chess"], "name": "Ann"})
    assert result["summary"] == "Saved 2 (tags, name)."
    assert h.stored("fi_1").field("tags").in_force().value == ["chess"]  # type: ignore[union-attr]


def test_form_revise_moves_through_the_log() -> None:
    h = Harness()
    h.start(name="Ann", notes="hello")
    steps: list[tuple[dict[str, Any], str]] = [
        ({"field": "name", "action": "set", "value": "Bob"}, 'Set Name to "Bob".'),
        ({"field": "name", "action": "undo"}, 'Undo on Name: now "Ann" (answered).'),
        ({"field": "name", "action": "redo"}, 'Redo on Name: now "Bob" (answered).'),
        ({"field": "name", "action": "retract"}, "Retracted Name; it has no answer now (pending)."),
        (
            {"field": "notes", "action": "decline"},
            "Recorded that the user prefers not to give Notes.",
        ),
    ]
    for payload, summary in steps:
        assert h.ok("form_revise", form="signup", **payload)["summary"] == summary
    log = h.stored("fi_1").field("name")
    assert [(r.kind, r.value) for r in log.revisions] == [
        ("value", "Ann"),
        ("value", "Bob"),
        ("retraction", None),
    ]
    assert log.cursor == 2


def test_form_abandon_closes_and_keeps_answers() -> None:
    h = Harness()
    h.start(name="Ann")
    result = h.ok("form_abandon", form="signup", reason="user left")
    assert result["summary"] == "Abandoned Club signup: user left. Answers are kept."
    stored = h.stored("fi_1")
    assert (stored.state.status, stored.state.closed_reason) == ("abandoned", "user left")
    assert stored.field("name").in_force().value == "Ann"  # type: ignore[union-attr]


def test_a_replayed_call_returns_its_first_result_and_applies_nothing_twice() -> None:
    h = Harness()
    h.start()
    payload = {"form": "signup", "values": {"name": "Ann"}}
    first = h.call("form_fill", payload, call_id="same")
    version = h.stored("fi_1").version
    again = h.call("form_fill", payload, call_id="same")
    assert again == {**first, "replayed": True}
    assert h.stored("fi_1").version == version


def test_a_reused_call_id_with_a_different_payload_is_refused() -> None:
    h = Harness()
    h.start()
    h.call("form_fill", {"form": "signup", "values": {"name": "Ann"}}, call_id="same")
    before = h.stored("fi_1")
    result = h.call("form_fill", {"form": "signup", "values": {"name": "Bob"}}, call_id="same")
    refused(result, "tool_call_conflict")
    assert h.stored("fi_1") == before


# --------------------------------------------------------------------------- unknowns


def test_unknown_tool() -> None:
    result = refused(Harness().call("form_delete", {}), "bad_request")
    assert "form_delete" in result["message"]
    assert "form_fill" in result["hint"]


def test_unknown_form_hint_lists_the_forms() -> None:
    result = refused(Harness().call("form_start", {"form": "expense"}), "unknown_form")
    assert result["message"] == "no form 'expense'"
    assert result["hint"] == "forms you can start: travel-claim, signup"


def test_form_not_started_in_this_conversation() -> None:
    h = Harness()
    h.start(caller=ALICE_ELSEWHERE)
    for tool, payload in [
        ("form_read", {"form": "signup"}),
        ("form_fill", {"form": "signup", "values": {"name": "Ann"}}),
        ("form_revise", {"form": "signup", "field": "name", "action": "undo"}),
        ("form_abandon", {"form": "signup", "reason": "x"}),
    ]:
        result = refused(h.call(tool, payload), "unknown_form")
        assert result["hint"] == "call form_start to begin it"


def test_unknown_instance_id() -> None:
    h = Harness()
    h.start()
    result = refused(
        h.call("form_read", {"form": "signup", "instance": "fi_9"}), "unknown_instance"
    )
    assert "fi_9" in result["message"]
    assert "form_list" in result["hint"]


def test_another_principals_instances_are_invisible_and_untouched() -> None:
    # GIVEN alice's form in conv-1
    h = Harness()
    mine = h.start(name="Ann")
    before = h.stored(mine)
    # WHEN bob, with the same conversation id, tries every way in
    attempts = [
        ("form_read", {"form": "signup"}, "unknown_form"),
        ("form_fill", {"form": "signup", "values": {"name": "Eve"}}, "unknown_form"),
        ("form_read", {"form": "signup", "instance": mine}, "unknown_instance"),
        ("form_fill", {"form": "signup", "instance": mine, "values": {"name": "Eve"}}, None),
        (
            "form_revise",
            {"form": "signup", "instance": mine, "field": "name", "action": "retract"},
            None,
        ),
        ("form_abandon", {"form": "signup", "instance": mine, "reason": "mine now"}, None),
    ]
    for tool, payload, code in attempts:
        refused(h.call(tool, payload, caller=BOB_SAME_CONVERSATION), code or "unknown_instance")
    # THEN bob sees nothing of alice's, and alice's data is unchanged
    assert h.ok("form_list", BOB_SAME_CONVERSATION)["started"] == []
    assert h.stored(mine) == before
    assert h.service.status(BOB_SAME_CONVERSATION) == []


def test_the_same_principal_in_another_conversation_sees_nothing() -> None:
    h = Harness()
    mine = h.start()
    refused(
        h.call("form_read", {"form": "signup", "instance": mine}, caller=ALICE_ELSEWHERE),
        "unknown_instance",
    )


def test_ambiguous_instance_when_two_are_open() -> None:
    h = Harness()
    first = h.start()
    second_start = h.ok("form_start", form="signup")
    assert "pass instance ids from now on" in second_start["note"]
    before = [h.stored(first), h.stored(second_start["instance"])]
    result = refused(
        h.call("form_fill", {"form": "signup", "values": {"name": "Ann"}}), "ambiguous_instance"
    )
    assert result["hint"] == f"pass instance, one of: {first}, {second_start['instance']}"
    assert [h.stored(first), h.stored(second_start["instance"])] == before
    # AND naming the instance works
    h.ok("form_fill", form="signup", instance=first, values={"name": "Ann"})


# --------------------------------------------------------------------------- malformed input

BAD_IDS = ["has space", "a/b", "x" * 500, "", "../etc", "new\nline"]


@pytest.mark.parametrize("bad", BAD_IDS, ids=repr)
def test_malformed_conversation_id(bad: str) -> None:
    result = Harness().call("form_list", {}, caller=Caller("alice", bad))
    refused(result, "bad_request")
    assert "conversation id" in result["message"]


@pytest.mark.parametrize("bad", BAD_IDS, ids=repr)
def test_malformed_tool_call_id(bad: str) -> None:
    h = Harness()
    result = h.service.call(ALICE, "form_start", bad, {"form": "signup"})
    refused(result, "bad_request")
    assert "tool_call_id" in result["message"]
    assert h.store.list_conversation("alice", "conv-1") == []


@pytest.mark.parametrize("bad", BAD_IDS, ids=repr)
def test_malformed_instance_id(bad: str) -> None:
    h = Harness()
    h.start()
    refused(h.call("form_read", {"form": "signup", "instance": bad}), "bad_request")


@pytest.mark.parametrize(
    ("tool", "payload", "mentions"),
    [
        ("form_fill", {"form": "signup", "values": ["Ann", 30]}, "values"),
        ("form_fill", {"form": "signup", "values": {}}, "values"),
        ("form_fill", {"form": "signup", "values": {"name": "Ann"}, "extra": 1}, "extra"),
        ("form_fill", {"form": "signup", "values": {"name": "Ann"}, "instance": 5}, "instance"),
        ("form_fill", {"form": ["signup"], "values": {"name": "Ann"}}, "form"),
        ("form_fill", {"form": "x" * 65, "values": {"name": "Ann"}}, "form"),
        ("form_fill", {"form": "signup", "values": {"notes": {1, 2}}}, "notes"),
        ("form_fill", "name=Ann", "input"),
        ("form_fill", None, "form"),
        ("form_fill", 42, "input"),
        ("form_revise", {"form": "signup", "field": "name", "action": "delete"}, "action"),
        ("form_revise", {"form": "signup", "field": "", "action": "undo"}, "field"),
        ("form_abandon", {"form": "signup", "reason": ""}, "reason"),
        ("form_abandon", {"form": "signup", "reason": "x" * 301}, "reason"),
        ("form_read", {"form": "signup", "part": "x" * 129}, "part"),
        ("form_list", {"form": "signup"}, "form"),
    ],
)
def test_wrong_shapes_in_the_envelope(tool: str, payload: object, mentions: str) -> None:
    # GIVEN an open form
    h = Harness()
    h.start(name="Ann")
    before = h.stored("fi_1")
    # WHEN the envelope is malformed
    result = refused(h.call(tool, payload), "bad_request")
    # THEN the message points at the offending part, the hint at the schema, nothing changed
    assert result["message"].startswith("bad input: ")
    assert mentions in result["message"]
    assert result["hint"] == "check the tool's input schema"
    assert h.stored("fi_1") == before


# --------------------------------------------------------------------------- values


def test_oversized_and_too_deep_values_are_rejected_per_field_while_siblings_land() -> None:
    h = Harness()
    h.start()
    deep: Any = "leaf"
    for _ in range(MAX_VALUE_DEPTH + 1):
        deep = [deep]
    result = h.ok(
        "form_fill",
        form="signup",
        values={"notes": "x" * (MAX_VALUE_BYTES + 1), "tags": deep, "name": "Ann"},
    )
    assert result["summary"] == "Saved 1 (name); rejected 2."
    assert result["rejected"] == [
        {
            "field": "notes",
            "error": f"the value is over {MAX_VALUE_BYTES} bytes of JSON",
            "hint": "send a shorter answer",
        },
        {
            "field": "tags",
            "error": f"the value nests deeper than {MAX_VALUE_DEPTH} levels",
            "hint": "send a shorter answer",
        },
    ]
    stored = h.stored("fi_1")
    assert stored.field("notes").revisions == ()
    assert stored.field("tags").revisions == ()
    assert stored.field("name").in_force().value == "Ann"  # type: ignore[union-attr]


def test_more_than_the_field_limit_in_one_fill_is_refused_whole() -> None:
    h = Harness()
    h.start()
    before = h.stored("fi_1")
    values = {f"field_{i}": i for i in range(MAX_PATCH_FIELDS)} | {"name": "Ann"}
    result = refused(h.call("form_fill", {"form": "signup", "values": values}), "bad_request")
    assert result["message"] == f"a fill may carry at most 100 fields; {len(values)} were sent"
    assert result["hint"] == "split the answers over several calls"
    assert h.stored("fi_1") == before


def test_unknown_field_ids_get_did_you_mean() -> None:
    h = Harness()
    h.start()
    result = h.call("form_fill", {"form": "signup", "values": {"nmae": "Ann", "agee": 3, "zz": 1}})
    assert result["ok"] is False
    assert result["summary"] == "Saved 0; 3 unknown ids."
    assert result["unknown"] == [
        {"sent": "nmae", "did_you_mean": ["name"]},
        {"sent": "agee", "did_you_mean": ["age"]},
        # nothing close: the ids still to ask, open step first, so it can pick the one it meant
        {"sent": "zz", "still_to_ask": ["name", "age", "member", "notes", "tags"]},
    ]
    assert "hint" not in result  # the list is whole: no need to read the outline


def test_unknown_field_in_revise_gets_did_you_mean() -> None:
    h = Harness()
    h.start()
    result = refused(
        h.call("form_revise", {"form": "signup", "field": "nmae", "action": "undo"}),
        "unknown_field",
    )
    assert result["hint"] == "did you mean 'name'?"


def test_unknown_part_in_read_gets_did_you_mean() -> None:
    h = Harness()
    h.start()
    result = refused(h.call("form_read", {"form": "signup", "part": "Extra"}), "unknown_step")
    assert result["hint"].startswith("did you mean 'extras'?")


def test_a_quoted_integer_is_saved_and_the_result_says_it_was_coerced() -> None:
    # GIVEN a started signup
    h = Harness()
    h.start()
    # WHEN the age comes as a quoted integer
    result = h.call("form_fill", {"form": "signup", "values": {"age": "42"}})
    # THEN the integer is stored, and the result shows what was sent and what was kept
    assert result["ok"] is True
    assert result["coerced"] == {"age": {"sent": "42", "stored": 42}}
    assert h.stored("fi_1").field("age").in_force().value == 42  # type: ignore[union-attr]


def test_a_quoted_fraction_for_an_integer_gets_the_whole_number_hint() -> None:
    h = Harness()
    h.start()
    result = h.call("form_fill", {"form": "signup", "values": {"age": "42.5"}})
    assert result["ok"] is False
    assert result["rejected"] == [
        {
            "field": "age",
            "error": 'expected integer, got the string "42.5"',
            "hint": "send a whole number without quotes (42.5 is not whole)",
        }
    ]


@pytest.mark.parametrize(("sent", "stored"), [("yes", True), ("no", False), ("True", True)])
def test_a_yes_for_a_boolean_is_saved_as_the_boolean(sent: str, stored: bool) -> None:
    h = Harness()
    h.start()
    result = h.call("form_fill", {"form": "signup", "values": {"member": sent}})
    assert result["ok"] is True
    assert result["coerced"] == {"member": {"sent": sent, "stored": stored}}


@pytest.mark.parametrize(("sent", "word"), [("y", "true"), ("0", "false"), (1, "true")])
def test_a_terse_yes_for_a_boolean_gets_the_boolean_hint(sent: object, word: str) -> None:
    # GIVEN encodings that are not read as booleans (a digit may be a count for another field)
    h = Harness()
    h.start()
    result = h.call("form_fill", {"form": "signup", "values": {"member": sent}})
    # THEN the value is rejected with a hint naming the boolean, never saved as a guess
    assert result["rejected"][0]["field"] == "member"
    assert result["rejected"][0]["hint"] == f"send the JSON boolean {word} (no quotes)"


@pytest.mark.parametrize("blank", ["", "   ", None])
def test_blank_values_point_to_retract(blank: Any) -> None:
    h = Harness()
    h.start(name="Ann")
    result = h.call("form_fill", {"form": "signup", "values": {"name": blank}})
    assert result["rejected"][0]["error"] == "a blank value is not an answer"
    assert "retract" in result["rejected"][0]["hint"]
    assert h.stored("fi_1").field("name").in_force().value == "Ann"  # type: ignore[union-attr]


def test_non_finite_numbers_are_rejected_not_raised() -> None:
    h = Harness()
    h.start()
    result = h.call("form_fill", {"form": "signup", "values": {"age": float("nan"), "name": "A"}})
    assert result["ok"] is True
    assert result["rejected"][0]["field"] == "age"


# --------------------------------------------------------------------------- revise refusals


@pytest.mark.parametrize(
    ("payload", "code"),
    [
        ({"field": "name", "action": "decline"}, "cannot_revise"),
        ({"field": "notes", "action": "undo"}, "cannot_revise"),
        ({"field": "notes", "action": "redo"}, "cannot_revise"),
        ({"field": "name", "action": "retract", "value": "x"}, "bad_request"),
        ({"field": "name", "action": "set"}, "cannot_revise"),
        ({"field": "age", "action": "set", "value": "42.5"}, "cannot_revise"),
        ({"field": "age", "action": "set", "value": "ten"}, "cannot_revise"),
    ],
)
def test_revise_moves_that_cannot_apply(payload: dict[str, Any], code: str) -> None:
    h = Harness()
    h.start(name="Ann")
    before = h.stored("fi_1")
    refused(h.call("form_revise", {"form": "signup", **payload}), code)
    assert h.stored("fi_1") == before


def test_retract_with_nothing_to_retract_gets_a_hint() -> None:
    h = Harness()
    h.start()
    refused(
        h.call("form_revise", {"form": "signup", "field": "notes", "action": "retract"}),
        "cannot_revise",
    )


# --------------------------------------------------------------------------- closed forms


def _abandoned(h: Harness) -> str:
    instance = h.start(name="Ann")
    h.ok("form_abandon", form="signup", reason="user left")
    return instance


def _terminated(h: Harness) -> str:
    instance = h.start(name="Kid")
    result = h.ok("form_fill", form="signup", values={"age": 12})
    assert result["closed"] == "terminated"
    return instance


def _completed(h: Harness) -> str:
    instance = h.start(name="Ann", age=30)
    result = h.ok("form_fill", form="signup", values={"member": False}, submit=True)
    assert result["closed"] == "completed"
    return instance


@pytest.mark.parametrize("close", [_abandoned, _terminated, _completed])
@pytest.mark.parametrize(
    ("tool", "payload"),
    [
        ("form_fill", {"values": {"notes": "late"}}),
        ("form_fill", {"values": {"name": "Bob"}}),
        ("form_revise", {"field": "name", "action": "set", "value": "Bob"}),
        ("form_revise", {"field": "name", "action": "undo"}),
        ("form_revise", {"field": "notes", "action": "decline"}),
        ("form_abandon", {"reason": "again"}),
    ],
)
def test_writes_to_a_closed_form_are_refused_and_change_nothing(
    close: Any, tool: str, payload: dict[str, Any]
) -> None:
    # GIVEN a closed instance
    h = Harness()
    instance = close(h)
    before = h.stored(instance)
    # WHEN anything tries to write to it
    result = refused(h.call(tool, {"form": "signup", **payload}), "form_closed")
    # THEN it is refused, naming the state, and the stored instance is identical
    assert before.state.status in result["message"]
    assert h.stored(instance) == before
    # AND reading it still works
    assert h.ok("form_read", form="signup")["closed"] == before.state.status


# --------------------------------------------------------------------------- nothing changes


REJECTED_WRITES: list[tuple[str, object]] = [
    ("form_fill", {"form": "signup", "values": {"age": "42.5"}}),
    ("form_fill", {"form": "signup", "values": {"nmae": "Bob"}}),
    ("form_fill", {"form": "signup", "values": {"name": ""}}),
    ("form_fill", {"form": "signup", "values": {"notes": "x" * (MAX_VALUE_BYTES + 1)}}),
    ("form_fill", {"form": "signup", "values": {f"f{i}": 1 for i in range(101)}}),
    ("form_fill", {"form": "signup", "values": {"name": "Ann B"}}),
    ("form_fill", {"form": "signup", "values": {"name": "Bob"}, "bogus": True}),
    ("form_revise", {"form": "signup", "field": "name", "action": "decline"}),
    ("form_revise", {"form": "signup", "field": "name", "action": "redo"}),
    ("form_revise", {"form": "signup", "field": "nmae", "action": "undo"}),
    ("form_revise", {"form": "signup", "field": "name", "action": "set", "value": ["Bob"]}),
    ("form_abandon", {"form": "signup", "instance": "fi_9", "reason": "x"}),
    ("form_explode", {"form": "signup"}),
]


@pytest.mark.parametrize(("tool", "payload"), REJECTED_WRITES)
def test_rejected_writes_leave_the_stored_instance_identical(tool: str, payload: object) -> None:
    # GIVEN an instance with history
    h = Harness()
    h.start(name="Ann")
    h.ok("form_revise", form="signup", field="name", action="set", value="Ann B")
    before = h.stored("fi_1")
    # WHEN a write is refused (whole or every value in it)
    result = h.call(tool, payload)
    # THEN nothing was saved: same version, same logs, same bookkeeping
    assert result["ok"] is False or "Saved 0" in result["summary"] or "unchanged" in result
    after = h.stored("fi_1")
    assert after.version == before.version
    assert after.history == before.history
    assert after == before


def test_nothing_in_call_raises_for_hostile_input() -> None:
    h = Harness()
    h.start()
    hostile: list[tuple[str, object]] = [
        ("form_fill", object()),
        ("form_fill", {"form": "signup", "values": {"notes": b"bytes"}}),
        ("form_fill", {"form": "signup", "values": {1: "x"}}),
        ("form_fill", {"form": "signup", "values": {"x" * 10_000: 1}}),
        ("form_read", {"form": "signup", "part": "../../etc/passwd"}),
        ("form_start", {"form": "\x00"}),
        ("", {}),
    ]
    for tool, payload in hostile:
        result = h.call(tool, payload)
        assert result["ok"] is False, (tool, result)
        assert isinstance(result.get("error") or result.get("summary"), str)


def test_fields_named_like_step_settings_are_filled_and_read_like_any_other() -> None:
    # GIVEN a form whose fields are called title and when, the second gated on the first
    from forms.definition import FormDef, Step, field

    class Event(Step, title="Event", preview="what and when"):
        title: str = field("Title of the event")
        when: str | None = field("When it happens", when=lambda v: v.title is not None)

    definition = FormDef(id="event", version=1, title="Event", steps=[Event])
    service = service_for(definition, dispatch=False)
    caller = Caller("alice", "c")
    service.call(caller, "form_start", "s", {"form": "event"})
    # WHEN both are filled
    result = service.call(
        caller, "form_fill", "f", {"form": "event", "values": {"title": "Launch", "when": "May"}}
    )
    # THEN both are saved, and the step keeps its own title
    assert result["summary"].startswith("Saved 2 (title, when)"), result
    read = service.call(caller, "form_read", "r", {"form": "event", "part": "outline"})
    assert read["steps"][0]["title"] == "Event"
