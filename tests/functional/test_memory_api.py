"""Memory over HTTP: API Gateway events through ``formwork.aws.api.lambda_handler``.

A chatbot backend states a principal's facts (``PUT /memory/facts/{key}``), and the user reads
them with what recall would do with each, reads one with its history and as of a past time,
confirms, corrects, deletes and exports them, and turns memory off. Whose memory is always the
verified principal's: a body or query naming another is never honoured, and another
principal's (or tenant's) fact is answered exactly like a missing one. Then bad input, lost
races, the settings and the App parts the routes are served by.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from forms.app.loop import MAX_CONFLICT_RETRIES
from forms.memory import (
    FactConflict,
    FactHead,
    FactRevision,
    MemorySettings,
    Source,
    fact_key,
)
from forms.storage.facts import InMemoryFactStore
from formwork.bootstrap import bootstrap
from formwork.config import ConfigError, Settings
from tests.functional.conftest import (
    SETTINGS,
    Api,
    RecordingStore,
    Response,
    build_event,
    make_service,
)
from tests.functional.test_cold_start import MEMORY, run

ALICE: dict[str, str] = {"sub": "alice", "tenant": "acme"}
BOB: dict[str, str] = {"sub": "bob", "tenant": "acme"}
ALICE_AT_GLOBEX: dict[str, str] = {"sub": "alice", "tenant": "globex"}
NOBODY: dict[str, str] = {"sub": "nobody", "tenant": "acme"}
T0 = datetime(2026, 9, 3, 10, 0, tzinfo=UTC)
WEIGHT = "/memory/facts/person.weight_kg"
HEIGHT = "/memory/facts/person.height_cm"
BIRTH = "/memory/facts/person.date_of_birth"


class Clock:
    """The App's clock (Unix seconds): a second per reading from ``T0``; ``advance`` jumps."""

    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        self.now += timedelta(seconds=1)
        return self.now.timestamp()

    def advance(self, days: int) -> None:
        self.now += timedelta(days=days)


class CountingFacts(InMemoryFactStore):
    """The in-memory fact store, counting appends and settings writes."""

    def __init__(self) -> None:
        super().__init__()
        self.appends = 0

    def append(self, principal: str, revision: FactRevision) -> FactHead:
        self.appends += 1
        return super().append(principal, revision)


class Memory:
    """The memory routes, as a chatbot backend and a fact editor call them."""

    def __init__(self, api: Api, facts: CountingFacts, clock: Clock) -> None:
        self.api, self.facts, self.clock = api, facts, clock

    def put(self, path: str, body: Any, claims: dict[str, str] = ALICE) -> Response:
        text = body if isinstance(body, str) else json.dumps(body)
        return self.api.send(build_event("PUT", path, body=text, claims=claims))

    def get(self, path: str, claims: dict[str, str] = ALICE, **query: str) -> Response:
        return self.api.get(path, claims=claims, query=query or None)

    def confirm(self, path: str, claims: dict[str, str] = ALICE) -> Response:
        return self.api.post(f"{path}/confirm", {}, claims=claims)

    def delete(self, path: str, claims: dict[str, str] = ALICE) -> Response:
        return self.api.send(build_event("DELETE", path, claims=claims))

    def stated(self, path: str, body: Any, claims: dict[str, str] = ALICE) -> dict[str, Any]:
        response = self.put(path, body, claims)
        assert response.status == 200, response
        answer: dict[str, Any] = response.json()
        return answer

    def lines(self, claims: dict[str, str] = ALICE) -> dict[str, dict[str, Any]]:
        response = self.get("/memory/facts", claims)
        assert response.status == 200, response
        return {line["key"]: line for line in response.json()["facts"]}


def serve(settings: Settings = SETTINGS) -> Memory:
    facts, clock = CountingFacts(), Clock()
    return Memory(Api.over(make_service(), settings, facts=facts, clock=clock), facts, clock)


@pytest.fixture
def memory() -> Memory:
    return serve()


# ---------------------------------------------------------------------------- stating


def test_words_alone_are_read_by_a_rule_and_the_rule_shows(memory: Memory) -> None:
    # WHEN the chatbot backend states alice's height in her words
    answer = memory.stated(HEIGHT, {"words": "5'8\""})
    # THEN the value was read from them, and the answer says by which rule
    derivation = {"rule": "feet_inches_to_cm", "words": "5'8\""}
    assert (answer["key"], answer["change"], answer["revision"]) == (
        "person.height_cm",
        "stated",
        0,
    )
    assert answer["derivation"] == derivation
    fact = answer["fact"]
    assert (fact["value"], fact["shown"], fact["label"]) == (173, "173 cm", "Height")
    assert fact["derivation"] == derivation and fact["source"] == {"kind": "api"}
    assert fact["stated_at"] == fact["recorded_at"] == "2026-09-03T10:00:01+00:00"
    # AND a value given with words that agree is kept, with the words
    weight = memory.stated(WEIGHT, {"value": 70, "words": "70 kg"})
    assert "derivation" not in weight and weight["fact"]["value"] == "70"


@pytest.mark.parametrize(
    ("path", "body", "code", "words"),
    [
        (HEIGHT, {"words": "about 5 foot something"}, "no_rule", "no rule reads"),
        (HEIGHT, {"value": 180, "words": "5'8\""}, "words_disagree", "reads as 173 cm"),
        (HEIGHT, {"value": 500}, "invalid_value", "person.height_cm"),
        (HEIGHT, {}, "no_value", "neither a value nor words"),
        (
            BIRTH,
            {
                "value": "1990-05-01",
                "valid_from": "2020-01-01T00:00:00Z",
                "valid_until": "2019-01-01T00:00:00Z",
            },
            "invalid_period",
            "valid_until",
        ),
    ],
)
def test_a_statement_the_keys_rules_refuse_is_422_and_writes_nothing(
    memory: Memory, path: str, body: dict[str, Any], code: str, words: str
) -> None:
    # WHEN a statement its key cannot take is sent
    response = memory.put(path, body)
    # THEN it is the planner's refusal, as it is, and nothing was appended
    assert response.status == 422, response
    refusal = response.json()
    assert refusal["error"] == code and words in refusal["message"]
    assert memory.facts.appends == 0
    assert memory.get("/memory/export").json()["facts"] == []


