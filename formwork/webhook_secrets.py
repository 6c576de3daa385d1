"""The webhook routes' secret sources, one direction at a time (``App.secret_source``):
inbound (the signatures of the events Formwork receives) and outbound (what it signs its
notifications with), each from its variable when set, else from Secrets Manager, whose client
(``build_secrets_client``, also the page keys') and boto3 load only when one is first built.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from formwork.config import Settings

if TYPE_CHECKING:
    from formwork.webhook_settings import WebhookSettings
    from formwork.webhooks import Direction, SecretSource

__all__ = ["build_secret_source", "build_secrets_client"]


def build_secrets_client(settings: Settings) -> Any:
    """A boto3 Secrets Manager client (``AWS_ENDPOINT_URL_SECRETS_MANAGER`` points it at a
    local endpoint, as boto3 reads that itself)."""
    import boto3
    from botocore.config import Config

    config = Config(
        retries={"mode": "standard", "max_attempts": 2}, connect_timeout=2, read_timeout=3
    )
    return boto3.client("secretsmanager", region_name=settings.region, config=config)


def build_secret_source(
    settings: Settings, webhooks: WebhookSettings, direction: Direction
) -> SecretSource:
    """One direction's secrets, never the other's: inbound from ``FORMWORK_WEBHOOK_SECRETS``
    when set, else Secrets Manager under the inbound prefix; outbound from
    ``FORMWORK_NOTIFY_SECRETS`` when set, else Secrets Manager under the notify prefix. One
    direction at a time, so neither builds a Secrets Manager client before it needs one."""
    from formwork.webhooks.secrets import SecretsManagerSecrets, StaticSecrets

    if direction == "inbound":
        configured, prefix, what = webhooks.secrets, webhooks.secret_prefix, "webhook"
    else:
        configured, prefix, what = webhooks.notify_secrets, webhooks.notify_prefix, "notify"
    if configured is not None:
        return StaticSecrets(dict(configured))
    return SecretsManagerSecrets(build_secrets_client(settings), prefix, what=what)
