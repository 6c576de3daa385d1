"""The demo's scenes, one function each, in the order ``run`` plays them over one ``Demo``.

Each scene opens its own conversation, plays the user's turns and the agent's calls, and checks
with ``expect`` the outcome it is there to show: the travel claim (front-loading, aliases, a
misspelt id, a bad value, held and undo; a policy checkpoint that rejects, then a correction;
the person reviewing the claim on its form page before it is sent, over HTTP: ``page_scene``),
the PI intake (a triage jump forward; a revisit back), the grant application (ineligible, so
it terminates), the purchase request (a finance approval, decided outside the chat), the CRM
webhook (over HTTP only, with the ``crm`` source's secret) and the job application a builder
agent builds, the person watching it on the draft's canvas over HTTP (``canvas_scene``), and a
person publishes. The ninth scene, memory, is ``memory_scene``'s.
"""

from __future__ import annotations

import uuid

from examples.demo.approval_page_scene import decide_on_the_page
from examples.demo.canvas_scene import Watch, open_the_canvas, see_the_change
from examples.demo.driver import Demo
from examples.demo.page_scene import review_on_the_page
from examples.demo.printing import compact, expect, say
from examples.demo.transports import OverHttp
from examples.job_application import BUILD, FORM_ID, check_job_application
from forms import Caller
from formwork.webhooks import ID_HEADER, STANDARD_SIGNATURE_HEADER


def travel_claim(demo: Demo) -> None:
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


def job_application(demo: Demo) -> None:
    """A builder agent builds the job application through the builder tools; a person of the
    same tenant publishes it; an applicant fills it in another conversation, no redeploy."""
    tenant = demo.transport.tenant
    demo.section(
        f"8. An agent builds a job application in tenant {tenant}; a person publishes it; "
        "an applicant fills it",
        "conv-job",
    )
    build_the_form(demo, f"{tenant}/builder", "chat-job-builder")
    publish_the_form(demo, f"{tenant}/builder", f"{tenant}/hr-lead")
    apply_for_the_job(demo, f"{tenant}/applicant")


def build_the_form(demo: Demo, builder: str, chat: str) -> None:
    """The builder's calls in its chat ``chat`` (over HTTP the person watching the first field
    land on the draft's canvas), a replay, a stopped call; the draft as its tenant reads it."""
    transport = demo.transport
    watch: Watch | None = None
    print()
    say(
        "",
        f"(the builder agent's tool calls in chat {chat}, each applied to the durable "
        "draft as it comes)",
        2,
    )
    for n, call in enumerate(BUILD, 1):
        result = demo.build(
            builder,
            FORM_ID,
            call.tool,
            dict(call.input),
            call.selection,
            chat_id=chat,
            call_id=f"build_{n:02d}",
            said=call.said,
        )
        expect(result.get("ok"), f"the builder call {call.tool} to apply")
        if n == 1:  # the draft exists: the person opens its canvas
            watch = open_the_canvas(demo, builder, FORM_ID)
        elif n == 2:
            see_the_change(watch, str(call.input["field"]["id"]))
    print()
    say(
        "",
        "(the chat stream replays its first tool call: same chat, same id build_01, so "
        "nothing again)",
        2,
    )
    first = BUILD[0]
    again = demo.build(
        builder, FORM_ID, first.tool, dict(first.input), chat_id=chat, call_id="build_01"
    )
    expect(again.get("replayed"), "a replayed builder call to answer its first result")
    print()
    say("", "(the person presses Stop while a call is on its way)", indent=2)
    stop = {"step": "role", "field": {"kind": "decimal", "id": "salary", "label": "Salary"}}
    stopped = demo.build(
        builder, FORM_ID, "add_field", stop, chat_id=chat, call_id="build_stop", cancelled=True
    )
    expect(stopped.get("error") == "cancelled", "a stopped call to be answered as cancelled")
    again = demo.build(builder, FORM_ID, "add_field", stop, chat_id=chat, call_id="build_stop")
    expect(again.get("error") == "cancelled", "the stopped call's id to keep its answer")
    status, draft = transport.draft(builder, FORM_ID)
    expect(status == 200, f"the draft to be readable by its tenant, got {status}")
    made = check_job_application(draft["document"])
    expect(not made, f"the draft to be the job application: {made}")
    say("draft: ", f"{len(draft['log'])} edits on the log, no field 'salary'", indent=2)