def test_a_backend_says_where_and_when_the_user_said_it(memory: Memory) -> None:
    # WHEN the backend states a height alice gave yesterday in its agent's tool call
    yesterday = (memory.clock.now - timedelta(days=1)).isoformat()
    source = {"kind": "tool_call", "ref": "call_Lx7"}
    body = {"value": 173, "stated_at": yesterday, "source": source}
    stated = memory.stated("/memory/facts/person.height_cm", body)
    # THEN the fact carries both, and its age counts from yesterday
    assert stated["fact"]["source"] == source
    assert stated["fact"]["stated_at"] == yesterday
    assert memory.lines()["person.height_cm"]["age_days"] == 1
    # AND without them it is the API's, stated now
    weight = memory.stated("/memory/facts/person.weight_kg", {"value": 70})["fact"]
    assert weight["source"] == {"kind": "api"}


@pytest.mark.parametrize(
    "extra",
    [
        {"stated_at": "2999-01-01T00:00:00Z"},
        {"source": {"kind": "email"}},
        {"source": {"kind": "api", "ref": "r" * 201}},
        {"source": {"kind": "api", "principal": "acme/bob"}},
        {"stated_at": "2026-09-01"},
    ],
)
def test_a_bad_stated_at_or_source_is_422_and_writes_nothing(
    memory: Memory, extra: dict[str, Any]
) -> None:
    response = memory.put("/memory/facts/person.height_cm", {"value": 173, **extra})
    assert response.status == 422, response
    assert memory.facts.appends == 0


def test_a_do_not_store_key_is_refused_and_never_written(memory: Memory) -> None:
    # WHEN alice's current project is stated
    response = memory.put("/memory/facts/work.current_project", {"value": "the Q3 launch"})
    # THEN it is refused as never stored, and nothing of it exists
    assert response.status == 422
    assert response.json()["error"] == "not_stored"
    assert memory.facts.appends == 0
    assert memory.get("/memory/facts/work.current_project").status == 404


@pytest.mark.parametrize(
    ("key", "status", "code", "likely"),
    [
        ("person.weigth", 404, "unknown_fact_key", "person.weight_kg"),
        ("person.weight", 404, "unknown_fact_key", "person.weight_kg"),
        ("dob", 400, "bad_request", "person.date_of_birth"),
        ("Person.Weight", 400, "bad_request", "person.weight_kg"),
        ("person." + "x" * 80, 400, "bad_request", None),
    ],
)
def test_an_unknown_key_is_404_and_a_malformed_one_400_both_with_the_likely_keys(
    memory: Memory, key: str, status: int, code: str, likely: str | None
) -> None:
    # WHEN a fact is stated under a key the vocabulary lacks, or that is not a key at all
    response = memory.put(f"/memory/facts/{key}", {"value": 70})
    # THEN the refusal says which, with the keys it most likely meant, and nothing is written
    assert response.status == status, response
    body = response.json()
    assert body["error"] == code
    if likely is not None:
        assert likely in body["did_you_mean"]
    assert memory.facts.appends == 0


# ---------------------------------------------------------------------------- reading


def test_the_list_says_what_recall_would_do_with_each_fact_by_its_half_life(
    memory: Memory,
) -> None:
    # GIVEN alice's date of birth, height (in words) and weight, stated on 3 September
    memory.stated(BIRTH, {"value": "1990-05-01"})
    memory.stated(HEIGHT, {"words": "1.73 m"})
    memory.stated(WEIGHT, {"value": 70})
    # WHEN she lists her facts the same day
    lines = memory.lines()
    # THEN each carries its decay class and age, and what recall would do with it
    assert list(lines) == ["person.date_of_birth", "person.height_cm", "person.weight_kg"]
    assert [(line["decay"], line["age_days"], line["use"]) for line in lines.values()] == [
        ("never", 0, "fill"),
        ("years", 0, "fill"),
        ("weeks", 0, "offer"),
    ]
    assert lines["person.height_cm"]["note"] == (
        "from memory: Height 173 cm (derived from “1.73 m”), said 2026-09-03"
    )
    assert (
        lines["person.weight_kg"]["note"] == "from memory, confirm: Weight 70 kg, said 2026-09-03"
    )
    # WHEN 200 days pass
    memory.clock.advance(200)
    lines = memory.lines()
    # THEN the weight is too old to be used at all, the date of birth still fills
    weight = lines["person.weight_kg"]
    assert (weight["age_days"], weight["use"], weight["reason"]) == (200, "none", "too_old")
    assert "note" not in weight
    assert lines["person.date_of_birth"]["use"] == "fill"


