"""This process's App: the one process-wide default, for the entry points that cannot be handed
one.

Lambda calls a module-level function (``formwork.aws.api.lambda_handler``, ...) with nothing but
the event and a context, and a form definition's executor (``formwork.aws.notify.notifier``) is
built before any App exists; they take the App from ``app()``. It is made by
``formwork.bootstrap.bootstrap()`` on first use, from the environment (the settings too are read
on first use, so a bad variable is a 500 on the first request, not an import error), and kept
for the life of the process: a warm Lambda container keeps its boto3 clients and compiled forms.
The Lambda after-response extension (``formwork.aws.after_response.install``) waits for this
App's work behind answers (``App.behind``), the work its handlers' calls leave running.

Nothing else reads it. Code that can be handed an App takes one: each Lambda handler takes an
optional ``app=`` (``formwork.aws.api.lambda_handler(event, context, app=app)``), the worker is
``formwork.temporal.worker.serve(app, ...)``, a notifier takes ``secrets=``; tests hand them theirs.
There is no setter: a process that wants another App passes it.
"""

from __future__ import annotations

import threading
from functools import cache

from formwork.bootstrap import App, bootstrap

_lock = threading.Lock()


@cache
def _made() -> App:
    return bootstrap()


def app() -> App:
    """This process's App, made by ``bootstrap()`` on first use and kept."""
    with _lock:  # one App, however many threads ask first
        return _made()
