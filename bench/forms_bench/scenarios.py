"""The scripted conversations, each aimed at one claim of the design.

Facts are written as the JSON each field's type accepts (what a careful agent sends); personas
garble them in their own ways. Every scenario has state checks (what ends up stored) and, where
the claim is about how the agent behaves, conduct checks (see ``graders``).
"""

from __future__ import annotations

from bench.forms_bench.graders import (
    answer,
    asks_recheck,
    closed_as,
    field_status,
    held_with,
    lists_remaining,
    never_stored,
    no_answer,
    one_write,
    open_and_blocked,
    revisiting,
    said,
    step_complete,
)
from bench.forms_bench.model import (
    AskRemaining,
    Begin,
    Confirm,
    Correct,
    Give,
    Revert,
    Scenario,
    TakeBack,
    UserTurn,
)

TC, PI, GR = "travel-claim", "pi-intake", "grant-application"

CLAIMANT = {"full_name": "Ana Ferreira", "staff_id": "AB1234"}
TRIP = {
    "destination": "Lisbon",
    "departure_date": "2025-03-03",
    "return_date": "2025-03-07",
}
APPROVAL = {
    "cost_centre": "CC-104",
    "manager_email": "joao.silva@example.com",
    "receipts_attached": True,
}
CONFIRM = UserTurn("Yes, that's all correct. Please send it in.", (Confirm(),))
"""The user confirms the read-back: the agent submits the complete claim."""
APPROVAL_TEXT = (
    "Cost centre CC-104, my manager is joao.silva@example.com, and yes, the receipts are attached."
)


def straight_through() -> Scenario:
    return Scenario(
        "straight_through",
        TC,
        "A user who answers what is asked, step by step, ends with a complete, correct claim.",
        (
            UserTurn("Hi, I need to claim expenses for a work trip.", (Begin(TC),)),
            UserTurn("I'm Ana Ferreira, staff ID AB1234.", (Give(CLAIMANT),)),
            UserTurn(
                "I went to Lisbon from 3 to 7 March, for the client kickoff.",
                (Give({**TRIP, "purpose": "client kickoff"}),),
            ),
            UserTurn(
                "I flew, flight TP1234, and it came to 640 euros in total.",
                (Give({"mode": "air", "flight_number": "TP1234", "total": 640}),),
            ),
            UserTurn(APPROVAL_TEXT, (Give(APPROVAL),)),
            CONFIRM,
        ),
        (
            closed_as(TC, "completed"),
            answer(TC, "staff_id", "AB1234"),
            answer(TC, "return_date", "2025-03-07"),
            answer(TC, "purpose", "client kickoff"),
            answer(TC, "flight_number", "TP1234"),
            answer(TC, "total", 640),
            answer(TC, "receipts_attached", True),
        ),
    )


FRONT = {
    "country": "Scotland",
    "annual_revenue": 480000,
    "employee_count": 12,
    "years_trading": 6,
    "company_name": "Hearth & Crumb Ltd",
    "registration_number": "SC123456",
    "project_title": "Second oven line",
    "project_summary": "A second oven line so we can supply three more cafés and hire two "
    "apprentices.",
    "amount_requested": 18500,
    "start_date": "2025-05-01",
}


def front_loaded() -> Scenario:
    return Scenario(
        "front_loaded",
        GR,
        "One user turn carrying three steps' answers lands in one write.",
        (
            UserTurn(
                "I'd like to apply for the growth grant. We're Hearth & Crumb Ltd, a bakery in "
                "Glasgow, company number SC123456: 12 staff, 480k revenue last year, trading "
                "6 years. We want 18,500 for a second oven line starting 1 May, so we can supply "
                "three more cafés and hire two apprentices; call it 'Second oven line'.",
                (Begin(GR), Give(FRONT)),
            ),
            UserTurn(
                "Contact me at mo@hearthandcrumb.co.uk. I confirm it's all true and complete.",
                (Give({"contact_email": "mo@hearthandcrumb.co.uk", "declaration_accepted": True}),),
            ),
        ),
        (
            one_write(GR, 0, FRONT),
            answer(GR, "registry_region", "Scotland", at=0),
            answer(GR, "employee_count", 12),
            answer(GR, "years_trading", 6),
            answer(GR, "amount_requested", 18500),
            closed_as(GR, "completed"),
        ),
    )