def test_a_correction_keeps_the_wrong_value_and_as_of_answers_what_we_believed(
    memory: Memory,
) -> None:
    # GIVEN alice's weight stated as 70, then corrected to 75 ten days later
    memory.stated(WEIGHT, {"value": 70})
    memory.clock.advance(10)
    corrected = memory.stated(WEIGHT, {"value": 75, "correction": True})
    assert (corrected["change"], corrected["revision"]) == ("corrected", 1)
    # WHEN she reads the fact, then as believed five days after the first statement
    now = memory.get(WEIGHT).json()
    then = memory.get(WEIGHT, as_of="2026-09-08T10:00:00Z").json()
    # THEN now it is 75 over the same period, and the history holds both revisions
    assert now["current"]["value"] == "75" and now["current"]["use"] == "offer"
    assert [(r["seq"], r["change"], r["value"]) for r in now["history"]] == [
        (0, "stated", "70"),
        (1, "corrected", "75"),
    ]
    assert [p["value"] for p in now["timeline"]] == ["75"]
    assert now["timeline"][0]["valid_from"] == now["history"][0]["stated_at"]
    assert "as_of" not in now and "believed" not in now
    # AND then, 70 was believed
    assert then["as_of"] == "2026-09-08T10:00:00+00:00"
    assert then["believed"]["value"] == "70"
    assert [p["value"] for p in then["timeline"]] == ["70"]
    # (an offset whose "+" a query string turned into a space reads as the "+" it was)
    spaced = memory.get(WEIGHT, as_of="2026-09-08T12:00:00 02:00").json()
    assert spaced["as_of"] == "2026-09-08T12:00:00+02:00"
    assert (spaced["believed"], spaced["timeline"]) == (then["believed"], then["timeline"])
    # AND before anything was said, nothing was believed
    before = memory.get(WEIGHT, as_of="2026-01-01T00:00:00+00:00").json()
    assert before["believed"] is None and before["timeline"] == []


def test_a_contradiction_closes_the_old_period_instead_of_deleting_it(memory: Memory) -> None:
    # GIVEN alice lived in Lyon since January, then says in June she lives in Berlin since March
    city = "/memory/facts/address.city"
    memory.stated(city, {"value": "Lyon", "valid_from": "2026-01-01T00:00:00Z"})
    moved = memory.stated(city, {"value": "Berlin", "valid_from": "2026-03-01T00:00:00Z"})
    # THEN Berlin is the fact in force, and the timeline keeps Lyon until March
    assert moved["change"] == "stated" and moved["fact"]["value"] == "Berlin"
    timeline = memory.get(city).json()["timeline"]
    assert [(p["value"], p["valid_from"], p.get("valid_until")) for p in timeline] == [
        ("Lyon", "2026-01-01T00:00:00+00:00", "2026-03-01T00:00:00+00:00"),
        ("Berlin", "2026-03-01T00:00:00+00:00", None),
    ]


def test_a_move_planned_for_later_leaves_todays_city_in_force_in_the_editor(
    memory: Memory,
) -> None:
    # GIVEN alice lives in Lyon, and says she moves to Berlin in 30 days
    city = "/memory/facts/address.city"
    memory.stated(city, {"value": "Lyon"})
    move = (memory.clock.now + timedelta(days=30)).isoformat()
    memory.stated(city, {"value": "Berlin", "valid_from": move})
    # THEN the editor shows Lyon in force, as recall reads it, with the move in the timeline
    line = memory.lines()["address.city"]
    assert (line["value"], line["use"]) == ("Lyon", "fill")
    read = memory.get(city).json()
    assert read["current"]["value"] == "Lyon"
    assert [period["value"] for period in read["timeline"]] == ["Lyon", "Berlin"]
    # AND once the move's day has come, Berlin is the city in force
    memory.clock.advance(31)
    assert memory.lines()["address.city"]["value"] == "Berlin"


def test_confirming_makes_an_ageing_fact_fresh_and_the_same_value_again_confirms_it(
    memory: Memory,
) -> None:
    # GIVEN alice's weight, stated 200 days ago: too old to be offered
    memory.stated(WEIGHT, {"value": 70})
    memory.clock.advance(200)
    assert memory.lines()["person.weight_kg"]["use"] == "none"
    # WHEN she confirms it
    response = memory.confirm(WEIGHT)
    # THEN it is a confirmed revision, and the weight is offered again, as fresh
    assert response.status == 200
    confirmed = response.json()
    assert (confirmed["change"], confirmed["revision"]) == ("confirmed", 1)
    assert confirmed["fact"]["stated_at"] == "2026-09-03T10:00:01+00:00"
    assert confirmed["fact"]["confirmed_at"].startswith("2027-03-22")
    line = memory.lines()["person.weight_kg"]
    assert (line["use"], line["age_days"]) == ("offer", 0)
    # AND stating the same value again is a confirmation too
    again = memory.stated(WEIGHT, {"value": "70.0"})
    assert (again["change"], again["revision"]) == ("confirmed", 2)


def test_a_deleted_fact_is_never_recalled_and_its_content_is_erased(memory: Memory) -> None:
    # GIVEN alice's weight, stated then corrected
    memory.stated(WEIGHT, {"value": 70, "words": "70 kg"})
    memory.stated(WEIGHT, {"value": 72, "correction": True})
    # WHEN she deletes it
    response = memory.delete(WEIGHT)
    # THEN it is gone from her facts, its history keeps records without their content
    assert response.status == 200
    assert response.json() == {
        "key": "person.weight_kg",
        "change": "deleted",
        "revision": 2,
        "erased": 2,
        "recorded_at": "2026-09-03T10:00:03+00:00",
    }
    assert "person.weight_kg" not in memory.lines()
    read = memory.get(WEIGHT).json()
    assert read["current"] is None and read["timeline"] == []
    assert [(r["change"], r["erased"], "value" in r, "words" in r) for r in read["history"]] == [
        ("stated", True, False, False),
        ("corrected", True, False, False),
        ("deleted", False, False, False),
    ]
    # AND deleting or confirming it again is the 404 of no fact
    assert memory.delete(WEIGHT).json()["error"] == "no_fact"
    assert memory.confirm(WEIGHT).status == 404
    # AND it can be stated again: its history goes on
    assert memory.stated(WEIGHT, {"value": 68})["revision"] == 3


