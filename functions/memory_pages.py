"""The fact editor: a person's memory as a page (``docs/pages.md``, "The fact editor").

* ``POST /memory/page-links`` (JWT): a signed, single-use link to the caller's own fact
  editor. It names the caller's principal and no instance; it enters through the form page's
  ``GET``/``POST /pages/enter/{token}`` (``formwork.aws.page_routes``), signed under a label of its
  own (``formwork.aws.pages.access.MEMORY``), spent once in the same ledger, and
  exchanged for the fact editor's own cookie (``fwp_memory``), then a 303 to the page.
* ``GET /pages/memory`` (the session cookie): every fact of the session's principal
  (``forms.app.memory_page``), the switch, and a form per change.
* ``GET /pages/memory/export`` (the session cookie): the API's export as a JSON download.
* ``POST /pages/memory/facts/{key}/correct``, ``POST /pages/memory/facts/{key}/delete``,
  ``POST /pages/memory/switch`` (the session cookie): plain HTML form posts. Each is taken only
  from this API's own pages (``formwork.aws.pages.posts.same_origin``) with the session's CSRF
  token (``check_csrf``), and goes through memory's use cases (``forms.app.memory_api``) with
  the nonce rendered in the form as its idempotency key, so a resent post applies once; then a
  303 back to the page (Post/Redirect/Get). A use case's refusal (memory off, a value the key
  refuses, a fact no longer in force) is the page again with the reason, nothing written.

Whose memory: the session's principal, always; a key in a path is looked up among that
principal's facts only, so another principal's is as missing as one never stated. Whatever is
wrong with the cookie, the CSRF token, the form or the post's origin is the one refusal page.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body, Path
from pydantic import BaseModel, ConfigDict

from formwork.aws.auth import principal_from_event
from formwork.aws.memory_routes import memory_api
from formwork.aws.openapi import error_responses, json_body
from formwork.aws.page_routes import (
    MEMORY_PATH,
    PageLink,
    link_expires,
    page_link,
)
from formwork.aws.pages import access, posts
from formwork.aws.pages.posts import checked_post
from formwork.aws.routing import logger, request_app

if TYPE_CHECKING:
    from forms.app.memory_api import MemoryApi
    from formwork.bootstrap import App

router = Router()  # type: ignore[no-untyped-call]

MAX_FORM_BYTES = 4096
"""The largest form post taken: a correction's value and three hidden fields."""
MAX_VALUE_CHARS = 500
DONE_TEXT = {
    "corrected": "Corrected. The earlier value is kept in the fact's history.",
    "deleted": "Deleted. Memory will never recall it again.",
    "on": "Memory is on.",
    "off": "Memory is off: nothing is recalled into forms or recorded from your answers.",
}
"""What the page says after a change (``?done=``); any other value says nothing."""

PostUseCase = Callable[["MemoryApi", str, dict[str, str], str], str]
"""A post's use case: (use cases, principal, the form's fields, its nonce) -> what was done."""


class MemoryPageLinkRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")


@router.post(
    "/memory/page-links",
    summary="Mint a link to the caller's fact editor",
    description="A short-lived, single-use link to the caller's own fact editor page (every "
    "fact memory holds of them, to correct, delete or export, and the memory switch), for the "
    "person to open in a browser. Opening it sets a session cookie for that page only. The "
    "body may be left out; sent, it is {}. See docs/pages.md.",
    responses={
        200: json_body(PageLink, "The link and when it expires"),
        **error_responses(400, 401, 413, 415, 422, s422="A body other than {}"),
    },
    tags=["pages"],
)
def mint_memory_page_link(
    request: Annotated[MemoryPageLinkRequest | None, Body()] = None,
) -> PageLink:
    app = request_app(router.context)
    event = router.current_event.raw_event
    principal = principal_from_event(event, app.settings.tenant_claim)
    expires = link_expires(app)
    token = access.mint_scoped_link(
        access.page_key(app),
        access.MEMORY,
        principal,
        expires,
        nonce=app.new_token(access.ID_BYTES),
    )
    logger.info("memory page link minted")
    return page_link(event, token, expires)


