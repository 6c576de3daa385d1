"""How the demo reaches the tools: a ``Transport``, in this process or over HTTP.

``InProcess`` runs ``FormService`` here, on the in-memory store and the in-process dispatcher,
with a fixed ``Clock`` and sequential ids, so its output is the same on every run; an approval
is decided through ``FormService.decide`` and answered with the status the API would give.
``OverHttp`` calls the tool API as a chatbot backend would (urllib, JSON, a dev token per
principal), decides approvals through ``POST /approvals/{approval_id}``, describes the
Temporal run a hook's idempotency key names, and signs ``POST /webhooks/{source}`` as a sender
would.

Both also serve the builder: a builder agent's tool calls on a tenant's draft (``build``), the
draft as its editor reads it (``draft``) and a person publishing it (``publish``, which needs
the publisher role). In process that is ``BuilderService`` on in-memory drafts, publishing
into the ``Catalog`` the form service reads; over HTTP, the ``/builder`` routes.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol
from urllib.parse import quote

from examples.demo.printing import expect, say
from examples.executors import EXECUTORS
from forms import Approver, Caller, FormService
from forms.app.approvals import Decision
from forms.app.builder import BuilderService
from forms.app.catalog import Catalog
from forms.app.hooks import InProcessDispatcher
from forms.errors import NotFound, ToolError
from forms.examples import EXAMPLES
from forms.registry import FormRegistry
from forms.storage import InMemoryFormStore
from forms.storage.documents import InMemoryFormDocumentStore
from forms.storage.drafts import InMemoryDraftStore
from formwork.config import DEFAULT_PUBLISHER_ROLE
from formwork.webhooks import DELIVERY_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, sign
from infra.local import stack as stacks
from infra.local.gateway import dev_token

DECISION_STATUS = {"unknown_approval": 404, "form_closed": 409, "bad_request": 400}
"""The HTTP status ``POST /approvals/{id}`` answers for each refusal (``functions.api``)."""


class Clock:
    """A fixed start that ticks one second per reading."""

    def __init__(self) -> None:
        self.now = datetime(2025, 3, 10, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


class Transport(Protocol):
    """How the demo reaches the tools: in this process, or over HTTP."""

    principal: str
    tenant: str
    """A tenant of this run's own: the builder's drafts and published forms live there."""
    other_tenant: str
    """Another tenant, which must see none of them."""

    def describe(self) -> str: ...

    def call(
        self, caller: Caller, tool: str, tool_call_id: str, payload: dict[str, Any]
    ) -> Any: ...

    def status(self, caller: Caller) -> list[str]: ...

    def value(self, caller: Caller, form: str, instance: str, field_id: str) -> Any: ...

    def decide(
        self,
        approver: str,
        roles: Sequence[str],
        approval_id: str,
        decision: Decision,
        note: str | None = None,
    ) -> tuple[int, dict[str, Any]]:
        """An approver's decision: the HTTP status and the body ``POST /approvals`` gives."""
        ...

    def workflow(self, key: str, wait: float = 0.0) -> dict[str, str] | None:
        """The Temporal run named ``key`` (None: hooks do not run on Temporal here)."""
        ...

    def build(
        self,
        principal: str,
        form_id: str,
        tool: str,
        tool_call_id: str,
        payload: dict[str, Any],
        selection: dict[str, str] | None = None,
        *,
        cancelled: bool = False,
    ) -> dict[str, Any]:
        """One builder tool call on ``principal``'s tenant's draft of ``form_id``."""
        ...

    def draft(self, principal: str, form_id: str) -> tuple[int, dict[str, Any]]:
        """The draft with its edit log, as ``GET /builder/forms/{form_id}`` answers."""
        ...

    def publish(
        self, principal: str, roles: Sequence[str], form_id: str
    ) -> tuple[int, dict[str, Any]]:
        """A person publishes the draft, as ``POST /builder/forms/{form_id}/publish``."""
        ...


