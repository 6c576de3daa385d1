"""The builder's canvas: a draft as the form it will be, live (``docs/pages.md``, "The
builder's canvas").

* ``POST /builder/forms/{form_id}/page-links`` (JWT): a signed, single-use link to the caller's
  tenant's draft of that form on the canvas (another tenant's draft is the same 404 as a
  missing one). It names the principal, the tenant, the draft and whether the principal held
  the publisher role (``FORMWORK_PUBLISHER_ROLE`` in the roles claim, the check
  ``POST /builder/forms/{form_id}/publish`` makes) when it was minted; signed under labels of
  its own (``formwork.aws.pages.canvas_access.mint_link``), it enters through the form page's
  ``GET``/``POST /pages/enter/{token}`` (``formwork.aws.page_routes``), is spent once in the same
  ledger and exchanged for the canvas's own cookie (``fwc_`` per draft), then a 303.
* ``GET /pages/canvas/{form_id}`` (the session cookie): the canvas (``forms.app.canvas``).
* ``GET /pages/canvas/{form_id}/version`` (the session cookie): the draft's version, which the
  page's script polls to follow the agent's tool calls.
* ``POST /pages/canvas/{form_id}`` (the session cookie): a plain HTML form post per button:
  ``select`` (a field or a step: the selection the builder tools fall back to, stored per
  draft and person), ``undo`` and ``redo`` (``BuilderService.call`` with ``undo_edit`` and
  ``redo_edit``, the tools' own path, recorded under the rendered nonce, so a resent post
  moves once), ``publish`` (``BuilderService.publish``, the publish route's path, only for a
  session minted with the publisher role; any other is refused with the API's 403 words).
  Each post is taken only from this API's own pages (``pages.posts.same_origin``) with the
  session's CSRF token, and answered with a 303 back (Post/Redirect/Get), or the canvas with
  the reason when the move was refused.

Whatever is wrong with the cookie, the CSRF token, the form or the post's origin is the one
refusal page.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated
from urllib.parse import quote, urlencode

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body, Path
from aws_lambda_powertools.shared.cookies import Cookie, SameSite
from pydantic import BaseModel, ConfigDict

from formwork.aws.auth import principal_from_event
from formwork.aws.builder_routes import is_publisher
from formwork.aws.form_ids import FormId
from formwork.aws.http import ApiError
from formwork.aws.openapi import DESCRIBED, error_responses, json_body
from formwork.aws.page_routes import (
    ENTER_PATH,
    PageLink,
    further_links,
    page_link,
)
from formwork.aws.pages import access, canvas_access
from formwork.aws.pages.posts import NONCE, checked_post, plain_http, refused
from formwork.aws.routing import logger, request_app

if TYPE_CHECKING:
    from formwork.bootstrap import App

router = Router()  # type: ignore[no-untyped-call]

CANVAS_PATH = "/pages/canvas/"
PAGE_CHAT = "page"
"""The chat the canvas's own builder calls are recorded under (their ids are the nonces)."""
ENTER_TITLE = "Open the form you are building"
ENTER_LEAD = "This link opens the builder's canvas of one draft, once, in this browser."
MAX_FORM_BYTES = 2048
"""The largest post taken: five hidden fields and an id."""
FIELDS = ("csrf_token", "key", "version", "action", "field", "as")
"""The fields a canvas post may carry, each once."""
DONE = {
    "select": "Selected. The agent's next edit that names no field or step applies to it.",
    "undo": "Undone.",
    "redo": "Redone.",
    "publish": "Published.",
}
"""What the canvas says after a move (``?done=``); any other value says nothing."""


class CanvasLinkRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")


@dataclass(frozen=True, slots=True)
class Notice:
    ok: bool
    text: str
    problems: tuple[str, ...] = ()


