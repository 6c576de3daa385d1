"""Connecting to Temporal from configuration (``functions.config.TemporalSettings``).

Three shapes, one set of variables:

* local dev server or a self-hosted cluster without TLS: ``TEMPORAL_ADDRESS`` (and
  ``TEMPORAL_NAMESPACE``); nothing else.
* Temporal Cloud with an API key: ``TEMPORAL_ADDRESS`` (the namespace's or the region's
  endpoint), ``TEMPORAL_NAMESPACE`` (``<namespace>.<account>``), ``TEMPORAL_API_KEY``. TLS is
  implied.
* mTLS (Temporal Cloud with certificates, or a self-hosted cluster):
  ``TEMPORAL_TLS_CLIENT_CERT_PATH`` and ``TEMPORAL_TLS_CLIENT_KEY_PATH`` (PEM files), optionally
  ``TEMPORAL_TLS_SERVER_CA_CERT_PATH`` and ``TEMPORAL_TLS_SERVER_NAME``.

The names are those of Temporal's CLI and SDK environment configuration.

A ``Client`` belongs to the event loop it connected on; keep one per process (the worker has
its own; the Lambda functions keep theirs in ``functions.dispatch``).
"""

from __future__ import annotations

from pathlib import Path

from temporalio.client import Client, TLSConfig

from functions.config import ConfigError, TemporalSettings


def tls_config(settings: TemporalSettings) -> bool | TLSConfig:
    """``False`` (plain), ``True`` (TLS, system roots) or a ``TLSConfig`` from the PEM paths."""
    if not settings.uses_tls:
        return False
    if not (settings.tls_cert or settings.tls_ca or settings.tls_server_name):
        return True
    return TLSConfig(
        client_cert=_read(settings.tls_cert, "TEMPORAL_TLS_CLIENT_CERT_PATH"),
        client_private_key=_read(settings.tls_key, "TEMPORAL_TLS_CLIENT_KEY_PATH"),
        server_root_ca_cert=_read(settings.tls_ca, "TEMPORAL_TLS_SERVER_CA_CERT_PATH"),
        domain=settings.tls_server_name,
    )


async def connect(settings: TemporalSettings, *, identity: str | None = None) -> Client:
    """A client for ``settings`` (call it on the loop that will use the client)."""
    return await Client.connect(
        settings.address,
        namespace=settings.namespace,
        api_key=settings.api_key,
        tls=tls_config(settings),
        identity=identity,
    )


def _read(path: str | None, variable: str) -> bytes | None:
    if path is None:
        return None
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise ConfigError(f"{variable}={path!r} cannot be read: {exc}") from exc
