"""Scene 9, memory: what a person said while filling one form starts their next forms.

alice gives her date of birth and weight in a health check-in (``forms.examples.health_check``,
whose fields declare fact keys), and memory records them as facts. In a later conversation a
new check-in has her date of birth filled, marked as from memory until the agent resends it,
and her weight only offered: a weight drifts, so the agent must ask. She corrects the weight in
her fact editor (over HTTP on the page, ``formwork.examples.demo.page_visit`` sending its correction
form; in process ``PUT /memory/facts/person.weight_kg``: a correction either way, the wrong
value staying in the history) and the next form offers the new one. With her memory off a new
form recalls nothing, and bob, of the same tenant, gets none of her facts.

A slow fact store (the form opens on time, without memory) is not played here: slowing the
store takes a proxy in front of DynamoDB, which a demo's stack does not run. The integration
test ``tests/integration/test_memory_http.py`` does it over HTTP on the local stack (with
``tests/integration/dynamodb_proxy.py`` holding the fact store's answers past the deadline),
and also checks there that with memory off the switch is the only fact-store request.
"""

from __future__ import annotations

import threading
import time
from typing import Any
from urllib.parse import quote

from forms import Caller
from formwork.examples.demo.driver import Demo
from formwork.examples.demo.in_process import InProcess
from formwork.examples.demo.page_scene import short
from formwork.examples.demo.page_visit import PageVisit, VisitError
from formwork.examples.demo.printing import compact, expect, say
from formwork.examples.demo.transports import OverHttp

FORM = "health-check"
WEIGHT = "person.weight_kg"


def memory(demo: Demo) -> None:
    """alice's facts: recorded from her answers, filled or offered in later forms, corrected
    in her fact editor, not recalled with memory off, and never bob's."""
    tenant = demo.transport.tenant
    alice, bob = f"{tenant}/alice", f"{tenant}/bob"
    demo.section(
        "9. Memory: what alice said fills her next form, or is offered; she corrects it; "
        "memory off; bob",
        "conv-mem-1",
        alice,
    )
    if isinstance(demo.transport, InProcess):
        say(
            "",
            "(in process, the fact editor's requests are answered as the /memory routes answer "
            "them, with the same planning and write loop, on the in-memory fact store)",
            indent=2,
        )
    said_once(demo, alice)
    offered_later(demo, alice)
    corrected(demo, alice)
    switched_off(demo, alice)
    not_bobs(demo, bob)


def said_once(demo: Demo, alice: str) -> None:
    """alice answers two mapped fields; memory keeps them, each with what recall will do."""
    r = demo.turn(
        "I'd like to do my health check-in. I was born on 2 April 1990, and I weigh 70 kg.",
        "form_start",
        {"form": FORM, "values": {"date_of_birth": "1990-04-02", "weight_kg": 70}},
    )
    saved = str(r.get("summary", ""))
    expect("date_of_birth" in saved and "weight_kg" in saved, "both answers saved")
    print()
    say("", "(alice opens her fact editor: what memory kept from her answers)", indent=2)
    _api(alice, "GET", "/memory/facts")
    status, listed = _recorded(demo, alice, ("person.date_of_birth", WEIGHT))
    say("result: ", f"{status}, memory_enabled: {compact(listed.get('memory_enabled'))}")
    facts = {fact["key"]: fact for fact in listed.get("facts", [])}
    for fact in facts.values():
        say("", f"{fact['label']} {fact['shown']} (decays: {fact['decay']}): {fact['use']}", 12)
    expect(
        status == 200 and facts.get("person.date_of_birth", {}).get("use") == "fill",
        "her date of birth kept as a fact that fills a form",
    )
    expect(facts.get(WEIGHT, {}).get("use") == "offer", "her weight kept as a fact only offered")


def _recorded(demo: Demo, alice: str, keys: tuple[str, ...]) -> tuple[int, dict[str, Any]]:
    """The fact editor's list, once it holds ``keys``: answers are remembered behind the call's
    answer (never delaying it), so over HTTP the recording may land a moment after; asked
    again for up to 10 s, then the list as it is."""
    deadline = time.monotonic() + 10.0
    while True:
        status, listed = demo.transport.list_facts(alice)
        held = {fact.get("key") for fact in listed.get("facts", [])}
        if status != 200 or set(keys) <= held or time.monotonic() > deadline:
            return status, listed
        threading.Event().wait(0.05)