def test_the_export_holds_every_key_with_its_history_and_the_settings(memory: Memory) -> None:
    # GIVEN alice's height, and a weight she deleted
    memory.stated(HEIGHT, {"words": "5'8\""})
    memory.stated(WEIGHT, {"value": 70})
    memory.delete(WEIGHT)
    # WHEN she exports her memory
    response = memory.get("/memory/export")
    # THEN it is everything, by key, with what is in force and every revision
    assert response.status == 200
    export = response.json()
    assert export["principal"] == "acme/alice"
    assert export["settings"] == {"enabled": True, "changed_at": None, "deployment_enabled": True}
    assert [entry["key"] for entry in export["facts"]] == ["person.height_cm", "person.weight_kg"]
    height, weight = export["facts"]
    assert height["current"]["value"] == 173
    assert height["history"][0]["derivation"]["rule"] == "feet_inches_to_cm"
    assert weight["current"] is None
    assert [r["change"] for r in weight["history"]] == ["stated", "deleted"]


# ---------------------------------------------------------------------------- whose memory


@pytest.mark.parametrize("outsider", [BOB, ALICE_AT_GLOBEX], ids=["same-tenant", "other-tenant"])
def test_another_principals_fact_is_answered_exactly_like_a_missing_one(
    memory: Memory, outsider: dict[str, str]
) -> None:
    # GIVEN alice's weight
    memory.stated(WEIGHT, {"value": 70})
    # WHEN bob (or an alice of another tenant) reads, confirms, deletes it
    seen = [
        memory.get(WEIGHT, outsider),
        memory.confirm(WEIGHT, outsider),
        memory.delete(WEIGHT, outsider),
    ]
    missing = [memory.get(WEIGHT, NOBODY), memory.confirm(WEIGHT, NOBODY)]
    missing.append(memory.delete(WEIGHT, NOBODY))
    # THEN each answer is, byte for byte, the one for a principal who has no weight
    assert [(r.status, r.text) for r in seen] == [(r.status, r.text) for r in missing]
    assert seen[0].status == 404
    # AND their list and export are empty, and alice's weight is untouched
    assert memory.lines(outsider) == {}
    assert memory.get("/memory/export", outsider).json()["facts"] == []
    assert memory.get(WEIGHT).json()["current"]["value"] == "70"
    # AND what they state is theirs alone
    memory.stated(WEIGHT, {"value": 90}, outsider)
    assert memory.lines()["person.weight_kg"]["value"] == "70"
    assert memory.lines(outsider)["person.weight_kg"]["value"] == "90"


def test_the_principal_comes_from_the_token_never_from_the_body_or_the_query(
    memory: Memory,
) -> None:
    # WHEN alice's request names bob in its body, in every way a client might
    names = {"principal": "acme/bob", "user_id": "bob", "userId": "bob", "sub": "bob"}
    memory.stated(WEIGHT, {"value": 70, **names, "tenant": "globex", "user": "bob"})
    memory.stated("/memory/settings", {"enabled": False, **names})
    # THEN the fact and the switch are alice's, and bob has neither
    assert memory.lines()["person.weight_kg"]["value"] == "70"
    assert memory.get("/memory/settings").json()["enabled"] is False
    assert memory.lines(BOB) == {}
    assert memory.get("/memory/settings", BOB).json()["enabled"] is True
    # AND a query naming bob reads alice's memory, never bob's
    memory.stated(HEIGHT, {"value": 180}, BOB)
    listed = memory.get("/memory/facts", ALICE, principal="acme/bob", user_id="bob").json()
    assert [line["key"] for line in listed["facts"]] == ["person.weight_kg"]
    exported = memory.get("/memory/export", ALICE, principal="acme/bob").json()
    assert exported["principal"] == "acme/alice"


def test_every_memory_route_needs_a_verified_principal(memory: Memory) -> None:
    for method, path in [
        ("PUT", WEIGHT),
        ("GET", "/memory/facts"),
        ("GET", WEIGHT),
        ("POST", f"{WEIGHT}/confirm"),
        ("DELETE", WEIGHT),
        ("GET", "/memory/export"),
        ("GET", "/memory/settings"),
        ("PUT", "/memory/settings"),
    ]:
        body = '{"enabled": true}' if method in ("PUT", "POST") else None
        response = memory.api.send(build_event(method, path, body=body, claims=None))
        assert (response.status, response.json()["error"]) == (401, "unauthorized"), path


# ---------------------------------------------------------------------------- memory off


def test_memory_off_refuses_statements_and_confirmations_and_writes_nothing(
    memory: Memory,
) -> None:
    # GIVEN alice's weight, then her memory turned off
    memory.stated(WEIGHT, {"value": 70})
    appended = memory.facts.appends
    switched = memory.stated("/memory/settings", {"enabled": False})
    assert switched == {
        "enabled": False,
        "changed_at": "2026-09-03T10:00:02+00:00",
        "deployment_enabled": True,
    }
    # WHEN a fact is stated and the weight confirmed
    stated = memory.put(HEIGHT, {"value": 173})
    confirmed = memory.confirm(WEIGHT)
    # THEN both are 409 memory_off, saying how to turn it on, and nothing was appended
    for response in (stated, confirmed):
        assert response.status == 409
        assert response.json()["error"] == "memory_off"
        assert "PUT /memory/settings" in response.json()["hint"]
    assert memory.facts.appends == appended
    # AND what is stored stays readable, marked as not used, and exportable
    listed = memory.get("/memory/facts").json()
    assert listed["memory_enabled"] is False
    assert [(f["key"], f["use"], f["reason"]) for f in listed["facts"]] == [
        ("person.weight_kg", "none", "memory_off")
    ]
    assert memory.get(WEIGHT).json()["current"]["use"] == "none"
    assert memory.get("/memory/export").json()["settings"]["enabled"] is False
    # AND deletable: forgetting does not depend on the switch
    assert memory.delete(WEIGHT).status == 200
    # WHEN she turns it on again, THEN facts are recorded again
    memory.stated("/memory/settings", {"enabled": True})
    assert memory.put(HEIGHT, {"value": 173}).status == 200


