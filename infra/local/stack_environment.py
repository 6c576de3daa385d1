"""What the local stack's functions (and its hook worker) get in their environment.

The handler's environment, in layers, each over the one before: the template's variables
(its parameters' defaults); the local defaults (``FORMWORK_EXECUTORS=formwork.examples.executors:
EXECUTORS``, what published form documents may run; ``LOG_HASH_KEY``, the public local key;
``FORMWORK_PAGE_KEY``, the public local key page links are signed with (docs/pages.md);
the dev webhook below); the shell's value of every one of those the shell sets (so
``FORMWORK_MEMORY_DEADLINE_MS=500 formwork dev`` takes; variables the template does not name
reach the functions from the shell anyway); then what the stack wires to its own services
and dev tokens, whatever the shell says (``WIRED``): ``TABLE_NAME``,
``DYNAMODB_ENDPOINT_URL``, ``AWS_REGION`` and ``AWS_DEFAULT_REGION``, ``TENANT_CLAIM=tenant``
(so ``Bearer dev:<tenant>:<sub>`` gives the principal ``<tenant>/<sub>``, and
``Bearer dev:<sub>`` ``local/<sub>``), ``ROLES_CLAIM=roles`` (so
``Bearer dev:<sub>;roles=finance`` holds the role ``finance``), dummy credentials, and the
Temporal settings while it runs Temporal. ``environment`` is laid over all of it, so a
caller can point the functions elsewhere (``DYNAMODB_ENDPOINT_URL`` at a proxy in front of
the stack's DynamoDB, say) while the table is still created on the stack's own.
Nothing here changes this process's ``os.environ``.

Webhooks (``local_webhooks``): with no ``FORMWORK_WEBHOOK_SECRETS`` given (by the caller or the
shell), the stack makes a development source ``crm`` with a secret drawn for the run
(``dev_webhook``; ``make dev`` prints it), allowed any tenant and any form. With secrets given
and no ``FORMWORK_WEBHOOK_SOURCES``, each source named there is allowed any tenant and any
form. ``FORMWORK_WEBHOOK_SOURCES`` given is used as it is. A deployment has no such default:
its sources are configured explicitly (``docs/webhooks.md``). The gateway and both DynamoDBs
listen on loopback only, so neither the dev tokens, the dev secret nor the table reach past
this machine.
"""

from __future__ import annotations

import json
import os
from base64 import b64encode
from collections.abc import Mapping, Sequence
from secrets import token_bytes

from formwork.aws.http import LOCAL_LOG_HASH_KEY, LOG_HASH_KEY_VARIABLE
from formwork.aws.pages.access import KEY_VARIABLE as PAGE_KEY_VARIABLE
from formwork.aws.pages.access import LOCAL_PAGE_KEY
from formwork.infra.local.dev_tokens import DEV_ROLES_CLAIM
from formwork.infra.local.temporal import LocalTemporal

REGION = "us-east-1"
TASK_QUEUE = "formwork-hooks"


def handler_environment(
    settings: Sequence[str],
    webhook_environment: Mapping[str, str],
    wired: Mapping[str, str],
    extra: Mapping[str, str],
) -> dict[str, str]:
    """The local defaults, then the shell's value of every one of ``settings`` (the template's
    variables) or of those defaults, then ``wired``, then ``extra`` (``LocalStack.environment``
    says it in full)."""
    defaults = {
        "POWERTOOLS_TRACE_DISABLED": "true",
        LOG_HASH_KEY_VARIABLE: LOCAL_LOG_HASH_KEY,
        PAGE_KEY_VARIABLE: LOCAL_PAGE_KEY,
        "FORMWORK_EXECUTORS": DEV_EXECUTORS,
        **webhook_environment,
    }
    shell = {
        name: os.environ[name]
        for name in (*settings, *defaults)
        if name in os.environ and name not in wired
    }
    return {**defaults, **shell, **wired, **extra}


