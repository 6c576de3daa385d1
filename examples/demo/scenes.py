"""The demo's scenes, one function each, in the order ``run`` plays them over one ``Demo``.

Each scene opens its own conversation, plays the user's turns and the agent's calls, and checks
with ``expect`` the outcome it is there to show: the travel claim (front-loading, aliases, a
misspelt id, a bad value, held and undo; a policy checkpoint that rejects, then a correction;
the person reviewing the claim on its form page before it is sent, over HTTP: ``page_scene``),
the PI intake (a triage jump forward; a revisit back), the grant application (ineligible, so
it terminates), the purchase request (a finance approval, decided outside the chat), the CRM
webhook (over HTTP only, with the ``crm`` source's secret) and the job application a builder
agent builds, the person watching it on the draft's canvas over HTTP (``canvas_scene``), and a
person publishes (``job_scene``, importable from here). The ninth scene, memory, is
``memory_scene``'s.
"""

from __future__ import annotations

import uuid

from formwork.examples.demo.approval_page_scene import decide_on_the_page
from formwork.examples.demo.driver import Demo
from formwork.examples.demo.job_scene import (
    apply_for_the_job,
    build_the_form,
    job_application,
    publish_the_form,
)
from formwork.examples.demo.page_scene import review_on_the_page
from formwork.examples.demo.printing import compact, expect, say
from formwork.examples.demo.transports import OverHttp
from formwork.webhooks import ID_HEADER, STANDARD_SIGNATURE_HEADER

__all__ = [
    "apply_for_the_job",
    "build_the_form",
    "crm_webhook",
    "grant",
    "job_application",
    "pi_intake",
    "publish_the_form",
    "purchase",
    "travel_claim",
]
"""The scenes played from here (the eighth, the job application, is ``job_scene``'s)."""


def travel_claim(demo: Demo) -> None:
    """Sections 1 and 2: a claim captured front-loaded, corrected, held and undone; then a
    policy checkpoint, the review on the form page and the submission.

    A script, long on purpose: read top to bottom it is the transcript the demo prints, each
    turn's words, call and check in the order shown; cut into functions it would stop
    reading as the conversation."""
    demo.section(
        "1. Travel claim: front-loading, aliases, a misspelt id, a bad value, held + undo", "conv-t"
    )
    r = demo.turn(
        "I need to claim for a trip: I flew out on 3 March on TP1234 and came back on the 7th. "
        "It was for the client kickoff.",
        "form_start",
        {
            "form": "travel-claim",
            "values": {
                "departure_date": "2025-03-03",
                "return_date": "2025-03-07",
                "purpose": "client kickoff",
                "mode": "air",
                "flight_number": "TP1234",
            },
        },
    )
    claim = r["instance"]
    saved = str(r.get("summary", ""))
    expect(
        "departure_date" in saved and "flight_number" in saved,
        "one call to capture answers from two later steps",
    )
    expect('step 1/4 "Claimant"' in demo.status(), "the claim to still start at Claimant")
    r = demo.turn(
        "I'm Ana Ferreira, staff number AB1234. The trip was to Lisbon.",
        "form_fill",
        {
            "form": "travel-claim",
            "values": {"Full name": "Ana Ferreira", "staffId": "AB1234", "destinaton": "Lisbon"},
        },
    )
    expect(
        r.get("resolved") == {"Full name": "full_name", "staffId": "staff_id"}, "aliases resolved"
    )
    expect(
        r.get("unknown") == [{"sent": "destinaton", "did_you_mean": ["destination"]}],
        "the misspelt id answered with did_you_mean, not guessed",
    )
    demo.turn(
        None,
        "form_fill",
        {"form": "travel-claim", "values": {"destination": "Lisbon"}},
        note="resends the destination under the id did_you_mean names",
    )
    expect(demo.value(claim, "destination") == "Lisbon", "the destination under its real id")
    expect("Trip (" not in demo.status(), "the trip step complete")
    r = demo.turn(
        "Cost centre is CC-104, and yes, the receipts are attached.",
        "form_fill",
        {"form": "travel-claim", "values": {"cost_centre": "cc-104", "receipts_attached": "yes"}},
    )
    expect(
        r["ok"] and r.get("coerced") == {"receipts_attached": {"sent": "yes", "stored": True}},
        'the quoted "yes" read as true, and the result saying so',
    )
    expect(r["rejected"][0]["field"] == "cost_centre", "only the lower-case cost centre rejected")
    expect("like CC-104" in r["rejected"][0].get("hint", ""), "a hint showing the shape to send")
    demo.turn(
        None,
        "form_fill",
        {"form": "travel-claim", "values": {"cost_centre": "CC-104"}},
        note="resends it in the shape the hint shows",
    )
    expect(demo.value(claim, "cost_centre") == "CC-104", "the resent cost centre accepted")

    demo.turn(
        "Actually I took the train, not a plane.",
        "form_revise",
        {"form": "travel-claim", "field": "mode", "action": "set", "value": "rail"},
    )
    r = demo.turn(
        None,
        "form_read",
        {"form": "travel-claim", "part": "travel"},
        note="reads the step to see what the correction did",
    )
    held = {f["id"]: f["status"] for f in r["fields"]}
    expect(held["flight_number"] == "held", "the flight number held, not dropped")
    r = demo.turn(
        "Sorry, I mixed that up with another trip: it was the flight after all.",
        "form_revise",
        {"form": "travel-claim", "field": "mode", "action": "undo"},
    )
    expect("flight_number" in r.get("restored", {}), "undo to bring the flight number back live")
    expect(demo.value(claim, "flight_number") == "TP1234", "the same flight number as before")

    demo.section("2. Travel claim: a policy checkpoint rejects, then a correction", "conv-t")
    r = demo.turn(
        "The total came to 2,450 euros.",
        "form_fill",
        {"form": "travel-claim", "values": {"total": 2450}},
    )
    key = f"{claim}:checkpoint.policy_cap:1"
    expect(r.get("fired") == [key], f"the policy cap to fire with key {key}")
    demo.show_run(key, wait=10, status="COMPLETED")
    expect("over the 2000 EUR policy cap" in demo.status(), "the rejection on the status line")
    demo.turn(
        "Fine, leave out the taxi: make it 1,950.",
        "form_fill",
        {"form": "travel-claim", "values": {"total": 1950}},
    )
    expect("policy cap" not in demo.status(), "the correction to clear the rejection")
    r = demo.turn(
        "My manager is joao.silva@example.com.",
        "form_fill",
        {"form": "travel-claim", "values": {"manager_email": "joao.silva@example.com"}},
    )
    expect("closed" not in r, "the complete claim to stay open for corrections")
    expect(
        "complete (still open for corrections)" in demo.status(),
        "the status line to say the claim is complete and awaits submission",
    )
    review_on_the_page(demo, claim, "Travel expense claim")
    r = demo.turn(
        "Yes, that's everything, please send it in.",
        "form_fill",
        {"form": "travel-claim", "submit": True},
        note="submits once the user confirms",
    )
    expect(r.get("closed") == "completed", "the claim to close as submitted")


