"""Who the principals are, and what the cases share: helpers to say a fact of alice's and
start alice's form, and alice's health facts with what memory does with them."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from bench.memory_bench.model import (
    DAY,
    Expected,
    Fill,
    Offer,
    Race,
    Said,
    Start,
    ago,
)

ALICE = "acme/alice"
BOB = "acme/bob"
GLOBEX_ALICE = "globex/alice"
DAN = "acme/dan"
ANONYMOUS = ""

PRINCIPALS: dict[str, str] = {
    ALICE: "the main principal: facts of every decay class and age, derived and stated, "
    "corrected, deleted, confirmed; sometimes with memory off",
    BOB: "the same tenant as alice: sometimes facts of his own, never hers",
    GLOBEX_ALICE: "another tenant's user with the same subject as alice: none of her facts",
    DAN: "a principal who never stated anything",
    ANONYMOUS: "an unverified caller: no memory at all",
}

BORN = "1987-06-14"


def said(at: datetime) -> str:
    """What a mark says of a fact stated at ``at``."""
    return f"said {at.date().isoformat()}"


def confirmed(at: datetime) -> str:
    return f"confirmed {at.date().isoformat()}"


def alice_said(
    key: str,
    value: Any = None,
    *,
    at: datetime,
    words: str | None = None,
    valid_from: datetime | None = None,
    valid_until: datetime | None = None,
    correction: bool = False,
    refused: str | None = None,
) -> Said:
    """A statement of alice's through the fact API."""
    return Said(
        key=key,
        value=value,
        words=words,
        at=at,
        who=ALICE,
        valid_from=valid_from,
        valid_until=valid_until,
        correction=correction,
        refused=refused,
    )


def alice(
    form: str = "profile", *, values: Mapping[str, Any] | None = None, race: Race | None = None
) -> Start:
    """Alice's start of ``form``, from her conversation."""
    return Start(who=ALICE, form=form, values=values or {}, race=race)


HEALTH = "health-check"
HEALTH_FACTS = (
    alice_said("person.date_of_birth", BORN, at=ago(400 * DAY)),
    alice_said("person.height_cm", words="5'8\"", at=ago(100 * DAY)),
    alice_said("person.weight_kg", "70", at=ago(10 * DAY)),
)
"""Alice's date of birth, her height in feet and inches, and a recent weight."""
HEALTH_RECALLED: dict[str, Expected] = {
    "date_of_birth": Fill(BORN),
    "height_cm": Fill(173, derived_from="5'8\"", rule="feet_inches_to_cm"),
    "weight_kg": Offer("70"),
}
"""What memory does with ``HEALTH_FACTS`` in an empty health check."""
READ_AND_LIST = ("settings", "heads")
"""A start with memory on: the switch, then every key's head, one request each."""
