"""The form page: ``GET /pages/forms/{instance_id}``, and ``POST`` to the same address for a
person's move on their form. Both take the instance's session cookie
(``formwork.aws.page_routes`` issues it), and anything wrong with it is the one refusal page.

Every button and input on the form page is a plain HTML form posting here (no script needed):
the move (``action``), the key the page drew when it rendered the form (``key``), the version
it was rendered from and, for a move on one field, that field and the head of its log the page
showed (``field``, ``seen``), the answer (``value``; several for a list of choices) and the
session's CSRF token. The route checks, cheapest first and each failure the one refusal page:
the post comes from this API's own pages (``pages.posts.same_origin``), the request holds a
session cookie for this instance, the body is a small form of known fields, the CSRF token is
the session's. Then it runs the move through ``FormService.page_write`` (the tools' own write
path, by ``user``: ``forms.app.page_writes``) and answers:

* a move that landed: a 303 back to the page (Post/Redirect/Get), whose ``?done=`` says what
  was done (only the move's name and field id, both looked up again; anything else in it
  shows nothing);
* anything else (a value the field refuses, a field someone changed meanwhile, submit with
  memory's fills unconfirmed, a closed form): the page as it stands now, with the reason at
  the top and beside the field, and **what the person typed kept in its input** (409 for a
  change meanwhile, 422 otherwise).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any
from urllib.parse import quote, urlencode

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Path

from forms.app.conversation import Caller
from forms.errors import ToolError
from formwork.aws.page_routes import FORM_PATH
from formwork.aws.pages import access, posts
from formwork.aws.pages.posts import checked_post
from formwork.aws.routing import logger, request_app

if TYPE_CHECKING:
    from forms.app.pages import Notice
    from formwork.bootstrap import App

router = Router()  # type: ignore[no-untyped-call]

MAX_POST_BYTES = 64 * 1024
"""The largest form post taken: an answer of up to 16 KB as JSON, percent-encoded."""
MAX_VALUES = 200
"""The most ``value`` entries one post may carry (a list of choices)."""
SINGLE = frozenset({"csrf_token", "key", "version", "action", "field", "seen", "as", "offer"})
"""The fields a post may carry once each; ``value`` may come several times."""


@router.get("/pages/forms/<instance_id>", include_in_schema=False)
def form_page(instance_id: Annotated[str, Path()]) -> Response[str]:
    event = router.current_event
    app = request_app(router.context)
    session = access.session_for(app, event.raw_event, instance_id)
    if session is None:
        return posts.refused("no_session")
    done = event.get_query_string_value("done")
    field = event.get_query_string_value("field")
    return render_form(app, session, instance_id, done=(done, field) if done else None)


@router.post("/pages/forms/<instance_id>", include_in_schema=False)
def form_post(instance_id: Annotated[str, Path()]) -> Response[str]:
    event = router.current_event.raw_event
    app = request_app(router.context)
    checked = checked_post(
        app,
        event,
        lambda: access.session_for(app, event, instance_id),
        max_bytes=MAX_POST_BYTES,
        max_fields=len(SINGLE) + MAX_VALUES,
        fields=SINGLE,
        repeated="value",
    )
    if isinstance(checked, Response):
        return checked
    session, fields, values = checked.session, checked.fields, checked.values
    from forms.app.page_writes import PagePost, typed_value

    version = fields.get("version", "")
    if not version.isdigit() or len(version) > 12:
        return posts.refused("bad_form")
    action = fields.get("action", "")
    kind = fields.get("as", "text")
    typed: str | list[str] = values if kind == "choices" or len(values) > 1 else ""
    if kind != "choices" and len(values) == 1:
        typed = values[0]
    if action == "apply":  # what memory offered, as the page showed it (JSON)
        kind, typed = "json", fields.get("offer", "")
    post = PagePost(
        action=action,
        key=fields.get("key", ""),
        version=int(version),
        field=fields.get("field"),
        seen=fields.get("seen"),
        value=typed_value(kind, typed) if action in ("answer", "apply") else None,
    )
    caller = Caller(session.principal, session.conversation_id, source="user")
    result = app.service.page_write(caller, instance_id, post)
    logger.info(
        "page write",
        extra={"action": action, "ok": result.get("ok"), "error": result.get("error")},
    )
    landed = result.get("ok") is True and not result.get("rejected") and not result.get("unknown")
    if landed and result.get("submitted") is not False:
        query = {"done": action, **({"field": post.field} if post.field else {})}
        location = FORM_PATH + quote(instance_id, safe="") + "?" + urlencode(query)
        from formwork.aws.pages import render

        return render.redirect(location, [])
    status = 409 if result.get("error") == "changed_meanwhile" else 422
    kept = {post.field: typed} if post.field and action == "answer" else {}
    outcome = (action, post.field, result)
    return render_form(app, session, instance_id, status, result=outcome, typed=kept)


def render_form(
    app: App,
    session: access.Grant,
    instance_id: str,
    status: int = 200,
    *,
    result: tuple[str, str | None, dict[str, Any]] | None = None,
    done: tuple[str, str | None] | None = None,
    typed: dict[str, str | list[str]] | None = None,
) -> Response[str]:
    """The form page of the session's instance: with what the person's last post did (its
    ``result``, or ``done`` after a redirect) and what they typed kept (``typed``)."""
    from forms.app.pages import DONE, Notice, notice
    from forms.app.pages import form_page as build

    caller = Caller(principal=session.principal, conversation_id=session.conversation_id)
    try:
        view = build(app.service.loop, caller, instance_id, app.documents)
    except ToolError:
        return posts.refused("not_found")
    shown: Notice | None = None
    if result is not None:
        shown = notice(view, *result)
    elif done is not None and done[0] in DONE:
        labels = {f.id: f.label for step in view.steps for f in step.fields}
        if done[1] is None or done[1] in labels:
            shown = Notice(True, DONE[done[0]].format(label=labels.get(done[1] or "", "")))
    from formwork.aws.pages import render

    html = render.render(
        "form.html",
        page=view,
        csrf=access.csrf_token(access.page_key(app), session),
        notice=shown,
        typed=typed or {},
        new_key=lambda: app.new_token(access.POST_KEY_BYTES),
    )
    return render.page(status, html)


def form_fields(event: dict[str, Any]) -> tuple[dict[str, str], list[str]] | None:
    """An HTML form post's fields (each once) and its ``value`` entries, or None: another
    content type, too large, not UTF-8, malformed, an unknown field or one sent twice."""
    return posts.form_post(
        event,
        max_bytes=MAX_POST_BYTES,
        max_fields=len(SINGLE) + MAX_VALUES,
        fields=SINGLE,
        repeated="value",
    )
