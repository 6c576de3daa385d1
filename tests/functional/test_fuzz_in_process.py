"""Property-based fuzz of ``FormService.call`` in process, as the MCP server, the Bedrock
handler and an embedding application call it: with values no HTTP body carries (a lone
surrogate, which a JSON parser hands over for an unpaired ``\\ud800`` escape; decimals, dates,
bytes, tuples, keys that are not text), every call is answered as data, never as the
service's own failure, and a refused call leaves the answers as they were."""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from forms import Caller
from forms.examples import EXAMPLES
from forms.surface.tools import TOOLS_BY_NAME
from tests.strategies import any_text
from tests.support import service_for

ALICE = Caller("alice", "conv-1")
FIELDS = ["destination", "departure_date", "return_date", "purpose", "mode", "total", "nosuch"]

text = any_text(12)
leaf = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats()
    | text
    | st.decimals(allow_nan=True)
    | st.dates()
    | st.binary(max_size=4)
)
values = st.recursive(
    leaf,
    lambda children: (
        st.lists(children, max_size=3)
        | st.tuples(children, children)
        | st.dictionaries(text | st.integers() | st.booleans(), children, max_size=3)
    ),
    max_leaves=10,
)
fields = st.sampled_from(FIELDS) | text
json_values = st.recursive(  # what a JSON parser gives, lone surrogates included
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | text,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(text, children, max_size=3),
    max_leaves=6,
)
answers = st.dictionaries(fields, json_values, min_size=1, max_size=3)
plausible = (  # well formed but for what is in them: these reach the engine
    st.fixed_dictionaries({"form": st.just("travel-claim"), "values": answers})
    | st.fixed_dictionaries(
        {
            "form": st.just("travel-claim"),
            "field": fields,
            "action": st.sampled_from(["set", "retract", "undo", "redo"]),
        },
        optional={"value": json_values},
    )
    | st.fixed_dictionaries({"form": st.just("travel-claim"), "reason": text})
)
inputs = (
    plausible
    | st.fixed_dictionaries(
        {},
        optional={
            "form": st.sampled_from(["travel-claim", "nope"]) | values,
            "instance": values,
            "values": st.dictionaries(fields, values, max_size=3) | values,
            "decline": st.lists(fields, max_size=2) | values,
            "submit": st.booleans() | values,
            "field": fields | values,
            "action": st.sampled_from(["set", "retract", "undo", "redo"]) | values,
            "value": values,
            "reason": values,
        },
    )
    | values
)
tools = st.sampled_from(sorted(TOOLS_BY_NAME)) | text


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(calls=st.lists(st.tuples(tools, inputs, st.booleans()), min_size=1, max_size=4))
def test_any_input_in_process_is_answered_as_data(calls: list[tuple[str, Any, bool]]) -> None:
    # GIVEN a claim under way
    service = service_for(*EXAMPLES)
    service.call(ALICE, "form_start", "s", {"form": "travel-claim"})
    service.call(ALICE, "form_fill", "f", {"form": "travel-claim", "values": {"mode": "train"}})
    ids = itertools.count()
    for tool, payload, again in calls:
        before = service.call(ALICE, "form_read", f"r{next(ids)}", {"form": "travel-claim"})
        # WHEN any tool (or none) is called with any input, under a new id or a used one
        result = service.call(ALICE, tool, "c0" if again else f"c{next(ids)}", payload)
        # THEN it is answered as data, never as the service's own failure
        assert isinstance(result, dict) and isinstance(result.get("ok"), bool), result
        assert result.get("error") != "internal_error", (tool, payload, result)
        # AND a refused call left the answers as they were
        if "error" in result:
            after = service.call(ALICE, "form_read", f"r{next(ids)}", {"form": "travel-claim"})
            assert after == before
