"""The forms the worker artifact's test ships in the artifact (``FORMS_SOURCE``), as a team
ships its own: one executor, whose effect shows the worker ran it."""

from __future__ import annotations

from forms import FormDef, HookContext, Patch, Step, field


def stamp(ctx: HookContext) -> Patch:
    return Patch({"receipt": f"R-{ctx.key}"})


class Claim(Step):
    title = "Claim"
    amount: int = field("Amount", on_fill=stamp)
    receipt: str | None = field("Receipt")


FORMS = [FormDef(id="artifact-claim", version=1, title="Artifact claim", steps=[Claim])]
