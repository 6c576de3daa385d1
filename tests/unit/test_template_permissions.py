"""The functions may call every DynamoDB operation the code they run uses (least privilege,
but not less): a missing action only shows up in AWS, on the path that needs it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from formwork.config import Settings
from formwork.infra.local.dynamodb import ROOT, load_template

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
CALL = re.compile(r"\b_?client\.(\w+)\(")


STORES = (
    "forms/storage/dynamodb.py",
    "forms/storage/dynamodb_requests.py",
    "forms/storage/dynamodb_documents.py",
    "forms/storage/dynamodb_drafts.py",
    "forms/storage/dynamodb_facts.py",
    "formwork/webhooks/dynamodb.py",
)
"""Every module that makes DynamoDB calls for the tools function (the form store, the
builder's and the memory's stores, the webhook delivery log)."""


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
        text = (ROOT / path).read_text()
        for method in CALL.findall(text):
            needed |= NEEDS.get(method, set())
        if '"Update": {' in text:  # an Update action inside a transaction
            needed.add("dynamodb:UpdateItem")
    return needed


@pytest.mark.parametrize("function", ["ToolsFunction", "BedrockAgentFunction"])
def test_the_tools_function_may_do_everything_the_store_does(function: str) -> None:
    # GIVEN the DynamoDB calls the store and the webhook delivery log make
    needed = needed_by(*STORES)
    assert needed, "no DynamoDB calls found: the scan above is broken"
    # THEN the function's policy grants each of them
    assert needed <= dynamodb_actions(function), needed - dynamodb_actions(function)


def test_no_function_gets_a_wildcard_table_action() -> None:
    for name, resource in load_template()["Resources"].items():
        if resource.get("Type") == "AWS::Serverless::Function":
            assert not any(a.endswith(":*") or a == "*" for a in dynamodb_actions(name)), name


def test_the_scan_finds_the_store_calls() -> None:
    assert all(Path(ROOT / path).exists() for path in STORES)
    found = {call for path in STORES for call in CALL.findall((ROOT / path).read_text())}
    assert {"query", "transact_write_items", "get_item", "put_item"} <= found


# ---------------------------------------------------------------------------- secrets

FUNCTIONS = (
    "ToolsFunction",
    "RelayFunction",
    "SweeperFunction",
    "BedrockAgentFunction",
    "WorkerBacklogFunction",
)
"""Every function connects to Temporal (the tools, over HTTP and for a Bedrock agent, dispatch;
the relay and sweeper re-dispatch; the backlog function reads the task queue's backlog)."""
TEMPORAL_SECRET = {"Ref": "TemporalSecretArn"}


def statements(function: str) -> list[tuple[str | None, dict[str, Any]]]:
    """Each policy statement of ``function`` with the condition it depends on (None: none)."""
    resource = load_template()["Resources"][function]
    found: list[tuple[str | None, dict[str, Any]]] = []
    for listed in resource["Properties"].get("Policies", []):
        policy, outer = listed, None
        if isinstance(listed, dict) and "Fn::If" in listed:  # a whole policy under a condition
            outer, policy, otherwise = listed["Fn::If"]
            assert otherwise == {"Ref": "AWS::NoValue"}, listed
        for statement in policy.get("Statement", []) if isinstance(policy, dict) else []:
            if outer is not None:
                assert "Fn::If" not in statement, statement
                found.append((outer, statement))
            elif "Fn::If" in statement:
                condition, then, otherwise = statement["Fn::If"]
                assert otherwise == {"Ref": "AWS::NoValue"}, statement
                found.append((condition, then))
            else:
                found.append((None, statement))
    return found


def secret_reads(function: str) -> list[tuple[str | None, Any]]:
    reads = []
    for condition, statement in statements(function):
        actions = statement.get("Action", [])
        actions = [actions] if isinstance(actions, str) else actions
        if any(a.startswith("secretsmanager:") for a in actions):
            assert actions == ["secretsmanager:GetSecretValue"], statement
            reads.append((condition, statement["Resource"]))
    return reads


def environment(function: str) -> dict[str, Any]:
    template = load_template()
    return {
        **template["Globals"]["Function"]["Environment"]["Variables"],
        **(template["Resources"][function]["Properties"].get("Environment") or {}).get(
            "Variables", {}
        ),
    }


@pytest.mark.parametrize("function", FUNCTIONS)
def test_the_temporal_api_key_is_never_in_a_functions_environment(function: str) -> None:
    template = load_template()
    env = environment(function)
    # THEN no variable carries a credential: only the secret's ARN is passed
    assert "TEMPORAL_API_KEY" not in env
    assert env["FORMWORK_TEMPORAL_SECRET_ID"] == TEMPORAL_SECRET
    assert not any(
        isinstance(v, dict)
        and v.get("Ref") in template["Parameters"]
        and template["Parameters"][v["Ref"]].get("NoEcho")
        for v in env.values()
    ), "a NoEcho parameter is passed as plain text"
    assert "TemporalApiKey" not in template["Parameters"]


@pytest.mark.parametrize("function", FUNCTIONS)
def test_each_function_may_read_the_temporal_secret_and_only_that_one(function: str) -> None:
    template = load_template()
    # GIVEN the secret's ARN is a parameter, and the grant exists only when it is set
    assert template["Conditions"]["HasTemporalSecret"] == {
        "Fn::Not": [{"Fn::Equals": [TEMPORAL_SECRET, ""]}]
    }
    pattern = template["Parameters"]["TemporalSecretArn"]["AllowedPattern"]
    assert re.fullmatch(
        pattern, "arn:aws:secretsmanager:eu-west-1:123456789012:secret:formwork/temporal-AbCdEf"
    )
    assert not re.fullmatch(pattern, "arn:aws:secretsmanager:eu-west-1:123456789012:secret:*")
    # THEN the function reads that exact ARN, under the condition, with no wildcard
    reads = secret_reads(function)
    assert ("HasTemporalSecret", TEMPORAL_SECRET) in reads
    others = [r for r in reads if r != ("HasTemporalSecret", TEMPORAL_SECRET)]
    if function in ("RelayFunction", "SweeperFunction", "WorkerBacklogFunction"):
        assert others == []  # the relay, the sweeper and the backlog read no other secret


def test_webhook_secrets_are_read_under_two_separate_prefixes() -> None:
    template = load_template()
    reads = [r for c, r in secret_reads("ToolsFunction") if c is None and r != PAGE_KEY]
    arn = "arn:${AWS::Partition}:secretsmanager:${AWS::Region}:${AWS::AccountId}:secret:"
    assert reads == [
        {"Fn::Sub": arn + "${WebhookSecretPrefix}*"},
        {"Fn::Sub": arn + "${NotifySecretPrefix}*"},
    ]
    inbound = template["Parameters"]["WebhookSecretPrefix"]["Default"]
    outbound = template["Parameters"]["NotifySecretPrefix"]["Default"]
    assert not inbound.startswith(outbound) and not outbound.startswith(inbound)
    env = environment("ToolsFunction")
    assert env["FORMWORK_WEBHOOK_SECRET_PREFIX"] == {"Ref": "WebhookSecretPrefix"}
    assert env["FORMWORK_NOTIFY_SECRET_PREFIX"] == {"Ref": "NotifySecretPrefix"}
    assert env["FORMWORK_WEBHOOK_SOURCES"] == {"Ref": "WebhookSources"}
    # AND with no sources configured, no webhook is accepted (formwork.config's default)
    assert template["Parameters"]["WebhookSources"]["Default"] == ""


def test_the_bedrock_agent_function_reads_outbound_secrets_only() -> None:
    # GIVEN the Bedrock agent's function, whose tool calls may run hooks that notify
    reads = [r for c, r in secret_reads("BedrockAgentFunction") if c is None]
    arn = "arn:${AWS::Partition}:secretsmanager:${AWS::Region}:${AWS::AccountId}:secret:"
    # THEN it may read the outbound (notify) secrets, and never an inbound webhook secret
    assert reads == [{"Fn::Sub": arn + "${NotifySecretPrefix}*"}]
    env = environment("BedrockAgentFunction")
    assert env["FORMWORK_NOTIFY_SECRET_PREFIX"] == {"Ref": "NotifySecretPrefix"}
    assert "FORMWORK_WEBHOOK_SECRET_PREFIX" not in env


def test_only_the_named_bedrock_agent_may_invoke_its_function() -> None:
    template = load_template()
    permission = template["Resources"]["BedrockAgentPermission"]
    # THEN the permission exists only once an agent is named, for that agent of this account
    assert permission["Condition"] == "HasBedrockAgent"
    assert template["Conditions"]["HasBedrockAgent"] == {
        "Fn::Not": [{"Fn::Equals": [{"Ref": "BedrockAgentId"}, ""]}]
    }
    assert template["Parameters"]["BedrockAgentId"]["Default"] == ""
    properties = permission["Properties"]
    assert properties["Principal"] == "bedrock.amazonaws.com"
    assert properties["Action"] == "lambda:InvokeFunction"
    assert properties["FunctionName"] == {"Fn::GetAtt": "BedrockAgentFunction.Arn"}
    assert properties["SourceAccount"] == {"Ref": "AWS::AccountId"}
    assert properties["SourceArn"] == {
        "Fn::Sub": "arn:${AWS::Partition}:bedrock:${AWS::Region}:${AWS::AccountId}"
        ":agent/${BedrockAgentId}"
    }
    pattern = template["Parameters"]["BedrockAgentId"]["AllowedPattern"]
    assert re.fullmatch(pattern, "Q7XKT2M9LB") and re.fullmatch(pattern, "")
    assert not re.fullmatch(pattern, "*") and not re.fullmatch(pattern, "Q7XKT2M9L*")
    # AND the function's handler is the action group's
    function = template["Resources"]["BedrockAgentFunction"]["Properties"]
    assert function["Handler"] == "formwork.aws.bedrock_agent.lambda_handler"


# ---------------------------------------------------------------------------- throttling


def test_the_unauthenticated_webhook_route_is_throttled() -> None:
    template = load_template()
    events = template["Resources"]["ToolsFunction"]["Properties"]["Events"]
    (webhook,) = [e for e in events.values() if e["Properties"]["Path"] == "/webhooks/{source}"]
    assert webhook["Properties"]["Auth"] == {"Authorizer": "NONE"}
    settings = webhook["Properties"]["RouteSettings"]
    assert settings == {
        "ThrottlingBurstLimit": {"Ref": "WebhookBurstLimit"},
        "ThrottlingRateLimit": {"Ref": "WebhookRateLimit"},
    }
    parameters = template["Parameters"]
    assert (
        1 <= parameters["WebhookRateLimit"]["Default"] <= parameters["WebhookBurstLimit"]["Default"]
    )
    assert parameters["WebhookRateLimit"]["MinValue"] >= 1  # 0 would close the route


def test_the_api_function_has_reserved_concurrency_unless_turned_off() -> None:
    template = load_template()
    reserved = template["Resources"]["ToolsFunction"]["Properties"]["ReservedConcurrentExecutions"]
    assert reserved == {
        "Fn::If": [
            "ReservesApiConcurrency",
            {"Ref": "ApiReservedConcurrency"},
            {"Ref": "AWS::NoValue"},
        ]
    }
    assert template["Conditions"]["ReservesApiConcurrency"] == {
        "Fn::Not": [{"Fn::Equals": [{"Ref": "ApiReservedConcurrency"}, "0"]}]
    }
    assert template["Parameters"]["ApiReservedConcurrency"]["Default"] > 0


def test_the_builder_settings_are_parameters_whose_defaults_are_the_settings_defaults() -> None:
    # GIVEN the template's parameters and the functions' environment
    template = load_template()
    parameters = template["Parameters"]
    environment = template["Globals"]["Function"]["Environment"]["Variables"]
    settings = Settings.from_env({})
    expected = {
        "FORMWORK_EXECUTORS": ("Executors", ""),
        "FORMWORK_PUBLISHER_ROLE": ("PublisherRole", settings.publisher_role),
        "FORMWORK_BUILDER_MAX_STEPS": ("BuilderMaxSteps", settings.builder_max_steps),
        "FORMWORK_BUILDER_MAX_FIELDS": ("BuilderMaxFields", settings.builder_max_fields),
        "FORMWORK_CATALOG_TTL_SECONDS": ("CatalogTtlSeconds", settings.catalog_ttl_seconds),
    }
    for variable, (parameter, default) in expected.items():
        # THEN each setting comes from its parameter, whose default is what the code assumes
        assert environment[variable] == {"Ref": parameter}
        assert parameters[parameter]["Default"] == default
    # AND an empty Executors reads as none
    assert Settings.from_env({"FORMWORK_EXECUTORS": ""}).executors is None


# ---------------------------------------------------------------------------- memory


def test_the_memory_settings_are_parameters_whose_defaults_are_the_settings_defaults() -> None:
    # GIVEN the template's parameters and the functions' environment
    template = load_template()
    parameters = template["Parameters"]
    environment = template["Globals"]["Function"]["Environment"]["Variables"]
    settings = Settings.from_env({})
    # THEN each memory setting comes from its parameter
    assert environment["FORMWORK_MEMORY"] == {"Ref": "Memory"}
    assert environment["FORMWORK_FACT_KEYS"] == {"Ref": "FactKeys"}
    assert environment["FORMWORK_MEMORY_DEADLINE_MS"] == {"Ref": "MemoryDeadlineMs"}
    # AND the parameters' defaults and bounds are what the code assumes and accepts
    assert parameters["Memory"]["AllowedValues"] == ["on", "off"]
    assert Settings.from_env({"FORMWORK_MEMORY": parameters["Memory"]["Default"]}).memory
    assert settings.memory is True
    assert not Settings.from_env({"FORMWORK_MEMORY": "off"}).memory
    assert parameters["FactKeys"]["Default"] == "" and settings.fact_keys is None
    assert re.fullmatch(parameters["FactKeys"]["AllowedPattern"], "deploy.memory:KEYS")
    deadline = parameters["MemoryDeadlineMs"]
    assert deadline["Default"] == settings.memory_deadline_ms
    for bound in (deadline["MinValue"], deadline["MaxValue"]):
        assert Settings.from_env({"FORMWORK_MEMORY_DEADLINE_MS": str(bound)})
    assert environment["FORMWORK_CONTEXT_CLAIMS"] == {"Ref": "ContextClaims"}
    claims = parameters["ContextClaims"]
    given = Settings.from_env({"FORMWORK_CONTEXT_CLAIMS": claims["Default"]})
    assert given.context_claims == settings.context_claims
    for value in ("off", "person.locale=https://example.com/locale"):
        assert re.fullmatch(claims["AllowedPattern"], value)
        assert Settings.from_env({"FORMWORK_CONTEXT_CLAIMS": value})
    assert not Settings.from_env({"FORMWORK_CONTEXT_CLAIMS": "off"}).context_claims


def test_every_memory_route_is_declared_in_the_template() -> None:
    # GIVEN the OpenAPI document's memory operations
    from formwork.aws.api import openapi_json

    document = json.loads(openapi_json())
    operations = {
        f"{method.upper()} {path}"
        for path, item in document["paths"].items()
        if path.startswith("/memory/")
        for method in item
    }
    assert len(operations) == 9  # the eight of docs/memory.md, and the fact editor's link
    # THEN each is an HttpApi event of the tools function (API Gateway routes nothing else)
    events = load_template()["Resources"]["ToolsFunction"]["Properties"]["Events"]
    declared = {
        f"{event['Properties']['Method']} {event['Properties']['Path']}"
        for event in events.values()
        if event["Type"] == "HttpApi"
    }
    assert operations <= declared, operations - declared


PAGE_KEY = {"Ref": "PageKeySecret"}


def test_the_page_key_is_generated_by_the_stack_and_read_by_the_tools_function_alone() -> None:
    template = load_template()
    # GIVEN the page-signing key: a secret the stack generates, never a parameter
    secret = template["Resources"]["PageKeySecret"]
    assert secret["Type"] == "AWS::SecretsManager::Secret"
    generated = secret["Properties"]["GenerateSecretString"]
    assert generated["PasswordLength"] >= 32 and "SecretStringTemplate" not in generated
    # THEN the tools function reads that exact secret, named by its id in the environment
    assert (None, PAGE_KEY) in secret_reads("ToolsFunction")
    assert environment("ToolsFunction")["FORMWORK_PAGE_KEY_SECRET_ID"] == PAGE_KEY
    # AND no other function may read it
    for function in FUNCTIONS:
        if function != "ToolsFunction":
            assert all(r != PAGE_KEY for _, r in secret_reads(function)), function