def publish_the_form(demo: Demo, builder: str, publisher: str) -> None:
    """Invisible to another tenant; published by a person with the role, and only then
    startable (by the tenant's principals alone)."""
    transport = demo.transport
    tenant, other = transport.tenant, transport.other_tenant
    print()
    say("", f"(another tenant, {other}, looks for it)", indent=2)
    status, _ = transport.draft(f"{other}/builder", FORM_ID)
    expect(status == 404, f"another tenant's read of the draft to be a 404, got {status}")
    say("api:   ", f"GET /builder/forms/{FORM_ID} as {other}/builder -> {status}")

    print()
    say("", "(a person publishes it; the builder agent has no publish tool)", indent=2)
    status, body = transport.publish(builder, [], FORM_ID)
    expect(status == 403, f"publishing without the publisher role to be refused, got {status}")
    say("api:   ", f"POST /builder/forms/{FORM_ID}/publish as {builder} (no role) -> {status}")
    status, body = transport.publish(publisher, ["form_publisher"], FORM_ID)
    expect(status == 200 and body.get("version") == 1, f"version 1 published, got {body}")
    say("api:   ", f"POST /builder/forms/{FORM_ID}/publish as {publisher} -> {status}")
    say("", f"{compact(body)}: served to {tenant} from its next call, no redeploy", indent=11)

    print()
    say("", f"(an applicant of the other tenant, {other}, asks for it)", indent=2)
    demo.caller = Caller(f"{other}/applicant", "conv-job")
    r = demo.turn("I'd like to apply for the job application.", "form_start", {"form": FORM_ID})
    expect(r.get("error") == "unknown_form", "another tenant's applicant not to find the form")


def apply_for_the_job(demo: Demo, applicant: str) -> None:
    """An applicant fills the published form: a refusing checkpoint, an executor, held and
    restored answers, a retried call."""
    print()
    say("", f"(an applicant of {demo.transport.tenant}, in a new conversation)", indent=2)
    demo.caller = Caller(applicant, "conv-job")
    r = demo.turn(
        "Hi, I'm Rui Costa (rui@example.com). I want the engineering job; I graduated this "
        "summer, so no experience yet. I could start on 1 March.",
        "form_start",
        {
            "form": FORM_ID,
            "values": {
                "full_name": "Rui Costa",
                "email": "rui@example.com",
                "position": "engineering",
                "years_experience": 0,
                "start_date": "2027-03-01",
            },
        },
    )
    job = r["instance"]
    expect("junior_engineer" in str(r.get("fired")), "the junior-engineer checkpoint to fire")
    expect("at least" in demo.status(), "the status line to say why the application cannot go on")
    demo.turn(
        "Sorry, I meant four years: I worked while studying.",
        "form_fill",
        {"form": FORM_ID, "values": {"years_experience": 4}},
    )
    expect("at least" not in demo.status(), "the correction to clear the checkpoint")
    r = demo.turn(
        "I'm not authorised to work here yet, so I'd need a visa sponsor.",
        "form_fill",
        {"form": FORM_ID, "values": {"authorized_to_work": False, "needs_sponsorship": True}},
    )
    key = f"{job}:checkpoint.sponsorship_review:1"
    expect(r.get("fired") == [key], f"the sponsorship review to fire once, with key {key}")
    demo.show_run(key, wait=10, status="COMPLETED")
    fill = {"form": FORM_ID, "values": {"relocate": True, "preferred_locations": ["lisbon"]}}
    demo.turn("I'm happy to relocate, ideally to Lisbon.", "form_fill", fill)
    r = demo.turn(
        "Actually, I'd rather not move after all.",
        "form_fill",
        {"form": FORM_ID, "values": {"relocate": False}},
    )
    expect("preferred_locations" in str(r.get("now_held")), "the locations held, not dropped")
    calls = demo.calls
    r = demo.turn(
        None,
        "form_fill",
        {"form": FORM_ID, "values": {"relocate": False}},
        note="the chat backend retries the last call after a timeout, with the same id",
        call_id=f"call_{calls:03d}",
    )
    expect(r.get("replayed"), "the retried call answered with its first result")
    r = demo.turn(
        "Hmm, no, moving is fine. Lisbon still.",
        "form_fill",
        {"form": FORM_ID, "values": {"relocate": True}},
    )
    expect("preferred_locations" in str(r.get("restored")), "the held locations restored")
    expect(demo.value(job, "preferred_locations") == ["lisbon"], "Lisbon back in force")
    r = demo.turn(
        "That's everything, please send it.",
        "form_fill",
        {"form": FORM_ID, "values": {"cover_letter": "I build reliable backends."}, "submit": True},
    )
    expect(r.get("closed") == "completed", "the application to close as submitted")
