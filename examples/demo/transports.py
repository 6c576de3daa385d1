"""How the demo reaches the tools: a ``Transport``, in this process
(``formwork.examples.demo.in_process.InProcess``) or over HTTP (``OverHttp``).

``OverHttp`` calls the tool API as a chatbot backend would (urllib, JSON, a dev token per
principal), mints links to the form page (``page_link``), to an approval's page
(``approvals_link``), to the fact editor (``memory_link``) and to a draft's canvas
(``canvas_link``), decides approvals through ``POST /approvals/{approval_id}``, describes
the Temporal run a hook's idempotency key names, and signs ``POST /webhooks/{source}`` as a
sender would.

A transport also serves the builder: a builder agent's tool calls on a tenant's draft
(``build``), the draft as its editor reads it (``draft``) and a person publishing it
(``publish``, which needs the publisher role); over HTTP, the ``/builder`` routes. And the
user's fact editor: stating or correcting a fact (``state_fact``), reading one with its history
(``read_fact``), listing them (``list_facts``) and turning memory off (``switch_memory``); over
HTTP, the ``/memory`` routes. ``facts_read`` counts the fact-store reads made for a principal
where that can be seen (in process), which over HTTP it cannot.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Sequence
from typing import Any, Protocol
from urllib.parse import quote

from forms import Caller
from forms.app.approvals import Decision
from formwork.examples.demo.printing import expect, say
from formwork.infra.local import stack as stacks
from formwork.infra.local.gateway import DEV_TENANT, dev_token
from formwork.webhooks import standard_headers


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
        chat_id: str,
        cancelled: bool = False,
    ) -> dict[str, Any]:
        """One builder tool call on ``principal``'s tenant's draft of ``form_id``, made in the
        builder chat ``chat_id`` (its tool-call ids are that chat's: the same id in the same
        chat is a replay)."""
        ...

    def draft(self, principal: str, form_id: str) -> tuple[int, dict[str, Any]]:
        """The draft with its edit log, as ``GET /builder/forms/{form_id}`` answers."""
        ...

    def publish(
        self, principal: str, roles: Sequence[str], form_id: str
    ) -> tuple[int, dict[str, Any]]:
        """A person publishes the draft, as ``POST /builder/forms/{form_id}/publish``."""
        ...

    def state_fact(
        self, principal: str, key: str, statement: dict[str, Any]
    ) -> tuple[int, dict[str, Any]]:
        """``principal`` states or corrects a fact in their fact editor, as
        ``PUT /memory/facts/{key}``."""
        ...

    def read_fact(
        self, principal: str, key: str, as_of: str | None = None
    ) -> tuple[int, dict[str, Any]]:
        """One fact with its timeline and history (and what was believed at system time
        ``as_of``, ISO 8601), as ``GET /memory/facts/{key}``."""
        ...

    def list_facts(self, principal: str) -> tuple[int, dict[str, Any]]:
        """The facts in force and what recall would do with each, as ``GET /memory/facts``."""
        ...

    def switch_memory(self, principal: str, enabled: bool) -> tuple[int, dict[str, Any]]:
        """``principal`` turns their memory on or off, as ``PUT /memory/settings``."""
        ...

    def facts_read(self, principal: str) -> int | None:
        """How many times the fact store has been asked for ``principal``'s facts so far
        (reading the memory switch is not one); None where that cannot be counted (over
        HTTP)."""
        ...


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
        self.principal = principal or f"{DEV_TENANT}/demo-{run}"
        self.tenant = f"acme-{run}"
        self.other_tenant = f"globex-{run}"
        self.temporal = temporal
        self.require_temporal = require_temporal
        self.webhook_secret = webhook_secret
        self.reads = 0
        self._noted = False

    def describe(self) -> str:
        text = f"HTTP {self.api_url} (Authorization: {token_for(self.principal)})"
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
            "Authorization": token or token_for(self.principal),
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

    def page_link(self, caller: Caller, instance_id: str) -> tuple[int, dict[str, Any]]:
        """A link to ``instance_id``'s page, as the chatbot's backend mints one for its user:
        ``POST /conversations/{id}/page-links`` with the user's token (``docs/pages.md``)."""
        path = f"/conversations/{caller.conversation_id}/page-links"
        body = {"instance_id": instance_id}
        status, answer = self._request("POST", path, body, token=token_for(caller.principal))
        return status, answer if isinstance(answer, dict) else {}

    def approvals_link(
        self, approver: str, roles: Sequence[str], approval_id: str
    ) -> tuple[int, dict[str, Any]]:
        """A link to one approval's page for ``approver`` holding ``roles``, as a notifier
        mints one: ``POST /approvals/page-links`` with the approver's token."""
        body = {"approval_id": approval_id}
        token = token_for(approver, roles)
        status, answer = self._request("POST", "/approvals/page-links", body, token=token)
        return status, answer if isinstance(answer, dict) else {}

    def memory_link(self, principal: str) -> tuple[int, dict[str, Any]]:
        """A link to ``principal``'s own fact editor, as their chatbot's backend mints one:
        ``POST /memory/page-links`` with their token."""
        status, answer = self._request("POST", "/memory/page-links", {}, token=token_for(principal))
        return status, answer if isinstance(answer, dict) else {}

    def canvas_link(self, principal: str, form_id: str) -> tuple[int, dict[str, Any]]:
        """A link to the canvas of ``principal``'s tenant's draft of ``form_id``, as the
        builder chat's backend mints one: ``POST /builder/forms/{form_id}/page-links``."""
        path = f"/builder/forms/{quote(form_id, safe='')}/page-links"
        status, answer = self._request("POST", path, {}, token=token_for(principal))
        return status, answer if isinstance(answer, dict) else {}

    def decide(
        self,
        approver: str,
        roles: Sequence[str],
        approval_id: str,
        decision: Decision,
        note: str | None = None,
    ) -> tuple[int, dict[str, Any]]:
        token = token_for(approver, roles)
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
        chat_id: str,
        cancelled: bool = False,
    ) -> dict[str, Any]:
        path = f"/builder/forms/{form_id}/tools/{tool}"
        body: dict[str, Any] = {"tool_call_id": tool_call_id, "chat_id": chat_id, "input": payload}
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

    def state_fact(
        self, principal: str, key: str, statement: dict[str, Any]
    ) -> tuple[int, dict[str, Any]]:
        return self._memory("PUT", f"/memory/facts/{quote(key, safe='')}", principal, statement)

    def read_fact(
        self, principal: str, key: str, as_of: str | None = None
    ) -> tuple[int, dict[str, Any]]:
        path = f"/memory/facts/{quote(key, safe='')}"
        return self._memory(
            "GET", path + (f"?as_of={quote(as_of, safe='')}" if as_of else ""), principal
        )

    def list_facts(self, principal: str) -> tuple[int, dict[str, Any]]:
        return self._memory("GET", "/memory/facts", principal)

    def switch_memory(self, principal: str, enabled: bool) -> tuple[int, dict[str, Any]]:
        return self._memory("PUT", "/memory/settings", principal, {"enabled": enabled})

    def facts_read(self, principal: str) -> int | None:
        return None  # the server's requests to its fact store are not seen from here

    def _memory(
        self, method: str, path: str, principal: str, body: Any = None
    ) -> tuple[int, dict[str, Any]]:
        status, answer = self._request(method, path, body, token=token_for(principal))
        return status, answer if isinstance(answer, dict) else {}

    def webhook(self, source: str, payload: dict[str, Any], delivery: str) -> tuple[int, Any]:
        """``POST /webhooks/{source}``, signed as the sender signs it (Standard Webhooks; no
        JWT)."""
        assert self.webhook_secret is not None
        body = json.dumps(payload).encode()
        headers = standard_headers([self.webhook_secret], delivery, int(time.time()), body)
        return self._request("POST", f"/webhooks/{source}", headers=headers, raw=body)


def token_for(principal: str, roles: Sequence[str] = ()) -> str:
    """The local stack's dev token for ``principal`` (``tenant/sub`` or a tenant-less sub)."""
    tenant, slash, sub = principal.rpartition("/")
    return dev_token(sub, tenant if slash else None, roles)
