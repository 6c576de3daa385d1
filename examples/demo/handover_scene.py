"""The handover scene: a travel claim that turns out to be an injury claim.

The user starts an expense claim, then says what really happened: they were hurt on the trip,
and the claim they want is for the injury. The agent starts the PI intake ``from`` the travel
claim (``docs/tools.md``, "Handing over to another form"): the claim closes ``handed_over``,
naming the intake, and the intake starts with the user's name already answered (a revision by
``handover`` that says where it came from); the destination has no place in it and is
reported, not carried. The claim can still be read after, whole.
"""

from __future__ import annotations

from formwork.examples.demo.driver import Demo
from formwork.examples.demo.printing import expect


def handover(demo: Demo) -> None:
    demo.section("10. A travel claim handed over to a PI intake, answers carried", "conv-h")
    r = demo.turn(
        "I want to claim for my trip to Porto last week. I'm Rita Sousa.",
        "form_start",
        {"form": "travel-claim", "values": {"full_name": "Rita Sousa", "destination": "Porto"}},
    )
    claim = r["instance"]
    r = demo.turn(
        "Actually, forget the expenses: I slipped on a wet floor at the hotel and hurt my "
        "wrist. That's what I want to claim for.",
        "form_start",
        {
            "form": "pi-intake",
            "from": "travel-claim",
            "values": {
                "incident_type": "premises",
                "description": "Slipped on a wet floor at the hotel",
            },
        },
    )
    expect(r.get("handed_over_from", {}).get("instance") == claim, "the claim handed over")
    expect("carried 1 (full_name)" in str(r.get("summary")), "the name carried across")
    expect("destination" in r.get("not_carried", {}), "the destination reported, not carried")
    expect("[form: pi-intake]" in demo.status(), "the conversation to go on in the PI intake")
    r = demo.turn(
        None,
        "form_read",
        {"form": "pi-intake", "part": "full_name"},
        note="reads where the name came from",
    )
    revisions = r.get("revisions", [])
    expect(revisions and revisions[-1]["by"] == "handover", "a revision by handover")
    expect(
        f"from travel-claim {claim} field full_name" in str(revisions[-1].get("note")),
        "the revision to say where it came from",
    )
    r = demo.turn(
        None,
        "form_read",
        {"form": "travel-claim", "instance": claim},
        note="reads the claim after: closed, handed over, its answers kept",
    )
    expect(r.get("closed") == "handed_over", "the claim closed as handed over")