@router.post(
    "/builder/forms/<form_id>/page-links",
    summary="Mint a link to a draft's canvas",
    description="A short-lived, single-use link to the builder's canvas of the caller's "
    "tenant's draft of this form: the draft shown as the form it will be, updating while the "
    "builder's tool calls land, where the person selects a field or step for the next edit, "
    "undoes and redoes, and, holding the publisher role when the link is minted, publishes. "
    "Opening it sets a session cookie for that canvas only. Another tenant's draft is the "
    "same 404 as a missing one. The body may be left out; sent, it is {}. See docs/pages.md.",
    responses={
        200: json_body(PageLink, "The link and when it expires"),
        **error_responses(
            400,
            401,
            404,
            413,
            415,
            422,
            s400=DESCRIBED[400] + "; a malformed form id (bad_request)",
            s404="The caller's tenant has no draft of that form (not_found)",
            s422="A body other than {}",
        ),
    },
    tags=["pages"],
)
def mint_canvas_link(
    form_id: FormId, request: Annotated[CanvasLinkRequest | None, Body()] = None
) -> PageLink:
    from forms.app.catalog import tenant_key
    from forms.errors import NotFound

    app = request_app(router.context)
    event = router.current_event.raw_event
    principal = principal_from_event(event, app.settings.tenant_claim)
    tenant = tenant_key(principal)
    try:
        app.builder.store.get(tenant, form_id)
    except NotFound:
        raise ApiError(404, "not_found", f"no draft of form {form_id!r}") from None
    expires = int(app.now()) + access.PageSettings.from_env().link_minutes * 60
    publisher = is_publisher(event, app.settings)
    token = canvas_access.mint_link(
        access.page_key(app),
        principal,
        tenant,
        form_id,
        publisher,
        expires,
        app.new_token(access.ID_BYTES),
    )
    logger.info("canvas page link minted", extra={"publisher": publisher})
    return page_link(event, token, expires)


@router.get("/pages/canvas/<form_id>", include_in_schema=False)
def canvas_page(form_id: Annotated[str, Path()]) -> Response[str]:
    app = request_app(router.context)
    session = canvas_access.session_for(app, router.current_event.raw_event, form_id)
    if session is None:
        return refused("no_session")
    done = router.current_event.get_query_string_value("done") or ""
    notice = Notice(True, DONE[done]) if done in DONE else None
    return _page(app, session, 200, notice)


@router.get("/pages/canvas/<form_id>/version", include_in_schema=False)
def canvas_version(form_id: Annotated[str, Path()]) -> Response[str]:
    """The draft's version, for the open canvas's script (one read of the draft's head)."""
    from forms.errors import NotFound

    app = request_app(router.context)
    session = canvas_access.session_for(app, router.current_event.raw_event, form_id)
    if session is None:
        return refused("no_session")
    try:
        draft = app.builder.store.get(session.tenant, form_id)
    except NotFound:
        return refused("not_found")
    from formwork.aws.pages import render

    return render.json_response(
        {"version": draft.version, "updated_at": draft.changed_at.isoformat()}
    )


@router.post("/pages/canvas/<form_id>", include_in_schema=False)
def canvas_post(form_id: Annotated[str, Path()]) -> Response[str]:
    event = router.current_event.raw_event
    app = request_app(router.context)
    session = canvas_access.session_for(app, event, form_id)
    checked = checked_post(
        app,
        event,
        lambda: session.grant if session is not None else None,
        max_bytes=MAX_FORM_BYTES,
        max_fields=len(FIELDS),
        fields=FIELDS,
    )
    if isinstance(checked, Response) or session is None:
        return checked if isinstance(checked, Response) else refused("no_session")
    fields = checked.fields
    nonce = fields.get("key", "")
    version = fields.get("version", "")
    if not NONCE.fullmatch(nonce) or not version.isdigit() or len(version) > 12:
        return refused("bad_form")
    action = fields.get("action", "")
    if action == "select":
        notice = _select(app, session, fields.get("field", ""), fields.get("as", ""))
    elif action in ("undo", "redo"):
        notice = _move(app, session, action, nonce)
    elif action == "publish":
        status, notice = _publish(app, session, int(version))
        if notice is not None:
            return _page(app, session, status, notice)
    else:
        return refused("bad_form")
    logger.info("canvas post", extra={"action": action, "ok": notice is None})
    if notice is not None:
        return _page(app, session, 422, notice)
    from formwork.aws.pages import render

    location = CANVAS_PATH + quote(form_id, safe="") + "?" + urlencode({"done": action})
    return render.redirect(location, [])


# ---------------------------------------------------------------------------- the moves


def _select(app: App, session: canvas_access.CanvasGrant, ref: str, what: str) -> Notice | None:
    from forms.documents import EditError, Selection
    from forms.errors import NotFound

    if what not in ("field", "step") or not ref or len(ref) > 128:
        return Notice(False, "Choose a field or a step on the canvas.")
    chosen = Selection(field=ref) if what == "field" else Selection(step=ref)
    try:
        app.builder.select(session.principal, session.form_id, chosen)
    except (EditError, NotFound):
        return Notice(False, "That is no longer in the form: the agent changed it meanwhile.")
    return None


