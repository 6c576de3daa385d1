"""The page routes: minting a page link, entering with it, the form page, its stylesheet.

* ``POST /conversations/{conversation_id}/page-links`` (JWT, like the tools): a signed,
  single-use link to one of the caller's instances in that conversation; any other instance
  (missing, another principal's, another tenant's, another conversation's) is one 404.
* ``GET /pages/enter/{token}`` (no JWT): the link checked, not spent, and a page with one
  button, "Open your form": fetching the link (a chat app's preview) spends nothing.
* ``POST /pages/enter/{token}`` (no JWT; the button): the link exchanged, once, for a session
  cookie, then a 303 to the page. Only a post from this API's own pages is taken
  (``same_origin``), so another site cannot make a browser open the sender's link (a login
  CSRF); the post starts on this site, so the ``SameSite=Strict`` cookie goes with the
  redirect that follows. A used link posted again by the browser it opened is sent to the
  page too: with that link's session, as it is (a second press after Back); within
  ``ENTRY_WINDOW_SECONDS`` of the claim, with the entry cookie the claim recorded (a second
  press sent before the first's answer came), with a session of its own.
* ``GET`` and ``POST /pages/forms/{instance_id}`` (no JWT, the session cookie): the form page
  and the person's moves on it, in ``formwork.aws.form_page``.
* ``GET /pages/forms/{instance_id}/version`` (no JWT, the session cookie): the instance's
  version as JSON, which the open page's script polls to follow the agent's writes.
* ``GET /pages/static/{name}`` (public): the stylesheet and the page's script.

Jinja2 and the templates load with the first page request, not with the function.

Whatever is wrong with a link or a cookie (expired, altered, used, foreign, forged, absent) is
answered by the one refusal page (``formwork.aws.pages.render.refusal``). ``docs/pages.md`` has
the access model; ``formwork.aws.pages.access`` the tokens.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, Any
from urllib.parse import quote

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body, Path
from aws_lambda_powertools.shared.cookies import Cookie, SameSite
from pydantic import BaseModel, ConfigDict, Field

from forms.app.conversation import Caller
from forms.errors import ToolError
from forms.surface.tools import check_id
from formwork.aws.http import ApiError, log_hash
from formwork.aws.openapi import ConversationId, error_responses, json_body
from formwork.aws.pages import access
from formwork.aws.pages.posts import (  # noqa: F401 (importable here)
    LOOPBACK_HOSTS,
    Post,
    base_url,
    checked_post,
    plain_http,
    same_origin,
)
from formwork.aws.pages.posts import refused as _refused
from formwork.aws.routing import conversation_caller, logger, request_app
from formwork.bootstrap import App

router = Router()  # type: ignore[no-untyped-call]

ENTER_PATH = "/pages/enter/"
FORM_PATH = "/pages/forms/"
ENTRY_COOKIE = "fwe"
"""The browser's entry cookie: a random value a link's entry page sets (``Path=/pages/enter/``)
and its button's post carries. A claim records a digest of it, so the browser whose first post
spent a link, but which never saw the answer, is known again when it posts the link a second
time (the button pressed twice on a slow network, without script)."""
ENTRY_WINDOW_SECONDS = 60
"""How long after a claim the claiming browser's second post of the link still opens it."""
_ENTRY_VALUE = re.compile(r"[A-Za-z0-9_-]{24}")
_ENTRY_DIGEST = b"formwork page entry v1\n"


class PageLinkRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    instance_id: str = Field(
        description="The instance the page shows: one of the caller's in this conversation",
        max_length=128,
    )


class PageLink(BaseModel):
    url: str = Field(description="The page link: open it in a browser, once, before it expires")
    expires_at: str = Field(description="When the link stops working (ISO 8601, UTC)")


@router.post(
    "/conversations/<conversation_id>/page-links",
    summary="Mint a link to an instance's page",
    description="A short-lived, single-use link to the form page of one of the caller's "
    "instances in this conversation, for the person to open in a browser (the chatbot's "
    "'review your answers' link). Opening it sets a session cookie for that page only. Any "
    "instance that is not the caller's in this conversation is a 404. See docs/pages.md.",
    responses={
        200: json_body(PageLink, "The link and when it expires"),
        **error_responses(
            400,
            401,
            404,
            413,
            415,
            422,
            s400="A malformed conversation or instance id (bad_request), or a body that is not "
            "JSON",
            s404="The caller has no such instance in this conversation (not_found)",
        ),
    },
    tags=["pages"],
)
def mint_page_link(
    conversation_id: ConversationId, request: Annotated[PageLinkRequest, Body()]
) -> PageLink:
    caller = conversation_caller(router, conversation_id)
    instance_id = check_id(request.instance_id, "instance id")
    app = request_app(router.context)
    mine = app.service.store.list_conversation(caller.principal, caller.conversation_id)
    if not any(i.id == instance_id for i in mine):
        raise ApiError(404, "not_found", f"no instance {instance_id!r} in this conversation")
    expires = link_expires(app)
    token = access.mint_link(
        access.page_key(app),
        caller.principal,
        caller.conversation_id,
        instance_id,
        expires,
        app.new_token(access.ID_BYTES),
    )
    logger.info("page link minted", extra={"conversation_hash": log_hash(conversation_id)})
    return page_link(router.current_event.raw_event, token, expires)


