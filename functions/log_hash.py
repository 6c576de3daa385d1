"""What the logs carry instead of a caller-chosen id (``log_hash``): an HMAC under
``LOG_HASH_KEY``, so lines correlate within a deployment and a hash cannot be checked against a
guessed id."""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import secrets
from functools import cache

from formwork.config import ConfigError

LOG_HASH_KEY_VARIABLE = "LOG_HASH_KEY"
LOCAL_LOG_HASH_KEY = "formwork-local-log-hash-key"
"""The key outside Lambda when ``LOG_HASH_KEY`` is unset (public: for local logs only)."""
MIN_LOG_HASH_KEY_CHARS = 16

_log = logging.getLogger("formwork.http")


@cache
def _log_hash_key() -> bytes:
    """``LOG_HASH_KEY``; unset: a random key per container in Lambda (hashes then correlate
    within one container only, and a warning says so), the public local key elsewhere."""
    value = os.environ.get(LOG_HASH_KEY_VARIABLE)
    if value:
        if len(value) < MIN_LOG_HASH_KEY_CHARS:
            raise ConfigError(
                f"{LOG_HASH_KEY_VARIABLE} is too short: expected at least "
                f"{MIN_LOG_HASH_KEY_CHARS} characters of secret"
            )
        return value.encode("utf-8")
    if os.environ.get("AWS_LAMBDA_FUNCTION_NAME"):
        _log.warning(
            "%s is not set: ids in the logs are hashed with a key this container made up, so "
            "they correlate within one container only",
            LOG_HASH_KEY_VARIABLE,
        )
        return secrets.token_bytes(32)
    return LOCAL_LOG_HASH_KEY.encode("utf-8")


def log_hash(value: str) -> str:
    """What a log line carries instead of a caller-chosen id (a conversation id, a principal):
    HMAC-SHA256 under ``LOG_HASH_KEY``, 32 hex digits. The same id gives the same hash within a
    deployment, so lines still correlate; without the key, a hash cannot be checked against a
    guessed id (an e-mail address, say)."""
    digest = hmac.new(_log_hash_key(), value.encode("utf-8", "surrogatepass"), hashlib.sha256)
    return digest.hexdigest()[:32]
