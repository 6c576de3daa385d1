"""The demo's eighth scene: a builder agent builds the job application through the builder
tools (over HTTP the person watching it land on the draft's canvas: ``canvas_scene``), a person
of the same tenant publishes it, and an applicant fills it in another conversation, with no
redeploy. ``run`` plays it eighth, after the scenes of ``scenes``, whose names include it.
"""

from __future__ import annotations

from forms import Caller
from formwork.examples.demo.canvas_scene import Watch, open_the_canvas, see_the_change
from formwork.examples.demo.driver import Demo
from formwork.examples.demo.printing import compact, expect, say
from formwork.examples.job_application import BUILD, FORM_ID, check_job_application


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
    restored answers, a retried call.

    A script, long on purpose: read top to bottom it is the transcript the demo prints, each
    turn's words, call and check in the order shown; cut into functions it would stop
    reading as the conversation."""
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