def pi_intake(demo: Demo) -> None:
    """Sections 3 and 4: triage stamps a track and jumps forward; a prior claim sends the
    agent back (a revisit).

    A script, long on purpose: read top to bottom it is the transcript the demo prints, each
    turn's words, call and check in the order shown; cut into functions it would stop
    reading as the conversation."""
    demo.section("3. PI intake: triage stamps a track and jumps forward", "conv-pi-1")
    r = demo.turn(
        "Someone rear-ended me at a junction. I'm Sam Okafor, born 2 May 1988, phone 07700 900123.",
        "form_start",
        {
            "form": "pi-intake",
            "values": {
                "full_name": "Sam Okafor",
                "date_of_birth": "1988-05-02",
                "phone": "07700 900123",
                "incident_type": "vehicle",
            },
        },
    )
    intake = r["instance"]
    r = demo.turn(
        "It was on 14 February, two cars, police ref 4471/25. Minor really, just a bump.",
        "form_fill",
        {
            "form": "pi-intake",
            "values": {
                "incident_date": "2025-02-14",
                "description": "Rear-ended while stopped at a junction",
                "vehicle_count": 2,
                "police_report_number": "4471/25",
                "severity": "minor",
            },
        },
    )
    expect(r.get("fired") == [f"{intake}:checkpoint.triage:1"], "triage to fire")
    demo.show_run(f"{intake}:checkpoint.triage:1", wait=10, status="COMPLETED")
    r = demo.turn(
        None,
        "form_read",
        {"form": "pi-intake", "part": "track"},
        note="reads the field triage stamped",
    )
    expect(r.get("value") == "fast", "triage to stamp the fast track")
    expect('step 4/4 "Review"' in demo.status(), "the jump forward to Review")
    demo.turn(
        "No lawyer. And yes, that summary is right.",
        "form_fill",
        {"form": "pi-intake", "values": {"has_lawyer": False, "confirmed": True}},
    )
    expect('step 3/4 "Injuries"' in demo.status(), "Injuries to be asked after the review")

    demo.section("4. PI intake: a prior claim sends the agent back (a revisit)", "conv-pi-2")
    demo.turn(
        "I'm Maria Lopez, born 9 November 1975, on 0113 496 0000. I claimed with you before: "
        "PC-20417.",
        "form_start",
        {
            "form": "pi-intake",
            "values": {
                "full_name": "Maria Lopez",
                "date_of_birth": "1975-11-09",
                "phone": "0113 496 0000",
                "prior_claim_id": "PC-20417",
            },
        },
    )
    demo.turn(
        "I slipped on a wet floor at the supermarket on 20 January; I was off work a week.",
        "form_fill",
        {
            "form": "pi-intake",
            "values": {
                "incident_type": "premises",
                "incident_date": "2025-01-20",
                "description": "Slipped on an unmarked wet floor in a supermarket aisle",
                "severity": "moderate",
            },
        },
    )
    expect('back at step 1/4 "Identity"' in demo.status(), "the revisit of Identity")
    demo.turn(
        "Yes, that's all me, but my number changed: it's 07700 900456 now.",
        "form_fill",
        {"form": "pi-intake", "values": {"phone": "07700 900456"}},
    )
    expect('step 3/4 "Injuries"' in demo.status(), "a write into Identity to end the revisit")