class InProcess:
    """``FormService`` in this process: in-memory store, fixed clock, sequential ids."""

    principal = "user-1"
    tenant = "acme"
    other_tenant = "globex"

    def __init__(self) -> None:
        ids = iter(range(1, 1000))
        clock = Clock()
        self.catalog = Catalog(
            FormRegistry(EXAMPLES),
            InMemoryFormDocumentStore(),
            timer=lambda: 0.0,
            executors=EXECUTORS,
            ttl=0.0,
        )
        self.service = FormService(
            self.catalog,
            InMemoryFormStore(),
            InProcessDispatcher(),
            clock=clock,
            new_id=lambda: f"fi_{next(ids):04d}",
        )
        self.builder = BuilderService(InMemoryDraftStore(), self.catalog, clock=clock)

    def describe(self) -> str:
        return "in-process (FormService, in-memory store, fixed clock)"

    def call(self, caller: Caller, tool: str, tool_call_id: str, payload: dict[str, Any]) -> Any:
        return self.service.call(caller, tool, tool_call_id, payload)

    def status(self, caller: Caller) -> list[str]:
        return self.service.status(caller)

    def value(self, caller: Caller, form: str, instance: str, field_id: str) -> Any:
        revision = self.service.store.get(instance).field(field_id).in_force()
        return revision.value if revision is not None else None

    def decide(
        self,
        approver: str,
        roles: Sequence[str],
        approval_id: str,
        decision: Decision,
        note: str | None = None,
    ) -> tuple[int, dict[str, Any]]:
        who = Approver(approver, frozenset(roles))
        result = self.service.decide(who, approval_id, decision, note)
        status = 200 if result["ok"] else DECISION_STATUS.get(result["error"], 200)
        if status != 200:
            return status, {"error": result["error"], "message": result["message"]}
        return status, result

    def workflow(self, key: str, wait: float = 0.0) -> dict[str, str] | None:
        return None

    def build(
        self,
        principal: str,
        form_id: str,
        tool: str,
        tool_call_id: str,
        payload: dict[str, Any],
        selection: dict[str, str] | None = None,
        *,
        cancelled: bool = False,
    ) -> dict[str, Any]:
        return self.builder.call(
            principal,
            form_id,
            tool,
            tool_call_id,
            payload,
            selection=selection,
            cancelled=cancelled,
        )

    def draft(self, principal: str, form_id: str) -> tuple[int, dict[str, Any]]:
        try:
            return 200, self.builder.draft(principal, form_id).as_json()
        except NotFound as missing:
            return 404, {"error": "not_found", "message": str(missing)}

    def publish(
        self, principal: str, roles: Sequence[str], form_id: str
    ) -> tuple[int, dict[str, Any]]:
        # the HTTP layer's role check, as functions.builder_routes makes it
        if DEFAULT_PUBLISHER_ROLE not in roles:
            return 403, {"error": "forbidden", "message": "publishing needs the publisher role"}
        try:
            published = self.builder.publish(principal, form_id)
        except NotFound as missing:
            return 404, {"error": "not_found", "message": str(missing)}
        except ToolError as refused:
            return 409, {"error": refused.code, "message": str(refused)}
        return 200, {"form": published.form_id, "version": published.version}


