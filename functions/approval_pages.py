"""The approver's queue as pages (``docs/pages.md``, "The approver's queue").

* ``POST /approvals/page-links`` (JWT): a signed, single-use link to the caller's queue, or
  (``{"approval_id": ...}``) to one approval they may decide, for a notification to carry. It
  names the caller's principal and the roles their token's roles claim (``ROLES_CLAIM``) held
  at minting, as ``POST /approvals/{id}`` reads them; an approval they may not decide (another
  tenant's, another role's, one they filled, or none) is the same 404 as a missing one. It
  enters through the form page's ``GET``/``POST /pages/enter/{token}``
  (``formwork.aws.page_routes``), signed under labels of its own (``access.APPROVALS``), spent
  once in the same ledger, and is exchanged for its own cookie (``fwp_approvals``) carrying
  the principal and those roles; then a 303 to the queue or the approval.
* ``GET /pages/approvals`` (the session cookie): the queue, from the use case ``GET
  /approvals`` answers from (``FormService.approval_queue``): what is owed, due first, with
  the answers each decision is bound to, who asked, when and the deadline; then what was
  settled, by whom and when.
* ``GET /pages/approvals/{approval_id}`` (the session cookie): one approval, its bound answers
  and, while a decision is owed, the form to decide it.
* ``POST /pages/approvals/{approval_id}`` (the session cookie): a decision (``decision``:
  ``approved`` or ``rejected``; an optional ``note``), a plain HTML form post taken only from
  this API's own pages with the session's CSRF token and a nonce. The nonce is the post's
  idempotency key, claimed in the page-link ledger before anything is decided, so a resent
  post is answered as the first was and decides nothing; the decision goes through
  ``FormService.decide``, the path ``POST /approvals/{id}`` takes (a changed answer withdraws
  an approval, a closed form cannot be decided, the filler never decides their own); then a
  303 back to the approval, which says what was recorded.

Whatever is wrong with the cookie, the form, the CSRF token, the nonce or the post's origin,
and an approval the session may not decide, is the one refusal page.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any
from urllib.parse import quote, unquote

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body, Path
from pydantic import BaseModel, ConfigDict, Field

from formwork.aws.approval_routes import approver_from_event
from formwork.aws.http import ApiError
from formwork.aws.openapi import error_responses, json_body
from formwork.aws.page_routes import (
    APPROVALS_PATH,
    PageLink,
    link_expires,
    page_link,
)
from formwork.aws.pages import access, posts
from formwork.aws.pages.posts import checked_post
from formwork.aws.routing import logger, request_app

if TYPE_CHECKING:
    from forms.app.approvals import ApprovalView, Approver, Decision
    from formwork.bootstrap import App

router = Router()  # type: ignore[no-untyped-call]

MAX_FORM_BYTES = 16 * 1024
"""The largest decision post taken: a note of up to 1,000 characters, percent-encoded, and
four short fields."""
MAX_NOTE_CHARS = 1000
"""``FormService.decide`` takes a note of at most this many characters."""
QUEUE_LIMIT = 50
"""Owed approvals per page of the queue (``GET /approvals``' largest page)."""
SETTLED_LIMIT = 20
FIELDS = frozenset({"csrf_token", "nonce", "decision", "note"})
DECISIONS = {"approved": "Approved", "rejected": "Rejected"}
_REPLAY = b"formwork approvals page post v1\n"


class ApprovalPageLinkRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    approval_id: str | None = Field(
        default=None,
        description="An approval the caller may decide: the link opens its page (left out: "
        "the queue)",
        max_length=128,
    )


@router.post(
    "/approvals/page-links",
    summary="Mint a link to the caller's approvals page",
    description="A short-lived, single-use link to the approver's queue page (the approvals "
    "the caller may decide, due first, with what was decided lately), or to one approval's "
    "page when approval_id names one the caller may decide, for the person to open in a "
    "browser (a notification's 'decide' link). The link carries the roles the token's roles "
    "claim (ROLES_CLAIM) holds now; opening it sets a session cookie for these pages only. An "
    "approval the caller may not decide is the same 404 as one that does not exist. The body "
    "may be left out. See docs/pages.md.",
    responses={
        200: json_body(PageLink, "The link and when it expires"),
        **error_responses(
            400,
            401,
            404,
            413,
            415,
            422,
            s400="A malformed approval id, or more roles than a link holds (bad_request)",
            s404="No approval with that id that the caller may decide (unknown_approval)",
        ),
    },
    tags=["pages"],
)
def mint_approvals_page_link(
    request: Annotated[ApprovalPageLinkRequest | None, Body()] = None,
) -> PageLink:
    from forms.surface.tools import check_id

    app = request_app(router.context)
    event = router.current_event.raw_event
    approver = approver_from_event(event, app)
    target = ""
    if request is not None and request.approval_id is not None:
        target = check_id(unquote(request.approval_id), "approval id")
        if app.service.approval(approver, target) is None:
            raise ApiError(404, "unknown_approval", f"no approval {target!r} to decide")
    expires = link_expires(app)
    roles = tuple(sorted(approver.roles))
    token = access.mint_scoped_link(
        access.page_key(app),
        access.APPROVALS,
        approver.principal,
        expires,
        roles,
        target,
        app.new_token(access.ID_BYTES),
    )
    if len(token) > access.MAX_TOKEN_CHARS:
        raise ApiError(400, "bad_request", "the token holds more roles than a page link carries")
    logger.info("approvals page link minted", extra={"one_approval": bool(target)})
    return page_link(event, token, expires)


@router.get("/pages/approvals", include_in_schema=False)
def approval_queue_page() -> Response[str]:
    app = request_app(router.context)
    session = access.scoped_session(app, router.current_event.raw_event, access.APPROVALS)
    if session is None:
        return posts.refused("no_session")
    event = router.current_event
    try:
        queue = app.service.approval_queue(
            _approver(session),
            limit=QUEUE_LIMIT,
            after=event.get_query_string_value("after"),
            settled_limit=SETTLED_LIMIT,
            settled_after=event.get_query_string_value("settled_after"),
        )
    except ValueError:
        return posts.refused("bad_cursor")
    from formwork.aws.pages import render

    html = render.render("queue.html", queue=queue, when=when, shown=shown, path=approval_path)
    return render.page(200, html)


@router.get("/pages/approvals/<approval_id>", include_in_schema=False)
def approval_page(approval_id: Annotated[str, Path()]) -> Response[str]:
    app = request_app(router.context)
    session = access.scoped_session(app, router.current_event.raw_event, access.APPROVALS)
    if session is None:
        return posts.refused("no_session")
    done = router.current_event.get_query_string_value("done") or ""
    return _page(app, session, _approval_id(approval_id), 200, done=done)


@router.post("/pages/approvals/<approval_id>", include_in_schema=False)
def decide_from_page(approval_id: Annotated[str, Path()]) -> Response[str]:
    event = router.current_event.raw_event
    app = request_app(router.context)
    checked = checked_post(
        app,
        event,
        lambda: access.scoped_session(app, event, access.APPROVALS),
        max_bytes=MAX_FORM_BYTES,
        max_fields=len(FIELDS),
        fields=FIELDS,
    )
    if isinstance(checked, Response):
        return checked
    session, form = checked.session, checked.fields
    nonce, decision = form.get("nonce", ""), form.get("decision", "")
    note = form.get("note", "").strip()
    wanted = _approval_id(approval_id)
    if not posts.NONCE.fullmatch(nonce) or decision not in DECISIONS or wanted is None:
        return posts.refused("bad_form")
    if len(note) > MAX_NOTE_CHARS:
        return _page(
            app,
            session,
            wanted,
            422,
            error=f"The note is over {MAX_NOTE_CHARS} characters: shorten it.",
            note=note,
        )
    # the nonce, claimed once per session principal: a resent post (the browser's "resubmit?",
    # a double click without script) finds it claimed and decides nothing again
    post = hashlib.sha256(_REPLAY + f"{wanted}\n{decision}".encode()).hexdigest()[:32]
    ledger = access.ledger(app)
    now = int(app.now())
    if not ledger.claim(session.principal, "decide." + nonce, session.expires_at, post, now):
        claim = ledger.holder(session.principal, "decide." + nonce)
        if claim is None or claim[0] != post:
            return posts.refused("nonce_reused")  # the nonce of another post
        logger.info("approval page post resent")
        return _back(wanted, decision)
    choice: Decision = "approved" if decision == "approved" else "rejected"
    result = app.service.decide(_approver(session), wanted, choice, note or None)
    logger.info(
        "approval page decision",
        extra={"ok": result.get("ok"), "error": result.get("error"), "decision": decision},
    )
    if result.get("ok"):
        return _back(wanted, decision)
    code = str(result.get("error", ""))
    status = 422 if code == "bad_request" else 409
    error = _NOT_RECORDED.get(code, _NOT_RECORDED[""])
    return _page(app, session, wanted, status, error=error, note=note)


_NOT_RECORDED = {
    "form_closed": "Not recorded: the form is closed, so no decision is owed on it.",
    "unknown_approval": "Not recorded: it no longer waits for a decision (see below).",
    "busy": "Not recorded: the service was busy. Send your decision again.",
    "": "Not recorded. The approval is shown as it stands now.",
}
"""What the page says when ``decide`` refused (the approval below as it stands now)."""


# ---------------------------------------------------------------------------- inside


def _approver(session: access.Grant) -> Approver:
    """The session's principal with the roles its link carried from the approver's token."""
    from forms.app.approvals import Approver

    return Approver(session.principal, frozenset(session.roles))


def _approval_id(raw: str) -> str | None:
    """The approval id of a path (``:`` may come percent-encoded), or None: malformed."""
    from forms.errors import ToolError
    from forms.surface.tools import check_id

    try:
        return check_id(unquote(raw), "approval id")
    except ToolError:
        return None


def _back(approval_id: str, decision: str) -> Response[str]:
    from formwork.aws.pages import render

    return render.redirect(f"{approval_path(approval_id)}?done={decision}", [])


def _page(
    app: App,
    session: access.Grant,
    approval_id: str | None,
    status: int,
    *,
    done: str = "",
    error: str | None = None,
    note: str = "",
) -> Response[str]:
    """One approval's page for the session, or the refusal (none the session may decide)."""
    view = None if approval_id is None else app.service.approval(_approver(session), approval_id)
    if view is None:
        return posts.refused("not_found")
    from formwork.aws.pages import render

    html = render.render(
        "approval.html",
        view=view,
        recorded=_recorded(view, session, done),
        error=error,
        csrf=access.csrf_token(access.page_key(app), session),
        nonce=app.new_token(access.ID_BYTES),
        when=when,
        shown=shown,
        path=approval_path,
        max_note=MAX_NOTE_CHARS,
        note=note,
    )
    return render.page(status, html)


def _recorded(view: ApprovalView, session: access.Grant, done: str) -> str | None:
    """What a redirect's ``?done=`` says: only what the approval shows now (decided by this
    session's person, that way), so a forged one says nothing."""
    from forms.principals import subject_of

    settled = view.approval.settled
    if done not in DECISIONS or settled is None or settled.how != "decided":
        return None
    if settled.outcome != done or settled.by != subject_of(session.principal):
        return None
    return f"Your decision is recorded: {DECISIONS[done].lower()}."


def approval_path(approval_id: str) -> str:
    """An approval's page."""
    return APPROVALS_PATH + "/" + quote(approval_id, safe="")


def when(moment: datetime | None) -> str:
    """An instant as the pages show it: ``2026-09-03 10:00 UTC``."""
    if moment is None:
        return ""
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def shown(value: Any) -> str:
    """An answer as text: a string as it is, anything else as compact JSON."""
    import json

    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "yes" if value else "no"
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
