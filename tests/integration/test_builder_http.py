"""The form builder over HTTP, end to end: the local stack as ``make dev`` runs it.

One ``LocalStack`` for the module (AWS's DynamoDB Local, the table from ``template.yaml``, the
real handler in local execution environments, the local gateway routing by the template's
events), on free ports. A builder agent builds a small form through the builder routes with
plain ``urllib`` calls and dev tokens, a person with the publisher role
(``Bearer dev:acme:cy;roles=form_publisher``) publishes it, and the version is read back; the
draft, its edit log and the version are then read from the table directly, and another tenant
finds none of it.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from forms.storage.drafts import DraftStore
from forms.storage.dynamodb_documents import DynamoDBFormDocumentStore
from forms.storage.dynamodb_drafts import DynamoDBDraftStore
from formwork.infra.local.dynamodb_local import DynamoDBLocal
from formwork.infra.local.stack import LocalStack
from tests.integration.stacks import local_stack

AUTHOR = "dev:acme:ana"
PUBLISHER = "dev:acme:cy;roles=form_publisher"
OUTSIDER = "dev:globex:bo;roles=form_publisher"


@pytest.fixture(scope="module")
def stack(dynamodb_local: DynamoDBLocal) -> Iterator[LocalStack]:
    with local_stack(dynamodb_local) as running:
        yield running


class Http:
    """A minimal HTTP client of the builder routes."""

    def __init__(self, url: str) -> None:
        self.url = url

    def request(
        self, method: str, path: str, token: str = AUTHOR, body: Any = None
    ) -> tuple[int, Any]:
        headers = {"Authorization": f"Bearer {token}"}
        data = None
        if body is not None:
            headers["Content-Type"] = "application/json"
            data = json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data, headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())

    def call(
        self, form: str, tool: str, tool_call_id: str, tool_input: dict[str, Any], **envelope: Any
    ) -> dict[str, Any]:
        body = {"tool_call_id": tool_call_id, "input": tool_input, **envelope}
        status, result = self.request("POST", f"/builder/forms/{form}/tools/{tool}", body=body)
        assert status == 200, result
        assert isinstance(result, dict)
        return result


@pytest.fixture(scope="module")
def http(stack: LocalStack) -> Http:
    return Http(stack.api_url)


@pytest.fixture
def form() -> str:
    return f"intake-{uuid.uuid4().hex[:8]}"


def test_a_form_is_built_published_and_read_back_over_http(
    stack: LocalStack, http: Http, form: str
) -> None:
    # GIVEN a builder agent with the builder tools in its vendor's format
    status, tools = http.request("GET", "/builder/tools?format=bedrock")
    assert status == 200
    assert tools["tools"][0]["toolSpec"]["name"] == "create_form"
    # WHEN it builds a small intake form in small calls, one of them retried
    made = http.call(form, "create_form", "t1", {"title": "Intake", "steps": [{"title": "You"}]})
    assert made["ok"], made
    email = {"field": {"kind": "email", "label": "Email"}}
    added = http.call(form, "add_field", "t2", email, chat_id="chat-1")
    assert http.call(form, "add_field", "t2", email, chat_id="chat-1") == {
        **added,
        "replayed": True,
    }
    http.call(form, "add_field", "t3", {"field": {"kind": "boolean", "label": "Has company"}})
    http.call(form, "add_field", "t4", {"field": {"kind": "short_text", "label": "Company"}})
    gated = http.call(
        form,
        "set_conditional_logic",
        "t5",
        {"target": "field", "when": {"field": "has_company", "op": "equals", "value": True}},
        selection={"field": "company"},
    )
    assert gated["ok"], gated
    web = {"field": {"kind": "url", "label": "Web"}}
    stopped = http.call(form, "add_field", "t6", web, cancelled=True, chat_id="chat-1")
    assert stopped["error"] == "cancelled"
    # THEN its editor reads the draft as built
    status, draft = http.request("GET", f"/builder/forms/{form}")
    assert status == 200
    items = [item["id"] for item in draft["document"]["steps"][0]["items"]]
    assert items == ["email", "has_company", "company"]
    assert [line["call_id"] for line in draft["log"]] == ["t1", "t2", "t3", "t4", "t5"]
    # AND its author may not publish it, a publisher may (no body), once
    status, refused = http.request("POST", f"/builder/forms/{form}/publish", AUTHOR, {})
    assert (status, refused["error"]) == (403, "forbidden")
    status, published = http.request("POST", f"/builder/forms/{form}/publish", PUBLISHER)
    assert (status, published) == (200, {"form": form, "version": 1})
    status, stale = http.request(
        "POST", f"/builder/forms/{form}/publish", PUBLISHER, {"expected": 0}
    )
    assert (status, stale["error"]) == (409, "publish_conflict")
    # AND the version reads back as the draft was
    status, version = http.request("GET", f"/forms/{form}/versions/1")
    assert status == 200
    assert version["document"] == draft["document"]
    assert (version["version"], version["published_by"]) == (1, "acme/cy")
    # AND the table holds the draft's log and the one version, in the tenant's keys
    client = stack.dynamodb_client()
    drafts: DraftStore = DynamoDBDraftStore(client, stack.table_name)
    assert [entry.call_id for entry in drafts.history("acme", form)] == [
        "t1",
        "t2",
        "t3",
        "t4",
        "t5",
    ]
    assert drafts.get_call("acme", form, "chat-1/t6") is not None  # the Stop, its chat's
    documents = DynamoDBFormDocumentStore(client, stack.table_name)
    assert documents.catalog("acme")[form] == 1
    assert documents.published("acme", form, 1).by == "acme/cy"
    assert form not in documents.catalog("globex")


def test_another_tenant_finds_none_of_it(http: Http, form: str) -> None:
    # GIVEN acme's published form
    http.call(form, "create_form", "t1", {"title": "Intake", "steps": [{"title": "You"}]})
    http.call(form, "add_field", "t2", {"field": {"kind": "email", "label": "Email"}})
    assert http.request("POST", f"/builder/forms/{form}/publish", PUBLISHER)[0] == 200
    # WHEN a publisher of globex asks for its draft, its version, or publishes it
    draft = http.request("GET", f"/builder/forms/{form}", OUTSIDER)
    version = http.request("GET", f"/forms/{form}/versions/1", OUTSIDER)
    publish = http.request("POST", f"/builder/forms/{form}/publish", OUTSIDER)
    # THEN every answer is the 404 of a form that does not exist
    assert draft == (404, {"error": "not_found", "message": f"no draft of form {form!r}"})
    assert publish == draft
    assert version == (
        404,
        {"error": "not_found", "message": f"no published version 1 of form {form!r}"},
    )
    # AND globex's drafts do not list it
    status, drafts = http.request("GET", "/builder/forms", OUTSIDER)
    assert status == 200 and form not in [d["form_id"] for d in drafts["drafts"]]
