"""What every body of the API shares: the identity keys a body may carry and
that are dropped, the deferred build of the models only some routes use, and the error bodies."""

# No ``from __future__ import annotations``: pydantic would compile each string annotation
# back into its type (``typing.ForwardRef``) as the handlers import this module.
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, RootModel, model_validator

IGNORED_IDENTITY_KEYS = frozenset({"principal", "user_id", "userId", "user", "sub", "tenant"})
"""Envelope keys that name a caller. They are dropped, never honoured and never an error:
the principal comes only from the verified token, and a client that sends its user id out of
habit should not be broken by it."""

FORM_ID_PATTERN = r"^[a-z][a-z0-9-]{0,62}$"
"""A form document's id, as a builder path takes it (``forms.documents.model.FormId``; a test
pins the two together)."""

ON_FIRST_USE = ConfigDict(defer_build=True)
"""The config of the models that only the approval, status, webhook, builder, memory and
document routes use, and of the bodies routes only declare (the error bodies): their schemas
are built on first use, not at import. Powertools makes a field of each model a route names
(its request and response fields) on that route's first request, and a field over a deferred
model is deferred too: a model nothing validates or constructs (an error body, which
``formwork.aws.refusals`` writes as JSON itself) is built only when the OpenAPI document is.
So a cold start that serves ``GET /tools`` or a tool call never builds them. The models those
two construct or validate (``ToolCallRequest``, ``ToolList``) are built at import, once:
deferred, the route's field would build one and the model's own first use another."""


class IgnoresIdentity(BaseModel):
    """A request body whose identity keys are dropped, never honoured and never an error.
    Deferred: only its subclasses are ever built, each as its own config says."""

    model_config = ON_FIRST_USE

    @model_validator(mode="before")
    @classmethod
    def _ignore_identity(cls, data: Any) -> Any:
        if isinstance(data, dict):
            return {k: v for k, v in data.items() if k not in IGNORED_IDENTITY_KEYS}
        return data


class ErrorBody(BaseModel):
    model_config = ON_FIRST_USE

    error: str = Field(description="A stable, machine-readable code", examples=["bad_request"])
    message: str = Field(description="What was wrong, for a person or a model to read")


class GatewayError(BaseModel):
    """An answer API Gateway gives itself, before the function runs: its JWT authorizer's
    ``401 {"message": "Unauthorized"}``. HTTP APIs have no gateway responses to reshape it."""

    model_config = ON_FIRST_USE

    message: str = Field(examples=["Unauthorized"])


class Unauthorized(RootModel[Any]):
    """A 401: the function's ``{"error": "unauthorized", ...}``, or API Gateway's own
    ``{"message": "Unauthorized"}`` when its JWT authorizer refused the token."""

    model_config = ON_FIRST_USE

    root: ErrorBody | GatewayError


class OpenApiDocument(RootModel[Any]):
    """The OpenAPI 3.1 document (this one)."""

    model_config = ON_FIRST_USE

    root: dict[str, Any]
