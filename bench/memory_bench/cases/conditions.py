"""The conditions around recall: the switch, another principal, a user's call racing memory's
commit, and a slow or failing fact store."""

from __future__ import annotations

from bench.memory_bench.cases.common import (
    ALICE,
    ANONYMOUS,
    BOB,
    BORN,
    GLOBEX_ALICE,
    HEALTH,
    HEALTH_FACTS,
    HEALTH_RECALLED,
    READ_AND_LIST,
    alice,
    alice_said,
)
from bench.memory_bench.model import (
    DAY,
    Answered,
    Case,
    Empty,
    Expected,
    Fill,
    Kept,
    Offer,
    Race,
    Raced,
    Said,
    Start,
    Store,
    Switched,
    ago,
)
from bench.memory_bench.virtual import EVERY, NEVER

_OFF: dict[str, Expected] = dict.fromkeys(("date_of_birth", "height_cm", "weight_kg"), Empty("off"))

SWITCH = [
    Case(
        id="on_by_default",
        category="switch",
        claim="a principal who never touched the switch has memory on",
        start=alice(HEALTH),
        facts=HEALTH_FACTS,
        expect=HEALTH_RECALLED,
        requests=READ_AND_LIST,
    ),
    Case(
        id="off_for_her",
        category="switch",
        claim="memory off: the switch is the one request, no fact is read, nothing filled",
        start=alice(HEALTH),
        facts=(*HEALTH_FACTS, Switched(enabled=False, at=ago(DAY), who=ALICE)),
        expect=_OFF,
        off=True,
        requests=("settings",),
    ),
    Case(
        id="off_records_nothing",
        category="switch",
        claim="memory off and a height given at the start: kept in the form, not remembered",
        start=alice(HEALTH, values={"height_cm": 180}),
        facts=(*HEALTH_FACTS, Switched(enabled=False, at=ago(DAY), who=ALICE)),
        expect={**_OFF, "height_cm": Kept(180)},
        off=True,
        requests=("settings",),
        not_kept=(180,),
    ),
    Case(
        id="off_for_the_deployment",
        category="switch",
        claim="a deployment without memory never asks the fact store",
        start=alice(HEALTH),
        facts=HEALTH_FACTS,
        memory=False,
        expect=_OFF,
        off=True,
        requests=(),
    ),
    Case(
        id="off_then_on",
        category="switch",
        claim="off, then on again: the facts kept meanwhile fill as before",
        start=alice(HEALTH),
        facts=(
            *HEALTH_FACTS,
            Switched(enabled=False, at=ago(8 * DAY), who=ALICE),
            Switched(enabled=True, at=ago(2 * DAY), who=ALICE),
        ),
        expect=HEALTH_RECALLED,
    ),
    Case(
        id="said_while_off",
        category="switch",
        claim="66 kg answered while memory was off is not remembered: the older 70 is offered",
        start=alice(HEALTH),
        facts=(
            *HEALTH_FACTS,
            Switched(enabled=False, at=ago(8 * DAY), who=ALICE),
            Answered(form=HEALTH, values={"weight_kg": "66"}, at=ago(6 * DAY), who=ALICE),
            Switched(enabled=True, at=ago(2 * DAY), who=ALICE),
        ),
        expect=HEALTH_RECALLED,
        not_kept=("66",),
    ),
    Case(
        id="webhook_start",
        category="switch",
        claim="a webhook's start (a principal named in a body): no fact read, its seed not kept",
        start=Start(who=ALICE, form=HEALTH, source="webhook", values={"height_cm": 190}),
        facts=HEALTH_FACTS,
        expect={**_OFF, "height_cm": Kept(190)},
        off=True,
        requests=(),
        not_kept=(190,),
    ),
    Case(
        id="anonymous_caller",
        category="switch",
        claim="an anonymous caller has no memory: no request at all",
        start=Start(who=ANONYMOUS, form=HEALTH),
        expect=_OFF,
        off=True,
        requests=(),
    ),
]

PRINCIPAL_CASES = [
    Case(
        id="bob_same_tenant",
        category="principals",
        claim="alice's facts, bob's form: nothing of hers, only his memory asked",
        start=Start(who=BOB, form=HEALTH),
        facts=HEALTH_FACTS,
        requests=READ_AND_LIST,
        unseen=(BORN, "5'8"),
    ),
    Case(
        id="same_subject_other_tenant",
        category="principals",
        claim="globex/alice is not acme/alice: none of acme/alice's facts",
        start=Start(who=GLOBEX_ALICE, form=HEALTH),
        facts=HEALTH_FACTS,
        requests=READ_AND_LIST,
        unseen=(BORN, "5'8"),
    ),
    Case(
        id="each_their_own",
        category="principals",
        claim="both stated a weight: bob is offered his own, never hers",
        start=Start(who=BOB, form=HEALTH),
        facts=(
            alice_said("person.weight_kg", "61.5", at=ago(3 * DAY)),
            Said(key="person.weight_kg", value="95.2", at=ago(20 * DAY), who=BOB),
        ),
        expect={"weight_kg": Offer("95.2")},
        unseen=("61.5",),
    ),
]

