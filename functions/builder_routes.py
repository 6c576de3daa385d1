"""The builder routes: a builder agent's tool calls on a tenant's drafts, the drafts for their
editor, publishing (a person's action), and the published versions.

* ``GET /builder/tools[?format=...]``: the builder tools (``BUILDER_ARGUMENTS``) in a vendor's
  tool-definition shape, the shapes of the form tools but the strict ones
  (``forms.surface.formats.FORMATS``; in a partial update ``null`` clears a key, so strict
  mode's "``null``: not given" cannot describe them).
* ``POST /builder/forms/{form_id}/tools/{tool_name}``: one call, answered by
  ``BuilderService.call`` under the body's ``chat_id`` (its tool-call id is that chat's; a
  call without one is recorded nowhere); every refusal of the call itself is a 200 with
  ``ok: false``.
* ``GET /builder/forms`` and ``GET /builder/forms/{form_id}``: the caller's tenant's drafts,
  and one of them with its edit log (404 when the tenant has none of that id).
* ``POST /builder/forms/{form_id}/publish``: needs the publisher role (``FORMWORK_PUBLISHER_ROLE``)
  in the verified roles claim (``ROLES_CLAIM``), else 403.
* ``GET /forms/{form_id}/versions/{version}``: a published version of the caller's tenant.

The tenant is the verified principal's; another tenant's draft or version is the same 404 as
one that does not exist. Nothing of the builder (its service, its stores, the form documents)
is imported with this module: a route loads it when it is first called (hence the imports
inside the handlers), so a cold start that serves the form tools never pays for it.
"""

from functools import cache
from typing import TYPE_CHECKING, Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body, Path, Query

from forms.surface.formats import FORMATS, Format, model_tools, tool_definitions
from formwork.aws.auth import _claims, principal_from_event
from formwork.aws.form_ids import FormId
from formwork.aws.http import ApiError, log_hash
from formwork.aws.models import (
    BuilderCallRequest,
    BuilderResult,
    DraftBody,
    DraftList,
    FormVersionBody,
    NotPublishableBody,
    PublishedVersion,
    PublishRequest,
    ToolList,
)
from formwork.aws.openapi import DESCRIBED, error_responses, json_body
from formwork.aws.refusals import is_builder_tool, unknown_builder_tool
from formwork.aws.routing import (
    count_call,
    json_response,
    log_rejection,
    logger,
    request_app,
    roles_from_claims,
)

if TYPE_CHECKING:
    from forms.app.builder import BuilderService
    from formwork.config import Settings

router = Router()  # type: ignore[no-untyped-call]

Version = Annotated[
    int, Path(ge=1, le=10**9, description="A published version of the form (1, 2, ...)")
]


@router.get(
    "/builder/tools",
    summary="The builder tool definitions",
    description="Name, description and input JSON schema of every builder tool; with format, "
    "in that vendor's tool-definition shape (the shapes of GET /tools but its strict ones).",
    responses={
        200: json_body(ToolList, "The builder tools, in the order a builder meets them"),
        **error_responses(
            400,
            401,
            s400="format is not one of the shapes, or an event that is not API Gateway's "
            "(bad_request)",
        ),
    },
    tags=["builder"],
)
def list_builder_tools(
    format: Annotated[  # the public query parameter's name
        Format, Query(description="Tool-definition shape: " + ", ".join(FORMATS))
    ] = "generic",
) -> ToolList:
    return ToolList(tools=builder_tool_definitions(format))


@cache
def builder_tool_definitions(fmt: Format) -> list[dict[str, Any]]:
    """The builder tools in ``fmt``'s shape (built once per format: the schemas are large)."""
    from forms.app.builder import BUILDER_ARGUMENTS

    return tool_definitions(fmt, model_tools(BUILDER_ARGUMENTS))


