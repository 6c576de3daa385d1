"""The Temporal worker's deployment in template.yaml: least privilege for its task role (the
same check the functions have, ``test_template_permissions``), its settings the functions',
its artifact checked before it runs, and scaling on the metric the backlog function writes."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from formwork.aws.backlog import PER_WORKER, TASK_QUEUE_DIMENSION
from formwork.infra.local.dynamodb import load_template
from tests.unit.test_template_permissions import NEEDS, STORES, needed_by

ARTIFACT_KEY = "formwork/formwork-worker-arm64-${WorkerArtifactSha256}.zip"
ARTIFACT_OBJECT = {"Fn::Sub": "arn:${AWS::Partition}:s3:::${WorkerArtifactBucket}/" + ARTIFACT_KEY}
NOTIFY = {
    "Fn::Sub": "arn:${AWS::Partition}:secretsmanager:${AWS::Region}:${AWS::AccountId}"
    ":secret:${NotifySecretPrefix}*"
}
TABLE = {"Fn::GetAtt": "FormsTable.Arn"}


def resource(name: str) -> dict[str, Any]:
    found: dict[str, Any] = load_template()["Resources"][name]
    return found


def role_statements(role: str) -> list[tuple[str | None, dict[str, Any]]]:
    """Each statement of ``role``'s inline policies, with the condition it depends on."""
    found: list[tuple[str | None, dict[str, Any]]] = []
    for policy in resource(role)["Properties"]["Policies"]:
        for statement in policy["PolicyDocument"]["Statement"]:
            if "Fn::If" in statement:
                condition, then, otherwise = statement["Fn::If"]
                assert otherwise == {"Ref": "AWS::NoValue"}
                found.append((condition, then))
            else:
                found.append((None, statement))
    return found


def grants(role: str) -> list[tuple[str | None, tuple[str, ...], Any]]:
    out = []
    for condition, statement in role_statements(role):
        assert statement["Effect"] == "Allow" and "NotAction" not in statement
        actions = statement["Action"]
        out.append(
            (
                condition,
                tuple([actions] if isinstance(actions, str) else actions),
                statement["Resource"],
            )
        )
    return out


OPEN_FORMS = {"Fn::Sub": "${FormsTable.Arn}/index/open_forms"}


def test_the_task_role_may_do_everything_the_store_does_on_the_table_only() -> None:
    # GIVEN the DynamoDB calls the store makes (the worker runs hooks through the same store)
    needed = needed_by(*STORES)
    assert needed
    table = {a for c, actions, r in grants("WorkerTaskRole") if r == TABLE for a in actions}
    # THEN the task role grants each on the table, and no DynamoDB action anywhere else
    assert needed <= table, needed - table
    assert table <= {a for actions in NEEDS.values() for a in actions} - {"dynamodb:Scan"}
    elsewhere = [
        g
        for g in grants("WorkerTaskRole")
        if g[2] not in (TABLE, OPEN_FORMS) and any("dynamodb:" in a for a in g[1])
    ]
    assert elsewhere == []  # but the migration's Query (tests/unit/test_template_operations.py)


def test_the_task_role_grants_nothing_else() -> None:
    # THEN besides the table: the one artifact object, the outbound secrets (an executor may
    # notify) and the Temporal secret when one is named; no wildcard action, no other secret
    rest = [g for g in grants("WorkerTaskRole") if g[2] not in (TABLE, OPEN_FORMS)]
    assert rest == [
        (None, ("s3:GetObject",), ARTIFACT_OBJECT),
        (None, ("secretsmanager:GetSecretValue",), NOTIFY),
        ("HasTemporalSecret", ("secretsmanager:GetSecretValue",), {"Ref": "TemporalSecretArn"}),
    ]
    for role in ("WorkerTaskRole", "WorkerExecutionRole"):
        for _, actions, _ in grants(role):
            assert not any(a == "*" or a.endswith(":*") for a in actions), role


