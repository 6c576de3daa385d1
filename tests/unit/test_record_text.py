"""A call record's JSON text made without the model (``forms.app.calls.record_json``, the text
``NewCall.record_json`` gives a store) is the model's ``model_dump_json()`` byte for byte:
for every result of the pinned transcript (``render_golden.json``), for results holding what
the model's round trip turns into something else (infinities, decimals, dates, tuples, keys
that are not text), numbers with a fraction, at several times and with or without an instance."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from pydantic_core import PydanticSerializationError

from forms.app.calls import CallId, Rendering, _record, deferred_call, new_call, record_json
from forms.call_records import NewCall
from forms.surface.plain import result_text

GOLDEN = Path(__file__).with_name("render_golden.json")
CALL = CallId("form_fill", "call-1", "ab" * 32)
TIMES = (
    datetime(2026, 6, 1, tzinfo=UTC),
    datetime(2026, 6, 1, 0, 0, 0, 1000, tzinfo=UTC),
    datetime(2026, 6, 1, 23, 59, 59, 999999),
    datetime(2026, 6, 1, 1, 2, 3, 500000, tzinfo=timezone(timedelta(hours=-5, minutes=-30))),
)
ODD: tuple[Any, ...] = (
    1.5,
    1e16,
    1e-7,
    -0.0,
    5e-324,
    1 / 3,
    float("inf"),
    float("-inf"),
    float("nan"),
    Decimal("12.50"),
    datetime(2026, 1, 2, tzinfo=UTC),
    (1, "two", [3]),
    {1: "int key"},
    {True: "bool key"},
    2**70,
    -(2**64),
    'a\x00\x1f\x7f\u2028\u202e"\\/é😀\n',
    [{"deep": [{"deeper": (None, False)}]}],
)


def _results() -> list[dict[str, Any]]:
    transcript = json.loads(GOLDEN.read_text(encoding="utf-8"))
    return [entry["result"] for entry in transcript]


@pytest.mark.parametrize("at", TIMES)
def test_the_text_of_every_pinned_result_is_the_models(at: datetime) -> None:
    for result in _results():
        for instance_id in ("fi_1", None):
            expected = _record(CALL, result, instance_id, at).model_dump_json()
            assert record_json(CALL, result, instance_id, at) == expected


@pytest.mark.parametrize("value", ODD, ids=repr)
def test_values_only_the_round_trip_decides_read_the_same(value: Any) -> None:
    result = {"ok": True, "summary": "x", "value": value, "nested": {"list": [value]}}
    expected = _record(CALL, result, "fi_1", TIMES[0]).model_dump_json()
    assert record_json(CALL, result, "fi_1", TIMES[0]) == expected


@pytest.mark.parametrize("value", ODD, ids=repr)
def test_a_replay_gives_back_what_the_model_read_the_first_time(value: Any) -> None:
    # GIVEN a result holding a value of any kind (a decimal, a date, a key that is not text)
    result = {"ok": True, "summary": "x", "value": value, "nested": {"list": [value]}}
    # WHEN it is recorded THEN the record's copy reads as the text the model was sent
    recorded = _record(CALL, result, "fi_1", TIMES[0]).result
    assert recorded == json.loads(result_text(result))
    assert recorded == json.loads(record_json(CALL, result, "fi_1", TIMES[0]))["result"]


def test_text_the_model_cannot_serialise_is_refused_either_way() -> None:
    result = {"ok": True, "summary": "lone \ud800 surrogate"}
    with pytest.raises(PydanticSerializationError):
        _record(CALL, result, "fi_1", TIMES[0]).model_dump_json()
    with pytest.raises(PydanticSerializationError):
        record_json(CALL, result, "fi_1", TIMES[0])


def test_a_deferred_call_renders_its_result_once_for_its_record_and_its_text() -> None:
    rendered: list[int] = []

    def render() -> dict[str, Any]:
        rendered.append(1)
        return {"ok": True, "summary": "Saved 1 (name).", "status_line": "[form: f] step 1/1"}

    call = deferred_call(CALL, Rendering(render), "fi_1", TIMES[1])
    text = call.record_json()
    assert text == call.record.model_dump_json()
    assert call.record_json() is text  # made once
    assert rendered == [1]


def test_a_call_made_with_its_record_gives_the_records_text() -> None:
    result = {"ok": True, "summary": "Saved 1 (name).", "value": 2.5}
    call = new_call(CALL, result, "fi_1", TIMES[0])
    assert call.record_json() == call.record.model_dump_json()
    assert NewCall(call_id="x", record=call.record).record_json() == call.record_json()