@router.post(
    "/builder/forms/<form_id>/tools/<tool_name>",
    summary="Run one builder tool call",
    description="Runs the builder tool on the caller's tenant's draft of the form and returns "
    "its result: a sentence, not the form. A refusal (a missing id, the only step, a plan "
    "limit, a cancelled call) is a 200 with ok=false, for the model to read. A replayed "
    "tool_call_id of the same chat_id returns the first result and applies nothing (ids are "
    "the chat's: without chat_id nothing is recorded). selection is the editor's "
    "selection, for edits that leave out their field or step; cancelled=true (the person "
    "pressed Stop) records the call as cancelled and applies nothing.",
    responses={
        200: json_body(
            BuilderResult,
            "The tool's result, also when it refused (ok=false with error, message, hint)",
        ),
        **error_responses(
            400,
            401,
            404,
            413,
            415,
            422,
            s400=DESCRIBED[400] + "; a malformed form id (bad_request)",
            s404="No such builder tool (unknown_tool; the message lists the tools)",
        ),
    },
    tags=["builder"],
)
def call_builder_tool(
    form_id: FormId,
    tool_name: Annotated[str, Path(description="A tool name from GET /builder/tools")],
    request: Annotated[BuilderCallRequest, Body()],
) -> dict[str, Any]:
    principal = _principal()
    if not is_builder_tool(tool_name):
        raise unknown_builder_tool()
    form = log_hash(form_id)  # before the call: a bad key fails first
    selection = request.selection.model_dump(exclude_none=True) if request.selection else None
    result = _builder().call(
        principal,
        form_id,
        tool_name,
        request.tool_call_id,
        request.input or {},
        selection=selection or None,
        cancelled=request.cancelled,
        chat=request.chat_id,
    )
    outcome = count_call("BuilderCalls", tool_name, result)
    logger.info("builder call", extra={"tool": tool_name, "outcome": outcome, "form_hash": form})
    return result


@router.get(
    "/builder/forms",
    summary="The caller's tenant's drafts",
    description="Every draft of the caller's tenant, by form id: its title, version, number "
    "of edits, and who changed it last and when.",
    responses={
        200: json_body(DraftList, "The drafts (empty when the tenant has none)"),
        **error_responses(400, 401, s400="An event that is not API Gateway's (bad_request)"),
    },
    tags=["builder"],
)
def list_drafts() -> dict[str, Any]:
    drafts = _builder().drafts(_principal())
    return {
        "drafts": [
            {
                "form_id": draft.form_id,
                "title": draft.title,
                "version": draft.version,
                "edits": draft.edits,
                "changed_by": draft.changed_by,
                "changed_at": draft.changed_at.isoformat(),
            }
            for draft in drafts
        ]
    }


@router.get(
    "/builder/forms/<form_id>",
    summary="A draft, as its editor shows it",
    description="The caller's tenant's draft of the form: the document as it is now, what "
    "undo and redo would do, who changed it last, the edit log (without documents), and the "
    "caller's selection on the draft's canvas (what a tool call without one falls back to). 404 "
    "when the tenant has no draft of that id (another tenant's draft looks exactly like one "
    "that does not exist).",
    responses={
        200: json_body(DraftBody, "The draft"),
        **error_responses(
            400,
            401,
            404,
            s400="A malformed form id, or an event that is not API Gateway's (bad_request)",
            s404="The caller's tenant has no draft of that form (not_found)",
        ),
    },
    tags=["builder"],
)
def get_draft(form_id: FormId) -> dict[str, Any]:
    from forms.errors import NotFound

    principal = _principal()
    try:
        view = _builder().draft(principal, form_id)
    except NotFound:
        raise _no_draft(form_id) from None
    selected = _builder().selected(principal, form_id)
    chosen = selected.model_dump(exclude_none=True) if selected is not None else None
    return {**view.as_json(), "selection": chosen or None}


