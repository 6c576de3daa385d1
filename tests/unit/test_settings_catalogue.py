"""One list of settings, checked against the template, the local stack and the docs.

The settings are what ``formwork.config.Settings.from_env`` and
``formwork.webhook_settings.WebhookSettings.from_env`` read (found by running them on an
environment that records each name asked for, as ``test_local_settings`` does), plus the few
variables other modules read (the page key, the log hash key, Powertools'). Against them:

- the docs' settings tables (docs/http-api.md, docs/dispatch.md and docs/webhooks.md,
  "Configuration"/"Settings"): every setting is documented with its default, and a documented
  default is the real one (setting a variable to it changes nothing);
- the template: every variable it gives a function is a setting something reads, and is
  documented, and a parameter's default is the setting's default;
- the local stack (``formwork dev``): every setting reaches the functions from the template,
  is wired by the stack (``formwork.infra.local.stack.WIRED``), or is left to its default on purpose
  (``LEFT_TO_DEFAULTS`` below, each with its reason).

The settings stay hand-written rather than a pydantic-settings model: docs/deploy.md,
"Libraries we use and why", has the measurement.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from formwork.config import Settings
from formwork.infra.local.dynamodb import load_template
from formwork.infra.local.runtime import environment_names
from formwork.infra.local.stack import WIRED
from formwork.webhook_settings import WebhookSettings

ROOT = Path(__file__).resolve().parents[2]
TABLES = {
    "docs/http-api.md": "## Configuration",
    "docs/dispatch.md": "## Configuration",
    "docs/webhooks.md": "## Settings",
}
"""Where the settings are documented: the first table under each heading."""
CODE = ("formwork", "functions", "workflows", "forms")
LIBRARY_VARIABLES = re.compile(r"POWERTOOLS_[A-Z_]+|AWS_[A-Z_]+")
"""Read by the libraries themselves (Powertools, boto3), not by our code."""
LEFT_TO_DEFAULTS = {
    "FORMWORK_MAX_BODY_BYTES": "the default is what the local gateway and API Gateway accept",
    "FORMWORK_HOOK_TIMEOUT_SECONDS": "hook timing: the documented defaults serve local runs",
    "FORMWORK_HOOK_HEARTBEAT_SECONDS": "hook timing: the documented defaults serve local runs",
    "FORMWORK_REDISPATCH_AFTER_SECONDS": "hook timing: the documented defaults serve local runs",
    "TEMPORAL_API_KEY": "the local Temporal dev server takes no key",
    "TEMPORAL_TLS": "the local Temporal dev server has no TLS",
    "TEMPORAL_TLS_CLIENT_CERT_PATH": "the local Temporal dev server has no TLS",
    "TEMPORAL_TLS_CLIENT_KEY_PATH": "the local Temporal dev server has no TLS",
    "TEMPORAL_TLS_SERVER_CA_CERT_PATH": "the local Temporal dev server has no TLS",
    "TEMPORAL_TLS_SERVER_NAME": "the local Temporal dev server has no TLS",
    "FORMWORK_WEBHOOK_SECRETS": "the stack makes a development source and secret (local_webhooks)",
    "FORMWORK_NOTIFY_SECRETS": "outbound secrets are the developer's to give, from the shell",
    "FORMWORK_WEBHOOK_TOLERANCE": "the default (300 s) is the Standard Webhooks one",
}
"""Settings the local stack neither takes from the template nor wires: the shell may still set
each (``test_local_settings``), and otherwise the default holds, for the reason given."""


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
    recording = Recording()
    Settings.from_env(recording)
    WebhookSettings.from_env(recording)
    return list(recording.asked)


def table_rows() -> Iterator[tuple[list[str], str]]:
    for path, heading in TABLES.items():
        whole = (ROOT / path).read_text(encoding="utf-8")
        assert heading in whole, f"{path} has no {heading!r} section"
        text = whole.split(heading, 1)[1]
        for row in re.findall(r"^\|(.+)\|\s*$", text.split("\n## ", 1)[0], flags=re.MULTILINE):
            cells = [cell.strip() for cell in row.split("|")]
            names = re.findall(r"`([A-Z][A-Z0-9_]+)`", cells[0])
            if names:
                yield names, cells[-1]


def documented() -> dict[str, str]:
    """``{variable: its default as the docs' tables write it}``."""
    found: dict[str, str] = {}
    for names, default in table_rows():
        for name in names:
            found.setdefault(name, default)
    return found


def test_every_setting_is_documented_with_its_default() -> None:
    table = documented()
    missing = [name for name in settings_read() if name not in table]
    assert missing == [], f"settings read but in no docs table: {missing}"
    assert [name for name, default in table.items() if not default.strip()] == []


def documented_values() -> list[tuple[str, str]]:
    """``(variable, value)`` for each default the tables write as a value."""
    pairs: list[tuple[str, str]] = []
    for names, default in table_rows():
        head = default.split(" (")[0]
        if not head.startswith("`"):
            continue  # "unset", "none", "required ...": no value to set
        values = re.findall(r"`([^`]*)`", head)
        if len(values) == len(names):
            pairs += zip(names, values, strict=True)
        elif len(values) == 1:
            pairs += [(name, values[0]) for name in names]
    return pairs


@pytest.mark.parametrize(("name", "value"), documented_values())
def test_a_documented_default_is_the_real_default(name: str, value: str) -> None:
    # setting a variable to the value the docs give as its default changes nothing
    assert Settings.from_env({name: value}) == Settings.from_env({})
    assert WebhookSettings.from_env({name: value}) == WebhookSettings.from_env({})


def test_the_defaults_checked_cover_every_setting_with_a_value_default() -> None:
    checked = {name for name, _ in documented_values()}
    assert {
        "FORMWORK_HOOK_WAIT_MS",
        "FORMWORK_MEMORY_DEADLINE_MS",
        "FORMWORK_CONTEXT_CLAIMS",
        "TEMPORAL_ADDRESS",
        "FORMWORK_WEBHOOK_TOLERANCE",
        "FORMWORK_WEBHOOK_SECRET_PREFIX",
        "TENANT_CLAIM",
    } <= checked


def read_in_code(name: str) -> bool:
    quoted = (f'"{name}"', f"'{name}'")
    for package in CODE:
        for path in (ROOT / package).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            if any(q in text for q in quoted):
                return True
    return False


def test_every_template_variable_is_a_setting_that_is_read_and_documented() -> None:
    table = documented()
    names = environment_names(load_template())
    unread = [n for n in names if not LIBRARY_VARIABLES.fullmatch(n) and not read_in_code(n)]
    assert unread == [], f"the template sets variables nothing reads: {unread}"
    assert [n for n in names if n not in table] == []


def test_every_setting_is_set_by_the_local_stack_or_left_to_its_default_on_purpose() -> None:
    from_template = set(environment_names(load_template()))
    neither = [
        name
        for name in settings_read()
        if name not in from_template and name not in WIRED and name not in LEFT_TO_DEFAULTS
    ]
    assert neither == [], f"say how `formwork dev` sets these, or why it leaves them: {neither}"
    # AND the list of exceptions holds nothing stale
    assert set(LEFT_TO_DEFAULTS) <= set(settings_read())
    assert not set(LEFT_TO_DEFAULTS) & from_template


def template_defaults() -> list[tuple[str, str, str]]:
    """``(variable, parameter, the parameter's default)`` for each variable the template sets
    from a parameter."""
    template = load_template()
    parameters = template["Parameters"]
    sources = [template.get("Globals", {}).get("Function", {})]
    sources += [
        resource.get("Properties", {})
        for resource in template["Resources"].values()
        if resource.get("Type") == "AWS::Serverless::Function"
    ]
    found: dict[str, tuple[str, str, str]] = {}
    for properties in sources:
        variables = (properties.get("Environment") or {}).get("Variables") or {}
        for name, value in variables.items():
            if isinstance(value, dict) and value.get("Ref") in parameters:
                default = parameters[value["Ref"]].get("Default", "")
                found[name] = (name, value["Ref"], str(default))
    return list(found.values())


@pytest.mark.parametrize(("name", "parameter", "default"), template_defaults())
def test_a_template_parameters_default_is_the_settings_default(
    name: str, parameter: str, default: str
) -> None:
    # a deployment that leaves the parameter alone gets what the settings give when unset
    assert Settings.from_env({name: default}) == Settings.from_env({}), parameter
    assert WebhookSettings.from_env({name: default}) == WebhookSettings.from_env({}), parameter


def test_the_template_defaults_checked_include_the_settings_ones() -> None:
    checked = {name for name, _, _ in template_defaults()}
    assert {"TENANT_CLAIM", "FORMWORK_HOOK_WAIT_MS", "FORMWORK_CONTEXT_CLAIMS"} <= checked
