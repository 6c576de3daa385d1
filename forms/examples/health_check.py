"""A health check-in whose fields about the person come from memory when it has them.

Date of birth, height and weight declare fact keys (``memory=``). When the form starts for a
principal with memory on, a date of birth they stated once fills its field (it never goes
stale) and is marked as from memory until they confirm it; a height stated within three years
fills too; a weight is never filled silently, only offered for the agent to confirm ("I have
70 kg from September: still right?"), because weight drifts without anyone saying so. Each
answer to these fields is remembered for the next form. The rest of the form is about today
and has nothing to remember.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Annotated, Literal

from pydantic import Field

from forms.definition import FormDef, Step, field


class AboutYou(Step, title="About you", preview="date of birth, height, weight"):
    date_of_birth: date = field(
        "Date of birth", memory="person.date_of_birth", aliases=["DOB", "birth date"]
    )
    height_cm: Annotated[int, Field(ge=50, le=250)] = field(
        "Height (cm)", memory="person.height_cm", ask="in centimetres; convert feet and inches"
    )
    weight_kg: Annotated[Decimal, Field(gt=0, le=400, decimal_places=1)] = field(
        "Weight (kg)", memory="person.weight_kg", ask="in kilograms; convert pounds or stones"
    )


class Today(Step, title="Today", preview="how you feel, anything to raise"):
    feeling: Literal["good", "okay", "unwell"] = field(
        "How you feel today", aliases=["feeling", "how are you"]
    )
    concern: Annotated[str, Field(min_length=3, max_length=1000)] | None = field(
        "Anything to raise", ask="symptoms, worries or questions; optional"
    )


health_check = FormDef(
    id="health-check",
    version=1,
    title="Health check-in",
    description="A short check-in: date of birth, height and weight (from memory when "
    "known), then how the person feels today.",
    steps=[AboutYou, Today],
)