def test_the_execution_role_only_writes_the_workers_logs() -> None:
    assert grants("WorkerExecutionRole") == [
        (None, ("logs:CreateLogStream", "logs:PutLogEvents"), {"Fn::GetAtt": "WorkerLogGroup.Arn"})
    ]


def test_only_ecs_tasks_of_this_account_may_assume_the_roles() -> None:
    for role in ("WorkerTaskRole", "WorkerExecutionRole"):
        (trust,) = resource(role)["Properties"]["AssumeRolePolicyDocument"]["Statement"]
        assert trust["Principal"] == {"Service": "ecs-tasks.amazonaws.com"}
        assert trust["Action"] == "sts:AssumeRole"
        assert trust["Condition"]["StringEquals"] == {
            "aws:SourceAccount": {"Ref": "AWS::AccountId"}
        }
    task = resource("WorkerTaskDefinition")["Properties"]
    assert task["TaskRoleArn"] == {"Fn::GetAtt": "WorkerTaskRole.Arn"}
    assert task["ExecutionRoleArn"] == {"Fn::GetAtt": "WorkerExecutionRole.Arn"}


def containers() -> dict[str, dict[str, Any]]:
    task = resource("WorkerTaskDefinition")["Properties"]
    return {c["Name"]: c for c in task["ContainerDefinitions"]}


def worker_environment() -> dict[str, Any]:
    return {e["Name"]: e["Value"] for e in containers()["worker"]["Environment"]}


def test_the_worker_runs_with_the_functions_settings_and_no_credential() -> None:
    template = load_template()
    functions = template["Globals"]["Function"]["Environment"]["Variables"]
    env = worker_environment()
    # THEN every setting the functions get, the worker gets, from the same parameter: the same
    # forms, executors, table, Temporal namespace and task queue
    assert {k: env.get(k) for k in functions} == functions
    # AND no credential: the Temporal secret by ARN; no inbound webhook secrets, no page key
    assert "TEMPORAL_API_KEY" not in env
    assert env["FORMWORK_TEMPORAL_SECRET_ID"] == {"Ref": "TemporalSecretArn"}
    assert env["FORMWORK_NOTIFY_SECRET_PREFIX"] == {"Ref": "NotifySecretPrefix"}
    assert "FORMWORK_WEBHOOK_SECRET_PREFIX" not in env
    assert "FORMWORK_PAGE_KEY_SECRET_ID" not in env


def fetch_script() -> str:
    """The fetch container's shell script, its ``${...}`` substitutions as written."""
    (command,) = containers()["fetch"]["Command"]
    script: str = command["Fn::Sub"]
    return script


def test_the_container_runs_only_the_artifact_it_was_given() -> None:
    fetch, worker = containers()["fetch"], containers()["worker"]
    # GIVEN the fetch container copies the object the task role may read
    assert fetch["EntryPoint"] == ["/bin/sh", "-c"]
    copy = re.search(r"aws s3 cp --only-show-errors (\S+) /artifact/worker\.zip;", fetch_script())
    assert copy and copy.group(1) == "s3://${WorkerArtifactBucket}/" + ARTIFACT_KEY
    assert fetch_script().startswith("set -eu;")
    assert fetch["Essential"] is False
    # THEN the worker starts only once the copy succeeded, checks the digest before unpacking,
    # and runs the worker with the alive file its health check reads
    assert worker["DependsOn"] == [{"ContainerName": "fetch", "Condition": "SUCCESS"}]
    (script,) = worker["Command"]
    check = script.index("sha256sum -c")
    assert check < script.index("zipfile -e") < script.index("exec python -m formwork.worker")
    assert worker_environment()["WORKER_ARTIFACT_SHA256"] == {"Ref": "WorkerArtifactSha256"}
    alive = re.search(r"--alive-file (\S+)", script)
    assert alive and alive.group(1) in worker["HealthCheck"]["Command"][1]
    grace = re.search(r"--grace (\d+)", script)
    assert grace and int(grace.group(1)) < worker["StopTimeout"] <= 120  # Fargate's maximum
    assert worker["ReadonlyRootFilesystem"] is True
    # AND the artifact's digest is the one the name carries (make worker-artifact)
    pattern = load_template()["Parameters"]["WorkerArtifactSha256"]["AllowedPattern"]
    assert re.fullmatch(pattern, "0" * 64) and not re.fullmatch(pattern, "*")