def grant(demo: Demo) -> None:
    demo.section("5. Grant application: ineligible, so it terminates", "conv-g")
    r = demo.turn(
        "We're a bakery in Leeds: 12 staff, about 180k a year, trading for 8 months.",
        "form_start",
        {
            "form": "grant-application",
            "values": {
                "country": "England",
                "annual_revenue": 180000,
                "employee_count": 12,
                "years_trading": 0.7,
            },
        },
    )
    expect(r.get("closed") == "terminated", "the eligibility checkpoint to terminate")
    expect(str(r.get("reason", "")).startswith("ineligible:"), "an ineligibility reason")
    r = demo.turn(
        "Can I add our company number anyway? It's 09876543.",
        "form_fill",
        {"form": "grant-application", "values": {"registration_number": "09876543"}},
    )
    expect(r.get("error") == "form_closed", "a write to a terminated form refused")


def purchase(demo: Demo) -> None:
    demo.section("6. Purchase request: over 5,000 EUR it waits for a finance approver", "conv-p")
    r = demo.turn(
        "I need a laser cutter from Acme for the workshop: 7,200 euros.",
        "form_start",
        {
            "form": "purchase-request",
            "values": {"item": "Laser cutter", "supplier": "Acme", "amount": "7200.00"},
        },
    )
    approval = f"{r['instance']}:checkpoint.finance_approval:1"
    expect(r.get("fired") == [approval], f"the finance approval to open with id {approval}")
    expect("awaiting approval by finance" in demo.status(), "the status line to name finance")
    demo.show_run(approval, status="RUNNING")
    demo.turn(
        "Budget line BL-2041, and yes, those details are right.",
        "form_fill",
        {"form": "purchase-request", "values": {"budget_line": "BL-2041", "confirmed": True}},
    )
    expect("all answered, not complete" in demo.status(), "every answer given, still waiting")
    requester = demo.transport.principal
    status, _ = demo.decide(
        "the requester, who also holds the finance role,",
        requester,
        ["finance"],
        approval,
        "approved",
    )
    expect(
        status == 404,
        "the requester's approval of her own request refused (404, as for an unknown id)",
    )
    approver = "finance-" + requester.split("-", 1)[-1]
    status, result = decide_on_the_page(
        demo, "finance", approver, ["finance"], approval, "approved", "within the workshop budget"
    )
    expect(status == 200 and result.get("form_status") == "completed", "the approval to land")
    demo.show_run(approval, wait=10, status="COMPLETED")
    r = demo.turn(
        None,
        "form_read",
        {"form": "purchase-request", "part": "finance_decision"},
        note="reads the decision to tell the user",
    )
    expect(
        [(x.get("value"), x["by"]) for x in r.get("revisions", [])] == [("approved", "approver")],
        "the decision recorded as a revision by the approver",
    )


def crm_webhook(demo: Demo) -> None:
    transport = demo.transport
    if not isinstance(transport, OverHttp):
        return
    if transport.webhook_secret is None:
        print(
            "\n(7. skipped: the webhook needs the crm secret; start make dev and the demo with "
            """FORMWORK_WEBHOOK_SECRETS='{"crm": "<a secret of 16+ characters>"}')"""
        )
        return
    demo.section("7. A CRM opens a travel claim by webhook; the agent finds it started", "conv-crm")
    payload = {
        "form": "travel-claim",
        "principal": transport.principal,
        "conversation_id": "conv-crm",
        "values": {"full_name": "Ana Ferreira", "staff_id": "AB1234", "destination": "Porto"},
        "metadata": {"crm_contact": "C-1187"},
    }
    delivery = f"d-{uuid.uuid4().hex[:12]}"
    print()
    say("", "(the CRM, for a trip it booked: a signed request, no user token)", indent=2)
    say("crm:   ", f"POST /webhooks/crm {compact(payload)}")
    say("", f"{ID_HEADER}: {delivery}, {STANDARD_SIGNATURE_HEADER}: v1,<HMAC-SHA256>", indent=11)
    status, body = transport.webhook("crm", payload, delivery)
    expect(status == 201 and body.get("ok"), f"201 from POST /webhooks/crm, got {status}: {body}")
    say("result: ", f"{status} session {body['instance']} for {transport.principal}")
    status, again = transport.webhook("crm", payload, delivery)
    expect(status == 200 and again.get("replayed"), "a re-delivery answered with the first result")
    say("", f"(the CRM retries the same delivery: {status}, replayed, no second session)", 4)
    expect("travel-claim" in demo.status(), "the agent's status line to show the started claim")
    r = demo.turn(
        "Hi, I was told to finish my claim for the Porto trip.",
        "form_read",
        {"form": "travel-claim", "part": "destination"},
        note="the status line shows a claim already started; it checks who wrote the answer",
    )
    expect(r.get("revisions", [{}])[0].get("by") == "webhook", "the seed written by the webhook")