def test_memory_off_for_the_deployment_refuses_every_statement() -> None:
    # GIVEN a deployment with memory off
    memory = serve(Settings(tenant_claim="tenant", memory=False))
    # WHEN alice, whose own switch is on, states a fact
    response = memory.put(WEIGHT, {"value": 70})
    # THEN it is refused and nothing was appended; the settings say why
    assert (response.status, response.json()["error"]) == (409, "memory_off")
    assert "deployment" in response.json()["message"]
    assert memory.facts.appends == 0
    assert memory.get("/memory/settings").json() == {
        "enabled": True,
        "changed_at": None,
        "deployment_enabled": False,
    }
    assert memory.get("/memory/facts").json() == {"memory_enabled": False, "facts": []}


# ---------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("method", "path", "body", "headers", "status", "code"),
    [
        ("PUT", WEIGHT, {"value": [70]}, None, 422, "invalid_request"),
        ("PUT", WEIGHT, {"value": {"kg": 70}}, None, 422, "invalid_request"),
        ("PUT", WEIGHT, {"value": "x" * 4001}, None, 422, "invalid_request"),
        ("PUT", WEIGHT, {"words": ""}, None, 422, "invalid_request"),
        ("PUT", WEIGHT, {"value": 70, "unit": "kg"}, None, 422, "invalid_request"),
        ("PUT", WEIGHT, {"value": 70, "correction": "yes"}, None, 422, "invalid_request"),
        (
            "PUT",
            WEIGHT,
            {"value": 70, "valid_from": "2026-01-01T00:00:00"},
            None,
            422,
            "invalid_request",
        ),
        ("PUT", WEIGHT, {"value": 70, "valid_from": "last week"}, None, 422, "invalid_request"),
        ("PUT", WEIGHT, [70], None, 422, "invalid_request"),
        ("PUT", WEIGHT, None, None, 415, "unsupported_media_type"),
        ("PUT", WEIGHT, "", None, 400, "malformed_json"),
        ("PUT", WEIGHT, "{", None, 400, "malformed_json"),
        ("PUT", WEIGHT, '{"value": NaN}', None, 400, "malformed_json"),
        ("PUT", WEIGHT, '{"value": 70, "value": 80}', None, 400, "duplicate_key"),
        ("PUT", WEIGHT, '{"value": 70}' + " " * 70_000, None, 413, "payload_too_large"),
        (
            "PUT",
            WEIGHT,
            '{"value": 70}',
            {"content-type": "text/plain"},
            415,
            "unsupported_media_type",
        ),
        (
            "PUT",
            WEIGHT,
            "value=70",
            {"content-type": "application/x-www-form-urlencoded"},
            415,
            "unsupported_media_type",
        ),
        ("PUT", "/memory/settings", {"enabled": "false"}, None, 422, "invalid_request"),
        ("PUT", "/memory/settings", {"enabled": 0}, None, 422, "invalid_request"),
        ("PUT", "/memory/settings", {}, None, 422, "invalid_request"),
        (
            "PUT",
            "/memory/settings",
            '{"enabled": false, "enabled": true}',
            None,
            400,
            "duplicate_key",
        ),
        ("POST", f"{WEIGHT}/confirm", {"value": 70}, None, 422, "invalid_request"),
        ("POST", f"{WEIGHT}/confirm", "{", None, 400, "malformed_json"),
        ("GET", f"{WEIGHT}?as_of=yesterday", None, None, 400, "bad_request"),
        ("GET", f"{WEIGHT}?as_of=2026-09-01", None, None, 400, "bad_request"),
        ("GET", "/memory/facts/a%22b", None, None, 400, "bad_request"),
        ("PUT", '/memory/facts/a"b', {"value": 70}, None, 400, "bad_request"),
        ("GET", '/memory/facts/a"b', None, None, 400, "bad_request"),
        ("POST", '/memory/facts/a"b/confirm', {}, None, 400, "bad_request"),
        ("DELETE", "/memory/facts/a\\b", None, None, 400, "bad_request"),
        ("PATCH", WEIGHT, {"value": 70}, None, 404, "route_not_found"),
        ("POST", WEIGHT, {"value": 70}, None, 404, "route_not_found"),
        ("DELETE", "/memory/facts", None, None, 404, "route_not_found"),
    ],
)
def test_bad_input_is_a_clear_4xx_and_writes_nothing(
    memory: Memory,
    method: str,
    path: str,
    body: Any,
    headers: dict[str, str] | None,
    status: int,
    code: str,
) -> None:
    # GIVEN alice's weight
    memory.stated(WEIGHT, {"value": 70})
    before = memory.get("/memory/export").json()["facts"]
    appended = memory.facts.appends
    # WHEN a malformed request arrives
    text = None if body is None else body if isinstance(body, str) else json.dumps(body)
    path, _, query = path.partition("?")
    event = build_event(method, path, body=text, headers=headers)
    if query:
        name, _, value = query.partition("=")
        event["rawQueryString"], event["queryStringParameters"] = query, {name: value}
    response = memory.api.send(event)
    # THEN it is the refusal expected, as JSON with a message, and nothing was written
    refusal = response.json()
    assert (response.status, refusal["error"]) == (status, code), response
    assert refusal["message"]
    assert memory.facts.appends == appended
    assert memory.get("/memory/export").json()["facts"] == before
    assert memory.get("/memory/settings").json()["enabled"] is True


def test_a_confirmation_needs_no_body(memory: Memory) -> None:
    # GIVEN alice's weight
    memory.stated(WEIGHT, {"value": 70})
    # WHEN she confirms it with no body at all (no content type either), then with {}
    bare = build_event("POST", f"{WEIGHT}/confirm")
    assert "content-type" not in bare["headers"] and "body" not in bare
    answers = [memory.api.send(bare), memory.confirm(WEIGHT)]
    # THEN both are confirmations
    assert [(r.status, r.json()["change"]) for r in answers] == [(200, "confirmed")] * 2
    assert [r.change for r in memory.facts.history("acme/alice", "person.weight_kg")] == [
        "stated",
        "confirmed",
        "confirmed",
    ]
    # AND a body that is sent is still held to the rules of every body
    sent = build_event(
        "POST", f"{WEIGHT}/confirm", body="{}", headers={"content-type": "text/plain"}
    )
    assert memory.api.send(sent).status == 415


