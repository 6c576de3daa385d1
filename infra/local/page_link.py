"""Page links against a running local stack: ``python -m formwork.infra.local.page_link`` (``make
page-link``), and what ``make dev`` seeds for its banner.

A link is minted as a chatbot backend mints one: ``POST /conversations/{conversation_id}/
page-links`` over HTTP with the user's token (here a dev token), naming one of that user's
instances in that conversation (``docs/pages.md``). Links open once and expire after
``FORMWORK_PAGE_LINK_MINUTES`` (15 by default), so the command is how to get a fresh one::

    python -m formwork.infra.local.page_link --instance fi_...   # conversation demo, dev:acme:alice

``make dev`` starts one travel claim per demo conversation (``DEMO_SEEDS``) through the tool
API, as an agent would, and prints a link to each (``seed``). It also files a purchase request
over the threshold (``APPROVAL_SEED``) and prints a link to the finance approver's queue
(``seed_queue``: ``POST /approvals/page-links`` with ``APPROVER_TOKEN``); ``--queue`` mints a
fresh one. It states two facts for ``acme/alice`` (``MEMORY_FACTS``, ``PUT /memory/facts/{key}``)
and prints a link to her fact editor (``seed_memory``: ``POST /memory/page-links``; ``--memory``
mints a fresh one), and builds a small draft through the builder tools as a builder agent would
(``CANVAS_BUILD``, ``POST /builder/forms/{form_id}/tools/{tool}``) and prints a link to its
canvas (``seed_canvas``: ``POST /builder/forms/{form_id}/page-links``; ``--canvas FORM_ID``
mints a fresh one); what they hold is ``formwork.infra.local.demo_seeds``. A request that cannot be
made (no stack answering, a refusal) is a ``PageLinkError`` whose message says what to do, and the
command prints it on one line and exits 1: never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
import urllib.error
import urllib.request
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from formwork.infra.local.demo_seeds import (
    APPROVAL_SEED,
    APPROVER_TOKEN,
    BUILDER_TOKEN,
    CANVAS_BUILD,
    CANVAS_CHAT,
    CANVAS_FORM,
    DEMO_CONVERSATION,
    DEMO_SEEDS,
    DEMO_TOKEN,
    MEMORY_FACTS,
    PageLink,
    Seed,
    Seeded,
)
from formwork.infra.local.stack import DEFAULT_URL

TIMEOUT_SECONDS = 30.0

__all__ = [
    "APPROVAL_SEED",
    "APPROVER_TOKEN",
    "BUILDER_TOKEN",
    "CANVAS_BUILD",
    "CANVAS_CHAT",
    "CANVAS_FORM",
    "DEMO_CONVERSATION",
    "DEMO_SEEDS",
    "DEMO_TOKEN",
    "MEMORY_FACTS",
    "TIMEOUT_SECONDS",
    "PageLink",
    "PageLinkError",
    "Seed",
    "Seeded",
    "lifetime",
    "main",
    "mint",
    "mint_canvas",
    "mint_memory",
    "mint_queue",
    "seed",
    "seed_canvas",
    "seed_memory",
    "seed_queue",
    "start",
    "who",
]


class PageLinkError(Exception):
    """A link could not be minted (or a demo instance started); the message says why and what
    to do, for a person at a terminal."""


def who(token: str) -> str:
    """The principal a dev token names, as ``tenant/sub`` (``dev:alice`` is ``local/alice``)."""
    principal = token.removeprefix("Bearer ").removeprefix("dev:").split(";", 1)[0]
    tenant, colon, sub = principal.rpartition(":")
    return f"{tenant if colon else 'local'}/{sub}"


def mint(
    api_url: str, instance: str, conversation: str = DEMO_CONVERSATION, token: str = DEMO_TOKEN
) -> PageLink:
    """A page link to ``instance`` through ``POST /conversations/{conversation}/page-links``
    with ``token``, as a chatbot backend mints one."""
    path = f"/conversations/{quote(conversation, safe='')}/page-links"
    status, body = _post(api_url, path, token, {"instance_id": instance})
    if status == 404 and isinstance(body, dict) and body.get("error") == "not_found":
        raise PageLinkError(
            f"{who(token)} has no instance {instance} in conversation {conversation} "
            f"(an instance's link is minted in its own conversation, with its owner's token)"
        )
    if status == 401:
        raise PageLinkError(
            f"the API refused the token {token!r}: a dev token is dev:[<tenant>:]<sub>, "
            f"such as {DEMO_TOKEN}"
        )
    if status != 200 or not isinstance(body, dict) or "url" not in body:
        raise PageLinkError(f"POST {path} answered {status}: {_said(body)}")
    return PageLink(url=str(body["url"]), expires_at=datetime.fromisoformat(body["expires_at"]))


def mint_queue(api_url: str, token: str = APPROVER_TOKEN) -> PageLink:
    """A link to the approver's queue of ``token``'s principal through ``POST
    /approvals/page-links``, carrying the roles the token holds (``docs/pages.md``)."""
    status, body = _post(api_url, "/approvals/page-links", token, {})
    if status == 401:
        raise PageLinkError(f"the API refused the token {token!r}: try {APPROVER_TOKEN}")
    if status != 200 or not isinstance(body, dict) or "url" not in body:
        raise PageLinkError(f"POST /approvals/page-links answered {status}: {_said(body)}")
    return PageLink(url=str(body["url"]), expires_at=datetime.fromisoformat(body["expires_at"]))


def mint_memory(api_url: str, token: str = DEMO_TOKEN) -> PageLink:
    """A link to the fact editor of ``token``'s principal through ``POST /memory/page-links``
    (``docs/pages.md``)."""
    status, body = _post(api_url, "/memory/page-links", token, {})
    if status == 401:
        raise PageLinkError(f"the API refused the token {token!r}: try {DEMO_TOKEN}")
    if status != 200 or not isinstance(body, dict) or "url" not in body:
        raise PageLinkError(f"POST /memory/page-links answered {status}: {_said(body)}")
    return PageLink(url=str(body["url"]), expires_at=datetime.fromisoformat(body["expires_at"]))


def mint_canvas(api_url: str, form_id: str, token: str = BUILDER_TOKEN) -> PageLink:
    """A link to the canvas of ``token``'s tenant's draft of ``form_id`` through ``POST
    /builder/forms/{form_id}/page-links``; it offers Publish when ``token`` holds the publisher
    role (``docs/pages.md``)."""
    path = f"/builder/forms/{quote(form_id, safe='')}/page-links"
    status, body = _post(api_url, path, token, {})
    if status == 404 and isinstance(body, dict) and body.get("error") == "not_found":
        raise PageLinkError(
            f"the tenant of {who(token)} has no draft of form {form_id!r} (a draft is made "
            "by a builder agent's create_form, in the builder's own tenant)"
        )
    if status in (400, 422) and isinstance(body, dict):
        raise PageLinkError(
            f"{form_id!r} is not a form id (a lowercase letter, then up to 62 lowercase "
            "letters, digits or hyphens)"
        )
    if status == 401:
        raise PageLinkError(f"the API refused the token {token!r}: try {BUILDER_TOKEN}")
    if status != 200 or not isinstance(body, dict) or "url" not in body:
        raise PageLinkError(f"POST {path} answered {status}: {_said(body)}")
    return PageLink(url=str(body["url"]), expires_at=datetime.fromisoformat(body["expires_at"]))


def seed_memory(
    api_url: str,
    facts: Sequence[tuple[str, dict[str, Any]]] = MEMORY_FACTS,
    token: str = DEMO_TOKEN,
) -> PageLink:
    """``facts`` stated for ``token``'s principal through ``PUT /memory/facts/{key}`` (a second
    run states them again: a fact said again is one more revision, or none when unchanged) and
    a link to their fact editor."""
    for key, statement in facts:
        path = f"/memory/facts/{quote(key, safe='')}"
        status, body = _send(api_url, "PUT", path, token, statement)
        if status != 200:
            raise PageLinkError(f"PUT {path} answered {status}: {_said(body)}")
    return mint_memory(api_url, token)


def seed_canvas(
    api_url: str,
    calls: Sequence[tuple[str, dict[str, Any]]] = CANVAS_BUILD,
    form_id: str = CANVAS_FORM,
    token: str = BUILDER_TOKEN,
) -> PageLink:
    """``calls`` made on the draft ``form_id`` through the builder tools, as a builder agent
    makes them (one chat, fixed ids: a second run replays them), and a link to its canvas."""
    for n, (tool, payload) in enumerate(calls, 1):
        path = f"/builder/forms/{quote(form_id, safe='')}/tools/{tool}"
        envelope = {"tool_call_id": f"{CANVAS_CHAT}-{n}", "chat_id": CANVAS_CHAT, "input": payload}
        status, body = _post(api_url, path, token, envelope)
        if status != 200 or not isinstance(body, dict) or not body.get("ok"):
            raise PageLinkError(f"POST {path} answered {status}: {_said(body)}")
    return mint_canvas(api_url, form_id, token)


def seed_queue(api_url: str, request: Seed = APPROVAL_SEED) -> PageLink:
    """``request`` filed through the tool API (a second run replays it) and a link to the demo
    approver's queue, where it waits."""
    start(api_url, request)
    return mint_queue(api_url)