RACE = [
    Case(
        id="answer_on_the_offered_field",
        category="race",
        claim="her weight lands right after the start: no offer of the old weight stands over "
        "her answer",
        start=alice(HEALTH, race=Race("form_fill", {"values": {"weight_kg": "72.5"}})),
        facts=HEALTH_FACTS,
        expect={**HEALTH_RECALLED, "weight_kg": Kept("72.5")},
    ),
    Case(
        id="start_value_wins",
        category="race",
        claim="form_start carries her height (180): it beats memory's 173",
        start=alice(HEALTH, values={"height_cm": 180}),
        facts=HEALTH_FACTS,
        expect={**HEALTH_RECALLED, "height_cm": Kept(180)},
    ),
    Case(
        id="raced_answer_remembered",
        category="race",
        claim="yesterday form_start carried 180 while her 181 landed before memory's commit: "
        "181 stood in that form, so 181, her latest answer, is the height that fills today",
        start=alice(),
        facts=(
            alice_said("person.height_cm", 173, at=ago(100 * DAY)),
            Raced(
                form=HEALTH,
                values={"height_cm": 180},
                answer={"height_cm": 181},
                at=ago(DAY),
                who=ALICE,
            ),
        ),
        expect={"height_cm": Fill(181)},
    ),
    Case(
        id="start_value_refused",
        category="race",
        claim='form_start names the date of birth with a value it refuses ("soon"): memory '
        "leaves that field to her",
        start=alice(HEALTH, values={"date_of_birth": "soon"}),
        facts=HEALTH_FACTS,
        expect={**HEALTH_RECALLED, "date_of_birth": Empty("named")},
    ),
    Case(
        id="start_alias_refused",
        category="race",
        claim='the same under the field\'s alias ("DOB"): memory still leaves it',
        start=alice(HEALTH, values={"DOB": "soon"}),
        facts=HEALTH_FACTS,
        expect={**HEALTH_RECALLED, "date_of_birth": Empty("named")},
    ),
]

_DOWN: dict[str, Expected] = dict.fromkeys(
    ("date_of_birth", "height_cm", "weight_kg"), Empty("unavailable")
)

STORE = [
    Case(
        id="store_down",
        category="store",
        claim="every fact-store request fails: the form opens, no error, nothing from memory",
        start=alice(HEALTH),
        facts=HEALTH_FACTS,
        store=Store(fails=EVERY),
        expect=_DOWN,
    ),
    Case(
        id="listing_fails",
        category="store",
        claim="the switch reads, the listing of facts fails: the form opens without memory",
        start=alice(HEALTH),
        facts=HEALTH_FACTS,
        store=Store(fails=frozenset({"heads"})),
        expect=_DOWN,
    ),
    Case(
        id="slow_within_deadline",
        category="store",
        claim="90 ms a request (180 ms in all, under the 200 ms deadline): memory is used",
        start=alice(HEALTH),
        facts=HEALTH_FACTS,
        store=Store(latency=0.09),
        expect=HEALTH_RECALLED,
    ),
    Case(
        id="slow_past_deadline",
        category="store",
        claim="150 ms a request (300 ms): the form opens at the deadline, without memory",
        start=alice(HEALTH),
        facts=HEALTH_FACTS,
        store=Store(latency=0.15),
        expect=_DOWN,
    ),
    Case(
        id="never_answers",
        category="store",
        claim="a store that never answers: the form opens at the deadline, without memory",
        start=alice(HEALTH),
        facts=HEALTH_FACTS,
        store=Store(latency=NEVER),
        expect=_DOWN,
    ),
    Case(
        id="slow_with_an_answer",
        category="store",
        claim="slow store, and a height at the start: it waits once, to read; the height is "
        "recorded behind the answer",
        start=alice(HEALTH, values={"height_cm": 180}),
        facts=HEALTH_FACTS,
        store=Store(latency=0.15),
        expect={**_DOWN, "height_cm": Kept(180)},
    ),
    Case(
        id="writes_fail",
        category="store",
        claim="reads work, writes fail: memory fills, her height is kept, no error shown",
        start=alice(HEALTH, values={"height_cm": 180}),
        facts=HEALTH_FACTS,
        store=Store(fails=frozenset({"append"})),
        expect={**HEALTH_RECALLED, "height_cm": Kept(180)},
    ),
]
