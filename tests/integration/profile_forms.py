"""A form whose fields declare the context-default keys (locale, time zone, currency), served
by the local stack in ``test_dev_token_claims`` (``FORMWORK_FORMS``)."""

from __future__ import annotations

from forms import FormDef, Step, field


class Profile(Step, title="Profile"):
    name: str = field("Name")
    language: str = field("Language", memory="person.locale")
    zone: str = field("Time zone", memory="person.timezone")
    currency: str = field("Currency", memory="person.currency")


profile = FormDef(id="profile", version=1, title="Profile", steps=[Profile])

FORMS = [profile]