class OverHttp:
    """The tool API over HTTP (urllib, JSON), as a chatbot backend would call it.

    ``temporal`` is the Temporal server's address, to describe the runs hooks start (with
    ``require_temporal`` a run that is not there stops the demo). ``webhook_secret`` is the
    ``crm`` source's secret, to sign ``POST /webhooks/crm`` (None: that part is skipped).
    """

    def __init__(
        self,
        api_url: str,
        principal: str | None = None,
        *,
        temporal: str | None = None,
        require_temporal: bool = False,
        webhook_secret: str | None = None,
    ) -> None:
        self.api_url = api_url.rstrip("/")
        run = uuid.uuid4().hex[:8]
        self.principal = principal or f"demo-{run}"
        self.tenant = f"acme-{run}"
        self.other_tenant = f"globex-{run}"
        self.temporal = temporal
        self.require_temporal = require_temporal
        self.webhook_secret = webhook_secret
        self.reads = 0
        self._noted = False

    def describe(self) -> str:
        text = f"HTTP {self.api_url} (Authorization: Bearer dev:{self.principal})"
        return text + (f", Temporal {self.temporal}" if self.temporal else "")

    def _request(
        self,
        method: str,
        path: str,
        body: Any = None,
        token: str | None = None,
        headers: dict[str, str] | None = None,
        raw: bytes | None = None,
    ) -> tuple[int, Any]:
        sent = {
            "Authorization": token or f"Bearer dev:{self.principal}",
            "Content-Type": "application/json",
            **(headers or {}),
        }
        data = raw if raw is not None else None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.api_url + path, data, sent, method=method)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"null")

    def call(self, caller: Caller, tool: str, tool_call_id: str, payload: dict[str, Any]) -> Any:
        path = f"/conversations/{caller.conversation_id}/tools/{tool}"
        envelope = {"tool_call_id": tool_call_id, "input": payload}
        status, body = self._request("POST", path, envelope, token=token_for(caller.principal))
        expect(status == 200, f"HTTP 200 from POST {path}, got {status}: {body}")
        return body

    def status(self, caller: Caller) -> list[str]:
        path = f"/conversations/{caller.conversation_id}/status"
        status, body = self._request("GET", path, token=token_for(caller.principal))
        if status == 404:
            return []
        expect(status == 200, f"HTTP 200 from GET {path}, got {status}: {body}")
        lines: list[str] = body["lines"]
        return lines

    def value(self, caller: Caller, form: str, instance: str, field_id: str) -> Any:
        self.reads += 1
        payload = {"form": form, "instance": instance, "part": field_id}
        result = self.call(caller, "form_read", f"check_{self.reads:03d}", payload)
        expect(result.get("ok"), f"form_read of {field_id} to succeed, got {result}")
        return result.get("value")

    def decide(
        self,
        approver: str,
        roles: Sequence[str],
        approval_id: str,
        decision: Decision,
        note: str | None = None,
    ) -> tuple[int, dict[str, Any]]:
        token = f"Bearer dev:{approver}" + (f";roles={','.join(roles)}" if roles else "")
        body = {"decision": decision, **({"note": note} if note else {})}
        path = f"/approvals/{quote(approval_id, safe='')}"
        status, answer = self._request("POST", path, body, token=token)
        return status, answer if isinstance(answer, dict) else {}

    def workflow(self, key: str, wait: float = 0.0) -> dict[str, str] | None:
        if self.temporal is None:
            return None
        found = stacks.describe_workflow(self.temporal, key, wait=wait)
        if found is None and self.require_temporal:
            expect(False, f"a Temporal workflow with id {key} at {self.temporal}")
        if found is None and not self._noted:
            self._noted = True
            say("", f"(no workflow {key} on Temporal at {self.temporal}: in-process hooks?)")
        return found

    def build(
        self,
        principal: str,
        form_id: str,
        tool: str,
        tool_call_id: str,
        payload: dict[str, Any],
        selection: dict[str, str] | None = None,
        *,
        cancelled: bool = False,
    ) -> dict[str, Any]:
        path = f"/builder/forms/{form_id}/tools/{tool}"
        body: dict[str, Any] = {"tool_call_id": tool_call_id, "input": payload}
        if selection:
            body["selection"] = selection
        if cancelled:
            body["cancelled"] = True
        status, answer = self._request("POST", path, body, token=token_for(principal))
        expect(status == 200, f"HTTP 200 from POST {path}, got {status}: {answer}")
        result: dict[str, Any] = answer
        return result

    def draft(self, principal: str, form_id: str) -> tuple[int, dict[str, Any]]:
        status, answer = self._request(
            "GET", f"/builder/forms/{form_id}", token=token_for(principal)
        )
        return status, answer if isinstance(answer, dict) else {}

    def publish(
        self, principal: str, roles: Sequence[str], form_id: str
    ) -> tuple[int, dict[str, Any]]:
        path = f"/builder/forms/{form_id}/publish"
        status, answer = self._request("POST", path, {}, token=token_for(principal, roles))
        return status, answer if isinstance(answer, dict) else {}

    def webhook(self, source: str, payload: dict[str, Any], delivery: str) -> tuple[int, Any]:
        """``POST /webhooks/{source}``, signed as the sender signs it (no JWT)."""
        assert self.webhook_secret is not None
        body = json.dumps(payload).encode()
        timestamp = int(time.time())
        headers = {
            TIMESTAMP_HEADER: str(timestamp),
            DELIVERY_HEADER: delivery,
            SIGNATURE_HEADER: sign(self.webhook_secret, timestamp, body),
        }
        return self._request("POST", f"/webhooks/{source}", headers=headers, raw=body)


def token_for(principal: str, roles: Sequence[str] = ()) -> str:
    """The local stack's dev token for ``principal`` (``tenant/sub`` or a tenant-less sub)."""
    tenant, slash, sub = principal.rpartition("/")
    return dev_token(sub, tenant if slash else None, roles)
