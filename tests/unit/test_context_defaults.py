"""Context defaults: the locale, time zone and currency the caller's verified token carries fill
a form's empty fields at ``form_start``, below every other source of a value, marked as from
the account until confirmed, whatever memory does and however its store behaves."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Annotated, Any

import pytest
from pydantic import Field

from forms import Caller, FormDef, FormInstance, Step, field
from forms.app import memory as metrics
from forms.app.recall import plan_recall_step
from forms.compiler import compile_form
from forms.memory import Vocabulary
from formwork.aws.auth import MAX_CONTEXT_CLAIM, context_from_event
from formwork.config import DEFAULT_CONTEXT_CLAIMS, ConfigError, Settings
from tests.support import T0, RacingStore
from tests.unit.memory_for_tests import DAY, RecordingFacts, Talk, Timer, memory_service

YEAR = 365 * DAY
CONTEXT = (
    ("person.locale", "en-GB"),
    ("person.timezone", "Europe/London"),
    ("person.currency", "GBP"),
)
ALICE = Caller("alice", "conv-1", context=CONTEXT)
MARK = "from your account, unconfirmed (resend once confirmed): "


class Preferences(Step, title="Preferences"):
    locale: str = field("Locale", memory="person.locale")
    zone: str = field("Time zone", memory="person.timezone")
    currency: str = field("Currency", memory="person.currency")
    nickname: str | None = field("Nickname")


preferences = FormDef(id="preferences", version=1, title="Preferences", steps=[Preferences])


class Narrow(Step, title="Narrow"):
    language: Annotated[str, Field(max_length=2)] = field("Language", memory="person.locale")
    zone: str = field("Time zone", memory="person.timezone")


narrow = FormDef(id="narrow", version=1, title="Narrow", steps=[Narrow])


def start(
    facts: RecordingFacts | None = None,
    caller: Caller = ALICE,
    definition: FormDef = preferences,
    **options: Any,
) -> tuple[Talk, dict[str, Any], RecordingFacts]:
    facts = facts if facts is not None else RecordingFacts()
    values = options.pop("values", None)
    talk = Talk(memory_service(definition, facts=facts, **options), caller)
    result = talk.call("form_start", form=definition.id, **({"values": values} if values else {}))
    assert result["ok"] is True, result
    return talk, result, facts


def stored(talk: Talk) -> FormInstance:
    return talk.store.get("fi_1")


def rows(talk: Talk) -> dict[str, dict[str, Any]]:
    """The field rows a read shows: the open step's, or the outline's once complete."""
    read = talk.read("preferences")
    found = read.get("fields") or [row for step in read["steps"] for row in step["fields"]]
    return {row["id"]: row for row in found}


def in_force(talk: Talk, field_id: str) -> Any:
    revision = stored(talk).field(field_id).in_force()
    return None if revision is None else (revision.value, revision.by, revision.actor)


# ---------------------------------------------------------------- reading the claims


def event(claims: dict[str, Any] | None) -> dict[str, Any]:
    if claims is None:
        return {"requestContext": {"http": {"method": "POST"}}}
    return {"requestContext": {"authorizer": {"jwt": {"claims": claims}}}}


def test_the_mapped_claims_are_read_as_fact_key_value_pairs() -> None:
    claims = {"sub": "alice", "locale": " en-GB ", "zoneinfo": "Europe/London", "currency": "GBP"}
    assert context_from_event(event(claims), DEFAULT_CONTEXT_CLAIMS) == CONTEXT


@pytest.mark.parametrize(
    ("claims", "expected"),
    [
        ({"sub": "alice"}, ()),  # none of them: nothing, not empty values
        ({"locale": 42, "zoneinfo": ["Europe/London"], "currency": {"code": "GBP"}}, ()),
        ({"locale": "", "zoneinfo": "   ", "currency": None}, ()),
        ({"locale": "e" * (MAX_CONTEXT_CLAIM + 1), "currency": "GBP"}, (CONTEXT[2],)),
        ({"locale": "en\nGB", "zoneinfo": "Europe/London\x00"}, ()),
        ({"language": "fr-FR", "tz": "Europe/Paris", "https://x.example/currency": "EUR"}, ()),
    ],
    ids=["missing", "not-strings", "blank", "oversized", "control-characters", "unmapped-names"],
)
def test_a_claim_that_is_missing_or_malformed_is_left_out_never_refused(
    claims: dict[str, Any], expected: tuple[tuple[str, str], ...]
) -> None:
    assert context_from_event(event(claims), DEFAULT_CONTEXT_CLAIMS) == expected


def test_only_the_verified_claims_are_read_never_headers_or_the_body() -> None:
    # GIVEN an event without an authorizer, whose headers and body name a locale
    unverified = {
        **event(None),
        "headers": {"locale": "en-GB", "x-locale": "en-GB"},
        "body": '{"locale": "en-GB"}',
        "queryStringParameters": {"locale": "en-GB"},
    }
    # THEN there is no context at all (and no error)
    assert context_from_event(unverified, DEFAULT_CONTEXT_CLAIMS) == ()
    # AND a deployment that maps no claims reads none
    assert context_from_event(event({"locale": "en-GB"}), ()) == ()


def test_a_deployment_maps_its_own_claim_names_or_turns_defaults_off() -> None:
    assert Settings.from_env({}).context_claims == DEFAULT_CONTEXT_CLAIMS
    custom = Settings.from_env(
        {"FORMWORK_CONTEXT_CLAIMS": "person.locale=lang, person.currency=https://x.example/cur"}
    )
    assert custom.context_claims == (
        ("person.locale", "lang"),
        ("person.currency", "https://x.example/cur"),
    )
    claims = {"lang": "fr-FR", "locale": "en-GB", "https://x.example/cur": "EUR"}
    assert context_from_event(event(claims), custom.context_claims) == (
        ("person.locale", "fr-FR"),
        ("person.currency", "EUR"),
    )
    for off in ("", "off", "OFF", "none"):
        assert Settings.from_env({"FORMWORK_CONTEXT_CLAIMS": off}).context_claims == ()


@pytest.mark.parametrize(
    "value",
    ["person.locale", "Person.Locale=locale", "person.locale=a,person.locale=b", "p.l=a b", "x=y"],
)
def test_a_malformed_mapping_fails_the_deployment_loudly(value: str) -> None:
    with pytest.raises(ConfigError, match="FORMWORK_CONTEXT_CLAIMS"):
        Settings.from_env({"FORMWORK_CONTEXT_CLAIMS": value})


# ---------------------------------------------------------------- the vocabulary


@pytest.mark.parametrize(
    ("key", "good", "bad"),
    [
        ("person.locale", ["en", "en-GB", "zh-Hant-TW", "de-CH-1996"], ["en_GB", "english!", "e"]),
        (
            "person.timezone",
            ["UTC", "Europe/London", "Etc/GMT+5"],
            ["Mars/Base", "../etc/x", "utc"],
        ),
        ("person.currency", ["EUR", "GBP"], ["eur", "EURO", "€"]),
    ],
)
def test_the_context_keys_take_only_values_of_their_kind(
    key: str, good: list[str], bad: list[str]
) -> None:
    fact_key = Vocabulary.default().get(key)
    assert fact_key.decay == "years" and fact_key.storable
    assert all(fact_key.type.validate(v).__class__.__name__ == "Accepted" for v in good)
    assert all(fact_key.type.validate(v).__class__.__name__ == "Rejected" for v in bad)


# ---------------------------------------------------------------- filling, marking


def test_a_start_fills_each_empty_field_from_the_account_and_marks_it() -> None:
    # WHEN alice, whose token carries a locale, a zone and a currency, starts the form
    talk, result, facts = start()
    # THEN each field holds the claim's value, by memory, its actor the claim's key
    assert in_force(talk, "locale") == ("en-GB", "memory", "claim:person.locale")
    assert in_force(talk, "zone") == ("Europe/London", "memory", "claim:person.timezone")
    assert in_force(talk, "currency") == ("GBP", "memory", "claim:person.currency")
    assert stored(talk).field("locale").in_force().note == "from your account: Locale en-GB"  # type: ignore[union-attr]
    # AND the result, the status line and the rows say the values came from the account
    assert result["summary"] == (
        "Started Preferences; filled 3 from your account, unconfirmed (locale, zone, currency)."
    )
    assert result["status_line"].splitlines()[-1] == (
        MARK + "Locale en-GB · Time zone Europe/London · Currency GBP"
    )
    shown = rows(talk)
    assert shown["locale"]["memory"] == "from your account; unconfirmed"
    assert "memory" not in shown["nickname"]
    # AND nothing of the claims became a fact: the token carries them on every call
    assert facts.head_of("alice", "person.locale") is None
    assert "append" not in facts.requests


def test_a_principal_with_no_claim_gets_the_key_absent_not_empty() -> None:
    # GIVEN bob's token carries a locale only
    bob = Caller("bob", "conv-1", context=(("person.locale", "de-DE"),))
    talk, result, _ = start(caller=bob)
    # THEN the zone and the currency are absent: no revision, no mark, no mention
    instance = stored(talk)
    assert set(instance.history) == {"locale"}
    assert set(instance.state.recalled) == {"locale"}
    assert "zone" not in result["summary"] and "Time zone Europe" not in result["status_line"]
    shown = rows(talk)
    assert "value" not in shown["zone"] and "memory" not in shown["zone"]


def test_a_value_its_key_or_its_field_refuses_is_skipped_never_coerced() -> None:
    # GIVEN a zone no database knows, and a language field that takes two letters
    caller = Caller(
        "alice", "conv-1", context=(("person.locale", "en-GB"), ("person.timezone", "Mars/Base"))
    )
    talk, result, _ = start(caller=caller, definition=narrow)
    # THEN neither is written, nor cut to fit: both fields stay empty and unmarked
    assert stored(talk).history == {} and stored(talk).state.recalled == {}
    assert "account" not in result["summary"]


def test_a_webhook_start_gets_no_context_defaults() -> None:
    webhook = Caller("alice", "conv-1", source="webhook", context=CONTEXT)
    talk, _, facts = start(caller=webhook)
    assert stored(talk).history == {} and stored(talk).state.recalled == {}
    assert facts.requests == []


# ---------------------------------------------------------------- precedence


def test_precedence_start_value_then_memory_fill_then_memory_offer_then_default() -> None:
    # GIVEN alice's memory: a fresh currency (fills), a zone said four years ago (offered)
    facts = RecordingFacts()
    facts.stated("alice", "person.currency", "EUR", at=T0 - 30 * DAY)
    facts.stated("alice", "person.timezone", "Europe/Paris", at=T0 - 4 * YEAR)
    facts.requests.clear()
    # WHEN she starts the form telling it her locale
    talk, result, _ = start(facts, values={"locale": "fr-FR"})
    # THEN what she said stands, alone in its log
    assert [(r.value, r.by) for r in stored(talk).field("locale").revisions] == [("fr-FR", "agent")]
    # AND memory's fresh fact outranks the claim's currency
    assert in_force(talk, "currency") == ("EUR", "memory", "person.currency")
    # AND memory's offer keeps the claim's zone out: the field stays empty, to be asked
    assert stored(talk).field("zone").count == 0
    assert stored(talk).state.recalled["zone"].use == "offer"
    assert "account" not in result["summary"]


def test_the_default_fills_what_memory_has_nothing_for() -> None:
    # GIVEN a zone fact too old even to offer, and a start naming the currency (refused)
    facts = RecordingFacts()
    facts.stated("alice", "person.timezone", "Europe/Paris", at=T0 - 11 * YEAR)
    talk, result, _ = start(facts, values={"currency": " "})
    # THEN the zone comes from the account; the currency is left to what the call said
    assert in_force(talk, "zone") == ("Europe/London", "memory", "claim:person.timezone")
    assert stored(talk).field("currency").count == 0
    assert result["rejected"][0]["field"] == "currency"
    assert "filled 2 from your account, unconfirmed (locale, zone)" in result["summary"]


def test_memory_and_defaults_land_in_the_start_write_and_a_later_answer_stands_on_top() -> None:
    # GIVEN a fresh currency in memory, and alice's own locale landing right after the start
    facts = RecordingFacts()
    facts.stated("alice", "person.currency", "EUR", at=T0 - DAY)
    store = RacingStore()
    service = memory_service(preferences, facts=facts, store=store)
    talk = Talk(service, ALICE)
    store.then = lambda: talk.call(
        "form_fill", form="preferences", values={"locale": "en-US"}, call_id="user-said"
    )
    # WHEN the form starts
    talk.start("preferences")
    # THEN memory and the defaults were in the start's one write (no commit of their own),
    # and her answer landed on top: the locale in force is hers; the currency memory's, the
    # zone the account's
    instance = stored(talk)
    assert [(r.value, r.by) for r in instance.field("locale").revisions] == [
        ("en-GB", "memory"),
        ("en-US", "agent"),
    ]
    assert in_force(talk, "currency") == ("EUR", "memory", "person.currency")
    assert in_force(talk, "zone") == ("Europe/London", "memory", "claim:person.timezone")
    assert [c.call is not None for c in store.commits] == [True]  # her fill, nothing else


# ---------------------------------------------------------------- whatever memory does


def test_memory_off_for_the_principal_still_gets_the_defaults() -> None:
    facts = RecordingFacts()
    facts.stated("alice", "person.currency", "EUR", at=T0 - DAY)
    facts.memory_off("alice")
    facts.requests.clear()
    talk, _, _ = start(facts)
    assert facts.requests == ["settings"]  # not one fact read
    assert in_force(talk, "currency") == ("GBP", "memory", "claim:person.currency")


def test_a_deployment_without_memory_still_gets_the_defaults() -> None:
    talk, result, facts = start(memory=False)
    assert facts.requests == []
    assert in_force(talk, "locale") == ("en-GB", "memory", "claim:person.locale")
    assert "filled 3 from your account" in result["summary"]


def test_a_failing_fact_store_still_gets_the_defaults() -> None:
    facts = RecordingFacts()
    facts.fail = True
    counted: list[str] = []
    talk, result, _ = start(facts, counted=counted)
    assert counted == [metrics.RECALL_FAILED]
    assert in_force(talk, "zone") == ("Europe/London", "memory", "claim:person.timezone")
    assert MARK in result["status_line"]


def test_a_slow_fact_store_still_gets_the_defaults_on_time() -> None:
    facts = RecordingFacts()
    facts.stated("alice", "person.currency", "EUR", at=T0 - DAY)
    timer = Timer()
    facts.on_request = lambda name: timer.advance(1.0)
    counted: list[str] = []
    talk, _, _ = start(facts, timer=timer, counted=counted)
    assert counted == [metrics.RECALL_TIMEOUT, metrics.RECALL_OWED]
    # memory's late currency is not used; the account's is
    assert in_force(talk, "currency") == ("GBP", "memory", "claim:person.currency")


def test_a_fact_store_that_never_answers_does_not_hold_the_defaults() -> None:
    facts = RecordingFacts()
    asked, release = threading.Event(), threading.Event()

    def stall(name: str) -> None:
        if name == "settings":
            asked.set()
            release.wait()

    facts.on_request = stall
    pool = ThreadPoolExecutor(max_workers=1)
    try:
        talk, _, _ = start(
            facts, timer=time.monotonic, executor=pool, deadline=timedelta(milliseconds=50)
        )
        assert asked.is_set() and not release.is_set()
        assert in_force(talk, "locale") == ("en-GB", "memory", "claim:person.locale")
    finally:
        release.set()
        pool.shutdown(wait=True)


# ---------------------------------------------------------------- afterwards


def test_resending_the_value_confirms_it_and_records_it_as_said() -> None:
    # GIVEN the locale filled from the account
    talk, _, facts = start()
    # WHEN the user confirms it and the agent sends it again
    saved = talk.fill("preferences", locale="en-GB")
    # THEN the answer is the agent's, unmarked, and memory records it as stated, like any
    # answer (never as the confirmation of some fact)
    assert in_force(talk, "locale") == ("en-GB", "agent", "alice")
    assert "Locale en-GB" not in saved["status_line"]
    head = facts.head_of("alice", "person.locale")
    assert head is not None and head.fact is not None
    assert (head.fact.value, head.fact.revision) == ("en-GB", 0)


def test_clear_memory_clears_the_defaults_and_undo_brings_one_back_marked() -> None:
    talk, _, _ = start()
    cleared = talk.revise("preferences", action="clear_memory")
    assert cleared["ok"] is True and cleared["cleared"] == ["locale", "zone", "currency"]
    assert stored(talk).field("locale").in_force().kind == "retraction"  # type: ignore[union-attr]
    talk.revise("preferences", field="locale", action="undo")
    assert in_force(talk, "locale") == ("en-GB", "memory", "claim:person.locale")
    assert MARK + "Locale en-GB" in talk.read("preferences")["status_line"]


def test_the_plan_is_pure_and_writes_nothing_when_no_field_takes_a_default() -> None:
    form = compile_form(preferences)
    talk, _, _ = start(caller=Caller("alice", "conv-1"), memory=False)
    instance = stored(talk)
    vocabulary = Vocabulary.default()
    assert plan_recall_step(form, instance, [], vocabulary=vocabulary, now=T0) is None
    unknown = {"person.blood_type": "O", "person.locale": "x"}
    assert (
        plan_recall_step(form, instance, [], vocabulary=vocabulary, now=T0, context=unknown) is None
    )
    step = plan_recall_step(
        form, instance, [], vocabulary=vocabulary, now=T0, context=dict(CONTEXT)
    )
    assert step is not None and step.defaulted == ("locale", "zone", "currency")
    assert (step.filled, step.offered) == ((), ())
