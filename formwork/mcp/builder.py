"""The builder tools over MCP: one draft's builder tools for a verified principal.

A ``BuilderBackend`` is the ``McpBackend`` (``formwork.mcp.backends``) of one draft, the
``form_id`` of the caller's tenant, over the ``BuilderService`` of this process (the Lambda
route ``/builder/forms/{form_id}/mcp``); ``formwork.mcp.remote.ApiBuilderBackend`` is the same
over the builder's HTTP API (``formwork mcp --builder``). Either way:

* **the tools** are the builder tools in MCP's shape, the definitions of
  ``GET /builder/tools?format=mcp``; their annotations are ``formwork.mcp.tools``';
* **a call** is one ``BuilderService.call`` (``POST /builder/forms/{form_id}/tools/{tool}``)
  under the call's tool-call id in its chat (``formwork.mcp.tools.chat_id``: the host's
  ``_meta["formwork/chat_id"]``, else the connection; on stateless HTTP without one, the call
  is recorded nowhere), with the same result: an applied edit's sentence, a refusal as data,
  a replayed id's first result. The tenant is the verified principal's, so another
  tenant's draft is exactly a missing one (``no_draft``; ``create_form`` starts the caller's
  own). MCP carries no editor selection and no Stop: the edits that default to the selection
  want their field or step named;
* **the status** (the resource ``formwork://builder/forms/{form_id}/draft`` and the prompt
  ``draft_status``) is the draft as the builder's own agent keeps it in context: its steps,
  each item as ``id: kind "Label"``, the checkpoints (``formwork.mcp.draft``). It is read through
  ``inspect_form``, a read the service does not record: one read of the draft, where the
  editor's view (``GET /builder/forms/{form_id}``) reads the whole edit log too. What undo
  would take back, the log and who changed what are the editor's, not the model's.

Nothing here imports the SDK.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import TYPE_CHECKING, Any

from forms.app.builder_tools import BUILDER_ARGUMENTS
from forms.surface.formats import model_tools, tool_definitions
from formwork.mcp.backends import JsonDict, Observer
from formwork.mcp.draft import draft_status
from formwork.mcp.surface import Surface, builder_surface

if TYPE_CHECKING:
    from forms.app.builder import BuilderService


@cache
def builder_tools() -> list[JsonDict]:
    """The builder tools in MCP's shape (built once: the schemas are large)."""
    return tool_definitions("mcp", model_tools(BUILDER_ARGUMENTS))


class BuilderBackend:
    """The ``BuilderService`` of this process, for a verified principal's draft of ``form_id``.

    The service is synchronous (its store is DynamoDB or memory): a call runs on the event
    loop's thread, which serves one request per Lambda invocation anyway."""

    def __init__(
        self,
        service: BuilderService,
        principal: str,
        form_id: str,
        observe: Observer | None = None,
    ) -> None:
        self.service = service
        self.principal = principal
        self.form_id = form_id
        self.observe = observe

    @property
    def surface(self) -> Surface:
        return builder_surface(self.form_id)

    async def tools(self) -> list[JsonDict]:
        return builder_tools()

    async def call(
        self, tool: str, arguments: Mapping[str, Any], tool_call_id: str, chat: str | None = None
    ) -> JsonDict:
        result = dict(
            self.service.call(
                self.principal, self.form_id, tool, tool_call_id, dict(arguments), chat=chat
            )
        )
        if self.observe is not None:
            self.observe(tool, result)
        return result

    async def status(self) -> list[str]:
        return await draft_status(self)