@pytest.mark.parametrize(
    ("body", "headers", "status", "code"),
    [
        ('{"value": [70]}', {"content-type": "text/plain"}, 415, "unsupported_media_type"),
        ('{"value": [70]}' + " " * 70_000, None, 413, "payload_too_large"),
        ('{"value": [70], "value": [71]}', None, 400, "duplicate_key"),
    ],
    ids=["content-type", "size", "json"],
)
def test_a_put_body_is_checked_before_its_shape_like_every_body(
    memory: Memory, body: str, headers: dict[str, str] | None, status: int, code: str
) -> None:
    # WHEN a statement of the wrong shape (a list) is also wrong as a body
    response = memory.api.send(build_event("PUT", WEIGHT, body=body, headers=headers))
    # THEN the body's check answers, as before routing on a POST, not the shape's 422
    assert (response.status, response.json()["error"]) == (status, code)
    assert memory.facts.appends == 0


def test_a_base64_put_body_is_read_as_the_json_it_encodes(memory: Memory) -> None:
    event = build_event("PUT", WEIGHT, body='{"value": 70}', base64_body=True)
    response = memory.api.send(event)
    assert (response.status, response.json()["fact"]["value"]) == (200, "70")


MEMORY_PATHS = st.sampled_from(
    [WEIGHT, HEIGHT, "/memory/facts", "/memory/export", "/memory/settings", f"{WEIGHT}/confirm"]
) | st.text(max_size=30).filter(lambda s: "/" not in s).map(lambda s: f"/memory/facts/{s}")
SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=8,
)
MEMORY_BODIES = st.fixed_dictionaries(
    {},
    optional={
        "value": JSON,
        "words": st.sampled_from(["70 kg", "5'8\"", "", "about 70"]) | st.text(max_size=20),
        "valid_from": st.sampled_from(["2026-01-01T00:00:00Z", "2026-01-01", "x"]) | JSON,
        "valid_until": st.sampled_from(["2025-01-01T00:00:00Z", "2030-01-01T00:00:00+02:00"]),
        "correction": JSON,
        "enabled": JSON,
        "principal": st.text(max_size=10),
        "other": JSON,
    },
)


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    method=st.sampled_from(["GET", "PUT", "POST", "DELETE"]),
    path=MEMORY_PATHS,
    body=st.none() | MEMORY_BODIES.map(json.dumps) | st.text(max_size=40),
    query=st.none() | st.fixed_dictionaries({"as_of": st.text(max_size=30)}),
    claims=st.sampled_from([ALICE, BOB, None, {"sub": "a/b"}]),
)
def test_no_memory_request_is_a_500_and_a_refused_one_writes_nothing(
    method: str,
    path: str,
    body: str | None,
    query: dict[str, str] | None,
    claims: dict[str, str] | None,
) -> None:
    # GIVEN alice's weight
    memory = serve()
    memory.stated(WEIGHT, {"value": 70})
    before = memory.facts.export("acme/alice"), memory.facts.settings("acme/alice")
    appended = memory.facts.appends
    # WHEN any request reaches a memory path
    event = build_event(method, path, body=body, query=query, claims=claims)
    response = memory.api.send(event)
    # THEN it is never a 5xx, always JSON with an error and message when refused
    assert response.status < 500, response
    answer = response.json()
    if response.status >= 400:
        assert isinstance(answer["error"], str) and isinstance(answer["message"], str)
        # AND a refused request wrote nothing
        assert memory.facts.appends == appended
        assert (memory.facts.export("acme/alice"), memory.facts.settings("acme/alice")) == before


# ---------------------------------------------------------------------------- lost races


class AlwaysOvertaken(CountingFacts):
    """A store where another writer always appended first (every append is a conflict)."""

    def append(self, principal: str, revision: FactRevision) -> FactHead:
        self.appends += 1
        raise FactConflict(revision.key, revision.seq, self.head(principal, revision.key))


class OvertakenOnce(CountingFacts):
    """A store where, the first time, bob's other device stated 80 kg just before."""

    def __init__(self) -> None:
        super().__init__()
        self.raced = False

    def append(self, principal: str, revision: FactRevision) -> FactHead:
        if not self.raced:
            self.raced = True
            first = revision.model_copy(update={"value": "80"})
            super().append(principal, first)
        return super().append(principal, revision)


def test_a_write_that_loses_a_race_is_planned_again_on_the_winners_head() -> None:
    # GIVEN a store where another writer's weight lands first
    facts, clock = OvertakenOnce(), Clock()
    memory = Memory(Api.over(make_service(), SETTINGS, facts=facts, clock=clock), facts, clock)
    # WHEN alice's weight is stated
    answer = memory.stated(WEIGHT, {"value": 75})
    # THEN it was planned again on the winner's revision: both are in the history
    assert (answer["change"], answer["revision"]) == ("stated", 1)
    history = memory.get(WEIGHT).json()["history"]
    assert [(r["seq"], r["value"]) for r in history] == [(0, "80"), (1, "75")]


def test_a_write_that_keeps_losing_is_409_busy_and_writes_nothing() -> None:
    # GIVEN a store where every append is overtaken, holding alice's weight
    facts, clock = AlwaysOvertaken(), Clock()
    InMemoryFactStore.append(facts, "acme/alice", _stated("person.weight_kg", "70"))
    memory = Memory(Api.over(make_service(), SETTINGS, facts=facts, clock=clock), facts, clock)
    # WHEN she states, confirms and deletes it
    answers = [memory.put(WEIGHT, {"value": 71}), memory.confirm(WEIGHT), memory.delete(WEIGHT)]
    # THEN each was tried a few times, then answered 409 busy; the weight is as it was
    assert [(r.status, r.json()["error"]) for r in answers] == [(409, "busy")] * 3
    assert facts.appends == 3 * (MAX_CONFLICT_RETRIES + 1)
    assert [r.value for r in facts.history("acme/alice", "person.weight_kg")] == ["70"]