@router.get("/pages/memory", include_in_schema=False)
def memory_editor() -> Response[str]:
    app = request_app(router.context)
    session = access.scoped_session(app, router.current_event.raw_event, access.MEMORY)
    if session is None:
        return posts.refused("no_session")
    done = router.current_event.get_query_string_value("done") or ""
    return _page(app, session, 200, done=DONE_TEXT.get(done))


@router.get("/pages/memory/export", include_in_schema=False)
def memory_export() -> Response[str]:
    app = request_app(router.context)
    session = access.scoped_session(app, router.current_event.raw_event, access.MEMORY)
    if session is None:
        return posts.refused("no_session")
    from formwork.aws.pages import render

    body = json.dumps(memory_api(app).export(session.principal), indent=2)
    headers = {
        **render.SECURITY_HEADERS,
        "Content-Disposition": 'attachment; filename="formwork-memory.json"',
    }
    return Response(200, "application/json", body, headers=headers)


@router.post("/pages/memory/facts/<key>/correct", include_in_schema=False)
def correct_fact(key: Annotated[str, Path()]) -> Response[str]:
    def correct(memory: MemoryApi, principal: str, form: dict[str, str], nonce: str) -> str:
        from forms.app.memory_api import FactRefused

        text = form.get("value", "").strip()
        if not text or len(text) > MAX_VALUE_CHARS:
            raise FactRefused(
                "invalid_value", f"type the right value (at most {MAX_VALUE_CHARS} characters)"
            )
        memory.correct(principal, key, text, replay=nonce)
        return "corrected"

    return _post(correct)


@router.post("/pages/memory/facts/<key>/delete", include_in_schema=False)
def delete_fact(key: Annotated[str, Path()]) -> Response[str]:
    def delete(memory: MemoryApi, principal: str, form: dict[str, str], nonce: str) -> str:
        memory.delete(principal, key, replay=nonce)
        return "deleted"

    return _post(delete)


@router.post("/pages/memory/switch", include_in_schema=False)
def switch_memory() -> Response[str]:
    def switch(memory: MemoryApi, principal: str, form: dict[str, str], nonce: str) -> str:
        from forms.app.memory_api import FactRefused

        wanted = form.get("enabled")
        if wanted not in ("on", "off"):
            raise FactRefused("invalid_request", "the switch is on or off")
        stored = memory.facts.settings(principal).changed_at
        seen = stored.isoformat() if stored else ""
        if form.get("seen", "") == seen:  # else a resent post: the switch moved since
            memory.switch(principal, wanted == "on")
            logger.info("memory switched", extra={"enabled": wanted == "on"})
        return wanted

    return _post(switch)


# ---------------------------------------------------------------------------- inside


def _post(action: PostUseCase) -> Response[str]:
    """A fact editor post: this origin's, with the session's cookie and CSRF token and a
    nonce; then ``action``, and a 303 back to the page (or the page with the refusal)."""
    from forms.app.memory_api import FactRefused

    event = router.current_event.raw_event
    app = request_app(router.context)
    checked = checked_post(
        app,
        event,
        lambda: access.scoped_session(app, event, access.MEMORY),
        max_bytes=MAX_FORM_BYTES,
        max_fields=8,
    )
    if isinstance(checked, Response):
        return checked
    session, form = checked.session, checked.fields
    nonce = form.get("nonce", "")
    if not posts.NONCE.fullmatch(nonce):
        return posts.refused("bad_nonce")
    try:
        done = action(memory_api(app), session.principal, form, nonce)
    except FactRefused as refusal:
        from formwork.aws.memory_bodies import refused

        logger.info("memory page write refused", extra={"code": refusal.code})
        return _page(app, session, refused(refusal).status, error=refusal.message)
    from formwork.aws.pages import render

    return render.redirect(f"{MEMORY_PATH}?done={done}", [])


def _page(
    app: App,
    session: access.Grant,
    status: int,
    *,
    done: str | None = None,
    error: str | None = None,
) -> Response[str]:
    from forms.app.memory_page import memory_page
    from formwork.aws.pages import render

    view = memory_page(memory_api(app), session.principal)
    html = render.render(
        "memory.html",
        page=view,
        csrf=access.csrf_token(access.page_key(app), session),
        nonce=lambda: app.new_token(access.ID_BYTES),
        done=done,
        error=error,
    )
    return render.page(status, html)