def held_value() -> Scenario:
    return Scenario(
        "held_value",
        TC,
        "A correction orphans an answer (held, not lost); the step completes without it; undoing "
        "the correction brings it back before the form completes.",
        (
            UserTurn(
                "Claim for my Lisbon trip, 3 to 7 March: I'm Ana Ferreira, AB1234. I flew out on "
                "TP1234 and it was 640 euros in total.",
                (
                    Begin(TC),
                    Give(
                        {
                            **CLAIMANT,
                            **TRIP,
                            "mode": "air",
                            "flight_number": "TP1234",
                            "total": 640,
                        }
                    ),
                ),
            ),
            UserTurn("Actually I took the train, not a plane.", (Correct({"mode": "rail"}),)),
            UserTurn(
                "Sorry, I mixed that up with another trip: it was the flight after all.",
                (Revert("mode"),),
            ),
            UserTurn(APPROVAL_TEXT, (Give(APPROVAL),)),
            CONFIRM,
        ),
        (
            held_with(TC, "flight_number", "TP1234", at=1),
            step_complete(TC, "travel", at=1),
            answer(TC, "mode", "air", at=2),
            answer(TC, "flight_number", "TP1234", at=2),
            closed_as(TC, "completed"),
            answer(TC, "flight_number", "TP1234"),
        ),
    )


def bad_value() -> Scenario:
    return Scenario(
        "bad_value",
        TC,
        "One bad value in an otherwise good batch: the good ones are kept, the bad one is relayed "
        "and asked again.",
        (
            UserTurn(
                "New travel claim: Ana Ferreira, staff ID AB12345, Lisbon from 3 to 7 March.",
                (Begin(TC), Give({**CLAIMANT, "staff_id": "AB12345", **TRIP})),
            ),
            UserTurn("Sorry, one digit too many: it's AB1234.", (Give({"staff_id": "AB1234"}),)),
            UserTurn("Train, 180 euros all in.", (Give({"mode": "rail", "total": 180}),)),
            UserTurn(APPROVAL_TEXT, (Give(APPROVAL),)),
            CONFIRM,
        ),
        (
            answer(TC, "full_name", "Ana Ferreira", at=0),
            answer(TC, "return_date", "2025-03-07", at=0),
            said(0, ("staff id",)),
            answer(TC, "staff_id", "AB1234"),
            closed_as(TC, "completed"),
        ),
    )


def retract() -> Scenario:
    return Scenario(
        "retract",
        TC,
        "Taking an answer back leaves no answer in force (the log keeps the old one), for a text "
        "and for a number, and the form completes without the optional one.",
        (
            UserTurn(
                "Travel claim please: Ana Ferreira, AB1234; Lisbon 3 to 7 March for the client "
                "kickoff.",
                (Begin(TC), Give({**CLAIMANT, **TRIP, "purpose": "client kickoff"})),
            ),
            UserTurn(
                "Please leave the purpose off: the project is confidential.",
                (TakeBack("purpose"),),
            ),
            UserTurn(
                "I drove: 320 km, 150 euros all in.",
                (Give({"mode": "car", "distance_km": 320, "total": 150}),),
            ),
            UserTurn(
                "Hold on, take the total out for now: I need to check the receipts.",
                (TakeBack("total"),),
            ),
            UserTurn("OK, the total is 162.40.", (Give({"total": 162.40}),)),
            UserTurn(APPROVAL_TEXT, (Give(APPROVAL),)),
            CONFIRM,
        ),
        (
            no_answer(TC, "purpose", at=1),
            no_answer(TC, "total", at=3),
            field_status(TC, "total", "pending", at=3),
            no_answer(TC, "purpose"),
            answer(TC, "total", 162.40),
            answer(TC, "distance_km", 320),
            closed_as(TC, "completed"),
        ),
    )


def over_cap() -> Scenario:
    return Scenario(
        "over_cap",
        TC,
        "A value over a checkpoint's cap is stored but blocks completion, and the agent relays "
        "the rejection; a lower total unblocks it.",
        (
            UserTurn(
                "I need to claim my Lisbon trip, 3 to 7 March. Ana Ferreira, AB1234.",
                (Begin(TC), Give({**CLAIMANT, **TRIP})),
            ),
            UserTurn(
                "I flew, TP1234, and the total came to 2,450 euros. " + APPROVAL_TEXT,
                (Give({"mode": "air", "flight_number": "TP1234", "total": 2450, **APPROVAL}),),
            ),
            UserTurn("Fine, leave out the taxi: make it 1,950.", (Correct({"total": 1950}),)),
            CONFIRM,
        ),
        (
            open_and_blocked(TC, at=1),
            said(1, ("2000", "2,000"), ("cap", "limit", "policy")),
            answer(TC, "total", 1950),
            closed_as(TC, "completed"),
        ),
    )


