"""Principals: who a verified identity is, ``sub`` or ``tenant/sub``.

The shell builds the principal from the token's verified claims (``formwork.aws.auth``); the
engine only reads it apart, here, wherever a rule depends on the tenant or the person.
"""

from __future__ import annotations


def tenant_of(principal: str) -> str | None:
    """The tenant part of a principal (``tenant/sub``), or None for a tenant-less one."""
    tenant, slash, _ = principal.partition("/")
    return tenant if slash else None


def subject_of(principal: str) -> str:
    """The person part of a principal (``sub`` of ``tenant/sub``)."""
    return principal.rpartition("/")[2]
