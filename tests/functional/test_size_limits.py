"""What cannot be stored in one item is refused as data, over HTTP (``forms.storage.sizes``).

A builder's draft that grows past one stored item, a publish that would, a fact, and a form
tool's write that would push an instance's record past it: each answers ``size_limit`` with
the item, its size and the limit (a tool result as data, a 413 on the HTTP routes), stores
nothing, and is never an ``internal_error``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import forms.storage.sizes
from forms.storage.sizes import ITEM_LIMIT, instance_bytes
from formwork.bootstrap import App
from tests.functional.conftest import Api, RecordingStore
from tests.functional.test_builder_api import ANA, FORM, PUBLISHER, Builder, api, started
from tests.functional.test_memory_api import WEIGHT, serve

__all__ = ["api"]  # the fixture, shared with the builder's tests


def large_field(n: int) -> dict[str, Any]:
    """An ``add_field`` input of about 38 KB: a choice of 190 options of 190 characters."""
    options = [{"value": f"option {n}.{k} " + "x" * 176} for k in range(190)]
    return {"field": {"kind": "single_choice", "label": f"Question {n}", "options": options}}


@pytest.fixture
def builder(api: Api) -> Builder:
    return Builder(api)


def test_ten_large_add_fields_are_refused_as_size_limit_once_the_draft_is_full(
    builder: Builder,
) -> None:
    # GIVEN a new draft, and add_field inputs of about 38 KB each, inside the body limit
    started(builder)
    assert 37_000 < len(json.dumps(large_field(0))) < 40_000
    # WHEN ten of them are sent
    results = [builder.call("add_field", input=large_field(n)) for n in range(10)]
    # THEN those that fit land, and the first that would not fit is refused as data
    landed = [r for r in results if r["ok"]]
    refused = [r for r in results if not r["ok"]]
    assert len(landed) >= 8 and refused, [r.get("error") for r in results]
    assert results[: len(landed)] == landed  # nothing lands after the draft is full
    first = refused[0]
    assert first["error"] == "size_limit" and first["item"] == "draft"
    assert first["limit"] == ITEM_LIMIT < first["size"]
    assert f"{first['size']:,} bytes" in first["message"] and "split" in first["hint"]
    assert all(r["error"] == "size_limit" for r in refused)
    # AND the draft holds exactly the fields that landed
    assert len(builder.item_ids()) == len(landed)
    # AND sent again, it is refused the same way, still applying nothing
    again = builder.call("add_field", input=large_field(len(results) - 1))
    assert again["error"] == "size_limit" and again["size"] == refused[-1]["size"]
    assert len(builder.item_ids()) == len(landed)
    # AND a small edit still lands
    small = builder.call("add_field", input={"field": {"kind": "email", "label": "Email"}})
    assert small["ok"] is True


def test_a_publish_past_one_stored_version_is_a_413_with_the_sizes(
    builder: Builder, api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a draft that compiles, and a deployment whose limit it passes as published
    started(builder).call("add_field", input={"field": {"kind": "email", "label": "Email"}})
    monkeypatch.setattr(forms.storage.sizes, "ITEM_LIMIT", 200)
    # WHEN a publisher publishes it
    response = api.post(f"/builder/forms/{FORM}/publish", {}, claims=PUBLISHER)
    # THEN 413 size_limit naming the item and the sizes, and nothing was published
    assert response.status == 413, response
    body = response.json()
    assert (body["error"], body["item"], body["limit"]) == ("size_limit", "published_version", 200)
    assert body["size"] > 200 and body["hint"]
    assert api.get(f"/forms/{FORM}/versions/1", claims=ANA).status == 404


def test_a_fact_past_one_stored_item_is_a_413_and_nothing_is_written(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN the memory routes, and an item limit a long statement passes
    memory = serve()
    monkeypatch.setattr(forms.storage.sizes, "ITEM_LIMIT", 1_000)
    # WHEN a fact with 900 characters of words is stated
    response = memory.put(WEIGHT, {"value": 70, "words": "seventy kilograms " + "." * 880})
    # THEN 413 size_limit naming the sizes, and nothing was written
    assert response.status == 413, response
    body = response.json()
    assert body["error"] == "size_limit" and "1,000-byte limit" in body["message"]
    assert body["hint"]
    assert memory.get("/memory/export").json()["facts"] == []
    # AND a short statement lands
    assert memory.put(WEIGHT, {"value": 70, "words": "70 kg"}).status == 200


def test_a_fill_past_one_stored_instance_is_refused_as_data_and_saves_nothing(
    app: App, store: RecordingStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a started claim, in a deployment whose limit its record is just under
    api = Api(app)
    assert api.call("form_start", form="travel-claim").json()["ok"] is True
    started = store.get("fi_1")
    size = instance_bytes(started, started.state.model_dump_json())
    monkeypatch.setattr(forms.storage.sizes, "ITEM_LIMIT", size + 8)
    # WHEN a fill would make the record larger than that
    values = {"destination": "Lisbon"}
    refused = api.call("form_fill", tool_call_id="call_big", form="travel-claim", values=values)
    # THEN it is a 200 with the refusal as data: the item, its size, the limit, what to do
    assert refused.status == 200
    body = refused.json()
    assert (body["ok"], body["error"], body["item"]) == (False, "size_limit", "instance")
    assert body["limit"] == size + 8 < body["size"] and body["hint"]
    # AND nothing was saved, and the same call sent again gets the same refusal
    assert store.get("fi_1").field("destination").count == 0
    again = api.call("form_fill", tool_call_id="call_big", form="travel-claim", values=values)
    assert again.json() == {**body, "replayed": True}