def test_the_worker_runs_on_the_functions_cpu() -> None:
    task = resource("WorkerTaskDefinition")["Properties"]
    assert load_template()["Globals"]["Function"]["Architectures"] == ["arm64"]
    assert task["RuntimePlatform"]["CpuArchitecture"] == "ARM64"
    assert "arm64" in ARTIFACT_KEY


def test_the_service_scales_on_the_backlog_metric_the_backlog_function_writes() -> None:
    template = load_template()
    policy = resource("WorkerBacklogScaling")["Properties"]
    assert policy["PolicyType"] == "TargetTrackingScaling"
    tracking = policy["TargetTrackingScalingPolicyConfiguration"]
    assert tracking["TargetValue"] == {"Ref": "WorkerBacklogTarget"}
    metric = tracking["CustomizedMetricSpecification"]
    env = template["Globals"]["Function"]["Environment"]["Variables"]
    assert metric["MetricName"] == PER_WORKER
    assert metric["Namespace"] == env["POWERTOOLS_METRICS_NAMESPACE"]
    assert {d["Name"]: d["Value"] for d in metric["Dimensions"]} == {
        "service": env["POWERTOOLS_SERVICE_NAME"],
        TASK_QUEUE_DIMENSION: {"Ref": "TemporalTaskQueue"},
    }
    function = resource("WorkerBacklogFunction")["Properties"]
    assert function["Handler"] == "formwork.aws.backlog.lambda_handler"
    (schedule,) = function["Events"].values()
    assert schedule["Properties"]["ScheduleExpression"] == "rate(1 minute)"
    target = resource("WorkerScalableTarget")["Properties"]
    assert target["MinCapacity"] == {"Ref": "WorkerMinTasks"}
    assert template["Parameters"]["WorkerMinTasks"]["MinValue"] >= 1  # timers need a worker


def test_the_worker_is_deployed_with_temporal_dispatch_and_needs_its_parameters() -> None:
    template = load_template()
    assert template["Conditions"]["DeploysWorker"] == {
        "Fn::Equals": [{"Ref": "DispatchMode"}, "temporal"]
    }
    workers = [n for n in template["Resources"] if n.startswith("Worker")]
    assert len(workers) >= 9
    for name in workers:
        assert template["Resources"][name]["Condition"] == "DeploysWorker", name
    rule = template["Rules"]["WorkerNeedsItsArtifactAndNetwork"]
    assert rule["RuleCondition"] == {"Fn::Equals": [{"Ref": "DispatchMode"}, "temporal"]}
    asserted = str(rule["Assertions"])
    for parameter in ("WorkerArtifactBucket", "WorkerArtifactSha256", "WorkerSubnets"):
        assert parameter in asserted
    assert "WorkerSecurityGroups" in asserted


