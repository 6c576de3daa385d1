"""The local stack as the HTTP integration modules start it: on free ports, on the session's
DynamoDB Local, with a table of its own (so modules never see each other's data)."""

from __future__ import annotations

import uuid
from typing import Any

from formwork.infra.local.dynamodb_local import DynamoDBLocal
from formwork.infra.local.stack import LocalStack


def local_stack(dynamodb: DynamoDBLocal, **options: Any) -> LocalStack:
    """A ``LocalStack`` (not started: use it as a context manager) with the API on a free
    port, two execution environments and a fresh table on ``dynamodb``; ``options`` override
    or add to that."""
    settings: dict[str, Any] = {
        "api_port": 0,
        "max_environments": 2,
        "dynamodb": dynamodb,
        "table_name": f"formwork-{uuid.uuid4().hex[:12]}",
    }
    return LocalStack(**{**settings, **options})
