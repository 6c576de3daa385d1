"""A one-answer fill's summary, made once per field and kept on the compiled form.

``fill_result`` reads the two sentences of a fill that saved one answer (as it stands, and
when it replaced an earlier answer) from ``form._one_saved`` (``one_saved`` makes them on the
field's first such fill). Here they are the words ``reported`` (the path that builds every
clause) gives for the same plan, on every field of a form, on the first fill and on later ones,
and what the form keeps is one entry per field so filled.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from forms import compile_form
from forms.examples.travel_claim import travel_claim
from forms.fill_plans import FillPlan
from forms.surface.fill_summary import reported
from forms.surface.results import fill_result


def transition(field_ids: list[str]) -> Any:
    """What ``fill_result`` reads of a transition whose fields are all answered and open."""
    fields = {f: SimpleNamespace(status="answered") for f in field_ids}
    evaluation = SimpleNamespace(fields=fields, flipped=())
    after = SimpleNamespace(state=SimpleNamespace(status="open"))
    return SimpleNamespace(evaluation=evaluation, after=after, dispatch=())


@pytest.mark.parametrize("replaced", [False, True])
def test_each_fields_kept_summary_is_the_one_every_clause_gives(replaced: bool) -> None:
    form = compile_form(travel_claim)
    ids = list(form.fields)
    step = transition(ids)
    for _ in range(2):  # made on the first fill, read on the second
        for f in ids:
            plan = FillPlan(captured=[f], replaced={f: "earlier"} if replaced else {})
            result = fill_result(form, step, plan, "Saved")
            assert result == reported(form, step, plan, "Saved")
            if replaced:
                assert result["replaced"] is not plan.replaced  # a copy, as reported's
    kept: dict[str, tuple[str, str]] = form._one_saved  # type: ignore[attr-defined]
    assert set(kept) == set(ids)
