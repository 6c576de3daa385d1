"""The person's writes from their form page (``forms.app.page_writes``): each a revision by
``user`` through the tools' write path, guarded by what the page showed, applied once per key,
and told to the agent in its next status line."""

from __future__ import annotations

import itertools
from typing import Any

from forms.app.conversation import Caller
from forms.app.page_writes import PagePost, head, input_kind, typed_value
from forms.examples import health_check
from forms.schema import field_type
from tests.unit.forms_for_tests import CONVERSATION, PRINCIPAL, Harness, harness
from tests.unit.memory_for_tests import ALICE, RecordingFacts, Talk, alice_said, memory_service

PERSON = Caller(PRINCIPAL, CONVERSATION, source="user")
_keys = itertools.count(1)


def post(h: Harness | Talk, action: str, *, instance: str = "fi_1", **fields: Any) -> PagePost:
    """A post as the page renders it now: the instance's version, the field's head."""
    stored = h.store.get(instance)
    field_id = fields.get("field")
    seen = head(stored.field(field_id)) if field_id is not None else None
    return PagePost(
        action=action,
        key=fields.pop("key", f"page-key-{next(_keys)}"),
        version=fields.pop("version", stored.version),
        seen=fields.pop("seen", seen),
        **fields,
    )


def send(h: Harness | Talk, page_post: PagePost, caller: Caller = PERSON) -> dict[str, Any]:
    return dict(h.service.page_write(caller, "fi_1", page_post))


def started() -> Harness:
    h = harness(executors=False)
    h.start({"name": "Ann", "age": 30})
    return h


def test_an_answer_from_the_page_is_a_user_revision_and_the_agent_hears_of_it() -> None:
    h = started()
    # WHEN the person corrects the age on their page
    result = send(h, post(h, "answer", field="age", value="31"))
    # THEN it is saved as the person's own revision, read as a number
    assert result["ok"] is True, result
    revision = h.instance().field("age").in_force()
    assert revision is not None and (revision.value, revision.by) == (31, "user")
    assert revision.actor == PRINCIPAL and revision.tool_call_id is not None
    # AND the agent's next status line says what the person changed
    assert "the user changed on their form page: Age = 31" in "\n".join(h.service.status(h.caller))
    # AND after the agent's next write it is no longer repeated, having been said once more
    said = h.fill(mode="rail")
    assert "the user changed on their form page: Age = 31" in said["status_line"]
    assert "form page" not in "\n".join(h.service.status(h.caller))


def test_a_double_click_applies_once_and_answers_the_same() -> None:
    h = started()
    twice = post(h, "answer", field="age", value="31")
    first = send(h, twice)
    # WHEN the same post (its key) is sent again, after the first landed
    again = send(h, twice)
    # THEN it is answered as the first was (a replay) and nothing is written twice
    assert again.pop("replayed") is True
    assert {**again, "status_line": ""} == {**first, "status_line": ""}
    assert h.instance().field("age").count == 2


def test_a_key_sent_with_another_post_is_refused_not_applied() -> None:
    h = started()
    send(h, post(h, "answer", field="age", value="31", key="same-key-1"))
    other = send(h, post(h, "answer", field="age", value="40", key="same-key-1"))
    assert other["ok"] is False and other["error"] == "tool_call_conflict"
    revision = h.instance().field("age").in_force()
    assert revision is not None and revision.value == 31


def test_a_field_the_agent_wrote_since_the_page_rendered_is_not_overwritten() -> None:
    h = started()
    rendered = post(h, "answer", field="age", value="31")
    # GIVEN the agent wrote the age after the page was rendered
    h.fill(age=32)
    # WHEN the person's post of the age arrives
    result = send(h, rendered)
    # THEN it is refused as changed meanwhile, and the agent's answer stands
    assert result["ok"] is False and result["error"] == "changed_meanwhile", result
    assert "Age was changed while you were writing" in result["message"]
    revision = h.instance().field("age").in_force()
    assert revision is not None and (revision.value, revision.by) == (32, "agent")
    # AND a post rendered after that lands
    assert send(h, post(h, "answer", field="age", value="33"))["ok"] is True


def test_a_write_to_another_field_meanwhile_does_not_stop_the_post() -> None:
    h = started()
    rendered = post(h, "answer", field="age", value="31")
    h.fill(mode="rail")
    assert send(h, rendered)["ok"] is True
    revision = h.instance().field("age").in_force()
    assert revision is not None and revision.by == "user"


def test_retract_undo_redo_and_decline_from_the_page() -> None:
    h = started()
    assert send(h, post(h, "retract", field="age"))["ok"] is True
    assert h.status("age") == "pending"
    assert send(h, post(h, "undo", field="age"))["ok"] is True
    revision = h.instance().field("age").in_force()
    assert revision is not None and revision.value == 30
    assert send(h, post(h, "redo", field="age"))["ok"] is True
    assert h.status("age") == "pending"
    # a required field cannot be declined; an optional one can
    refused = send(h, post(h, "decline", field="age"))
    assert refused["ok"] is False and refused["error"] == "cannot_revise"
    assert send(h, post(h, "decline", field="nickname"))["ok"] is True
    assert h.status("nickname") == "declined"
    line = "\n".join(h.service.status(h.caller))
    assert "Age (taken back)" in line and "Nickname (declined)" in line


def test_a_bad_value_is_refused_with_the_fields_words_and_nothing_stored() -> None:
    h = started()
    result = send(h, post(h, "answer", field="age", value="old"))
    assert result["ok"] is False
    assert result["rejected"][0]["field"] == "age"
    revision = h.instance().field("age").in_force()
    assert revision is not None and revision.value == 30