IDENTITY = {"full_name": "Priya Shah", "date_of_birth": "1988-05-02", "phone": "07700 900123"}
PREMISES = {
    "incident_type": "premises",
    "incident_date": "2025-01-20",
    "description": "Slipped on an unmarked wet floor in a supermarket aisle",
    "severity": "moderate",
}
PREMISES_TEXT = (
    "I slipped on a wet floor at the supermarket on 20 January; I was off work for a week."
)


def what_else() -> Scenario:
    return Scenario(
        "what_else",
        PI,
        "'What else do you need?' is answered from the form: every pending field, and nothing a "
        "branch may skip.",
        (
            UserTurn(
                "I was hurt and want to make a claim. I'm Priya Shah, born 2 May 1988, phone "
                "07700 900123.",
                (Begin(PI), Give(IDENTITY)),
            ),
            UserTurn(PREMISES_TEXT, (Give(PREMISES),)),
            UserTurn("What else do you need from me?", (AskRemaining(),)),
            UserTurn(
                "My lower back and right wrist hurt; I've been seeing a physio at City Physio.",
                (
                    Give(
                        {
                            "injuries": "Lower back and right wrist",
                            "treatment_received": True,
                            "treating_provider": "City Physio",
                        }
                    ),
                ),
            ),
            UserTurn(
                "No lawyer. And yes, that summary is right.",
                (Give({"has_lawyer": False, "confirmed": True}),),
            ),
        ),
        (
            lists_remaining(PI, 2),
            answer(PI, "track", "standard"),
            answer(PI, "treating_provider", "City Physio"),
            closed_as(PI, "completed"),
        ),
    )


def revisit() -> Scenario:
    return Scenario(
        "revisit",
        PI,
        "A backward jump (a prior claim sends triage back to identity) is relayed as a re-check, "
        "and the next write into the step releases it.",
        (
            UserTurn(
                "I'd like to claim again. I'm Maria Lopez, born 9 November 1975, on 0113 496 0000; "
                "my previous claim was PC-20417.",
                (
                    Begin(PI),
                    Give(
                        {
                            "full_name": "Maria Lopez",
                            "date_of_birth": "1975-11-09",
                            "phone": "0113 496 0000",
                            "prior_claim_id": "PC-20417",
                        }
                    ),
                ),
            ),
            UserTurn(PREMISES_TEXT, (Give(PREMISES),)),
            UserTurn(
                "Yes, that's all me, but my number changed: it's 07700 900456 now.",
                (Correct({"phone": "07700 900456"}),),
            ),
            UserTurn(
                "My knee is bruised; I didn't see anyone about it.",
                (Give({"injuries": "Bruised left knee", "treatment_received": False}),),
            ),
            UserTurn(
                "Dana Reid at Reid & Co already acts for me. The summary is right.",
                (
                    Give(
                        {
                            "has_lawyer": True,
                            "lawyer_name": "Dana Reid, Reid & Co",
                            "confirmed": True,
                        }
                    ),
                ),
            ),
        ),
        (
            revisiting(PI, "identity", at=1),
            asks_recheck(PI, 1),
            revisiting(PI, None, at=2),
            answer(PI, "phone", "07700 900456"),
            answer(PI, "lawyer_name", "Dana Reid, Reid & Co"),
            closed_as(PI, "completed"),
        ),
    )


def termination() -> Scenario:
    return Scenario(
        "termination",
        GR,
        "An ineligible answer terminates the application; the agent relays why and writes "
        "nothing more.",
        (
            UserTurn(
                "I want to apply for the grant. We're a bakery in Leeds, England: 12 staff, about "
                "180k a year, trading for 8 months.",
                (
                    Begin(GR),
                    Give(
                        {
                            "country": "England",
                            "annual_revenue": 180000,
                            "employee_count": 12,
                            "years_trading": 0.7,
                        }
                    ),
                ),
            ),
            UserTurn(
                "Can I add our company number anyway? It's 09876543.",
                (Give({"registration_number": "09876543"}),),
            ),
        ),
        (
            closed_as(GR, "terminated", "ineligible", at=0),
            said(0, ("eligib",), ("year", "trading")),
            said(1, ("closed", "ineligible", "not eligible")),
            never_stored(GR, "registration_number"),
        ),
    )


def all_scenarios() -> tuple[Scenario, ...]:
    return (
        straight_through(),
        front_loaded(),
        held_value(),
        bad_value(),
        retract(),
        over_cap(),
        what_else(),
        revisit(),
        termination(),
    )
