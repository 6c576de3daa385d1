"""The forms the memory bench starts: a profile with a field for every storable decay class,
and the example health check (``forms.examples.health_check``) as it ships.

The profile's fields take each key's values as they are, so what the bench measures is the
decay policy and the recall path, not a field's bounds; the health check's bounds (a height
up to 250 cm, a weight with one decimal) are what the cases about a value the field refuses
use.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from pydantic import EmailStr

from forms import FormDef, Step, field
from forms.examples.health_check import health_check


class Person(Step, title="Person"):
    date_of_birth: date = field("Date of birth", memory="person.date_of_birth")  # never
    height_cm: int = field("Height (cm)", memory="person.height_cm")  # years
    weight_kg: Decimal = field("Weight (kg)", memory="person.weight_kg")  # weeks


class Contact(Step, title="Contact"):
    email: EmailStr = field("Email", memory="contact.email")  # years
    city: str = field("City", memory="address.city")  # months


class Work(Step, title="Work"):
    job_title: str = field("Job title", memory="work.job_title")  # steps
    salary: Decimal = field("Salary (yearly)", memory="work.salary")  # steps
    note: str | None = field("Anything else")  # no fact key: memory never touches it


profile = FormDef(
    id="profile",
    version=1,
    title="Profile",
    description="Who the person is, how to reach them, and their work: one field for each "
    "storable decay class.",
    steps=[Person, Contact, Work],
)

FORMS = (profile, health_check)
"""Every form a case may start."""

__all__ = ["FORMS", "health_check", "profile"]