def test_bad_posts_are_refused_as_data() -> None:
    h = started()
    for bad in (
        post(h, "explode", field="age"),
        post(h, "answer", field="age", value="31", key="not a key!"),
        post(h, "answer", field=None, value="31"),
        post(h, "undo", field="age", seen=None),
        post(h, "answer", field="no_such_field", value="1"),
    ):
        result = send(h, bad)
        assert result["ok"] is False, bad
        assert result.get("error") == "bad_request" or "unknown" in result, result
    assert h.instance().version == 1


def test_another_principals_instance_is_unknown() -> None:
    h = started()
    mallory = Caller("mallory", CONVERSATION, source="user")
    result = send(h, post(h, "answer", field="age", value="31"), mallory)
    assert result["ok"] is False and result["error"] == "unknown_instance"
    revision = h.instance().field("age").in_force()
    assert revision is not None and revision.value == 30


def test_submit_from_the_page_once_complete() -> None:
    h = harness(executors=False, closes_on_complete=False)
    h.start({"name": "Ann", "age": 30, "mode": "rail", "amount": 100, "consent": True})
    result = send(h, post(h, "submit"))
    assert result["ok"] is True and result.get("submitted") is not False, result
    assert h.instance().state.status == "completed"
    # a form that changed since the page rendered is not submitted on what it showed
    h2 = harness(executors=False, closes_on_complete=False)
    h2.start({"name": "Ann", "age": 30, "mode": "rail", "amount": 100, "consent": True})
    stale = post(h2, "submit")
    h2.fill(amount=120)
    refused = send(h2, stale)
    assert refused["ok"] is False and refused["error"] == "changed_meanwhile"
    assert h2.instance().state.status == "open"


# ------------------------------------------------------------------ memory on the page


def memory_talk() -> Talk:
    facts = alice_said(RecordingFacts())
    talk = Talk(memory_service(health_check, facts=facts), ALICE)
    talk.start("health-check")
    talk.fill("health-check", feeling="good")
    return talk


ME = Caller(ALICE.principal, ALICE.conversation_id, source="user")


def test_submit_is_refused_while_memory_fills_stand_unconfirmed() -> None:
    talk = memory_talk()
    talk.fill("health-check", weight_kg=71)
    result = send(talk, post(talk, "submit"), ME)
    assert result["ok"] is False and result["error"] == "memory_unconfirmed", result
    assert "Date of birth" in result["message"] and "Height (cm)" in result["message"]
    assert talk.store.get("fi_1").state.status == "open"
    # WHEN the person confirms every fill at once
    confirmed = send(talk, post(talk, "confirm_memory"), ME)
    assert confirmed["ok"] is True, confirmed
    born = talk.store.get("fi_1").field("date_of_birth").in_force()
    assert born is not None and born.by == "user"
    # THEN submit goes through
    done = send(talk, post(talk, "submit"), ME)
    assert done["ok"] is True and talk.store.get("fi_1").state.status == "completed", done


def test_clearing_memory_fills_from_the_page_retracts_them_all() -> None:
    talk = memory_talk()
    assert send(talk, post(talk, "clear_memory"), ME)["ok"] is True
    instance = talk.store.get("fi_1")
    for field_id in ("date_of_birth", "height_cm"):
        revision = instance.field(field_id).in_force()
        assert revision is not None and revision.kind == "retraction" and revision.by == "user"


def test_applying_an_offer_writes_the_offered_value_by_the_person() -> None:
    talk = memory_talk()
    offer = talk.store.get("fi_1").state.recalled["weight_kg"]
    assert offer.use == "offer"
    result = send(talk, post(talk, "apply", field="weight_kg", value=offer.value), ME)
    assert result["ok"] is True, result
    weight = talk.store.get("fi_1").field("weight_kg").in_force()
    assert weight is not None and weight.by == "user" and weight.value == offer.value


# ------------------------------------------------------------------ inputs


def test_each_field_type_gets_the_input_a_person_can_fill() -> None:
    from datetime import date
    from decimal import Decimal
    from typing import Annotated, Literal

    from pydantic import Field

    def kind(annotation: Any) -> tuple[str, tuple[str, ...]]:
        return input_kind(field_type(annotation).json_schema)

    assert kind(str) == ("text", ())
    assert kind(Annotated[str, Field(max_length=1000)]) == ("long_text", ())
    assert kind(int) == ("number", ())
    assert kind(Decimal) == ("number", ())
    assert kind(bool) == ("boolean", ())
    assert kind(date) == ("date", ())
    assert kind(Literal["air", "rail"]) == ("choice", ("air", "rail"))
    assert kind(Literal["air", "rail"] | None) == ("choice", ("air", "rail"))
    assert kind(list[Literal["a", "b"]]) == ("choices", ("a", "b"))
    assert kind(dict[str, int]) == ("json", ())
    assert typed_value("json", '{"a": 1}') == {"a": 1}
    assert typed_value("json", "{broken") == "{broken"
    assert typed_value("number", "12") == "12"
    assert typed_value("choices", ["a"]) == ["a"]


def test_a_key_the_page_draws_may_begin_with_a_dash_or_an_underscore() -> None:
    # secrets.token_urlsafe draws from A-Z a-z 0-9 - _, first character included
    h = started()
    for key in ("-leading-dash-key", "_leading_underscore"):
        result = send(h, post(h, "answer", field="age", value="31", key=key))
        assert result["ok"] is True, result
    assert send(h, post(h, "answer", field="age", value="32", key="short"))["ok"] is False
