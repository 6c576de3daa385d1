"""Which DynamoDB the local stack runs on: AWS's DynamoDB Local or moto's server
(``formwork.infra.local.stack``'s docstring says how the default is chosen)."""

from __future__ import annotations

import os

from formwork.infra.local.dynamodb import LoopbackServer
from formwork.infra.local.dynamodb_local import DynamoDBLocal, available

DYNAMODB_LOCAL = "dynamodb-local"
MOTO = "moto"
DYNAMODBS = {
    DYNAMODB_LOCAL: "AWS's DynamoDB Local 3.3, in memory",
    MOTO: "moto, served single-threaded",
}
"""The DynamoDBs the stack can run on, and how the banner names each."""
DYNAMODB_VARIABLE = "FORMWORK_LOCAL_DYNAMODB"
"""Names the stack's DynamoDB when ``dynamodb`` is not given (``make demo`` has no option)."""
MOTO_HINT = (
    f"or run the stack on moto's DynamoDB instead: --dynamodb {MOTO} "
    f"({DYNAMODB_VARIABLE}={MOTO} for make demo)"
)


def default_dynamodb() -> str:
    """``FORMWORK_LOCAL_DYNAMODB`` when set, else DynamoDB Local where this checkout ships it
    (``make dynamodb-local`` installs it) and moto from an installed package."""
    named = os.environ.get(DYNAMODB_VARIABLE, "").strip()
    if named:
        return check_dynamodb(named, DYNAMODB_VARIABLE)
    return DYNAMODB_LOCAL if available() else MOTO


def check_dynamodb(kind: str, where: str = "dynamodb") -> str:
    if kind not in DYNAMODBS:
        raise ValueError(f"{where}={kind!r}: choose one of {', '.join(DYNAMODBS)}")
    return kind


def chosen_dynamodb(
    dynamodb: str | LoopbackServer | None,
) -> tuple[LoopbackServer | None, str]:
    """The server given to the stack (None: the stack starts its own) and its kind."""
    if isinstance(dynamodb, LoopbackServer):
        return dynamodb, DYNAMODB_LOCAL if isinstance(dynamodb, DynamoDBLocal) else MOTO
    return None, check_dynamodb(dynamodb) if dynamodb else default_dynamodb()
