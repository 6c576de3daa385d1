"""Example form definitions: realistic forms that together use every engine feature.

* ``travel_claim``: a four-step expense claim with a mode-gated branch and a policy-cap
  checkpoint that rejects (``Fail``) until the total is within policy.
* ``pi_intake``: a personal-injury intake whose triage checkpoint stamps a derived value and
  jumps forward in one firing, and routes back to a completed step (a revisit).
* ``grant_application``: an application whose eligibility checkpoint terminates it as
  ineligible, with a field executor and a form executor returning a reference.
* ``purchase_request``: amounts over 5,000 EUR wait for a finance approver's decision (an
  approval checkpoint); a rejection terminates the request.
* ``health_check``: a check-in whose date of birth, height and weight declare fact keys, so
  memory fills or offers them from what the person said before (``docs/memory.md``).
"""

from forms.definition import FormDef
from forms.examples.grant_application import grant_application
from forms.examples.health_check import health_check
from forms.examples.pi_intake import pi_intake
from forms.examples.purchase_request import purchase_request
from forms.examples.travel_claim import travel_claim

EXAMPLES: tuple[FormDef, ...] = (
    travel_claim,
    pi_intake,
    grant_application,
    purchase_request,
    health_check,
)

__all__ = [
    "EXAMPLES",
    "grant_application",
    "health_check",
    "pi_intake",
    "purchase_request",
    "travel_claim",
]