def _stated(key: str, value: str) -> FactRevision:
    return FactRevision(
        key=key,
        seq=0,
        change="stated",
        value=value,
        source=Source(kind="api"),
        stated_at=T0,
        recorded_at=T0,
    )


# ---------------------------------------------------------------------------- settings, App


def test_the_settings_read_the_memory_variables() -> None:
    settings = Settings.from_env(
        {
            "FORMWORK_MEMORY": "OFF",
            "FORMWORK_FACT_KEYS": "tests.functional.test_memory_api:EXTRA_KEYS",
            "FORMWORK_MEMORY_DEADLINE_MS": "150",
        }
    )
    assert (settings.memory, settings.memory_deadline_ms) == (False, 150)
    assert settings.fact_keys == "tests.functional.test_memory_api:EXTRA_KEYS"
    default = Settings.from_env({})
    assert (default.memory, default.fact_keys, default.memory_deadline_ms) == (True, None, 200)
    assert Settings.from_env({"FORMWORK_MEMORY": "on"}).memory is True


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("FORMWORK_MEMORY", "maybe"),
        ("FORMWORK_MEMORY", "no"),
        ("FORMWORK_FACT_KEYS", "tests.functional"),
        ("FORMWORK_FACT_KEYS", "a b:c"),
        ("FORMWORK_MEMORY_DEADLINE_MS", "0"),
        ("FORMWORK_MEMORY_DEADLINE_MS", "5001"),
        ("FORMWORK_MEMORY_DEADLINE_MS", "200ms"),
    ],
)
def test_bad_memory_settings_name_the_variable(variable: str, value: str) -> None:
    with pytest.raises(ConfigError, match=variable):
        Settings.from_env({variable: value})


EXTRA_KEYS = (fact_key("person.blood_type", "Blood type", str, "never"),)
"""What ``FORMWORK_FACT_KEYS`` names in the tests below."""
CLASHING_KEYS = [fact_key("person.weight_kg", "Weight", int, "weeks")]


def test_the_deployments_fact_keys_extend_the_vocabulary_the_routes_use() -> None:
    # GIVEN a deployment that adds a blood type key
    memory = serve(Settings(tenant_claim="tenant", fact_keys=f"{__name__}:EXTRA_KEYS"))
    # WHEN alice states hers
    answer = memory.stated("/memory/facts/person.blood_type", {"value": "AB"})
    # THEN it is a fact like any other, of the key's decay class
    assert answer["fact"]["label"] == "Blood type"
    assert memory.lines()["person.blood_type"]["decay"] == "never"
    assert "person.blood_type" in memory.api.app.vocabulary


@pytest.mark.parametrize(
    ("reference", "says"),
    [
        (f"{__name__}:CLASHING_KEYS", "declared twice"),
        (f"{__name__}:T0", "expected a FactKey or a sequence of FactKey"),
        (f"{__name__}:NOTHING", "has no NOTHING"),
        ("nowhere.at_all:KEYS", "cannot import nowhere.at_all"),
    ],
)
def test_fact_keys_that_do_not_make_a_vocabulary_name_the_variable(
    reference: str, says: str
) -> None:
    app = bootstrap(Settings(fact_keys=reference), store=RecordingStore())
    with pytest.raises(ConfigError, match="FORMWORK_FACT_KEYS") as raised:
        _ = app.vocabulary
    assert says in str(raised.value)


def test_the_app_keeps_memory_in_memory_beside_an_in_memory_store() -> None:
    from forms.memory import DecayPolicy, Vocabulary

    app = bootstrap(SETTINGS, store=RecordingStore())
    assert type(app.facts) is InMemoryFactStore and app.facts is app.facts
    assert app.vocabulary is Vocabulary.default()
    assert app.decay_policy == DecayPolicy.default()
    given = InMemoryFactStore()
    assert bootstrap(SETTINGS, store=RecordingStore(), facts=given).facts is given


def test_the_app_puts_memory_on_the_table_beside_the_dynamodb_store() -> None:
    from forms.storage.dynamodb_facts import DynamoDBFactStore

    # GIVEN a deployment on a table (no request is made: the adapter is only built)
    app = bootstrap(Settings(table_name="formwork-forms"), dynamodb_client=object())
    assert isinstance(app.facts, DynamoDBFactStore)


def test_a_memory_request_loads_memory_and_no_aws_library_on_an_in_memory_app() -> None:
    # GIVEN a fresh interpreter with an App on an in-memory store
    code = (
        "import sys, json\n"
        "from formwork.aws.local import invoke\n"
        "from tests.functional.conftest import build_event\n"
        "from formwork.bootstrap import bootstrap\n"
        "from formwork.config import Settings\n"
        "from forms.storage.memory import InMemoryFormStore\n"
        f"before = [m for m in {MEMORY!r} if m in sys.modules]\n"
        "app = bootstrap(Settings(), store=InMemoryFormStore())\n"
        "event = build_event('PUT', '/memory/facts/person.height_cm', body='{\"value\": 173}')\n"
        "status = invoke(event, app=app)['statusCode']\n"
        f"loaded = [m for m in {MEMORY!r} if m in sys.modules]\n"
        "aws = [m for m in ('boto3', 'botocore.client') if m in sys.modules]\n"
        "print(json.dumps([before, status, loaded, aws]))\n"
    )
    # WHEN a fact is stated
    before, status, loaded, aws = run(code)
    # THEN memory loaded with that request, on its in-memory store, and no AWS library
    assert (before, status, aws) == ([], 200, [])
    assert set(loaded) == set(MEMORY) - {"forms.storage.dynamodb_facts"}


