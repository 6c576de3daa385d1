"""An answer is validated once: the engine reads a new answer from what the write validated.

``plan_fill`` validates each value by its field's type (``accept``, or ``validate`` for an
executor) and notes the typed value it got for the revision it appends
(``forms.evaluation.remember_reading``); the engine's first read of that answer takes it from
there instead of validating the stored JSON value again. That is right only if validating the
stored value again gives the same typed value, for every kind of field: checked here over the
fields of every document kind, every example form and the Python types a code form may
declare, against a pool of values in every encoding ``accept`` reads.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Annotated, Any, Literal

import pytest
from pydantic import Field

from forms import compile_form
from forms.compiled import CompiledField
from forms.documents import compile_document
from forms.documents.kinds import FIELD_KINDS, KIND
from forms.documents.model import FormDocument
from forms.evaluation import typed_value
from forms.examples import EXAMPLES
from forms.fill_plans import Author
from forms.instance import FormInstance, InstanceState
from forms.operations import plan_fill
from forms.schema import Accepted, FieldType, field_type

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)

POOL: tuple[Any, ...] = (
    True,
    False,
    0,
    1,
    -3,
    7,
    42,
    10**20,
    2.5,
    12.5,
    0.1,
    1e3,
    "0",
    "1",
    "7",
    "-3",
    "2.5",
    "12.50",
    "0.10",
    "1.000",
    "1e3",
    " 1.5 ",
    "12,5",
    "yes",
    "no",
    "true",
    "false",
    "True",
    "a",
    "b",
    "A",
    "a, b",
    ["a"],
    ["a", "b"],
    ["b", "a"],
    [],
    "2026-03-03",
    "3 March 2026",
    "03/03/2026",
    "2026-03-03T10:00:00Z",
    "2026-03-03T10:00:00+01:00",
    "2026-03-03 10:00",
    "10:30",
    "10:30:00",
    "+351 912 345 678",
    "https://example.com",
    "ada@example.com",
    "Lisbon",
    " x ",
    "\u0661\u0662",
    {"a": 1},
    [1, 2],
    ["1", "2"],
)


def _document_fields() -> list[CompiledField]:
    items: list[dict[str, Any]] = []
    for name in FIELD_KINDS:
        item: dict[str, Any] = {"kind": name, "id": name, "label": name.title()}
        if "options" in KIND[name].model.model_fields:
            item["options"] = [{"value": "a"}, {"value": "b"}]
        items.append(item)
    step = {"id": "s", "title": "S", "items": items}
    document = FormDocument.model_validate({"id": "kinds", "title": "Kinds", "steps": [step]})
    return list(compile_document(document).fields.values())


def _example_fields() -> list[CompiledField]:
    return [f for d in EXAMPLES for f in compile_form(d).fields.values()]


PYTHON_TYPES: tuple[Any, ...] = (
    str,
    int,
    float,
    bool,
    Decimal,
    dt.date,
    dt.datetime,
    dt.time,
    Literal["a", "b"],
    list[Literal["a", "b"]],
    list[str],
    int | None,
    Annotated[int, Field(ge=1, le=10)],
    Annotated[Decimal, Field(max_digits=6, decimal_places=2)],
    Annotated[str, Field(pattern=r"^[A-Z]{2}\d{4}$")],
)


def _types() -> list[tuple[str, FieldType]]:
    found = [(f"{f.id} ({f.type.type_string})", f.type) for f in _document_fields()]
    found += [(f"{f.id} ({f.type.type_string})", f.type) for f in _example_fields()]
    found += [(repr(t), field_type(t)) for t in PYTHON_TYPES]
    return found


def _values(kind: FieldType) -> list[Any]:
    """The pool, with the values this type names: its example, options and bounds."""
    extra: list[Any] = [kind.example] if kind.example is not None else []
    schemas = [kind.json_schema, *kind.json_schema.get("anyOf", ())]
    for schema in [*schemas, *(s["items"] for s in schemas if "items" in s)]:
        options = schema.get("enum", [])
        extra += [*options, [*options], [o.upper() for o in options if isinstance(o, str)]]
        for bound in ("minimum", "maximum"):
            if bound in schema:
                extra += [schema[bound], str(schema[bound])]
    return [*POOL, "AB1234", "ab1234", *extra]


@pytest.mark.parametrize(("name", "kind"), _types(), ids=[n for n, _ in _types()])
def test_an_accepted_value_reads_back_as_the_same_typed_value(name: str, kind: FieldType) -> None:
    accepted = 0
    for raw in _values(kind):
        for outcome in (kind.accept(raw), kind.validate(raw)):
            if not isinstance(outcome, Accepted):
                continue
            accepted += 1
            # WHEN the stored JSON value is validated again, as the engine would
            again = kind.validate(outcome.json_value)
            # THEN it is accepted as the very same typed value, stored the same way
            assert isinstance(again, Accepted), (name, raw)
            assert type(again.typed) is type(outcome.typed), (name, raw)
            assert again.typed == outcome.typed, (name, raw)
            assert repr(again.typed) == repr(outcome.typed), (name, raw)
            assert again.json_value == outcome.json_value, (name, raw)
    assert accepted, f"{name}: no value of the pool is accepted; add one"


def test_the_engine_reads_a_planned_answer_as_a_fresh_validation_would() -> None:
    # GIVEN every example form and a fill of every field with every value of the pool
    for definition in EXAMPLES:
        form = compile_form(definition)
        instance = FormInstance(
            id="fi",
            form_id=form.id,
            form_version=form.version,
            principal="p",
            conversation_id="c",
            created_at=T0,
            state=InstanceState(updated_at=T0),
        )
        for source in ("agent", "executor"):
            author = Author(source=source, actor="p", tool_call_id="t")
            for raw in POOL:
                for field_id in form.fields:
                    plan = plan_fill(form, instance, {field_id: raw}, author, T0)
                    change = plan.changes.get(field_id)
                    if change is None:
                        continue
                    # WHEN the engine reads the new answer
                    revision = change.append[-1]
                    field = form.fields[field_id]
                    read = typed_value(field, revision)
                    # THEN it is what validating the stored value afresh gives
                    fresh = field.type.validate(revision.value)
                    assert isinstance(fresh, Accepted)
                    assert type(read) is type(fresh.typed) and read == fresh.typed