def start(api_url: str, seed: Seed) -> str:
    """``seed`` started through ``POST /conversations/{id}/tools/form_start``, as an agent
    would; the instance's id."""
    path = f"/conversations/{quote(seed.conversation, safe='')}/tools/form_start"
    envelope = {"tool_call_id": seed.call_id, "input": {"form": seed.form, "values": seed.values}}
    status, body = _post(api_url, path, seed.token, envelope)
    if status != 200 or not isinstance(body, dict) or not body.get("ok"):
        raise PageLinkError(f"POST {path} answered {status}: {_said(body)}")
    return str(body["instance"])


def seed(api_url: str, seeds: Sequence[Seed] = DEMO_SEEDS) -> list[Seeded]:
    """Each of ``seeds`` started and a link minted to its page."""
    seeded = []
    for one in seeds:
        instance = start(api_url, one)
        link = mint(api_url, instance, one.conversation, one.token)
        seeded.append(Seeded(one, instance, link))
    return seeded


def _post(api_url: str, path: str, token: str, body: Any) -> tuple[int, Any]:
    return _send(api_url, "POST", path, token, body)


def _send(api_url: str, method: str, path: str, token: str, body: Any) -> tuple[int, Any]:
    url = api_url.rstrip("/") + path
    headers = {
        "Authorization": token if token.startswith("Bearer ") else f"Bearer {token}",
        "Content-Type": "application/json",
    }
    request = urllib.request.Request(url, json.dumps(body).encode(), headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:
            return response.status, _json(response.read())
    except urllib.error.HTTPError as error:
        return error.code, _json(error.read())
    except (OSError, ValueError) as error:  # refused, timed out, not HTTP
        raise PageLinkError(
            f"no Formwork API answers at {api_url} ({getattr(error, 'reason', error)}): "
            "start the local stack with make dev (or formwork dev), or name its --url"
        ) from None


def _json(raw: bytes) -> Any:
    try:
        return json.loads(raw or b"null")
    except ValueError:
        return raw[:200].decode("utf-8", "replace")


def _said(body: Any) -> str:
    if isinstance(body, dict) and "error" in body:
        return f"{body['error']}: {body.get('message', '')}".rstrip(": ")
    if isinstance(body, dict) and "message" in body:
        return str(body["message"])
    return str(body)


def lifetime(link: PageLink, now: datetime | None = None) -> str:
    """How long ``link`` has left, in whole minutes, as the banner says it."""
    left = (link.expires_at - (now or datetime.now(UTC))).total_seconds()
    minutes = max(0, round(left / 60))
    return f"{minutes} minute{'' if minutes == 1 else 's'}"


def main(
    argv: Sequence[str] | None = None, *, prog: str = "python -m formwork.infra.local.page_link"
) -> int:
    parser = _parser(prog)
    args = parser.parse_args(argv)
    asked = [bool(args.instance), args.queue, args.memory, args.canvas is not None]
    if sum(asked) != 1:
        parser.error(
            "name one: an instance (--instance fi_...), the queue (--queue), the fact editor "
            "(--memory) or a draft's canvas (--canvas FORM_ID)"
        )
    token = args.token or (
        APPROVER_TOKEN if args.queue else BUILDER_TOKEN if args.canvas is not None else DEMO_TOKEN
    )
    try:
        link, what = _minted(args, token)
    except PageLinkError as refused:
        print(f"page-link: {refused}", file=sys.stderr)
        return 1
    print(link.url)
    print(
        f"(opens once, until {link.expires_at:%H:%M:%S} UTC, in {lifetime(link)}; {what})",
        file=sys.stderr,
    )
    return 0


def _minted(args: argparse.Namespace, token: str) -> tuple[PageLink, str]:
    """The link the command line asks for, and what it opens, as the command says it."""
    if args.queue:
        return mint_queue(args.url, token), f"the approver's queue of {who(token)}"
    if args.memory:
        return mint_memory(args.url, token), f"the fact editor of {who(token)}"
    if args.canvas is not None:
        link = mint_canvas(args.url, args.canvas, token)
        return link, f"the canvas of draft {args.canvas}, for {who(token)}"
    link = mint(args.url, args.instance, args.conversation, token)
    return link, f"{args.instance} of {who(token)}, conversation {args.conversation}"


def _parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Mint a page link against a running local stack, as a chatbot backend "
        "would: to one instance's form page (POST /conversations/{id}/page-links), the "
        "approver's queue, the fact editor or a draft's canvas. Links open once and expire in "
        "15 minutes (FORMWORK_PAGE_LINK_MINUTES); run this again for a fresh one.",
    )
    parser.add_argument("--instance", help="the instance id (fi_...)")
    parser.add_argument(
        "--queue",
        action="store_true",
        help="a link to the approver's queue instead (POST /approvals/page-links); --token "
        f"defaults to the demo approver, {APPROVER_TOKEN}",
    )
    parser.add_argument(
        "--memory",
        action="store_true",
        help="a link to the fact editor of --token's principal instead (POST /memory/page-links;"
        f" default {DEMO_TOKEN})",
    )
    parser.add_argument(
        "--canvas",
        metavar="FORM_ID",
        help="a link to the builder's canvas of --token's tenant's draft of FORM_ID instead "
        f"(POST /builder/forms/{{id}}/page-links; default token {BUILDER_TOKEN}, whose canvas "
        f"offers Publish; make dev builds {CANVAS_FORM})",
    )
    parser.add_argument(
        "--conversation",
        default=DEMO_CONVERSATION,
        help="its conversation (default %(default)s, where make dev starts its demo claim)",
    )
    parser.add_argument(
        "--token",
        help=f"the dev token of the instance's owner (default {DEMO_TOKEN})",
    )
    parser.add_argument("--url", default=DEFAULT_URL, help="the API (default %(default)s)")
    return parser


if __name__ == "__main__":
    raise SystemExit(main())
