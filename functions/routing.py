"""What the tool API's route modules share: its Logger, Metrics and Tracer, and the App a
request is served by.

``lambda_handler`` (``functions.api``) puts the request's App in the resolver's context
(``append_context``, which Powertools clears after every request); a route reads it with
``request_app(router.context)``, where ``router`` is its module's Powertools ``Router`` (its
context is the resolver's once included) or the resolver itself.
"""

import os
from collections.abc import Mapping
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer

from formwork.bootstrap import App

SERVICE = os.getenv("POWERTOOLS_SERVICE_NAME") or "formwork"
NAMESPACE = os.getenv("POWERTOOLS_METRICS_NAMESPACE") or "Formwork"

logger = Logger(service=SERVICE)
metrics = Metrics(namespace=NAMESPACE, service=SERVICE)
tracer = Tracer(service=SERVICE)

APP_KEY = "app"
"""The key of the request's App in the resolver's context."""


def request_app(context: Mapping[str, Any]) -> App:
    """The App serving this request, from the resolver's (or an included router's) context."""
    found = context[APP_KEY]
    assert isinstance(found, App)
    return found


def log_rejection(status: int, code: str) -> None:
    logger.info("request refused", extra={"status": status, "error": code})