def offered_later(demo: Demo, alice: str) -> None:
    """A new check-in: the date of birth filled and marked, the weight offered; the agent
    resends the date of birth (the mark goes) and asks about the weight."""
    print()
    say("", "(later, a new conversation: conv-mem-2)", indent=2)
    demo.caller = Caller(alice, "conv-mem-2")
    r = demo.turn("Hi, it's time for my check-in again.", "form_start", {"form": FORM})
    check = r["instance"]
    status = demo.status()
    expect(
        "from memory, unconfirmed (resend once confirmed): Date of birth 1990-04-02" in status,
        "the date of birth filled from memory and marked so on the status line",
    )
    expect("from memory, confirm: Weight 70 kg" in status, "the weight offered on the status line")
    expect(demo.value(check, "weight_kg") is None, "the weight offered, not written")
    r = demo.turn(
        None,
        "form_read",
        {"form": FORM, "part": "about_you"},
        note="reads the step: what memory filled, and what it only offers",
    )
    rows = {row["id"]: row for row in r.get("fields", [])}
    born, weight = rows.get("date_of_birth", {}), rows.get("weight_kg", {})
    expect(
        born.get("value") == "1990-04-02" and "unconfirmed" in born.get("memory", ""),
        "the date of birth answered, marked from memory and unconfirmed",
    )
    expect(
        weight.get("status") == "pending" and "offered from memory" in weight.get("memory", ""),
        "the weight still pending, offered from memory",
    )
    r = demo.turn(
        "Yes, that's my date of birth. The weight I'm not sure of: I'll weigh myself and fix "
        "it in my profile.",
        "form_fill",
        {"form": FORM, "values": {"date_of_birth": "1990-04-02"}},
    )
    expect(r.get("confirmed") == ["date_of_birth"], "the resent date of birth confirmed")
    status = demo.status()
    expect("unconfirmed" not in status, "the from-memory mark gone once confirmed")
    expect("confirm: Weight 70 kg" in status, "the weight still offered for the agent to ask")


def corrected(demo: Demo, alice: str) -> None:
    """alice corrects her weight in the fact editor; the old value stays in the history; the
    next form offers the new one."""
    print()
    say("", "(alice, in her fact editor: the 70 kg was a misreading; she corrects it)", indent=2)
    if isinstance(demo.transport, OverHttp):
        correct_on_the_page(demo.transport, alice, "71.5 kg")
    else:
        say("", "(in process there is no fact editor page: over HTTP she corrects it there)", 2)
        statement = {"words": "71.5 kg", "correction": True}
        _api(alice, "PUT", f"/memory/facts/{WEIGHT}", statement)
        status, changed = demo.transport.state_fact(alice, WEIGHT, statement)
        fact = changed.get("fact", {})
        expect(
            status == 200 and changed.get("change") == "corrected" and fact.get("value") == "71.5",
            f"the weight corrected to 71.5 kg, got {status}: {changed}",
        )
        say(
            "result: ",
            f"{status} {changed['change']}, revision {changed['revision']}: {fact['shown']}",
        )

    _api(alice, "GET", f"/memory/facts/{WEIGHT}")
    status, detail = demo.transport.read_fact(alice, WEIGHT)
    say("result: ", str(status))
    history = detail.get("history", [])
    expect(status == 200 and len(history) == 2, f"the weight's history of two, got {detail}")
    first = history[0]
    expect(first.get("value") == "70", "the 70 kg the correction replaced kept in the history")
    show_history(detail)
    then = first["recorded_at"]
    _api(alice, "GET", f"/memory/facts/{WEIGHT}?as_of={then}")
    status, before = demo.transport.read_fact(alice, WEIGHT, then)
    believed = before.get("believed") or {}
    expect(status == 200 and believed.get("value") == "70", "70 kg believed before the fix")
    say("result: ", f"{status}, believed then: {believed['shown']} (before the correction)")

    print()
    say("", "(the next check-in, in a new conversation: conv-mem-3)", indent=2)
    demo.caller = Caller(alice, "conv-mem-3")
    demo.turn("Check-in time again!", "form_start", {"form": FORM})
    expect("from memory, confirm: Weight 71.5 kg" in demo.status(), "the corrected weight offered")


def correct_on_the_page(transport: OverHttp, alice: str, typed: str) -> None:
    """alice opens her fact editor from a link (``POST /memory/page-links`` with her token) as
    a browser does, and sends the weight's correction form with ``typed`` (its CSRF token and
    nonce as rendered); the ``303`` back, and the page showing the new value."""
    say("api:   ", f"POST /memory/page-links as {alice}")
    status, link = transport.memory_link(alice)
    expect(status == 200 and "url" in link, f"a link to her fact editor, got {status}: {link}")
    if "url" not in link:
        return
    url = str(link["url"])
    say("result: ", f"{status} {short(url)} (opens once; expires {link['expires_at']})")
    browser = PageVisit()
    try:
        page, page_url = browser.open(url, "Open your memory")
    except VisitError as failed:
        expect(False, f"the link to open her fact editor ({failed})")
        return
    entry, button, shown = browser.hops
    cookie = ", ".join(f"{name}=…" for name in browser.cookies)
    say("browser: ", f"GET {short(entry.path)} → {entry.status} “Open your memory”")
    say(
        "browser: ",
        f"POST {short(button.path)} (the button) → {button.status} to {shown.path}, "
        f"Set-Cookie {cookie}",
    )
    weight = "fact:" + WEIGHT
    say("page:    ", f"“{page.title}”: Weight {page.shown.get(weight, '')}")
    action = f"/pages/memory/facts/{quote(WEIGHT, safe='')}/correct"
    form = next((f for f in page.forms.get("", []) if f.action == action), None)
    expect(form is not None, "her fact editor to offer the weight's correction")
    if form is None:
        return
    say("browser: ", f"types {typed!r} in “Correct weight”, presses Save correction")
    try:
        after, _ = browser.send(page_url, form, {"value": typed}, None)
    except VisitError as failed:
        expect(False, f"the correction to land from the page ({failed})")
        return
    posted, back = browser.hops[-2:]
    say("browser: ", f"POST {posted.path} → {posted.status}; GET {back.path} → {back.status}")
    say("page:    ", f"{after.shown.get('done', '')} Weight {after.shown.get(weight, '')}")
    expect(
        after.shown.get(weight) == typed and after.shown.get("done", "").startswith("Corrected"),
        f"the page to show the weight corrected to {typed}, got {after.shown}",
    )


