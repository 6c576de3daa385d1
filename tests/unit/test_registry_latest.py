"""The registry keeps each form's latest version as versions register (not a ``max`` per
call): whatever order they come in, whatever a refused definition tried to add."""

from __future__ import annotations

import pytest

from forms import FormDef, FormRegistry
from forms.errors import InvalidFormDefinition, UnknownForm
from forms.examples.travel_claim import travel_claim
from tests.unit.test_registry import PetV1, _instance, pets_v1, pets_v2


def test_the_latest_version_is_the_highest_whatever_order_they_register_in() -> None:
    for order in ([pets_v1, pets_v2], [pets_v2, pets_v1]):
        registry = FormRegistry(order)
        assert registry.latest("pets").version == 2
        assert registry.find("pets") is registry.latest("pets")
        assert [f.version for f in registry.forms()] == [2]
        for version in (1, 2):  # each instance on the version it pinned, nothing to migrate
            form, chain = registry.for_instance(_instance(form_version=version))
            assert (form.version, chain) == (version, [])


def test_find_is_latest_or_none_and_takes_the_same_spellings() -> None:
    registry = FormRegistry([travel_claim, pets_v1])
    for name in ("travel-claim", "Travel Claim", "travel_claim"):
        assert registry.find(name) is registry.latest(name)
        assert registry.serves(name)
    assert registry.find("expenses") is None
    assert not registry.serves("expenses")
    with pytest.raises(UnknownForm):
        registry.latest("expenses")


def test_forms_keep_registration_order() -> None:
    registry = FormRegistry([travel_claim, pets_v1])
    registry.register(pets_v2)
    assert [(f.id, f.version) for f in registry.forms()] == [("travel-claim", 1), ("pets", 2)]


def test_a_refused_definition_leaves_nothing_behind() -> None:
    registry = FormRegistry([pets_v1])
    lookalike = FormDef(id="pet-s", version=1, title="Lookalike", steps=[PetV1])
    with pytest.raises(InvalidFormDefinition, match="collide"):
        registry.register(lookalike)
    assert registry.latest("pet-s").id == "pets"  # a spelling of the one registered
    assert [f.id for f in registry.forms()] == ["pets"]
    with pytest.raises(UnknownForm) as caught:
        registry.latest("expenses")
    assert caught.value.hint == "forms you can start: pets"