def link_expires(app: App) -> int:
    """When a link minted now expires (unix seconds): ``FORMWORK_PAGE_LINK_MINUTES`` on."""
    return int(app.now()) + access.PageSettings.from_env().link_minutes * 60


def page_link(event: dict[str, Any], token: str, expires: int) -> PageLink:
    """A minting route's answer: the link to ``token``'s entry page, where the request came
    in, and when it expires."""
    return PageLink(
        url=base_url(event) + ENTER_PATH + token,
        expires_at=datetime.fromtimestamp(expires, UTC).isoformat(),
    )


@router.get("/pages/enter/<token>", include_in_schema=False)
def enter_page(token: Annotated[str, Path()]) -> Response[str]:
    app = request_app(router.context)
    try:
        access.read_link(access.page_key(app), token, app.now())
    except access.Refused:
        return _enter_scoped(app, token)  # a fact editor's or approvals link, or the refusal
    from formwork.aws.pages import render

    event = router.current_event.raw_event
    if _entry_holder(event):
        return render.entry(ENTER_PATH + token)
    settings = access.PageSettings.from_env()
    entry = Cookie(
        name=ENTRY_COOKIE,
        value=app.new_token(access.ID_BYTES),
        path=ENTER_PATH,
        secure=not plain_http(event),
        http_only=True,
        max_age=settings.link_minutes * 60,
        same_site=SameSite.STRICT_MODE,
    )
    return render.entry(ENTER_PATH + token, [entry])


@router.post("/pages/enter/<token>", include_in_schema=False)
def open_page(token: Annotated[str, Path()]) -> Response[str]:
    if not same_origin(router.current_event.raw_event):
        return _refused("cross_site_post")
    app = request_app(router.context)
    key = access.page_key(app)
    now = app.now()
    try:
        link = access.read_link(key, token, now)
    except access.Refused:
        return _open_scoped(app, key, token, now)  # a principal-scoped link, or the refusal
    form = FORM_PATH + quote(link.instance_id, safe="")
    from formwork.aws.pages import render

    holder = _entry_holder(router.current_event.raw_event)
    ledger = access.ledger(app)
    if not ledger.claim(link.principal, link.nonce, link.expires_at, holder, int(now)):
        if _holds(app, link):
            # a second press of the button (or the link posted again) in the browser its first
            # press opened: it is already in, so back to the form, no new session
            return render.redirect(form, [])
        if not _claimed_here(ledger.holder(link.principal, link.nonce), holder, now):
            return _refused("used_link")
        # the browser that spent the link moments ago and never saw the answer (its second
        # press was sent before the first came back): its session, as the first post's
    settings = access.PageSettings.from_env()
    expires = int(now) + settings.session_minutes * 60
    cookie = Cookie(
        name=access.cookie_name(link.instance_id),
        value=access.open_session(key, link, expires, app.new_token(access.ID_BYTES)),
        path="/pages/",
        secure=not plain_http(router.current_event.raw_event),
        http_only=True,
        max_age=settings.session_minutes * 60,
        same_site=SameSite.STRICT_MODE,
    )
    return render.redirect(form, [cookie])


@router.get("/pages/forms/<instance_id>/version", include_in_schema=False)
def form_page_version(instance_id: Annotated[str, Path()]) -> Response[str]:
    """The instance's version, for the open page's script to know when to fetch the page
    again (``docs/pages.md``, "Live updates"): one read, under the same session check as the
    page."""
    app = request_app(router.context)
    session = _session(app, instance_id)
    if session is None:
        return _refused("no_session")
    caller = Caller(principal=session.principal, conversation_id=session.conversation_id)
    try:
        from forms.app.page_version import page_version

        found = page_version(app.service.loop, caller, instance_id)
    except ToolError:
        return _refused("not_found")
    from formwork.aws.pages import render

    return render.json_response({"version": found.version, "updated_at": found.updated_at})


@router.get("/pages/static/<name>", include_in_schema=False)
def static(name: Annotated[str, Path()]) -> Response[str]:
    from formwork.aws.pages import render

    return render.static_response(name)


def _session(app: App, instance_id: str) -> access.Grant | None:
    """The request's valid session for ``instance_id``, or None."""
    return access.session_for(app, router.current_event.raw_event, instance_id)


def _holds(app: App, link: access.Grant) -> bool:
    """Whether the request carries a valid session for ``link``'s instance, opened for the
    link's own principal and conversation: the browser that spent the link."""
    session = _session(app, link.instance_id)
    return (
        session is not None
        and session.principal == link.principal
        and session.conversation_id == link.conversation_id
    )


