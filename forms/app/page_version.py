"""How far an instance has got, for a form page open in a browser to know when to refresh.

The page's script asks about every 700 ms while it is visible (``docs/pages.md``, "Live
updates"); this is what answers, so it is the cheapest read there is: the caller's instance is
located as ``form_read`` and the page locate it (``locate``: one read of the caller's
conversation, so another principal's or another tenant's instance is as unknown as a missing
one), and nothing is settled, migrated or evaluated. The stored version is the instance's
commit counter: every write, by whoever, moves it.
"""

from __future__ import annotations

from dataclasses import dataclass

from forms.app.conversation import Caller, locate
from forms.app.loop import CommitLoop


@dataclass(frozen=True, slots=True)
class PageVersion:
    version: int
    """The instance's commit counter (``FormInstance.version``): the page's ``data-version``."""
    updated_at: str
    """When it last changed (ISO 8601, UTC)."""


def page_version(loop: CommitLoop, caller: Caller, instance_id: str) -> PageVersion:
    """The version of the caller's instance ``instance_id`` (``UnknownInstance`` when the
    caller's conversation holds none)."""
    stored, _ = locate(loop, caller, "", instance_id)
    return PageVersion(stored.version, stored.state.updated_at.isoformat())
