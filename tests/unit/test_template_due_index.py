"""The due index (the sweeper's) as template.yaml declares it: the keys the DynamoDB store
writes, a keys-only projection, the same table the local stacks create, and a Query grant on
exactly that index for the sweeper, which no longer scans the table."""

from __future__ import annotations

from typing import Any

from forms.storage.contract import at
from forms.storage.due_contract import entry, with_outbox
from forms.storage.dynamodb import DUE_INDEX, home_item
from formwork.infra.local.dynamodb import load_template, table_definition
from tests.unit.test_template_approval_index import index_grants, table


def test_the_index_is_keyed_on_what_a_due_home_carries_and_projects_keys_only() -> None:
    (index,) = [i for i in table()["GlobalSecondaryIndexes"] if i["IndexName"] == DUE_INDEX]
    keys = [k["AttributeName"] for k in index["KeySchema"]]
    assert keys == ["due_pk", "due_sk"]
    assert index["Projection"] == {"ProjectionType": "KEYS_ONLY"}
    item = home_item(with_outbox("a", entry("a", created=at(1))))
    assert all(key in item and "S" in item[key] for key in keys)
    assert not any(key in home_item(with_outbox("idle")) for key in keys)
    declared = {a["AttributeName"]: a["AttributeType"] for a in table()["AttributeDefinitions"]}
    assert all(declared[key] == "S" for key in keys)
    assert table_definition()["GlobalSecondaryIndexes"] == table()["GlobalSecondaryIndexes"]


def test_the_sweeper_queries_that_index_alone_and_never_scans() -> None:
    assert index_grants("SweeperFunction") == [
        (["dynamodb:Query"], {"Fn::Sub": "${FormsTable.Arn}/index/" + DUE_INDEX})
    ]
    sweeper: dict[str, Any] = load_template()["Resources"]["SweeperFunction"]
    actions = [
        action
        for policy in sweeper["Properties"]["Policies"]
        for statement in policy.get("Statement", [])
        if isinstance(statement, dict)
        for action in statement.get("Action", [])
    ]
    assert "dynamodb:Scan" not in actions


def test_no_other_function_reads_it() -> None:
    for name, resource in load_template()["Resources"].items():
        if resource.get("Type") == "AWS::Serverless::Function" and name != "SweeperFunction":
            assert all("/" + DUE_INDEX not in str(g[1]) for g in index_grants(name)), name