@router.post(
    "/builder/forms/<form_id>/publish",
    summary="Publish a draft",
    description="Compiles the caller's tenant's draft as it is now and stores it as the next "
    "immutable version of the tenant's form, in the tenant's catalog at once (no redeploy). "
    "A person's action, not a model tool: the caller needs the "
    "publisher role (FORMWORK_PUBLISHER_ROLE, default form_publisher) in the token's roles "
    "claim (ROLES_CLAIM), else 403. The body may be left out; with expected (the latest "
    "version the publisher saw), a publish that landed since is a 409 and nothing is "
    "published.",
    responses={
        200: json_body(PublishedVersion, "Published: the form and its new version"),
        **error_responses(
            400,
            401,
            403,
            404,
            409,
            413,
            415,
            s400=DESCRIBED[400] + "; a malformed form id (bad_request)",
            s403="The caller's roles claim does not list the publisher role (forbidden)",
            s404="The caller's tenant has no draft of that form (not_found)",
            s409="expected is not the latest published version: another publish landed "
            "since (publish_conflict); nothing was published",
            s413="A body over the size limit (payload_too_large); or the form as published "
            "would pass the size of one stored version (size_limit, with item, size and "
            "limit in bytes): nothing was published",
            s415="A body not declared as UTF-8 JSON (unsupported_media_type); a request "
            "with no body at all needs no content type",
        ),
        422: json_body(
            NotPublishableBody,
            "The body is not a publish request (invalid_request); or the draft does not "
            "compile yet (not_publishable), with every problem in problems",
        ),
    },
    tags=["builder"],
)
def publish_draft(
    form_id: FormId,
    request: Annotated[PublishRequest | None, Body()] = None,
) -> Response[str]:
    from forms.errors import NotFound, NotPublishable, SizeLimit
    from forms.storage.documents import PublishConflict

    principal = _principal()
    _require_publisher()
    expected = request.expected if request is not None else None
    try:
        published = _builder().publish(principal, form_id, expected=expected)
    except NotFound:
        raise _no_draft(form_id) from None
    except PublishConflict as conflict:
        raise ApiError(
            409,
            "publish_conflict",
            f"version {conflict.expected} is not the latest of {form_id!r} (version "
            f"{conflict.latest} is): read the form again, then publish",
        ) from None
    except NotPublishable as refused:
        log_rejection(422, refused.code)
        problems = list(refused.problems)
        return json_response(
            422, {"error": refused.code, "message": refused.message, "problems": problems}
        )
    except SizeLimit as refused:  # can never be stored as it is: 413, never a 500
        log_rejection(413, refused.code)
        body = {"error": refused.code, "message": refused.message, "hint": refused.hint}
        return json_response(413, {**body, **refused.details})
    logger.info("draft published", extra={"version": published.version})
    return json_response(200, {"form": published.form_id, "version": published.version})


@router.get(
    "/forms/<form_id>/versions/<version>",
    summary="A published version of a form",
    description="One version of a form the caller's tenant published, as it was published "
    "(versions never change). 404 when the tenant has no such form or version (another "
    "tenant's form looks exactly like one that does not exist).",
    responses={
        200: json_body(FormVersionBody, "The published version"),
        **error_responses(
            400,
            401,
            404,
            s400="A malformed form id or version, or an event that is not API Gateway's "
            "(bad_request)",
            s404="The caller's tenant published no such version of that form (not_found)",
        ),
    },
    tags=["builder"],
)
def get_form_version(form_id: FormId, version: Version) -> dict[str, Any]:
    from forms.app.catalog import tenant_key
    from forms.errors import NotFound

    principal = _principal()
    documents = request_app(router.context).documents
    try:
        published = documents.published(tenant_key(principal), form_id, version)
    except NotFound:
        raise ApiError(
            404, "not_found", f"no published version {version} of form {form_id!r}"
        ) from None
    return {
        "form": published.form_id,
        "version": published.version,
        "document": published.document.model_dump(mode="json", by_alias=True, exclude_none=True),
        "published_by": published.by,
        "published_at": published.at.isoformat(),
    }


# ---------------------------------------------------------------------------- inside


def _principal() -> str:
    """The verified principal (the tenant is its ``tenant/`` part)."""
    settings = request_app(router.context).settings
    return principal_from_event(router.current_event.raw_event, settings.tenant_claim)


def is_publisher(event: dict[str, Any], settings: "Settings") -> bool:
    """Whether the verified roles claim of ``event`` lists the publisher role (the publish
    route's check; the builder's canvas records it in its link when the link is minted)."""
    return settings.publisher_role in roles_from_claims(_claims(event), settings.roles_claim)


def _require_publisher() -> None:
    """403 unless the roles claim lists the publisher role."""
    settings = request_app(router.context).settings
    if not is_publisher(router.current_event.raw_event, settings):
        raise ApiError(
            403,
            "forbidden",
            f"publishing needs the role {settings.publisher_role!r} in the token's "
            f"{settings.roles_claim!r} claim",
        )


def _builder() -> "BuilderService":
    return request_app(router.context).builder


def _no_draft(form_id: str) -> ApiError:
    return ApiError(404, "not_found", f"no draft of form {form_id!r}")