def _move(app: App, session: canvas_access.CanvasGrant, way: str, nonce: str) -> Notice | None:
    tool = "undo_edit" if way == "undo" else "redo_edit"
    result = app.builder.call(
        session.principal, session.form_id, tool, "page-" + nonce, {}, chat=PAGE_CHAT
    )
    if result.get("ok") is True:
        return None
    return Notice(False, str(result.get("message") or "Nothing was changed."))


def _publish(app: App, session: canvas_access.CanvasGrant, seen: int) -> tuple[int, Notice | None]:
    """Publish as ``POST /builder/forms/{form_id}/publish`` does, for a session minted with
    the publisher role; the status and what to say when it did not publish."""
    from forms.errors import NotFound, NotPublishable, SizeLimit
    from forms.storage.documents import PublishConflict

    settings = app.settings
    if not session.publisher:
        logger.info("canvas publish refused", extra={"reason": "forbidden"})
        return 403, Notice(
            False,
            f"Publishing needs the role {settings.publisher_role!r} in the token's "
            f"{settings.roles_claim!r} claim.",
        )
    try:
        published = app.builder.publish(session.principal, session.form_id, expected=seen)
    except NotFound:
        return 404, Notice(False, "There is no such draft.")
    except PublishConflict as conflict:
        return 409, Notice(
            False,
            f"Version {conflict.latest} was published meanwhile; nothing was published. "
            "Look at it, then publish again if you mean to.",
        )
    except NotPublishable as refused:
        return 422, Notice(False, refused.message.splitlines()[0], tuple(refused.problems))
    except SizeLimit as refused:
        return 413, Notice(False, refused.message)
    logger.info("draft published from the canvas", extra={"version": published.version})
    return 200, None


# ---------------------------------------------------------------------------- entering


def enter_canvas(app: App, token: str) -> Response[str] | None:
    """The entry page of a canvas link (nothing spent); None for a token that is no valid
    canvas link (``page_routes`` answers it with the refusal)."""
    try:
        canvas_access.read_link(access.page_key(app), token, app.now())
    except access.Refused:
        return None
    from formwork.aws.pages import render

    html = render.render(
        "scoped_enter.html", action=ENTER_PATH + token, title=ENTER_TITLE, lead=ENTER_LEAD
    )
    return render.page(200, html)


def open_canvas(app: App, key: bytes, token: str, now: float) -> Response[str] | None:
    """A canvas link spent, once, for its session cookie and a 303 to the canvas (the post is
    from this origin: ``page_routes.open_page`` checked), the refusal for a used one; None
    for a token that is no valid canvas link."""
    try:
        link = canvas_access.read_link(key, token, now)
    except access.Refused:
        return None
    from formwork.aws.pages import render

    location = CANVAS_PATH + quote(link.form_id, safe="")
    event = router.current_event.raw_event
    if not access.ledger(app).claim(link.principal, link.nonce, link.expires_at):
        held = canvas_access.session_for(app, event, link.form_id)
        if held is not None and held.principal == link.principal:
            return render.redirect(location, [])  # a second press, already in
        return refused("used_link")
    settings = access.PageSettings.from_env()
    cookie = Cookie(
        name=canvas_access.cookie_name(link.form_id),
        value=canvas_access.open_session(
            key, link, int(now) + settings.session_minutes * 60, app.new_token(access.ID_BYTES)
        ),
        path="/pages/",
        secure=not plain_http(event),
        http_only=True,
        max_age=settings.session_minutes * 60,
        same_site=SameSite.STRICT_MODE,
    )
    return render.redirect(location, [cookie])


# ---------------------------------------------------------------------------- inside


def _page(
    app: App, session: canvas_access.CanvasGrant, status: int, notice: Notice | None
) -> Response[str]:
    from forms.app.canvas import canvas
    from forms.errors import NotFound
    from formwork.aws.pages import render

    try:
        view = canvas(app.builder, app.catalog, session.principal, session.form_id)
    except NotFound:
        return refused("not_found")
    html = render.render(
        "canvas.html",
        canvas=view,
        page_url=CANVAS_PATH + quote(session.form_id, safe=""),
        publisher=session.publisher,
        csrf=access.csrf_token(access.page_key(app), session.grant),
        notice=notice,
        new_key=lambda: app.new_token(access.POST_KEY_BYTES),
    )
    return render.page(status, html)


further_links(enter_canvas, open_canvas)