def test_the_request_models_take_what_a_fact_holds() -> None:
    from pydantic import TypeAdapter

    from forms.memory.facts import FactValue, Words
    from formwork.aws.models import MAX_FACT_TEXT_CHARS, MAX_WORDS_CHARS, FactValueIn

    # each adapter made where its type is named (mypy types a list of the unions as UnionType)
    for text, limit in [
        (TypeAdapter(FactValue), MAX_FACT_TEXT_CHARS),
        (TypeAdapter(FactValueIn), MAX_FACT_TEXT_CHARS),
    ]:
        text.validate_python("x" * limit)
    assert TypeAdapter(Words).validate_python("x" * MAX_WORDS_CHARS)
    for adapter in (TypeAdapter(FactValue), TypeAdapter(FactValueIn)):
        with pytest.raises(ValueError):
            adapter.validate_python("x" * (MAX_FACT_TEXT_CHARS + 1))
        with pytest.raises(ValueError):
            adapter.validate_python([1])
    with pytest.raises(ValueError):
        TypeAdapter(Words).validate_python("x" * (MAX_WORDS_CHARS + 1))


def test_the_openapi_document_shows_every_memory_parameter(memory: Memory) -> None:
    document = memory.get("/openapi.json").json()
    paths = document["paths"]
    assert set(paths["/memory/facts/{key}"]) == {"get", "put", "delete"}
    assert set(paths["/memory/settings"]) == {"get", "put"}
    read = paths["/memory/facts/{key}"]["get"]
    assert [(p["name"], p["in"]) for p in read["parameters"]] == [
        ("key", "path"),
        ("as_of", "query"),
    ]
    schemas = document["components"]["schemas"]
    statement = schemas["FactStatementRequest"]
    assert set(statement["properties"]) == {
        "value",
        "words",
        "valid_from",
        "valid_until",
        "correction",
        "stated_at",
        "source",
    }
    assert statement["additionalProperties"] is False
    assert schemas["MemorySettingsRequest"]["required"] == ["enabled"]
    refusal = paths["/memory/facts/{key}"]["put"]["responses"]["404"]["content"]
    assert refusal["application/json"]["schema"] == {"$ref": "#/components/schemas/MemoryRefusal"}
    assert "did_you_mean" in schemas["MemoryRefusal"]["properties"]


def test_memory_settings_are_stored_per_principal(memory: Memory) -> None:
    memory.stated("/memory/settings", {"enabled": False}, BOB)
    assert memory.facts.settings("acme/bob") == MemorySettings(
        enabled=False, changed_at=datetime(2026, 9, 3, 10, 0, 1, tzinfo=UTC)
    )
    assert memory.facts.settings("acme/alice").enabled is True


# ---------------------------------------------------------------------------- the App wires recall


class ReadCountingFacts(InMemoryFactStore):
    """The in-memory fact store, counting every read of a principal's facts."""

    def __init__(self) -> None:
        super().__init__()
        self.fact_reads = 0

    def _read_heads(self, principal: str) -> Any:
        self.fact_reads += 1
        return super()._read_heads(principal)


def recalling_app(settings: Settings = SETTINGS) -> tuple[Api, ReadCountingFacts]:
    from forms.storage.memory import InMemoryFormStore

    facts = ReadCountingFacts()
    return Api(bootstrap(settings, store=InMemoryFormStore(), facts=facts)), facts


def test_what_the_api_stored_fills_and_offers_in_the_next_form_over_http() -> None:
    # GIVEN alice's date of birth and weight stated through the memory API of a whole App
    api, facts = recalling_app()
    memory = Memory(api, CountingFacts(), Clock())
    memory.stated(BIRTH, {"value": "1990-04-02"})
    memory.stated(WEIGHT, {"words": "70 kg"})
    # WHEN she starts the health check-in in a conversation
    started = api.call("form_start", conversation="conv-h", claims=ALICE, form="health-check")
    # THEN the date of birth is filled (marked), the weight only offered, the height absent
    result = started.json()
    assert "filled 1 from memory, unconfirmed (date_of_birth)" in result["summary"]
    assert "memory offers 1 to confirm (weight_kg)" in result["summary"]
    line = api.status("conv-h", claims=ALICE).json()["lines"][0]
    assert "from memory, unconfirmed" in line and "Date of birth 1990-04-02" in line
    assert "from memory, confirm: Weight 70 kg" in line and "Height" not in line.split("\n")[2]
    read = api.call(
        "form_read", conversation="conv-h", claims=ALICE, form="health-check", part="weight_kg"
    ).json()
    assert read.get("value") is None  # offered, not answered
    # AND bob, of the same tenant, gets nothing of hers
    bob = api.call("form_start", conversation="conv-b", claims=BOB, form="health-check").json()
    assert "memory" not in bob["summary"]
    assert facts.fact_reads == 2


def test_memory_off_for_the_principal_reads_no_fact_and_off_for_the_deployment_neither() -> None:
    # GIVEN alice's date of birth on record, then her memory turned off
    api, facts = recalling_app()
    memory = Memory(api, CountingFacts(), Clock())
    memory.stated(BIRTH, {"value": "1990-04-02"})
    assert memory.put("/memory/settings", {"enabled": False}).status == 200
    # WHEN she starts the form
    result = api.call("form_start", conversation="c", claims=ALICE, form="health-check").json()
    # THEN nothing is recalled and not one fact was read
    assert result["ok"] and "memory" not in result["summary"]
    assert facts.fact_reads == 0
    # AND a deployment with FORMWORK_MEMORY off has no memory in its service at all
    off, _ = recalling_app(Settings(tenant_claim="tenant", memory=False))
    assert off.app.service.memory is None
