"""The local stack's settings: every variable the functions read can be set from the shell.

The variables come from where the functions get them, never from a list kept here: the
template's ``Environment`` (``formwork.infra.local.runtime.environment_names``) and what the
settings classes read (``formwork.config.Settings.from_env`` and ``WebhookSettings.from_env``, run
on an environment that records each name asked for). What a function's process gets is computed
as the stack computes it (``ProcessFunction`` over the template's resolved variables, then
``child_environment``), without starting anything.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from types import SimpleNamespace
from typing import Any, cast

import pytest

from formwork import cli
from formwork.aws import http
from formwork.aws.http import LOCAL_LOG_HASH_KEY, LOG_HASH_KEY_VARIABLE
from formwork.config import Settings
from formwork.infra.local.dynamodb import LoopbackServer, load_template
from formwork.infra.local.runtime import (
    ProcessFunction,
    child_environment,
    environment_names,
    functions_from_template,
)
from formwork.infra.local.stack import TABLE_RESOURCE, WIRED, LocalStack
from formwork.webhook_settings import WebhookSettings

TEMPLATE = load_template()


class Recording(Mapping[str, str]):
    """An empty environment that remembers every variable asked for."""

    def __init__(self) -> None:
        self.asked: dict[str, None] = {}

    def __getitem__(self, name: str) -> str:
        self.asked[name] = None
        raise KeyError(name)

    def get(self, name: str, default: Any = None) -> Any:
        self.asked[name] = None
        return default

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


def settings_read() -> list[str]:
    """Every variable the tool API's and the webhook route's settings read."""
    recording = Recording()
    Settings.from_env(recording)
    WebhookSettings.from_env(recording)
    return list(recording.asked)


def every_setting() -> list[str]:
    return list(dict.fromkeys([*environment_names(TEMPLATE), *settings_read()]))


def function_environments(stack: LocalStack) -> dict[str, dict[str, str]]:
    """What each function's process gets from ``stack``, as ``ProcessFunction`` builds it."""
    stack.dynamodb = cast(LoopbackServer, SimpleNamespace(endpoint="http://127.0.0.1:1"))
    configs = functions_from_template(
        TEMPLATE, {"TenantClaim": stack.tenant_claim}, resources={TABLE_RESOURCE: "t"}
    )
    return {
        name: child_environment(ProcessFunction(config, stack.environment).environment)
        for name, config in configs.items()
    }


def test_the_settings_found_include_the_templates_and_the_ones_it_leaves_to_defaults() -> None:
    # The derivation finds what it should: a template variable, one only config.py reads, and
    # one only the webhook route's settings read.
    found = every_setting()
    assert {"FORMWORK_MEMORY_DEADLINE_MS", "FORMWORK_MAX_BODY_BYTES"} <= set(found)
    assert "FORMWORK_WEBHOOK_SECRETS" in found
    assert set(environment_names(TEMPLATE)) <= set(found)


def test_every_setting_the_functions_read_can_be_set_from_the_shell(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN a shell that sets every variable the functions read, each to its own value
    settings = every_setting()
    for name in settings:
        monkeypatch.setenv(name, f"shell-{name}")
    # WHEN the local stack builds each function's environment
    stack = LocalStack()
    environments = function_environments(stack)
    wired = stack.wired_environment
    assert set(wired) <= set(WIRED)  # each one it sets is documented, with what to use instead
    # THEN each function gets the shell's value of every setting but those the stack wires
    for function, environment in environments.items():
        for name in settings:
            got = environment.get(name)
            if name in wired:
                assert got != f"shell-{name}", (function, name)
            else:
                assert got == f"shell-{name}", (function, name, got)


def test_a_setting_the_shell_leaves_alone_keeps_the_templates_or_the_stacks_value(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in every_setting():
        monkeypatch.delenv(name, raising=False)
    environments = function_environments(LocalStack())
    tools = environments["ToolsFunction"]
    assert tools["FORMWORK_MEMORY_DEADLINE_MS"] == "200"  # the template's default
    assert tools["FORMWORK_EXECUTORS"] == "formwork.examples.executors:EXECUTORS"  # the stack's
    assert tools["TENANT_CLAIM"] == "tenant"


def test_the_log_level_option_wins_over_the_shell(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POWERTOOLS_LOG_LEVEL", "ERROR")
    assert function_environments(LocalStack())["ToolsFunction"]["POWERTOOLS_LOG_LEVEL"] == "ERROR"
    chosen = function_environments(LocalStack(log_level="DEBUG"))["ToolsFunction"]
    assert chosen["POWERTOOLS_LOG_LEVEL"] == "DEBUG"


def test_local_functions_hash_log_ids_with_the_public_key_and_do_not_warn(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # GIVEN a shell without LOG_HASH_KEY
    monkeypatch.delenv(LOG_HASH_KEY_VARIABLE, raising=False)
    tools = function_environments(LocalStack())["ToolsFunction"]
    # WHEN a function with the local stack's environment (a Lambda function name included)
    # reads its key
    for name, value in tools.items():
        monkeypatch.setenv(name, value)
    http._log_hash_key.cache_clear()
    try:
        with caplog.at_level(logging.WARNING):
            key = http._log_hash_key()
    finally:
        http._log_hash_key.cache_clear()
    # THEN it is the documented public local key, and nothing warns
    assert tools["AWS_LAMBDA_FUNCTION_NAME"]
    assert key == LOCAL_LOG_HASH_KEY.encode()
    assert not [r for r in caplog.records if LOG_HASH_KEY_VARIABLE in r.getMessage()]


def test_a_log_hash_key_from_the_shell_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(LOG_HASH_KEY_VARIABLE, "k" * 32)
    assert function_environments(LocalStack())["ToolsFunction"][LOG_HASH_KEY_VARIABLE] == "k" * 32


def test_dev_help_names_forms_and_how_settings_pass(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cli, "_working_directory_first", lambda **_: None)  # no path changes
    with pytest.raises(SystemExit) as done:
        cli.main(["dev", "--help"])
    assert done.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "FORMWORK_FORMS=my_forms:FORMS formwork dev" in text
    assert "taken from your shell" in text
    assert all(name in text for name in WIRED)
