"""What ``make dev`` seeds in a local stack for its banner, as data: the demo's tokens, the
instances it starts (``Seed``: ``DEMO_SEEDS``, ``APPROVAL_SEED``), the facts it states
(``MEMORY_FACTS``) and the builder calls that make its draft (``CANVAS_BUILD``), with a link
minted to each (``PageLink``, ``Seeded``). The requests that seed them and mint the links are
``formwork.infra.local.page_link``'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

DEMO_CONVERSATION = "demo"
DEMO_TOKEN = "dev:acme:alice"


@dataclass(frozen=True, slots=True)
class PageLink:
    url: str
    expires_at: datetime


@dataclass(frozen=True, slots=True)
class Seed:
    """A demo instance ``make dev`` starts: ``form`` in ``conversation`` for the dev token
    ``token``, with ``values`` given at its start, under the tool-call id ``call_id`` (so a
    second start in the same stack is a replay, not a second instance)."""

    form: str
    conversation: str
    token: str
    values: dict[str, Any]
    call_id: str


@dataclass(frozen=True, slots=True)
class Seeded:
    """A demo instance and the link minted to its page."""

    seed: Seed
    instance: str
    link: PageLink


DEMO_SEEDS: tuple[Seed, ...] = (
    Seed(
        form="travel-claim",
        conversation=DEMO_CONVERSATION,
        token=DEMO_TOKEN,
        values={
            "full_name": "Alice Martins",
            "destination": "Lisbon",
            "purpose": "client kickoff",
            "mode": "air",
            "flight_number": "TP1234",
        },
        call_id="page-demo-1",
    ),
)
"""One travel claim in the conversation ``demo`` for ``acme/alice``, part way through."""

APPROVER_TOKEN = "dev:acme:bob;roles=finance"
"""The demo approver: ``acme/bob``, holding the ``finance`` role."""
APPROVAL_SEED = Seed(
    form="purchase-request",
    conversation="demo-approval",
    token=DEMO_TOKEN,
    values={"item": "Laser cutter", "supplier": "Acme", "amount": "7200.00"},
    call_id="page-demo-approval-1",
)
"""A purchase request over 5,000 EUR by ``acme/alice``: it waits for finance."""

MEMORY_FACTS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("person.date_of_birth", {"value": "1990-04-02"}),
    ("person.weight_kg", {"words": "70 kg"}),
)
"""Two facts ``acme/alice`` states through ``PUT /memory/facts/{key}`` (as the demo's memory
scene has her say them), so her fact editor has something to show and correct."""

BUILDER_TOKEN = "dev:acme:alice;roles=form_publisher"
"""The person the demo draft is built for: ``acme/alice`` holding the publisher role, so her
canvas offers Publish."""
CANVAS_FORM = "demo-feedback"
CANVAS_CHAT = "dev-canvas"
CANVAS_BUILD: tuple[tuple[str, dict[str, Any]], ...] = (
    (
        "create_form",
        {"title": "Event feedback", "steps": [{"id": "event", "title": "The event"}]},
    ),
    (
        "add_field",
        {
            "step": "event",
            "field": {
                "kind": "integer",
                "id": "rating",
                "label": "Rating",
                "minimum": 1,
                "maximum": 5,
            },
        },
    ),
    (
        "add_field",
        {
            "step": "event",
            "field": {
                "kind": "long_text",
                "id": "comments",
                "label": "Comments",
                "required": False,
            },
        },
    ),
)
"""The builder agent's calls on the draft ``CANVAS_FORM``, in the chat ``CANVAS_CHAT`` under
the ids ``dev-canvas-1``...: a second run in the same stack replays them."""
