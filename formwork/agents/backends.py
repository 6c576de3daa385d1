"""Where the agent loop's tool calls go: the builder service in this process, or its HTTP API.

A ``Backend`` runs one builder tool call on one draft and reads that draft as it is now. Two
adapters:

* ``ServiceBackend``: a ``BuilderService`` in this process, for one principal and form id;
* ``HttpBackend``: ``POST /builder/forms/{form_id}/tools/{tool}`` and
  ``GET /builder/forms/{form_id}`` with a bearer token, through an injectable ``send``
  (``urllib_send`` by default; the standard library, no HTTP client dependency).

Both also say what the person last selected on the draft's canvas (``KeepsSelection``): the
selection a call that sends none falls back to, which the loop names in the prompt.

A call's refusal is data either way (``{"ok": false, "error": ...}``). Over HTTP, an API that
cannot be reached, or answers with anything but a tool result or a refusal of the call, is
data as well: ``backend_unavailable`` (``forms.surface.unavailable.builder_unavailable``),
which the loop notes in the turn result. A read of the draft that fails raises
``BackendUnavailable``.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable
from urllib.parse import quote

from pydantic import ValidationError

from forms.documents import FormDocument, Selection
from forms.documents.model import STORED
from forms.errors import NotFound
from forms.surface.unavailable import builder_unavailable
from formwork.agents.errors import BackendUnavailable
from formwork.agents.transcript import JsonDict

if TYPE_CHECKING:
    from forms.app.builder import BuilderService

"""The error code of a call the backend could not be asked (the API down, refusing the token,
answering 5xx): the call may or may not have been applied."""

MODEL_REFUSALS = frozenset({404, 413, 422})
"""HTTP statuses whose ``{"error", "message"}`` body refuses the call the model made (a tool
that does not exist, an input too large or not an object): data for the model. Any other
status that is not 200 is ``backend_unavailable``."""


class Backend(Protocol):
    """One draft's builder tool calls, and the draft as it is now."""

    def call(
        self,
        tool: str,
        call_id: str,
        args: Mapping[str, Any],
        selection: Mapping[str, str] | None,
        cancelled: bool,
        chat: str | None = None,
    ) -> JsonDict:
        """The result of one tool call (every failure as data). ``cancelled``: answer and
        record the call as cancelled under ``call_id``, applying nothing. ``chat``: the chat
        ``call_id`` belongs to (the builder records ids per chat; None: recorded nowhere)."""
        ...

    def document(self) -> FormDocument | None:
        """The draft's document as it is now; None when there is no draft yet.
        ``BackendUnavailable`` when it cannot be read."""
        ...


@runtime_checkable
class KeepsSelection(Protocol):
    """A backend that can say what the person last selected on the draft's canvas (the
    selection the builder falls back to when a call sends none, ``docs/builder.md``)."""

    def stored_selection(self) -> Selection | None:
        """The stored selection, or None (none, or it could not be read: never raises)."""
        ...


class ServiceBackend:
    """The builder service in this process, for one principal's draft of one form."""

    def __init__(self, service: BuilderService, principal: str, form_id: str) -> None:
        self.service = service
        self.principal = principal
        self.form_id = form_id

    def call(
        self,
        tool: str,
        call_id: str,
        args: Mapping[str, Any],
        selection: Mapping[str, str] | None,
        cancelled: bool,
        chat: str | None = None,
    ) -> JsonDict:
        return dict(
            self.service.call(
                self.principal,
                self.form_id,
                tool,
                call_id,
                dict(args),
                selection=selection,
                cancelled=cancelled,
                chat=chat,
            )
        )

    def document(self) -> FormDocument | None:
        try:
            return self.service.draft(self.principal, self.form_id).document
        except NotFound:
            return None

    def stored_selection(self) -> Selection | None:
        return self.service.selected(self.principal, self.form_id)


Send = Callable[[str, str, Mapping[str, str], bytes | None], tuple[int, bytes]]
"""``send(method, url, headers, body)``: the response's status and body. It raises
``OSError`` (``urllib.error.URLError`` included) when nothing answered."""


def urllib_send(
    method: str, url: str, headers: Mapping[str, str], body: bytes | None
) -> tuple[int, bytes]:
    """One request with the standard library (30 s timeout); an error status is returned,
    not raised."""
    request = urllib.request.Request(url, data=body, headers=dict(headers), method=method)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return int(response.status), bytes(response.read())
    except urllib.error.HTTPError as error:
        return int(error.code), bytes(error.read())


class HttpBackend:
    """The builder's HTTP API (``docs/http-api.md``) for one form, as the holder of ``token``
    (sent as ``Authorization: Bearer <token>``; on the local stack, ``dev:<tenant>:<sub>``)."""

    def __init__(
        self, base_url: str, token: str, form_id: str, *, send: Send = urllib_send
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.form_id = form_id
        self.send = send
        self.headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
        self._selection: object = None

    @property
    def form_url(self) -> str:
        return f"{self.base_url}/builder/forms/{quote(self.form_id, safe='')}"

    def call(
        self,
        tool: str,
        call_id: str,
        args: Mapping[str, Any],
        selection: Mapping[str, str] | None,
        cancelled: bool,
        chat: str | None = None,
    ) -> JsonDict:
        body: JsonDict = {"tool_call_id": call_id, "input": dict(args), "cancelled": cancelled}
        if chat is not None:
            body["chat_id"] = chat
        if selection:
            body["selection"] = dict(selection)
        url = f"{self.form_url}/tools/{quote(tool, safe='')}"
        headers = {**self.headers, "Content-Type": "application/json"}
        try:
            status, raw = self.send("POST", url, headers, json.dumps(body).encode())
        except OSError as unreachable:
            return builder_unavailable(f"{type(unreachable).__name__}: {unreachable}")
        answer = _json(raw)
        if status == 200 and answer is not None:
            return answer
        if status in MODEL_REFUSALS and answer is not None and "error" in answer:
            return {"ok": False, "error": answer["error"], "message": answer.get("message", "")}
        return builder_unavailable(f"HTTP {status}")

    def document(self) -> FormDocument | None:
        self._selection = None
        try:
            status, raw = self.send("GET", self.form_url, self.headers, None)
        except OSError as unreachable:
            raise BackendUnavailable(f"reading the draft: {unreachable}") from None
        if status == 404:
            return None
        answer = _json(raw)
        if status != 200 or answer is None:
            raise BackendUnavailable(f"reading the draft: HTTP {status}")
        self._selection = answer.get("selection")
        try:
            # The server's draft, as stored: a draft saved before documents refused control
            # characters still loads (its text is rendered safe where the model reads it).
            return FormDocument.model_validate(answer.get("document"), context=STORED)
        except ValidationError:
            raise BackendUnavailable(
                "reading the draft: the answer is not a form document"
            ) from None

    def stored_selection(self) -> Selection | None:
        """The ``selection`` the last read of the draft (``document``) answered, so naming
        it costs no request; None when there was none or it was not a selection."""
        chosen = self._selection
        if not isinstance(chosen, dict):
            return None
        try:
            return Selection.model_validate(chosen)
        except ValidationError:
            return None


def _json(raw: bytes) -> JsonDict | None:
    """The body as a JSON object, or None."""
    try:
        loaded = json.loads(raw.decode())
    except ValueError:
        return None
    return loaded if isinstance(loaded, dict) else None
