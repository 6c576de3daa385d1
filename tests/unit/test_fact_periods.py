"""The periods a fact's head keeps, and how an undated statement folds into a timeline.

An undated statement holds from when it was said until the next change known (so one recorded
late slots in before the newer value, and one said today leaves a planned change alone); a
key's head keeps every period still open, so recall and confirmations work on the value true
now, not only on the latest period; and folding the head keeps giving what folding the whole
history gives.
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forms import Caller, FormDef, Step, field
from forms.memory import (
    DecayPolicy,
    Fact,
    FactHead,
    FactHistory,
    FactRevision,
    Refusal,
    Source,
    Statement,
    Vocabulary,
    apply_revision,
    plan_confirmation,
    plan_recall,
    plan_statement,
)
from forms.memory.recall import RecallField
from forms.schema import field_type
from forms.storage.facts import InMemoryFactStore
from tests.support import T0
from tests.unit.memory_for_tests import RecordingFacts, Talk, memory_service

DAY = timedelta(days=1)
NOW = datetime(2026, 9, 10, 9, tzinfo=UTC)
MOVE = datetime(2026, 10, 10, tzinfo=UTC)
API = Source(kind="api", ref="editor")
CITY = "address.city"
WEIGHT = "person.weight_kg"
YEAR = 365 * DAY
VOCABULARY = Vocabulary.default()


def said(key: str, value: Any, **more: Any) -> Statement:
    return Statement(key=key, value=value, source=API, **more)


def plan(statement: Statement, head: FactHead | None, now: datetime) -> FactRevision:
    planned = plan_statement(statement, head, vocabulary=VOCABULARY, now=now)
    assert isinstance(planned, FactRevision), planned
    return planned


def append(head: FactHead, statement: Statement, now: datetime) -> FactHead:
    return apply_revision(head, plan(statement, head, now))


def shape(periods: tuple[Fact, ...] | list[Fact]) -> list[tuple[Any, datetime, Any]]:
    return [(p.value, p.since, p.valid_until) for p in periods]


def value_at(head: FactHead, when: datetime) -> Any:
    """The value of the period the head says holds at ``when`` (else its latest)."""
    period = head.at(when)
    assert period is not None
    return period.value


def fold(*steps: tuple[Statement, datetime]) -> tuple[list[FactRevision], FactHead]:
    """The revisions the statements append, each planned on the head before it at its time,
    and the head they make."""
    revisions: list[FactRevision] = []
    head: FactHead | None = None
    for statement, now in steps:
        revisions.append(plan(statement, head, now))
        head = apply_revision(head, revisions[-1])
    assert head is not None
    return revisions, head


def moving() -> FactHead:
    """Lyon said 100 days ago; last week, "I move to Berlin on 10 October"."""
    return fold(
        (said(CITY, "Lyon", stated_at=NOW - 100 * DAY), NOW - 100 * DAY),
        (said(CITY, "Berlin", stated_at=NOW - 5 * DAY, valid_from=MOVE), NOW - 5 * DAY),
    )[1]


# ---------------------------------------------------------------- a change planned ahead


def test_the_head_keeps_the_value_true_today_beside_a_planned_change() -> None:
    head = moving()
    # THEN Berlin is the latest period (the fact), and Lyon, open until the move, is kept
    assert head.fact is not None and head.fact.value == "Berlin"
    assert shape(head.periods) == [("Lyon", NOW - 100 * DAY, MOVE), ("Berlin", MOVE, None)]
    # AND the period holding now is Lyon, after the move Berlin, before anything the latest
    assert [value_at(head, t) for t in (NOW, MOVE, MOVE + DAY)] == [
        "Lyon",
        "Berlin",
        "Berlin",
    ]
    assert head.at(NOW - YEAR) == head.fact


def test_recall_weighs_the_period_holding_now_and_the_latest_only_when_none_does() -> None:
    city = [RecallField("city", CITY, field_type(str))]
    head = moving()

    def recalled(now: datetime) -> Any:
        return plan_recall(
            city, head.periods, vocabulary=VOCABULARY, policy=DecayPolicy.default(), now=now
        )

    # WHEN the form starts today: Lyon, said 100 days ago, fills (address.city is months)
    today = recalled(NOW)
    assert today.fills["city"].value == "Lyon"
    assert today.fills["city"].fact.revision == 0
    # WHEN it starts after the move: Berlin
    assert recalled(MOVE + DAY).fills["city"].value == "Berlin"
    # WHEN it starts before Lyon was said: the latest period, which is not valid then
    assert [s.reason for s in recalled(NOW - YEAR).skipped] == ["not_valid_now"]


def test_an_undated_statement_today_holds_until_the_planned_change() -> None:
    # WHEN she says today she lives in Paris
    head = append(moving(), said(CITY, "Paris", stated_at=NOW), NOW)
    # THEN Paris holds from today until the move, Lyon until today, and the move stays
    assert shape(head.periods) == [
        ("Lyon", NOW - 100 * DAY, NOW),
        ("Paris", NOW, MOVE),
        ("Berlin", MOVE, None),
    ]
    assert value_at(head, NOW + DAY) == "Paris"


def test_a_correction_fixes_the_value_true_today_and_the_move_stays() -> None:
    # WHEN she says Lyon was wrong, she meant Lyons (the value the editor shows as in force)
    head = moving()
    fix = plan(said(CITY, "Lyons", stated_at=NOW, correction=True), head, NOW)
    after = apply_revision(head, fix)
    # THEN Lyon's period now holds Lyons, and Berlin from the move is untouched
    assert fix.change == "corrected"
    assert shape(after.periods) == [("Lyons", NOW - 100 * DAY, MOVE), ("Berlin", MOVE, None)]
    assert after.fact == head.fact
    # AND after the move, a correction fixes Berlin, the value then in force
    later = plan(
        said(CITY, "Berlin-Mitte", stated_at=MOVE + DAY, correction=True), after, MOVE + DAY
    )
    assert shape(apply_revision(after, later).periods)[-1] == ("Berlin-Mitte", MOVE, None)


def test_the_value_true_today_said_again_confirms_it_and_the_move_stays() -> None:
    head = moving()
    # WHEN she says again she lives in Lyon
    again = plan(said(CITY, "Lyon", stated_at=NOW), head, NOW)
    after = apply_revision(head, again)
    # THEN that is a confirmation of Lyon: its age starts again, its words and period stay
    assert (again.change, again.value, again.confirmed_at) == ("confirmed", "Lyon", NOW)
    lyon = after.at(NOW)
    assert lyon is not None and (lyon.value, lyon.last_seen, lyon.revision) == ("Lyon", NOW, 0)
    assert shape(after.periods) == shape(head.periods)
    assert after.fact == head.fact


def test_confirming_renews_the_period_holding_then_or_refuses_a_period_no_longer_in_force() -> None:
    head = moving()
    # WHEN the value shown (Lyon, revision 0) is confirmed
    confirmed = plan_confirmation(head, source=API, now=NOW, revision=0)
    assert isinstance(confirmed, FactRevision) and confirmed.value == "Lyon"
    after = apply_revision(head, confirmed)
    assert [p.confirmed_at for p in after.periods] == [NOW, None]
    # WHEN the value shown was Berlin's (revision 1), not the one in force today: refused
    refused = plan_confirmation(head, source=API, now=NOW, revision=1)
    assert isinstance(refused, Refusal) and refused.code == "no_fact"
    # WHEN nothing holds then (before Lyon was said): the latest is the one confirmed
    early = plan_confirmation(head, source=API, now=NOW, at=NOW - YEAR)
    assert isinstance(early, FactRevision) and early.value == "Berlin"


def test_a_confirmation_confirms_a_value_in_force_or_nothing() -> None:
    head = moving()
    base: dict[str, Any] = {
        "key": CITY, "seq": head.version, "change": "confirmed", "source": API,
        "confirmed_at": NOW, "recorded_at": NOW,
    }  # fmt: skip
    # a confirmation of Berlin today (the latest, as confirmations planned on a head that kept
    # only the latest said) still applies, and leaves Lyon as it was
    berlin = apply_revision(head, FactRevision.model_validate({**base, "value": "Berlin"}))
    assert [p.confirmed_at for p in berlin.periods] == [None, NOW]
    # one of a value neither holding then nor the latest does not
    with pytest.raises(ValueError, match="confirms the value in force"):
        apply_revision(head, FactRevision.model_validate({**base, "value": "Paris"}))


def test_a_dated_statement_still_replaces_exactly_its_period() -> None:
    # WHEN she says she moves to Munich instead, from 1 October on
    munich = datetime(2026, 10, 1, tzinfo=UTC)
    head = append(moving(), said(CITY, "Munich", stated_at=NOW, valid_from=munich), NOW)
    # THEN Munich replaces everything from 1 October on, Berlin included
    assert shape(head.periods) == [("Lyon", NOW - 100 * DAY, munich), ("Munich", munich, None)]


# ---------------------------------------------------------------- recorded late


def test_an_older_statement_recorded_late_slots_in_before_the_newer_one() -> None:
    # GIVEN 173 cm said long ago, then 181 said at noon and recorded at once
    noon, second = NOW - DAY, timedelta(seconds=1)
    revisions, head = fold(
        (said("person.height_cm", 173, stated_at=NOW - 100 * DAY), NOW - 100 * DAY),
        (said("person.height_cm", 181, stated_at=noon + second), noon + second),
    )
    # WHEN 180, said a second before 181, is recorded after it
    late = plan(said("person.height_cm", 180, stated_at=noon), head, noon + 2 * second)
    after = apply_revision(head, late)
    # THEN 181 stays the fact in force, and 180 held for the second before it
    assert late.change == "stated"
    assert after.fact is not None and after.fact.value == 181 and after.at(NOW) == after.fact
    assert shape(FactHistory([*revisions, late]).timeline()) == [
        (173, NOW - 100 * DAY, noon),
        (180, noon, noon + second),
        (181, noon + second, None),
    ]


@pytest.mark.parametrize("value", ["70", "75"])
def test_a_repeat_said_before_the_newer_value_is_no_confirmation_of_it(value: str) -> None:
    # GIVEN 70 kg said on day 0 and 75 on day 5
    day0 = NOW - 10 * DAY
    revisions, head = fold(
        (said(WEIGHT, "70", stated_at=day0), day0),
        (said(WEIGHT, "75", stated_at=day0 + 5 * DAY), day0 + 5 * DAY),
    )
    # WHEN a statement said on day 3 is recorded only now
    late = plan(said(WEIGHT, value, stated_at=day0 + 3 * DAY), head, NOW)
    after = apply_revision(head, late)
    # THEN it is a statement of its own, holding from day 3 to day 5; 75 is untouched
    assert late.change == "stated"
    assert after.fact == head.fact and after.fact is not None and after.fact.confirmed_at is None
    assert shape(FactHistory([*revisions, late]).timeline()) == [
        ("70", day0, day0 + 3 * DAY),
        (value, day0 + 3 * DAY, day0 + 5 * DAY),
        ("75", day0 + 5 * DAY, None),
    ]


def test_a_statement_recorded_late_ends_where_the_past_the_head_dropped_begins() -> None:
    # GIVEN "Paris from 2 to 5 January" and a move to Berlin on 10 October, recorded in March
    jan = [datetime(2026, 1, day, tzinfo=UTC) for day in range(1, 6)]
    march = datetime(2026, 3, 1, tzinfo=UTC)
    revisions, head = fold(
        (said(CITY, "Paris", stated_at=march, valid_from=jan[1], valid_until=jan[4]), march),
        (said(CITY, "Berlin", stated_at=march, valid_from=MOVE), march),
    )
    # WHEN "Lyon", said on 1 January, is recorded now
    late = plan(said(CITY, "Lyon", stated_at=jan[0]), head, march + DAY)
    after = apply_revision(head, late)
    # THEN Lyon held until Paris began, in the head as in the whole history: it is not true
    # today, and nothing is until the move
    timeline = FactHistory([*revisions, late]).timeline()
    assert shape(timeline) == [
        ("Lyon", jan[0], jan[1]),
        ("Paris", jan[1], jan[4]),
        ("Berlin", MOVE, None),
    ]
    assert shape(after.periods) == shape(timeline[1:])
    assert after.fact is not None and after.at(march + DAY) == after.fact
    assert not after.fact.holds_at(march + DAY)


def test_the_same_value_said_into_a_gap_after_its_period_is_a_statement() -> None:
    # GIVEN "Paris until 1 October", said today
    october = datetime(2026, 10, 1, tzinfo=UTC)
    _, head = fold((said(CITY, "Paris", stated_at=NOW, valid_from=NOW, valid_until=october), NOW))
    # WHEN she says later she lives in Paris, with no end
    later = plan(said(CITY, "Paris", stated_at=NOW + DAY), head, NOW + DAY)
    # THEN that says more than the period did (Paris after October too): a statement
    assert later.change == "stated"
    assert shape(apply_revision(head, later).periods) == [
        ("Paris", NOW, NOW + DAY),
        ("Paris", NOW + DAY, None),
    ]


# ---------------------------------------------------------------- storage


def test_a_head_with_its_periods_round_trips_and_an_older_head_still_parses() -> None:
    head = moving()
    assert FactHead.model_validate_json(head.model_dump_json()) == head
    older = head.model_dump(mode="json", exclude={"earlier"})
    assert FactHead.model_validate(older).earlier == ()
    # a head whose periods overlap or are out of order, or with periods and no fact, is refused
    lyon, berlin = head.periods
    overlapping = lyon.model_copy(update={"valid_until": MOVE + DAY})
    for bad in (
        {"earlier": (overlapping,)},
        {"earlier": (berlin,), "fact": lyon},
        {"fact": None},
    ):
        with pytest.raises(ValueError):
            FactHead.model_validate({**head.model_dump(), **bad})


def test_the_store_keeps_and_serves_the_open_periods() -> None:
    facts = InMemoryFactStore()
    principal = "acme/ana"
    for statement, at in (
        (said(CITY, "Lyon", stated_at=NOW - 100 * DAY), NOW - 100 * DAY),
        (said(CITY, "Berlin", stated_at=NOW - 5 * DAY, valid_from=MOVE), NOW - 5 * DAY),
    ):
        facts.append(principal, plan(statement, facts.head(principal, CITY), at))
    [head] = facts.heads(principal)
    assert head == FactHistory(facts.history(principal, CITY)).head()
    assert value_at(head, NOW) == "Lyon"


class CountingFacts(InMemoryFactStore):
    """The in-memory store, counting the history reads its appends make."""

    def __init__(self) -> None:
        super().__init__()
        self.history_reads = 0

    def _read_history(self, principal: str, key: str) -> list[FactRevision]:
        self.history_reads += 1
        return super()._read_history(principal, key)


@pytest.mark.parametrize(
    ("said_on", "holds_until"),
    [(1, 2), (5, 8)],
    ids=["before_a_dropped_period", "after_every_dropped_period"],
)
def test_a_head_reads_the_history_only_for_the_statement_it_cannot_fold_alone(
    said_on: int, holds_until: int
) -> None:
    # GIVEN Lyon from day 2 to 3 and Paris from day 4 to 5, recorded on day 7: the head keeps
    # Paris (the last ended period) and drops Lyon
    facts, principal = CountingFacts(), "acme/ana"

    def state(statement: Statement) -> FactHead:
        return facts.append(principal, plan(statement, facts.head(principal, CITY), _day_of(7)))

    state(said(CITY, "Lyon", stated_at=_day_of(7), valid_from=_day_of(2), valid_until=_day_of(3)))
    head = state(
        said(CITY, "Paris", stated_at=_day_of(7), valid_from=_day_of(4), valid_until=_day_of(5))
    )
    assert shape(head.periods) == [("Paris", _day_of(4), _day_of(5))] and not head.whole
    # AND a correction says it was Berlin, from day 8 to 10: no kept period has started
    fixed = said(
        CITY, "Berlin", stated_at=_day_of(7), valid_from=_day_of(8),
        valid_until=_day_of(10), correction=True,
    )  # fmt: skip
    assert shape(state(fixed).periods) == [("Berlin", _day_of(8), _day_of(10))]
    assert facts.history_reads == 0
    # WHEN a statement with no period, said on a day before Berlin, is recorded
    head = state(said(CITY, "Nice", stated_at=_day_of(said_on)))
    # THEN the store read the history once, and the head holds what the whole history says:
    # Nice until Lyon starts (past, so the head leaves it out), or until Berlin starts
    assert facts.history_reads == 1
    timeline = FactHistory(facts.history(principal, CITY)).timeline()
    assert ("Nice", _day_of(said_on), _day_of(holds_until)) in shape(timeline)
    assert _open(head.periods, head.changed_at) == _open(timeline, head.changed_at)
    assert list(head.periods) == timeline[len(timeline) - len(head.periods) :]


# ---------------------------------------------------------------- the service


class Where(Step, title="Where"):
    city: str = field("City", memory=CITY)


where = FormDef(id="where", version=1, title="Where", steps=[Where])


@pytest.mark.parametrize("until", [None, T0 + 20 * DAY], ids=["undated", "until_day_20"])
def test_a_form_fills_the_city_true_today_and_answering_it_keeps_the_move(
    until: datetime | None,
) -> None:
    # GIVEN alice said Lyon 100 days ago (with no end, or until day 20), and last week that
    # she moves to Berlin on day 30
    facts = RecordingFacts()
    since = T0 - 100 * DAY
    lyon = said(
        CITY, "Lyon", stated_at=since, valid_from=since if until else None, valid_until=until
    )
    berlin = said(CITY, "Berlin", stated_at=T0 - 5 * DAY, valid_from=T0 + 30 * DAY)
    for statement, at in ((lyon, since), (berlin, T0 - 5 * DAY)):
        facts.append("alice", plan(statement, facts.head_of("alice", CITY), at))
    talk = Talk(memory_service(where, facts=facts), Caller("alice", "conv-1"))
    # WHEN a form asking for the city starts today
    started = talk.start("where")
    # THEN Lyon fills it
    assert "filled 1 from memory" in started["summary"]
    assert talk.store.get("fi_1").state.recalled["city"].value == "Lyon"
    # WHEN she confirms it and the agent sends it again
    talk.fill("where", city="Lyon")
    # THEN that confirms the very period shown (its age starts again, its end stays), and the
    # move to Berlin is still planned
    assert [r.change for r in facts.history("alice", CITY)] == ["stated", "stated", "confirmed"]
    head = facts.head_of("alice", CITY)
    assert head is not None
    assert shape(head.periods) == [
        ("Lyon", since, until or T0 + 30 * DAY),
        ("Berlin", T0 + 30 * DAY, None),
    ]
    confirmed = head.periods[0].confirmed_at
    assert confirmed is not None and confirmed > T0


# ---------------------------------------------------------------- the head is the history's fold


VALUES = ("a", "b", "c")
BASE = datetime(2026, 1, 1, tzinfo=UTC)


def _day(draw: st.DrawFn) -> datetime:
    return BASE + draw(st.integers(0, 20)) * DAY


@st.composite
def histories(draw: st.DrawFn) -> list[FactRevision]:
    """Revisions of one key that each apply to the head before them: statements undated and
    dated (from a day, until a day, or both), said before or after the ones recorded earlier,
    corrections, confirmations of a value the head keeps, and deletions; recorded in order
    from day 6, with world times on both sides of the record times (days 0 to 20, and a
    period up to 12 days long), so that gaps, planned changes and late statements meet."""
    revisions: list[FactRevision] = []
    head: FactHead | None = None
    recorded = BASE + 6 * DAY
    for _ in range(draw(st.integers(1, 14))):
        recorded += draw(st.integers(0, 2)) * DAY
        kind = draw(st.sampled_from(["undated", "dated", "corrected", "confirmed", "deleted"]))
        common: dict[str, Any] = {
            "key": CITY, "seq": len(revisions), "source": API, "recorded_at": recorded,
        }  # fmt: skip
        if kind == "deleted":
            fields: dict[str, Any] = {"change": "deleted"}
        elif kind == "confirmed":
            kept = head.periods if head is not None else ()
            value = draw(st.sampled_from([p.value for p in kept])) if kept else "a"
            fields = {"change": "confirmed", "value": value, "confirmed_at": _day(draw)}
        else:
            stated_at = _day(draw)
            fields = {
                "change": "corrected" if kind == "corrected" else "stated",
                "value": draw(st.sampled_from(VALUES)),
                "stated_at": stated_at,
            }
            if kind != "undated":
                start = draw(st.none() | st.builds(_day_of, st.integers(0, 20)))
                length = draw(st.none() | st.integers(1, 12))
                if kind == "dated" and start is None and length is None:
                    start = _day(draw)
                fields["valid_from"] = start
                if length is not None:
                    fields["valid_until"] = (start or stated_at) + length * DAY
        revision = FactRevision.model_validate({**common, **fields})
        try:
            head = apply_revision(head, revision, lambda: revisions)
        except ValueError:
            # what the head refuses, the whole history refuses too
            with pytest.raises(ValueError):
                FactHistory([*revisions, revision]).timeline()
            continue
        revisions.append(revision)
    return revisions


def _day_of(n: int) -> datetime:
    return BASE + n * DAY


def _open(periods: list[Fact] | tuple[Fact, ...], at: datetime) -> list[Fact]:
    return [p for p in periods if p.valid_until is None or p.valid_until > at]


@settings(max_examples=400, deadline=None)
@given(histories(), st.integers(0, 25))
def test_folding_the_head_gives_what_folding_the_whole_history_gives(
    revisions: list[FactRevision], later: int
) -> None:
    # GIVEN any history; after each revision
    for n in range(1, len(revisions) + 1):
        history = FactHistory(revisions[:n])
        head = history.head()
        timeline = history.timeline()
        assert head is not None
        # THEN the head's fact is the latest period of the whole timeline
        assert head.fact == max(timeline, key=lambda p: p.since, default=None)
        # AND every period still open when the head changed is in the head, as it is in the
        # timeline, and the head keeps no open period the timeline lacks
        assert _open(head.periods, head.changed_at) == _open(timeline, head.changed_at)
        # AND the head's periods are how the timeline ends, all of it when the head is whole
        assert list(head.periods) == timeline[len(timeline) - len(head.periods) :]
        assert not head.whole or len(head.periods) == len(timeline)
        # AND from then on, the head answers what is true as the whole history does
        when = head.changed_at + later * DAY
        true_then = history.valid_at(when)
        if true_then is not None:
            assert head.at(when) == true_then
        else:
            assert head.at(when) == head.fact and not (head.fact and head.fact.holds_at(when))
    # AND the periods of the timeline are in order and never overlap
    final = FactHistory(revisions).timeline()
    for first, second in itertools.pairwise(final):
        assert first.valid_until is not None and first.valid_until <= second.since
