"""Deployment settings, read once from the environment and checked when read.

Every variable the tool API reads is here; nothing else in ``functions/`` touches
``os.environ``. A bad value fails with a ``ConfigError`` that names the variable, what it holds
and what it should hold, so a misconfigured deployment fails its first request loudly instead
of misbehaving quietly.

| variable | meaning | default |
| --- | --- | --- |
| ``TABLE_NAME`` | DynamoDB table of form instances | required to build the DynamoDB store |
| ``DYNAMODB_ENDPOINT_URL`` | local endpoint (moto); unset in AWS | unset |
| ``AWS_REGION`` / ``AWS_DEFAULT_REGION`` | region of the table | ``us-east-1`` |
| ``TENANT_CLAIM`` | JWT claim naming the tenant (principal ``tenant/sub``) | unset |
| ``FORMWORK_FORMS`` | ``module:attr``, a sequence of ``FormDef`` | ``forms.examples:EXAMPLES`` |
| ``FORMWORK_MAX_BODY_BYTES`` | largest request body accepted (bytes) | ``65536`` |
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import NoReturn

DEFAULT_REGION = "us-east-1"
DEFAULT_FORMS = "forms.examples:EXAMPLES"
DEFAULT_MAX_BODY_BYTES = 65536
MAX_BODY_BYTES_LIMIT = 6 * 1024 * 1024
"""Lambda's synchronous payload limit: a larger setting could never be reached."""

_TABLE = re.compile(r"[A-Za-z0-9_.-]{3,255}")
_REGION = re.compile(r"[a-z]{2}(-[a-z]+)+-\d{1,2}")
_CLAIM = re.compile(r"[A-Za-z0-9_:.-]{1,64}")
_FORMS = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*")


class ConfigError(ValueError):
    """An environment variable is missing or holds a value the tool API cannot use."""


@dataclass(frozen=True, slots=True)
class Settings:
    """What the tool API needs from its deployment. Checked on construction."""

    table_name: str | None = None
    dynamodb_endpoint_url: str | None = None
    region: str = DEFAULT_REGION
    tenant_claim: str | None = None
    forms: str = DEFAULT_FORMS
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES

    def __post_init__(self) -> None:
        if self.table_name is not None and not _TABLE.fullmatch(self.table_name):
            _fail("TABLE_NAME", self.table_name, "3-255 characters of letters, digits, _ . -")
        url = self.dynamodb_endpoint_url
        if url is not None and not re.fullmatch(r"https?://[^\s/]+(/\S*)?", url):
            _fail("DYNAMODB_ENDPOINT_URL", url, "an http:// or https:// URL")
        if not _REGION.fullmatch(self.region):
            _fail("AWS_REGION", self.region, "a region name such as us-east-1")
        if self.tenant_claim is not None and not _CLAIM.fullmatch(self.tenant_claim):
            _fail("TENANT_CLAIM", self.tenant_claim, "a claim name (letters, digits, _ : . -)")
        if not _FORMS.fullmatch(self.forms):
            _fail("FORMWORK_FORMS", self.forms, '"package.module:attribute"')
        if (
            isinstance(self.max_body_bytes, bool)
            or not isinstance(self.max_body_bytes, int)
            or not 1 <= self.max_body_bytes <= MAX_BODY_BYTES_LIMIT
        ):
            _fail(
                "FORMWORK_MAX_BODY_BYTES",
                str(self.max_body_bytes),
                f"a whole number of bytes from 1 to {MAX_BODY_BYTES_LIMIT}",
            )

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Settings from ``environ`` (default ``os.environ``); empty values count as unset."""
        env = os.environ if environ is None else environ

        def get(name: str) -> str | None:
            value = env.get(name, "").strip()
            return value or None

        raw_max = get("FORMWORK_MAX_BODY_BYTES")
        max_body = DEFAULT_MAX_BODY_BYTES
        if raw_max is not None:
            if not re.fullmatch(r"\d{1,9}", raw_max):
                _fail("FORMWORK_MAX_BODY_BYTES", raw_max, "a whole number of bytes")
            max_body = int(raw_max)
        return cls(
            table_name=get("TABLE_NAME"),
            dynamodb_endpoint_url=get("DYNAMODB_ENDPOINT_URL"),
            region=get("AWS_REGION") or get("AWS_DEFAULT_REGION") or DEFAULT_REGION,
            tenant_claim=get("TENANT_CLAIM"),
            forms=get("FORMWORK_FORMS") or DEFAULT_FORMS,
            max_body_bytes=max_body,
        )

    def require_table(self) -> str:
        """The table name, or a ``ConfigError`` saying it must be set to use DynamoDB."""
        if self.table_name is None:
            raise ConfigError(
                "TABLE_NAME is not set: the DynamoDB store needs the table's name "
                "(template.yaml sets it to the FormsTable resource)"
            )
        return self.table_name


def _fail(variable: str, value: str, expected: str) -> NoReturn:
    shown = value if len(value) <= 80 else value[:77] + "..."
    raise ConfigError(f"{variable}={shown!r} is not valid: expected {expected}")
