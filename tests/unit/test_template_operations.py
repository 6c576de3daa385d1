"""Operations as template.yaml declares them: alarms on what the code emits (names, namespace
and dimension held to the code), all sent to one topic; a dashboard that parses; the API's
JSON access log; data kept when the stack goes (table, logs) and point-in-time recovery; the
failed-hook index and the operator routes, with exactly the grants they need."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from forms import Caller, FormDef, Step
from forms import field as form_field
from forms.app.hooks import HOOK_FAILED
from forms.storage.dynamodb import FAILED_HOOK_INDEX, OPEN_FORM_INDEX, home_item
from forms.storage.failed_hooks_contract import broken
from formwork.aws.relay import APPROVALS_OVERDUE
from formwork.config import Settings
from formwork.infra.local.dynamodb import load_template, table_definition
from formwork.worker import worker_app
from tests.support import service_for


def resources(kind: str) -> dict[str, dict[str, Any]]:
    return {n: r for n, r in load_template()["Resources"].items() if r["Type"] == kind}


ALARMS = {
    "Api5xxAlarm": ("AWS/ApiGateway", "5xx"),
    "ApiLatencyAlarm": ("AWS/ApiGateway", "Latency"),
    "RelayFailuresAlarm": ("AWS/SQS", "ApproximateNumberOfMessagesVisible"),
    "RelayIteratorAgeAlarm": ("AWS/Lambda", "IteratorAge"),
    "HooksFailedAlarm": ("Formwork", HOOK_FAILED),
    "ApprovalsOverdueAlarm": ("Formwork", APPROVALS_OVERDUE),
    "ApiThrottlesAlarm": ("AWS/Lambda", "Throttles"),
    "WorkerBacklogAlarm": ("Formwork", "BacklogPerWorker"),
}


def test_each_alarm_watches_its_metric_and_tells_the_alarm_topic() -> None:
    alarms = resources("AWS::CloudWatch::Alarm")
    assert set(ALARMS) | {"TableThrottlesAlarm"} <= set(alarms)
    for name, (namespace, metric) in ALARMS.items():
        properties = alarms[name]["Properties"]
        assert (properties["Namespace"], properties["MetricName"]) == (namespace, metric), name
    for name, alarm in alarms.items():
        assert alarm["Properties"]["AlarmActions"] == [{"Ref": "AlarmTopic"}], name
        assert alarm["Properties"]["TreatMissingData"] == "notBreaching", name


def test_the_codes_own_metrics_are_watched_under_the_namespace_and_service_it_writes() -> None:
    template = load_template()
    environment = template["Globals"]["Function"]["Environment"]["Variables"]
    alarms = resources("AWS::CloudWatch::Alarm")
    for name in ("HooksFailedAlarm", "ApprovalsOverdueAlarm"):
        properties = alarms[name]["Properties"]
        # Powertools writes the metric in its namespace with the service as its one dimension
        assert properties["Namespace"] == environment["POWERTOOLS_METRICS_NAMESPACE"]
        assert properties["Dimensions"] == [
            {"Name": "service", "Value": environment["POWERTOOLS_SERVICE_NAME"]}
        ]


def test_throttles_of_the_table_are_read_and_write_events_summed() -> None:
    properties = resources("AWS::CloudWatch::Alarm")["TableThrottlesAlarm"]["Properties"]
    names = {
        m["MetricStat"]["Metric"]["MetricName"] for m in properties["Metrics"] if "MetricStat" in m
    }
    assert names == {"ReadThrottleEvents", "WriteThrottleEvents"}
    (shown,) = [m for m in properties["Metrics"] if m["ReturnData"]]
    assert "reads" in shown["Expression"] and "writes" in shown["Expression"]


def test_an_alarm_email_is_subscribed_only_when_given() -> None:
    template = load_template()
    subscription = template["Resources"]["AlarmEmailSubscription"]
    assert subscription["Condition"] == "HasAlarmEmail"
    assert subscription["Properties"]["Protocol"] == "email"
    assert template["Parameters"]["AlarmEmail"]["Default"] == ""
    pattern = template["Parameters"]["AlarmEmail"]["AllowedPattern"]
    assert re.fullmatch(pattern, "") and re.fullmatch(pattern, "ops@example.com")
    assert not re.fullmatch(pattern, "not an address")


def test_the_dashboard_is_json_naming_only_what_the_stack_has() -> None:
    template = load_template()
    body = template["Resources"]["OperationsDashboard"]["Properties"]["DashboardBody"]["Fn::Sub"]
    named = set(re.findall(r"\$\{([^}]+)\}", body))
    widgets = json.loads(re.sub(r"\$\{[^}]+\}", "x", body))["widgets"]
    assert len(widgets) >= 6
    for reference in named:
        resource = reference.split(".")[0]
        known = template["Resources"].keys() | template["Parameters"].keys()
        assert resource.startswith("AWS::") or resource in known, reference
        if resource in template["Resources"]:  # never one that may not exist
            assert "Condition" not in template["Resources"][resource], reference
    (alarm_widget,) = [w for w in widgets if w["type"] == "alarm"]
    # every alarm but the worker's, which exists only with DispatchMode=temporal (a dashboard
    # cannot name a resource that may not exist); its metric has a widget of its own
    always = [n for n, a in resources("AWS::CloudWatch::Alarm").items() if "Condition" not in a]
    assert len(alarm_widget["properties"]["alarms"]) == len(always)
    assert "BacklogPerWorker" in body


def test_the_api_writes_a_json_access_log_without_headers_bodies_or_claims() -> None:
    template = load_template()
    settings = template["Resources"]["ToolsApi"]["Properties"]["AccessLogSettings"]
    assert settings["DestinationArn"] == {"Fn::GetAtt": "ApiAccessLogGroup.Arn"}
    line = json.loads(settings["Format"])
    assert {"requestId", "routeKey", "status", "latencyMs"} <= set(line)
    variables = " ".join(line.values())
    assert "header" not in variables and "body" not in variables and "claims" not in variables
    assert "rawPath" not in variables and "path" not in variables  # a path may name a key


def test_where_data_lives_it_outlives_the_stack() -> None:
    template = load_template()
    table = template["Resources"]["FormsTable"]
    assert table["DeletionPolicy"] == table["UpdateReplacePolicy"] == "Retain"
    assert table["Properties"]["PointInTimeRecoverySpecification"] == {
        "PointInTimeRecoveryEnabled": True
    }
    groups = resources("AWS::Logs::LogGroup")
    assert "ApiAccessLogGroup" in groups
    for name, group in groups.items():
        assert group["DeletionPolicy"] == group["UpdateReplacePolicy"] == "Retain", name
        assert group["Properties"]["RetentionInDays"] == {"Ref": "LogRetentionDays"}, name


# ---------------------------------------------------------------------------- operator routes


def test_the_operator_indexes_are_keyed_on_what_a_home_carries_and_project_keys_only() -> None:
    indexes = load_template()["Resources"]["FormsTable"]["Properties"]["GlobalSecondaryIndexes"]
    item = home_item(broken("b1"))  # a failed hook, on an open form
    for name in (FAILED_HOOK_INDEX, OPEN_FORM_INDEX):
        (index,) = [i for i in indexes if i["IndexName"] == name]
        assert index["Projection"] == {"ProjectionType": "KEYS_ONLY"}
        assert all(k["AttributeName"] in item for k in index["KeySchema"])
    assert table_definition()["GlobalSecondaryIndexes"] == indexes


def statements(function: str) -> list[dict[str, Any]]:
    resource = load_template()["Resources"][function]
    found = []
    for policy in resource["Properties"].get("Policies", []):
        for statement in policy.get("Statement", []) if isinstance(policy, dict) else []:
            if "Fn::If" not in statement:
                found.append(statement)
    return found


def actions(statement: dict[str, Any]) -> list[str]:
    listed = statement.get("Action", [])
    return [listed] if isinstance(listed, str) else list(listed)


def test_the_tools_function_may_do_what_the_operator_routes_do_and_no_more() -> None:
    tools = statements("ToolsFunction")
    for name in (FAILED_HOOK_INDEX, OPEN_FORM_INDEX):
        index = {"Fn::Sub": "${FormsTable.Arn}/index/" + name}
        assert {"Action": ["dynamodb:Query"], "Effect": "Allow", "Resource": index} in tools
    sqs = [s for s in tools if any(a.startswith("sqs:") for a in actions(s))]
    assert sqs == [
        {
            "Effect": "Allow",
            "Action": ["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"],
            "Resource": {"Fn::GetAtt": "RelayFailures.Arn"},
        }
    ]
    invoke = [s for s in tools if any(a.startswith("lambda:") for a in actions(s))]
    assert invoke == [
        {
            "Effect": "Allow",
            "Action": ["lambda:InvokeFunction"],
            "Resource": {"Fn::GetAtt": "SweeperFunction.Arn"},
        }
    ]
    # AND the code calls exactly those SQS and Lambda operations
    from pathlib import Path

    code = Path("formwork/relay_failures.py").read_text()
    called = set(re.findall(r"_client\.(\w+)\(", code))
    assert called == {
        "get_queue_attributes",
        "receive_message",
        "delete_message_batch",
        "invoke",
    }  # DeleteMessageBatch is authorised as sqs:DeleteMessage


def test_no_other_function_reads_the_failure_queue_or_starts_the_sweeper() -> None:
    for name, resource in load_template()["Resources"].items():
        if resource["Type"] != "AWS::Serverless::Function" or name == "ToolsFunction":
            continue
        granted = {a for s in statements(name) for a in actions(s)}
        assert not granted & {"sqs:ReceiveMessage", "sqs:DeleteMessage", "lambda:InvokeFunction"}


def test_every_operator_route_is_declared_behind_the_jwt() -> None:
    from formwork.aws.api import openapi_json

    document = json.loads(openapi_json())
    operations = {
        f"{method.upper()} {path}"
        for path, item in document["paths"].items()
        if path.startswith("/operator/")
        for method in item
    }
    assert len(operations) == 5
    events = load_template()["Resources"]["ToolsFunction"]["Properties"]["Events"]
    declared = {
        f"{e['Properties']['Method']} {e['Properties']['Path']}": e["Properties"]
        for e in events.values()
        if e["Type"] == "HttpApi"
    }
    assert operations <= set(declared), operations - set(declared)
    assert all("Auth" not in declared[op] for op in operations)  # the default: the JWT


def test_the_operator_settings_come_from_parameters_whose_defaults_are_the_settings() -> None:
    from formwork.config import Settings

    template = load_template()
    env = template["Resources"]["ToolsFunction"]["Properties"]["Environment"]["Variables"]
    parameters = template["Parameters"]
    settings = Settings.from_env({})
    assert env["FORMWORK_OPERATOR_ROLE"] == {"Ref": "OperatorRole"}
    assert parameters["OperatorRole"]["Default"] == settings.operator_role
    assert env["FORMWORK_PLATFORM_TENANT"] == {"Ref": "PlatformTenant"}
    assert parameters["PlatformTenant"]["Default"] == "" and settings.platform_tenant is None
    assert env["FORMWORK_RELAY_FAILURES_URL"] == {"Ref": "RelayFailures"}
    assert env["FORMWORK_SWEEPER_FUNCTION"] == {"Ref": "SweeperFunction"}


def test_the_worker_backlog_alarm_watches_what_the_worker_scales_on() -> None:
    template = load_template()
    alarm = template["Resources"]["WorkerBacklogAlarm"]
    assert alarm["Condition"] == "DeploysWorker"
    scaling = template["Resources"]["WorkerBacklogScaling"]["Properties"]
    metric = scaling["TargetTrackingScalingPolicyConfiguration"]["CustomizedMetricSpecification"]
    properties = alarm["Properties"]
    assert (properties["Namespace"], properties["MetricName"]) == (
        metric["Namespace"],
        metric["MetricName"],
    )
    assert properties["Dimensions"] == metric["Dimensions"]


def test_the_workers_task_role_may_query_the_open_form_index_for_a_migration() -> None:
    role = load_template()["Resources"]["WorkerTaskRole"]["Properties"]["Policies"][0]
    statements = role["PolicyDocument"]["Statement"]
    index = {"Fn::Sub": "${FormsTable.Arn}/index/" + OPEN_FORM_INDEX}
    assert {"Effect": "Allow", "Action": ["dynamodb:Query"], "Resource": index} in statements
    assert [s for s in statements if "/index/" in str(s.get("Resource"))] == [
        {"Effect": "Allow", "Action": ["dynamodb:Query"], "Resource": index}
    ]


# ---------------------------------------------------------------------------- the worker's log

JSON_TERM = re.compile(r'\$((?:\.[A-Za-z_][A-Za-z0-9_]*|\[\d+\])+)\s*=\s*"([^"*]*)"')
"""One ``$.selector = "value"`` term of a CloudWatch Logs JSON filter pattern."""


def filter_matches(pattern: str, line: str) -> bool:
    """Whether CloudWatch Logs' JSON filter ``pattern`` matches log event ``line``: the subset
    the template uses, ``{ term && term ... }`` with each term an exact string comparison on
    a selector of object fields and array indexes (a missing field does not match)."""
    body = pattern.strip()
    assert body.startswith("{") and body.endswith("}"), pattern
    terms = [t.strip() for t in body[1:-1].split("&&")]
    try:
        event: Any = json.loads(line)
    except ValueError:
        return False
    for term in terms:
        found = JSON_TERM.fullmatch(term)
        assert found, f"not a term this check reads: {term!r}"
        value: Any = event
        for step in re.findall(r"\.([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]", found.group(1)):
            name, index = step
            if name and isinstance(value, dict) and name in value:
                value = value[name]
            elif index and isinstance(value, list) and int(index) < len(value):
                value = value[int(index)]
            else:
                return False
        if value != found.group(2):
            return False
    return True


def worker_log_environment() -> dict[str, Any]:
    task = resources("AWS::ECS::TaskDefinition")["WorkerTaskDefinition"]["Properties"]
    (worker,) = [c for c in task["ContainerDefinitions"] if c["Name"] == "worker"]
    return {e["Name"]: e["Value"] for e in worker["Environment"]}


def always_down(ctx: Any) -> None:
    raise RuntimeError("the ledger is down")


class Ledger(Step):
    title = "Ledger"
    reference: str = form_field("Reference", on_fill=always_down)


LEDGER = FormDef(id="ledger-entry", version=1, title="Ledger entry", steps=[Ledger])


def test_a_hook_failed_for_good_on_the_worker_counts_into_the_metric_its_alarm_reads(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN the worker's environment as its task definition sets it, and the count its service
    # is built with (formwork.worker.worker_app)
    environment = worker_log_environment()
    for name in ("POWERTOOLS_SERVICE_NAME", "POWERTOOLS_METRICS_NAMESPACE"):
        monkeypatch.setenv(name, environment[name])
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    count = worker_app(Settings(table_name="forms")).service.count
    assert count is not None
    # WHEN a hook fails for good in a service counting with it (its last attempt)
    service = service_for(LEDGER, dispatch=False, count=count)
    started = service.call(Caller("acme/ana", "c1"), "form_start", "s", {"form": LEDGER.id})
    filled = service.call(
        Caller("acme/ana", "c1"),
        "form_fill",
        "f",
        {"form": LEDGER.id, "values": {"reference": "X"}},
    )
    (key,) = filled["fired"]
    capsys.readouterr()
    service.run_hook(started["instance"], key, max_attempts=1)
    assert service.store.get(started["instance"]).state.outbox[key].status == "failed"
    lines = capsys.readouterr().out.splitlines()

    # THEN the worker log group's metric filter matches the one line it wrote, and nothing
    # else it wrote, and counts it into the alarm's metric, namespace and dimension
    metric_filter = resources("AWS::Logs::MetricFilter")["WorkerHooksFailedFilter"]
    properties = metric_filter["Properties"]
    assert metric_filter["Condition"] == "DeploysWorker"
    assert properties["LogGroupName"] == {"Ref": "WorkerLogGroup"}
    matched = [line for line in lines if filter_matches(properties["FilterPattern"], line)]
    assert len(matched) == 1, lines
    (transform,) = properties["MetricTransformations"]
    alarm = resources("AWS::CloudWatch::Alarm")["HooksFailedAlarm"]["Properties"]
    assert (transform["MetricNamespace"], transform["MetricName"]) == (
        alarm["Namespace"],
        alarm["MetricName"],
    )
    assert transform["MetricValue"] == "1"
    (dimension,) = alarm["Dimensions"]
    (from_line,) = transform["Dimensions"]
    assert from_line["Key"] == dimension["Name"]
    event = json.loads(matched[0])
    assert event[from_line["Value"].removeprefix("$.")] == dimension["Value"]
    # AND a line another metric writes, or plain logging, does not match
    other = json.loads(matched[0])
    other["_aws"]["CloudWatchMetrics"][0]["Metrics"][0]["Name"] = "ToolCalls"
    assert not filter_matches(properties["FilterPattern"], json.dumps(other))
    assert not filter_matches(properties["FilterPattern"], "hook failed: HooksFailed")
