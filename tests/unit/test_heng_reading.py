"""``reading`` takes a value this type read before from the memo at once (without a look at
the revision's kind): held here to the readings taken one by one (``counts``,
``typed_value``, ``field_status``, ``blocking``), on a first read (not memoised) and on a
second (memoised), for every kind of revision, an answer the type refuses, and a field that
applies or not."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from forms import compile_form
from forms.evaluation import blocking, counts, field_status, reading, typed_value
from forms.examples.travel_claim import travel_claim
from forms.instance import Revision

FORM = compile_form(travel_claim)
AT = datetime(2026, 1, 1, tzinfo=UTC)


def one_by_one(field_id: str, applies: bool, revision: Revision | None) -> tuple[object, ...]:
    field = FORM.fields[field_id]
    live = applies and counts(field, revision)
    typed = typed_value(field, revision) if live and revision is not None else None
    status = field_status(field, applies, revision, None)
    return live, typed, status, blocking(field, applies, revision)


CASES = [
    ("destination", None),
    ("destination", Revision(kind="value", value="Lisbon", by="agent", at=AT)),
    ("destination", Revision(kind="value", value="L", by="agent", at=AT)),  # refused: too short
    ("total", Revision(kind="value", value="12.50", by="agent", at=AT)),
    ("purpose", Revision(kind="decline", by="agent", at=AT)),
    ("destination", Revision(kind="decline", by="agent", at=AT)),
    ("destination", Revision(kind="retraction", by="agent", at=AT)),
]


@pytest.mark.parametrize("applies", [True, False])
@pytest.mark.parametrize(("field_id", "revision"), CASES)
def test_reading_is_the_readings_one_by_one_first_and_memoised(
    field_id: str, revision: Revision | None, applies: bool
) -> None:
    field = FORM.fields[field_id]
    # a fresh revision object: its first reading finds nothing memoised, the second does
    fresh = revision.model_copy() if revision is not None else None
    expected = one_by_one(field_id, applies, fresh)
    assert reading(field, applies, fresh) == expected  # first (``_read`` memoises a value)
    assert reading(field, applies, fresh) == expected  # second: from the memo
