"""Executors a published form document may name (``FORMWORK_EXECUTORS``), for the local stack.

A form document is data, so it cannot carry code; a checkpoint's ``run`` action or a field's
``on_fill`` names an executor instead, and the deployment provides the names it allows as a
mapping in Python. ``make dev`` and ``formwork demo`` point ``FORMWORK_EXECUTORS`` here
(``formwork.examples.executors:EXECUTORS``) unless the shell sets it; a deployment sets its own
(``docs/form-documents.md``).

``notify_recruiter`` is what the demo's job application runs when an applicant needs visa
sponsorship. It stands for an outbound notification: it logs one structured line with the
idempotency key (a real one would send it, with the key as the receiver's deduplication key,
since an executor runs at least once) and changes nothing on the form.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from forms.definition import Executor
from forms.state import HookContext

__all__ = ["EXECUTORS", "notify_recruiter"]

_log = logging.getLogger(__name__)


def notify_recruiter(context: HookContext) -> None:
    """Tell the recruiting team an applicant needs sponsorship (here: one log line)."""
    _log.info(
        "recruiter notified",
        extra={
            "idempotency_key": context.key,
            "form": context.form_id,
            "instance": context.instance_id,
            "position": context.answers.get("position"),
        },
    )


EXECUTORS: Mapping[str, Executor] = {"notify_recruiter": notify_recruiter}
"""Executor name -> executor, as ``FORMWORK_EXECUTORS`` names it."""
