"""The approvals index as template.yaml declares it: the keys the DynamoDB store writes, a
keys-only projection, the same table the local stacks create, and a Query grant on exactly
that index for the function serving ``GET /approvals`` (least privilege, but not less)."""

from __future__ import annotations

from typing import Any

from forms.storage.approvals_contract import waiting
from forms.storage.contract import at
from forms.storage.dynamodb import APPROVAL_INDEX, home_item
from formwork.infra.local.dynamodb import load_template, table_definition

INDEX_ARN = {"Fn::Sub": "${FormsTable.Arn}/index/" + APPROVAL_INDEX}


def table() -> dict[str, Any]:
    properties: dict[str, Any] = load_template()["Resources"]["FormsTable"]["Properties"]
    return properties


def test_the_index_is_keyed_on_what_a_home_item_carries_and_projects_keys_only() -> None:
    (index,) = [i for i in table()["GlobalSecondaryIndexes"] if i["IndexName"] == APPROVAL_INDEX]
    keys = [k["AttributeName"] for k in index["KeySchema"]]
    assert [k["KeyType"] for k in index["KeySchema"]] == ["HASH", "RANGE"]
    assert index["Projection"] == {"ProjectionType": "KEYS_ONLY"}
    item = home_item(waiting("w1", deadline=at(60)))
    assert all(key in item and "S" in item[key] for key in keys)
    declared = {a["AttributeName"]: a["AttributeType"] for a in table()["AttributeDefinitions"]}
    assert all(declared[key] == "S" for key in keys)


def test_the_local_stacks_create_the_index_from_the_template() -> None:
    assert table_definition()["GlobalSecondaryIndexes"] == table()["GlobalSecondaryIndexes"]


def index_grants(function: str) -> list[tuple[list[str], Any]]:
    resource = load_template()["Resources"][function]
    grants = []
    for policy in resource["Properties"].get("Policies", []):
        for statement in policy.get("Statement", []) if isinstance(policy, dict) else []:
            listed = statement.get("Action", [])
            actions = [listed] if isinstance(listed, str) else listed
            target = statement.get("Resource")
            if "/index/" in str(target):
                grants.append((actions, target))
    return grants


def test_the_tools_function_may_query_that_index_and_nothing_more() -> None:
    # (and the failed-hook index, tests/unit/test_template_operations.py)
    grants = [g for g in index_grants("ToolsFunction") if "/" + APPROVAL_INDEX in str(g[1])]
    assert grants == [(["dynamodb:Query"], INDEX_ARN)]


def test_no_other_function_reads_an_index() -> None:
    # (but the sweeper, which reads the due index alone: tests/unit/test_template_due_index.py)
    for name, resource in load_template()["Resources"].items():
        if resource.get("Type") == "AWS::Serverless::Function" and name not in (
            "ToolsFunction",
            "SweeperFunction",
        ):
            assert index_grants(name) == [], name