def test_the_worker_runs_as_an_unprivileged_user_on_volumes_handed_to_it() -> None:
    fetch, worker = containers()["fetch"], containers()["worker"]
    # THEN the worker's user is a number other than root's, user and group
    user, group = worker["User"].split(":")
    assert user.isdigit() and group.isdigit() and "0" not in (user, group)
    assert worker["ReadonlyRootFilesystem"] is True
    # AND what it writes (the unpacked artifact and its alive file on /artifact, scratch on
    # /tmp, its HOME) is on the task's volumes, which the fetch container, root for this only,
    # hands to that user once the copy succeeded
    mounts = {m["ContainerPath"]: m["SourceVolume"] for m in worker["MountPoints"]}
    assert mounts == {"/artifact": "artifact", "/tmp": "scratch"}
    assert worker_environment()["HOME"] == "/tmp"
    (script,) = worker["Command"]
    assert "cd /artifact" in script and "--alive-file /artifact/alive" in script
    fetched = {m["SourceVolume"]: m["ContainerPath"] for m in fetch["MountPoints"]}
    chown = re.search(r"chown -R (\d+):(\d+) (.+)$", fetch_script())
    assert chown and (chown.group(1), chown.group(2)) == (user, group)
    assert sorted(chown.group(3).split()) == sorted(fetched[v] for v in set(mounts.values()))
    assert fetch_script().index("aws s3 cp") < chown.start()
    assert fetch["User"] == "0"


VALID_DIGEST = "sha256:" + "0123456789abcdef" * 4


def test_images_are_by_tag_or_by_digest_an_explicit_checked_choice() -> None:
    template = load_template()
    parameters = template["Parameters"]
    # GIVEN the choice, by tag unless the deploy says digest
    assert parameters["WorkerImagesBy"]["AllowedValues"] == ["tag", "digest"]
    assert parameters["WorkerImagesBy"]["Default"] == "tag"
    for image, container in (("WorkerImage", "worker"), ("WorkerFetchImage", "fetch")):
        by_tag = parameters[image]["AllowedPattern"]
        pinned = parameters[f"{image}Pinned"]["AllowedPattern"]
        # THEN the tag parameter takes a tag (and only one), the pinned one a digest or nothing
        assert re.fullmatch(by_tag, parameters[image]["Default"])
        assert re.fullmatch(by_tag, "registry.example:5000/team/python:3.11-slim")
        assert not re.fullmatch(by_tag, "public.ecr.aws/docker/library/python")  # no tag
        assert not re.fullmatch(by_tag, f"public.ecr.aws/docker/library/python@{VALID_DIGEST}")
        assert re.fullmatch(pinned, "") and parameters[f"{image}Pinned"]["Default"] == ""
        assert re.fullmatch(pinned, f"public.ecr.aws/docker/library/python@{VALID_DIGEST}")
        assert not re.fullmatch(pinned, "public.ecr.aws/docker/library/python:3.11")
        assert not re.fullmatch(pinned, "python@sha256:abc")  # a digest is 64 hex digits
        # AND the task runs the pinned image whenever one is given
        condition = f"Has{image}Pinned"
        assert template["Conditions"][condition] == {
            "Fn::Not": [{"Fn::Equals": [{"Ref": f"{image}Pinned"}, ""]}]
        }
        assert containers()[container]["Image"] == {
            "Fn::If": [condition, {"Ref": f"{image}Pinned"}, {"Ref": image}]
        }
    # AND choosing digest refuses a deploy that leaves either digest out
    rule = template["Rules"]["WorkerImagesByDigestAreGiven"]
    assert rule["RuleCondition"] == {"Fn::Equals": [{"Ref": "WorkerImagesBy"}, "digest"]}
    asserted = [a["Assert"] for a in rule["Assertions"]]
    assert asserted == [
        {"Fn::Not": [{"Fn::Equals": [{"Ref": f"{image}Pinned"}, ""]}]}
        for image in ("WorkerImage", "WorkerFetchImage")
    ]


def test_the_deploy_docs_say_how_to_pin_the_images() -> None:
    text = (Path(__file__).parents[2] / "docs" / "deploy.md").read_text()
    section = text[text.index("### Pinning the images") :]
    section = section[: section.index("\n#", 1)]
    for parameter in ("WorkerImagesBy=digest", "WorkerImagePinned", "WorkerFetchImagePinned"):
        assert parameter in section, parameter
    assert "@sha256:" in section and "crane digest" in section