def _entry_holder(event: dict[str, Any]) -> str:
    """A digest of the request's entry cookie (empty: none, or not one this API sets)."""
    value = access.cookie_value(event.get("cookies"), ENTRY_COOKIE)
    if value is None or not _ENTRY_VALUE.fullmatch(value):
        return ""
    return hashlib.sha256(_ENTRY_DIGEST + value.encode("ascii")).hexdigest()[:32]


def _claimed_here(claim: tuple[str, int] | None, holder: str, now: float) -> bool:
    """Whether a link's claim was made by this browser (``holder``) in the last
    ``ENTRY_WINDOW_SECONDS``."""
    if claim is None or not holder or not claim[0]:
        return False
    return hmac.compare_digest(claim[0], holder) and now - claim[1] <= ENTRY_WINDOW_SECONDS


# ---------------------------------------------------------------------------- principal-scoped
# The fact editor's and the approver's queue's links (``formwork.aws.memory_pages`` and
# ``formwork.aws.approval_pages`` mint them and serve the pages) enter through the same entry page
# and post as a form's: signed under labels of their own, spent once in the same ledger,
# exchanged for each page's own cookie.

MEMORY_PATH = "/pages/memory"
APPROVALS_PATH = "/pages/approvals"


@dataclass(frozen=True, slots=True)
class ScopedPage:
    """A principal-scoped page: its labels and cookie, its entry page's words, its path."""

    scope: access.Scope
    title: str
    """The entry page's heading and button."""
    lead: str
    home: str

    def target(self, link: access.Grant) -> str:
        """Where a link opens: the page, or the thing within it the link names."""
        return self.home + ("/" + quote(link.target, safe="") if link.target else "")


SCOPED = (
    ScopedPage(
        access.MEMORY,
        "Open your memory",
        "This link opens what Formwork remembers of you, once, in this browser.",
        MEMORY_PATH,
    ),
    ScopedPage(
        access.APPROVALS,
        "Open your approvals",
        "This link opens the approvals you may decide, once, in this browser.",
        APPROVALS_PATH,
    ),
)


EnterLink = Callable[[App, str], Response[str] | None]
SpendLink = Callable[[App, bytes, str, float], Response[str] | None]
FURTHER_LINKS: list[tuple[EnterLink, SpendLink]] = []
"""Link kinds another page module serves through the same entry page (the builder's canvas:
``formwork.aws.canvas_pages`` adds its own on import), tried in turn when no scope here reads a
link: each answers a link of its kind (its entry page, its session, or the refusal for a used
one) and None for any other. Registered, not imported, so this module needs none of theirs."""


def further_links(enter: EnterLink, spend: SpendLink) -> None:
    """Serve another kind of link through ``GET``/``POST /pages/enter/{token}``."""
    if (enter, spend) not in FURTHER_LINKS:
        FURTHER_LINKS.append((enter, spend))


def _scoped_link(key: bytes, token: str, now: float) -> tuple[ScopedPage, access.Grant] | None:
    """The principal-scoped page a link opens and its grant, or None (no such valid link)."""
    for scoped in SCOPED:
        try:
            return scoped, access.read_scoped_link(key, scoped.scope, token, now)
        except access.Refused:
            continue
    return None


def _enter_scoped(app: App, token: str) -> Response[str]:
    """The entry page of a principal-scoped link (nothing spent), or the refusal."""
    found = _scoped_link(access.page_key(app), token, app.now())
    if found is None:
        for enter, _ in FURTHER_LINKS:  # a builder's canvas link, say
            answer = enter(app, token)
            if answer is not None:
                return answer
        return _refused("bad_link")
    from formwork.aws.pages import render

    scoped = found[0]
    html = render.render(
        "scoped_enter.html", action=ENTER_PATH + token, title=scoped.title, lead=scoped.lead
    )
    return render.page(200, html)


def _open_scoped(app: App, key: bytes, token: str, now: float) -> Response[str]:
    """A principal-scoped link spent, once, for its page's session cookie and a 303 to the
    page (the post is from this origin: ``open_page`` checked), or the refusal."""
    found = _scoped_link(key, token, now)
    if found is None:
        for _, spend in FURTHER_LINKS:  # a builder's canvas link, say
            answer = spend(app, key, token, now)
            if answer is not None:
                return answer
        return _refused("bad_link")
    scoped, link = found
    from formwork.aws.pages import render

    if not access.ledger(app).claim(link.principal, link.nonce, link.expires_at):
        held = access.scoped_session(app, router.current_event.raw_event, scoped.scope)
        if held is not None and held.principal == link.principal:
            return render.redirect(scoped.target(link), [])  # a second press, already in
        return _refused("used_link")
    settings = access.PageSettings.from_env()
    expires = int(now) + settings.session_minutes * 60
    cookie = Cookie(
        name=scoped.scope.cookie,
        value=access.open_scoped_session(
            key, scoped.scope, link, expires, app.new_token(access.ID_BYTES)
        ),
        path="/pages/",
        secure=not plain_http(router.current_event.raw_event),
        http_only=True,
        max_age=settings.session_minutes * 60,
        same_site=SameSite.STRICT_MODE,
    )
    return render.redirect(scoped.target(link), [cookie])