def wired_environment(
    table_name: str,
    dynamodb_endpoint: str,
    tenant_claim: str,
    log_level: str | None,
    temporal: LocalTemporal | None,
) -> dict[str, str]:
    """The variables the stack sets whatever the shell says (``WIRED`` says why)."""
    wired = {
        "TABLE_NAME": table_name,
        "DYNAMODB_ENDPOINT_URL": dynamodb_endpoint,
        "AWS_REGION": REGION,
        "AWS_DEFAULT_REGION": REGION,
        "TENANT_CLAIM": tenant_claim,
        "ROLES_CLAIM": DEV_ROLES_CLAIM,
        "AWS_ACCESS_KEY_ID": "local",
        "AWS_SECRET_ACCESS_KEY": "local",
        "AWS_SAM_LOCAL": "true",
        **temporal_environment(temporal),
    }
    if log_level:
        wired["POWERTOOLS_LOG_LEVEL"] = log_level
    return wired


def temporal_environment(temporal: LocalTemporal | None) -> dict[str, str]:
    """Dispatch through the local Temporal, when it runs."""
    if temporal is None:
        return {}
    return {
        "FORMWORK_DISPATCH": "temporal",
        "TEMPORAL_ADDRESS": temporal.address,
        "TEMPORAL_NAMESPACE": temporal.namespace,
        "TEMPORAL_TASK_QUEUE": TASK_QUEUE,
    }


WIRED = {
    "TABLE_NAME": "--table",
    "DYNAMODB_ENDPOINT_URL": "the stack's own DynamoDB (--dynamodb, --dynamodb-port)",
    "AWS_REGION": REGION,
    "AWS_DEFAULT_REGION": REGION,
    "TENANT_CLAIM": "the claim a dev token's tenant is in",
    "ROLES_CLAIM": "the claim a dev token's roles are in",
    "AWS_ACCESS_KEY_ID": "dummies: your shell's AWS credentials never reach a local function",
    "AWS_SECRET_ACCESS_KEY": "dummies",
    "AWS_SAM_LOCAL": "true",
    "FORMWORK_DISPATCH": "temporal while the stack runs Temporal (--no-temporal: yours)",
    "TEMPORAL_ADDRESS": "the stack's Temporal (--temporal-port; --no-temporal: yours)",
    "TEMPORAL_NAMESPACE": "the stack's Temporal (--no-temporal: yours)",
    "TEMPORAL_TASK_QUEUE": "the stack's worker's (--no-temporal: yours)",
    "POWERTOOLS_LOG_LEVEL": "--log-level when given, else yours",
}
"""What the stack sets for its own DynamoDB, Temporal and dev tokens, whatever the shell says
(the Temporal ones only while it runs Temporal, the log level only with ``--log-level``), and
what to use instead. Every other setting comes from the shell when set there."""

DEV_EXECUTORS = "formwork.examples.executors:EXECUTORS"
"""The executors published form documents may name on the local stack, unless the shell sets
``FORMWORK_EXECUTORS`` (a deployment has no default: ``Executors`` in the template)."""

DEV_WEBHOOK_SOURCE = "crm"
"""The source ``make dev`` configures when neither webhook secrets nor sources are given."""
ANY_TENANT_OR_FORM = {"tenants": "*", "forms": "*"}


def local_webhooks(given: Mapping[str, str]) -> tuple[dict[str, str], tuple[str, str] | None]:
    """The webhook settings the local functions get on top of ``given`` (the shell's and the
    caller's), and the development ``(source, secret)`` when one was made for this run."""
    added: dict[str, str] = {}
    dev: tuple[str, str] | None = None
    secrets = given.get("FORMWORK_WEBHOOK_SECRETS", "").strip()
    if given.get("FORMWORK_WEBHOOK_SOURCES", "").strip():
        return added, dev
    if not secrets:
        dev = (DEV_WEBHOOK_SOURCE, "whsec_" + b64encode(token_bytes(32)).decode("ascii"))
        secrets = json.dumps({dev[0]: dev[1]})
        added["FORMWORK_WEBHOOK_SECRETS"] = secrets
    try:
        loaded = json.loads(secrets)
    except ValueError:
        loaded = None  # the functions report the malformed variable themselves
    names = sorted(loaded) if isinstance(loaded, dict) else []
    added["FORMWORK_WEBHOOK_SOURCES"] = json.dumps({n: ANY_TENANT_OR_FORM for n in names})
    return added, dev