def show_history(detail: dict[str, Any]) -> None:
    """The fact in force, every revision, and the periods of world time (the timeline)."""
    current = detail.get("current") or {}
    say("", f"in force: {current.get('shown')}, {current.get('use')}: {current.get('note')}", 12)
    for revision in detail.get("history", []):
        when = revision.get("stated_at") or revision.get("confirmed_at")
        words = f" “{revision['words']}”" if "words" in revision else ""
        source = " ".join(str(part) for part in revision["source"].values())
        change = f"{revision['change']} {compact(revision.get('value'))}{words}"
        say("", f"history {revision['seq']}: {change}, {when}, from {source}", indent=12)
    for period in detail.get("timeline", []):
        until = period.get("valid_until") or "now"
        since = period.get("valid_from") or period.get("stated_at")
        say("", f"timeline: {period['shown']} from {since} to {until}", indent=12)
    say(
        "",
        "(a correction: the value in force was wrong, so the new one replaces it over the same "
        "period; the wrong one stays in the history, and in what was believed until then)",
        indent=2,
    )


def switched_off(demo: Demo, alice: str) -> None:
    """Memory off: a new form recalls nothing, and no fact is read for it."""
    print()
    say("", "(alice turns her memory off in the fact editor)", indent=2)
    _api(alice, "PUT", "/memory/settings", {"enabled": False})
    status, switch = demo.transport.switch_memory(alice, False)
    expect(status == 200 and switch.get("enabled") is False, f"memory off, got {status}: {switch}")
    say("result: ", f"{status}, enabled: {compact(switch['enabled'])}")
    print()
    say("", "(a new conversation: conv-mem-4)", indent=2)
    demo.caller = Caller(alice, "conv-mem-4")
    reads = demo.transport.facts_read(alice)
    r = demo.turn("One more check-in, please.", "form_start", {"form": FORM})
    expect("from memory" not in demo.status(), "nothing recalled with memory off")
    expect(demo.value(r["instance"], "date_of_birth") is None, "no date of birth filled")
    after = demo.transport.facts_read(alice)
    if reads is None or after is None:
        say(
            "",
            "(memory off: the server reads alice's switch before any fact and stops there, so "
            "this start read no fact of hers; nothing was recalled, as the status line shows)",
            indent=2,
        )
        return
    expect(after == reads, f"no fact read with memory off ({after - reads} were)")
    say(
        "",
        f"(memory off: the fact store counted {after - reads} reads of alice's facts for this "
        "start; the switch was read first, and it stopped there)",
        indent=2,
    )


def not_bobs(demo: Demo, bob: str) -> None:
    """bob, of the same tenant, starts the same form: none of alice's facts."""
    print()
    say("", f"(bob, another person of the same tenant: {bob})", indent=2)
    demo.caller = Caller(bob, "conv-mem-5")
    r = demo.turn("Hi, I'd like a health check-in.", "form_start", {"form": FORM})
    expect("from memory" not in demo.status(), "none of alice's facts in bob's form")
    expect(demo.value(r["instance"], "date_of_birth") is None, "no date of birth for bob")
    _api(bob, "GET", "/memory/facts")
    status, listed = demo.transport.list_facts(bob)
    expect(status == 200 and listed.get("facts") == [], f"bob to have no facts, got {listed}")
    say("result: ", f"{status}, facts: {compact(listed['facts'])}")
    _api(bob, "GET", f"/memory/facts/{WEIGHT}")
    status, missing = demo.transport.read_fact(bob, WEIGHT)
    expect(status == 404, f"alice's weight unknown to bob, got {status}: {missing}")
    say("result: ", f"{status} {missing.get('error')}: {missing.get('message')}")
    say("", "(answered exactly as for a fact nobody stated)", indent=2)


def _api(who: str, method: str, path: str, body: dict[str, Any] | None = None) -> None:
    """Print a request of the fact editor, as the user's browser would send it."""
    shown = f" {compact(body)}" if body is not None else ""
    say("api:   ", f"{method} {path}{shown} as {who}")
