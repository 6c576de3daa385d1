"""A webhook request refused, in both of the ways a route answers: not proven
(``SignatureRefused``, 401) or asking for more than its source may do (``NotAllowed``, 403)."""

from __future__ import annotations


class WebhookRefused(Exception):
    """A webhook request refused; ``code`` is stable and machine-readable."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class SignatureRefused(WebhookRefused):
    """The request is not proven to come from the source now (answered with 401)."""


class NotAllowed(WebhookRefused):
    """A proven request asks for more than its source may do (answered with 403)."""
