"""The registry: forms by id and version, pinned instances, migrations, form-name resolution."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from forms import (
    Caller,
    FormDef,
    FormInstance,
    FormRegistry,
    FormService,
    InMemoryFormStore,
    InstanceState,
    Migration,
    Step,
    field,
)
from forms.errors import InvalidFormDefinition, UnknownForm, VersionMismatch
from forms.examples.travel_claim import travel_claim
from tests.support import TickingClock, service_for

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
ALICE = Caller("alice", "conv-1")


# --------------------------------------------------------------------------- two versions


class PetV1(Step):
    id = "pet"
    title = "Pet"
    preview = "the pet"

    owner: str = field("Owner")
    microchip: str = field("Microchip number")
    pet_name: str = field("Pet's name")
    weight: int = field("Weight (lb)")


def pounds_to_kg(pounds: Any) -> Any:
    return round(pounds * 0.4536)


def shout(text: Any) -> Any:
    return text.upper()


def same(value: Any) -> Any:
    return value


class PetV2(Step):
    id = "pet"
    title = "Pet"
    preview = "the pet"

    owner: str = field("Owner")
    microchip: str = field("Microchip number")
    animal_name: str = field("Animal's name")
    weight_kg: int = field("Weight (kg)")
    species: str | None = field("Species")


class PetV3(Step):
    id = "pet"
    title = "Pet"
    preview = "the pet"

    owner: str = field("Owner")
    microchip: str = field("Microchip number")
    animal_name: str = field("Animal's name")
    mass_kg: int = field("Mass (kg)")
    species: str | None = field("Species")


pets_v1 = FormDef(id="pets", version=1, title="Pet registration", steps=[PetV1])


class Cat(Step):
    title = "Cat"
    name: str = field("Name")
    indoor: bool = field("Indoor cat")


cats = FormDef(id="cats", version=1, title="Cat registration", steps=[Cat])


def pets_v2_converting(**convert: Callable[[Any], Any]) -> FormDef:
    """Version 2 of pets, migrated from version 1 by renames and these conversions."""
    return FormDef(
        id="pets",
        version=2,
        title="Pet registration",
        steps=[PetV2],
        migrations=[
            Migration(
                1, renames={"pet_name": "animal_name", "weight": "weight_kg"}, convert=convert
            )
        ],
    )


pets_v2 = pets_v2_converting(weight_kg=pounds_to_kg, owner=same)

pets_v2_without_migration = FormDef(id="pets", version=2, title="Pet registration", steps=[PetV2])

pets_v3_chain = FormDef(
    id="pets",
    version=3,
    title="Pet registration",
    steps=[PetV3],
    migrations=[
        Migration(1, renames={"pet_name": "animal_name", "weight": "mass_kg"}),
        Migration(2, convert={"animal_name": shout}),
    ],
)

pets_v3_renames_twice = FormDef(
    id="pets",
    version=3,
    title="Pet registration",
    steps=[PetV3],
    migrations=[
        Migration(1, renames={"pet_name": "animal_name", "weight": "mass_kg"}),
        Migration(2, renames={"weight_kg": "mass_kg"}),
    ],
)

pets_v3_gap = FormDef(
    id="pets",
    version=3,
    title="Pet registration",
    steps=[PetV3],
    migrations=[Migration(2, renames={"weight_kg": "mass_kg"})],
)


class World:
    """One store, and a service per deployment (registry) over it."""

    def __init__(self) -> None:
        self.store = InMemoryFormStore()
        self.clock = TickingClock(T0)
        self.ids = itertools.count(1)
        self.call_ids = itertools.count(1)

    def deploy(self, *definitions: FormDef) -> FormService:
        return service_for(
            *definitions, store=self.store, clock=self.clock, new_id=lambda: f"fi_{next(self.ids)}"
        )

    def call(self, service: FormService, tool: str, **payload: Any) -> dict[str, Any]:
        return service.call(ALICE, tool, f"call-{next(self.call_ids)}", payload)


def started_on_v1(world: World) -> str:
    v1 = world.deploy(pets_v1)
    result = world.call(
        v1, "form_start", form="pets", values={"owner": "Ann", "pet_name": "Rex", "weight": 22}
    )
    assert result["ok"], result
    instance: str = result["instance"]
    return instance


# --------------------------------------------------------------------------- pinning


def test_an_instance_keeps_running_on_its_version_while_it_is_registered() -> None:
    # GIVEN an instance started on v1, and a deployment serving v1 and v2
    world = World()
    instance = started_on_v1(world)
    both = world.deploy(pets_v1, pets_v2)
    # WHEN it is read and written
    read = world.call(both, "form_read", form="pets", part="outline")
    fill = world.call(both, "form_fill", form="pets", values={"weight": 25, "species": "dog"})
    # THEN it is still a v1 instance: v1 fields, v2-only fields unknown
    fields = [f["id"] for f in read["steps"][0]["fields"]]
    assert fields == ["owner", "microchip", "pet_name", "weight"]
    assert fill["summary"] == "Saved 1 (weight); replaced 1 earlier answer; 1 unknown id."
    stored = world.store.get(instance)
    assert stored.form_version == 1
    assert "weight_kg" not in stored.history


def test_new_instances_start_on_the_latest_version() -> None:
    world = World()
    both = world.deploy(pets_v1, pets_v2)
    result = world.call(both, "form_start", form="pets", values={"animal_name": "Rex"})
    assert result["ok"], result
    assert world.store.get(result["instance"]).form_version == 2


def test_registry_hands_back_the_pinned_definition_and_no_migrations() -> None:
    registry = FormRegistry([pets_v1, pets_v2])
    instance = _instance(form_version=1)
    form, chain = registry.for_instance(instance)
    assert (form.version, chain) == (1, [])
    assert registry.latest("pets").version == 2
    assert [f.version for f in registry.forms()] == [2]


# --------------------------------------------------------------------------- migrating


def test_an_instance_whose_version_is_gone_migrates_keeping_every_old_entry() -> None:
    # GIVEN an instance started on v1, then a deployment serving only v2 (with a migration)
    world = World()
    instance = started_on_v1(world)
    before = world.store.get(instance)
    v2 = world.deploy(pets_v2)
    # WHEN the model next touches it
    read = world.call(v2, "form_read", form="pets")
    # THEN it has become a v2 instance
    assert read["ok"], read
    after = world.store.get(instance)
    assert after.form_version == 2
    assert after.version == before.version + 1
    # AND the old logs stay, untouched, under the old ids
    assert after.history["pet_name"] == before.history["pet_name"]
    assert after.history["weight"] == before.history["weight"]
    # AND the new ids carry the in-force value, appended
    weight_kg = after.history["weight_kg"]
    assert [(r.kind, r.value, r.by) for r in weight_kg.revisions] == [("value", 10, "migration")]
    assert weight_kg.cursor == 0
    assert weight_kg.revisions[0].prev == -1
    assert after.history["animal_name"].in_force().value == "Rex"  # type: ignore[union-attr]
    # AND a conversion that changes nothing appends nothing
    assert after.history["owner"] == before.history["owner"]
    # AND the read shows v2's fields with the migrated values
    values = {f["id"]: f.get("value") for f in read["fields"]}
    assert values == {
        "owner": "Ann",
        "microchip": None,
        "animal_name": "Rex",
        "weight_kg": 10,
        "species": None,
    }


def test_a_renamed_value_is_appended_with_migration_provenance() -> None:
    world = World()
    instance = started_on_v1(world)
    world.call(world.deploy(pets_v2), "form_read", form="pets")
    animal_name = world.store.get(instance).history["animal_name"]
    assert [(r.value, r.by) for r in animal_name.revisions] == [("Rex", "migration")]


def test_migrated_instances_take_writes_on_the_new_version() -> None:
    world = World()
    instance = started_on_v1(world)
    v2 = world.deploy(pets_v2)
    fill = world.call(v2, "form_fill", form="pets", values={"species": "dog", "Weight (kg)": 11})
    assert fill["summary"] == "Saved 2 (species, weight_kg); replaced 1 earlier answer."
    stored = world.store.get(instance)
    assert stored.form_version == 2
    assert [r.value for r in stored.history["weight_kg"].revisions] == [10, 11]


def test_migrations_chain_across_versions() -> None:
    # GIVEN a v1 instance and a deployment serving only v3, which migrates 1 -> 2 -> 3
    world = World()
    instance = started_on_v1(world)
    result = world.call(world.deploy(pets_v3_chain), "form_read", form="pets", part="outline")
    # THEN both steps of the chain applied
    assert result["ok"], result
    stored = world.store.get(instance)
    assert stored.form_version == 3
    assert stored.history["mass_kg"].in_force().value == 22  # type: ignore[union-attr]
    renamed = stored.history["animal_name"].in_force()
    assert (renamed.value, renamed.by) == ("REX", "migration")  # type: ignore[union-attr]
    assert "weight_kg" not in stored.history


def test_a_later_rename_in_a_chain_does_not_drop_an_earlier_value() -> None:
    # GIVEN a v1 instance; v3 renames weight -> mass_kg (from 1) and weight_kg -> mass_kg (from 2)
    world = World()
    instance = started_on_v1(world)
    world.call(world.deploy(pets_v3_renames_twice), "form_read", form="pets")
    # THEN the v1 weight reaches mass_kg
    stored = world.store.get(instance)
    assert stored.form_version == 3
    assert stored.field("mass_kg").in_force() is not None


def test_without_a_migration_the_instance_reports_a_version_mismatch() -> None:
    # GIVEN a v1 instance and a deployment whose v2 has no migration from 1
    world = World()
    instance = started_on_v1(world)
    before = world.store.get(instance)
    v2 = world.deploy(pets_v2_without_migration)
    # WHEN the model reads or writes it
    calls: list[tuple[str, dict[str, Any]]] = [
        ("form_read", {"form": "pets"}),
        ("form_fill", {"form": "pets", "values": {"owner": "Bob"}}),
    ]
    for tool, payload in calls:
        result = world.call(v2, tool, **payload)
        # THEN it gets version_mismatch as data, and nothing is stored
        assert result["ok"] is False
        assert result["error"] == "version_mismatch"
        assert "version 1" in result["message"]
        assert result["hint"] == "abandon this instance and start the form again"
    assert world.store.get(instance) == before


def test_a_stranded_instance_does_not_break_the_other_status_lines() -> None:
    # GIVEN a v1 pets instance and a travel claim, then a deployment without a pets migration
    world = World()
    started_on_v1(world)
    world.call(world.deploy(travel_claim), "form_start", form="travel-claim")
    service = world.deploy(pets_v2_without_migration, travel_claim)
    # WHEN the system prompt asks for the status lines
    lines = service.status(ALICE)
    # THEN the travel claim's line is still there
    assert any(line.startswith("[form: travel-claim]") for line in lines)


def test_a_gap_in_the_migration_chain_is_a_version_mismatch() -> None:
    world = World()
    started_on_v1(world)
    result = world.call(world.deploy(pets_v3_gap), "form_read", form="pets")
    assert result["error"] == "version_mismatch"
    assert "no migration from version 1" in result["message"]


def test_an_instance_newer_than_the_deployment_is_a_version_mismatch() -> None:
    registry = FormRegistry([pets_v1])
    with pytest.raises(VersionMismatch, match="newer than") as caught:
        registry.for_instance(_instance(form_version=2))
    assert caught.value.hint == "retry later: a newer deployment is rolling out"


def test_an_instance_of_a_form_no_longer_served() -> None:
    with pytest.raises(UnknownForm, match="no longer served"):
        FormRegistry([travel_claim]).for_instance(_instance(form_version=1))


# --------------------------------------------------------------------------- names


@pytest.mark.parametrize(
    "spelling", ["travel-claim", "Travel Claim", "travel_claim", "TravelClaim", " TRAVEL-CLAIM "]
)
def test_form_names_resolve_through_the_alias_index(spelling: str) -> None:
    assert FormRegistry([travel_claim]).latest(spelling).id == "travel-claim"


def test_a_form_can_be_started_by_a_spelling_of_its_id() -> None:
    world = World()
    service = world.deploy(travel_claim)
    result = world.call(service, "form_start", form="Travel Claim")
    assert result["ok"], result
    assert world.store.get(result["instance"]).form_id == "travel-claim"
    assert world.call(service, "form_read", form="travel_claim")["form"] == "travel-claim"


def test_an_unknown_form_lists_the_forms_you_can_start() -> None:
    with pytest.raises(UnknownForm) as caught:
        FormRegistry([travel_claim, pets_v1]).latest("expenses")
    assert caught.value.hint == "forms you can start: travel-claim, pets"
    with pytest.raises(UnknownForm) as empty:
        FormRegistry().latest("anything")
    assert empty.value.hint == "forms you can start: none"


def test_registering_compiles_and_rejects_clashes() -> None:
    registry = FormRegistry([pets_v1])
    # the same definition again is fine
    assert registry.register(pets_v1) is registry.latest("pets")
    # a different definition under the same id and version is not
    clash = FormDef(id="pets", version=1, title="Other pets", steps=[PetV2])
    with pytest.raises(InvalidFormDefinition, match="version 1 is registered twice"):
        registry.register(clash)
    # nor an id that collides with another once normalised
    lookalike = FormDef(id="pet-s", version=1, title="Lookalike", steps=[PetV1])
    with pytest.raises(InvalidFormDefinition, match="'pets' and 'pet-s' collide"):
        registry.register(lookalike)


def _instance(form_version: int) -> FormInstance:
    return FormInstance(
        id="fi_x",
        form_id="pets",
        form_version=form_version,
        principal="alice",
        conversation_id="conv-1",
        created_at=T0,
        state=InstanceState(updated_at=T0),
    )


# --------------------------------------------------------------------------- failed migrations


def _forty(value: Any) -> Any:
    return "FORTY"


def _boom(value: Any) -> Any:
    raise RuntimeError("bad conversion")


@pytest.mark.parametrize("convert", [_forty, _boom], ids=["wrong-type", "raises"])
def test_a_failing_migration_leaves_the_instance_as_it_was_with_a_clear_error(
    convert: Any,
) -> None:
    # GIVEN an instance on v1, a second form in the same conversation, and a v2 whose
    # conversion of weight fails (a string for an int field, or an exception)
    world = World()
    instance = started_on_v1(world)
    before = world.store.get(instance)
    other = world.deploy(pets_v1, cats)
    world.call(other, "form_start", form="cats", values={"name": "Tom"})
    broken = world.deploy(pets_v2_converting(weight_kg=convert), cats)
    # WHEN the pets instance is used under v2
    fill = world.call(broken, "form_fill", form="pets", values={"species": "dog"})
    read = world.call(broken, "form_read", form="pets")
    # THEN each call is refused as data with a clear error, and nothing changed
    for result in (fill, read):
        assert (result["ok"], result["error"]) == (False, "migration_failed"), result
        assert "weight_kg" in result["message"]
    assert world.store.get(instance) == before
    # AND the status lines still come, the broken instance marked unavailable
    lines = broken.status(ALICE)
    assert any("pets" in line and "unavailable" in line for line in lines)
    assert any(line.startswith("[form: cats]") for line in lines)
    # AND the rest of the conversation keeps working
    assert world.call(broken, "form_fill", form="cats", values={"name": "Tim"})["ok"]


@pytest.mark.parametrize("spelling", ["travel_claim", "Travel-Claim", "travelClaim"])
def test_a_started_form_is_found_by_a_spelling_of_its_id_when_written(spelling: str) -> None:
    # GIVEN a travel claim started under its kebab-case id
    world = World()
    service = world.deploy(travel_claim)
    assert world.call(service, "form_start", form="travel-claim")["ok"]
    # WHEN the model writes to it naming the form in another spelling
    result = world.call(service, "form_fill", form=spelling, values={"full_name": "Ana Ferreira"})
    # THEN the write lands on the started instance
    assert result["ok"] and result["summary"].startswith("Saved 1 (full_name)"), result
