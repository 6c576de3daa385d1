"""What the compiled form derives once and keeps (``forms.compiled.derived`` and ``keep_on``).

The derived indexes used to be ``functools.cached_property`` values written into the form's
``__dict__``; they are now kept through ``object.__setattr__`` so that the form's attributes
stay in CPython's fast layout. These tests hold what must not change with that: each value is
made once per form, read back as the same object, belongs to its own form, and the form stays
frozen to everyone else.
"""

from __future__ import annotations

import dataclasses

import pytest

from forms.compiled import CompiledForm, derived, keep_on
from forms.compiler import compile_form
from forms.examples.grant_application import grant_application
from forms.examples.travel_claim import travel_claim
from forms.surface.status_line import form_parts
from forms.surface.view import field_texts

DERIVED = sorted(n for n, v in vars(CompiledForm).items() if isinstance(v, derived))


def test_every_derived_index_is_a_derived_descriptor() -> None:
    # GIVEN the compiled form's class
    # THEN its per-form indexes are all kept the fast way (none left as cached_property)
    assert {"step_order", "field_order", "field_hooks", "step_hooks", "hook_position"} <= set(
        DERIVED
    )
    assert not [n for n, v in vars(CompiledForm).items() if type(v).__name__ == "cached_property"]


@pytest.mark.parametrize("name", DERIVED)
def test_a_derived_value_is_made_once_and_kept(name: str) -> None:
    # GIVEN a freshly compiled form
    form = compile_form(travel_claim)
    # WHEN a derived index is read twice
    first, second = getattr(form, name), getattr(form, name)
    # THEN the second read is the value the first one kept, and it equals a fresh derivation
    assert first is second
    assert first == vars(CompiledForm)[name]._make(form)


def test_derived_values_belong_to_their_own_form() -> None:
    # GIVEN two different compiled forms
    travel, grant = compile_form(travel_claim), compile_form(grant_application)
    # WHEN each derives its orders and its surface parts
    # THEN each gets its own, never the other's
    assert travel.field_order == tuple(travel.fields)
    assert grant.field_order == tuple(grant.fields)
    assert travel.field_order != grant.field_order
    assert form_parts(travel) is form_parts(travel)
    assert form_parts(travel) is not form_parts(grant)
    assert set(field_texts(travel)) == set(travel.fields)
    assert set(field_texts(grant)) == set(grant.fields)


def test_the_form_stays_frozen_after_it_keeps_values() -> None:
    # GIVEN a form that has kept derived values
    form = compile_form(travel_claim)
    keep_on(form, "_probe", 1)
    _ = form.step_order
    # WHEN anyone assigns to or deletes one of its fields or kept values
    # THEN the frozen dataclass refuses, as before
    with pytest.raises(dataclasses.FrozenInstanceError):
        form.title = "changed"  # type: ignore[misc]  # the refusal is what is tested
    with pytest.raises(dataclasses.FrozenInstanceError):
        form.step_order = ()
    assert form.title == travel_claim.title
