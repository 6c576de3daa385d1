"""The functions may call every DynamoDB operation the code they run uses (least privilege,
but not less): a missing action only shows up in AWS, on the path that needs it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from infra.local.dynamodb import ROOT, load_template

# boto3 method -> the IAM actions it needs. A transaction is authorised per contained action.
NEEDS = {
    "get_item": {"dynamodb:GetItem"},
    "batch_get_item": {"dynamodb:BatchGetItem"},
    "query": {"dynamodb:Query"},
    "scan": {"dynamodb:Scan"},
    "put_item": {"dynamodb:PutItem"},
    "update_item": {"dynamodb:UpdateItem"},
    "delete_item": {"dynamodb:DeleteItem"},
    "transact_write_items": {
        "dynamodb:PutItem",
        "dynamodb:DeleteItem",
        "dynamodb:ConditionCheckItem",
    },
}
CALL = re.compile(r"_client\.(\w+)\(")


def dynamodb_actions(function: str) -> set[str]:
    resource = load_template()["Resources"][function]
    actions: set[str] = set()
    for policy in resource["Properties"].get("Policies", []):
        if isinstance(policy, dict):
            for statement in policy.get("Statement", []):
                listed = statement.get("Action", [])
                actions.update(a for a in ([listed] if isinstance(listed, str) else listed))
    return {a for a in actions if a.startswith("dynamodb:")}


def needed_by(*paths: str) -> set[str]:
    needed: set[str] = set()
    for path in paths:
        for method in CALL.findall((ROOT / path).read_text()):
            needed |= NEEDS.get(method, set())
    return needed


@pytest.mark.parametrize("function", ["ToolsFunction"])
def test_the_tools_function_may_do_everything_the_store_does(function: str) -> None:
    # GIVEN the DynamoDB calls the store and the webhook delivery log make
    needed = needed_by("forms/storage/dynamodb.py", "functions/webhooks.py")
    assert needed, "no DynamoDB calls found: the scan above is broken"
    # THEN the function's policy grants each of them
    assert needed <= dynamodb_actions(function), needed - dynamodb_actions(function)


def test_no_function_gets_a_wildcard_table_action() -> None:
    for name, resource in load_template()["Resources"].items():
        if resource.get("Type") == "AWS::Serverless::Function":
            assert not any(a.endswith(":*") or a == "*" for a in dynamodb_actions(name)), name


def test_the_scan_finds_the_store_calls() -> None:
    assert Path(ROOT / "forms/storage/dynamodb.py").exists()
    assert {"query", "transact_write_items", "batch_get_item"} <= set(
        CALL.findall((ROOT / "forms/storage/dynamodb.py").read_text())
    )
