"""Powertools' re-exporting packages load a name at a time (``formwork.aws.deferred_packages``).

The tool API and the Bedrock handler import one resolver and one event class; the packages'
``__init__`` files import all of them. These tests hold what the finder promises: only the
packages it names, only when their ``__init__`` does nothing but re-export, every name still
there, and the rest of Powertools untouched by a cold start.
"""

from __future__ import annotations

import importlib
import json
import json.decoder
import sys
from types import ModuleType
from typing import Any

import pytest

from formwork.aws import deferred_packages
from formwork.aws.deferred_packages import (
    DEFERRED,
    DeferredInitFinder,
    package_getattr,
    reexports,
)
from tests.functional.test_cold_start import run as run_fresh

ELSEWHERE = (
    "asyncio",  # AppSync's resolvers
    "aws_lambda_powertools.event_handler.appsync",
    "aws_lambda_powertools.event_handler.events_appsync.appsync_events",
    "aws_lambda_powertools.event_handler.bedrock_agent_function",
    "aws_lambda_powertools.event_handler.http_resolver",
    "aws_lambda_powertools.utilities.data_classes.s3_event",
    "aws_lambda_powertools.utilities.data_classes.sqs_event",
    "aws_lambda_powertools.utilities.data_classes.code_pipeline_job_event",
)
"""Resolvers and event classes no Formwork handler uses."""


def run(code: str) -> Any:
    """``code`` in a fresh interpreter at the repository's root, tracing off; the JSON of its
    last line (the cold start tests' runner)."""
    return run_fresh(code, {"POWERTOOLS_TRACE_DISABLED": "true"})


def test_a_reexporting_init_maps_each_name_to_its_submodule() -> None:
    source = '"""Doc."""\nfrom .one import A, B as C\nfrom pkg.two import D\n__all__ = ["A"]\n'
    assert reexports(source, "pkg") == {"A": "pkg.one", "C": "pkg.one", "D": "pkg.two"}


@pytest.mark.parametrize(
    "source",
    [
        "from .one import A\nA.setup()\n",  # does something
        "from other import A\n",  # re-exports another package's name
        "from .one import *\n",  # names it cannot list
        "from .one import A\nX = 1\n",  # defines a name of its own
        "import os\n",
    ],
)
def test_an_init_that_does_more_than_reexport_is_not_deferred(source: str) -> None:
    assert reexports(source, "pkg") is None


def test_a_deferred_package_runs_its_init_once_and_only_for_a_name_it_cannot_find() -> None:
    # GIVEN the json package as if deferred: one re-exported name, an __init__ that counts
    module = ModuleType("json")
    runs: list[int] = []

    def run_init() -> None:
        runs.append(1)
        module.extra = len(runs)  # type: ignore[attr-defined]

    lookup = package_getattr(module, {"JSONDecoder": "json.decoder"}, run_init)
    # THEN a re-exported name and a submodule come without running it
    assert lookup("JSONDecoder") is json.decoder.JSONDecoder
    assert lookup("decoder") is json.decoder
    assert runs == []
    # and any other name runs it, once
    assert lookup("extra") == 1
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        lookup("nothing")
    assert runs == [1]


def test_the_finder_answers_for_its_packages_only() -> None:
    finder = DeferredInitFinder()
    assert finder.find_spec("json", None) is None
    assert finder.find_spec("aws_lambda_powertools.event_handler.api_gateway", None) is None


@pytest.mark.parametrize("package", sorted(DEFERRED))
def test_each_deferred_package_still_only_reexports(package: str) -> None:
    """A Powertools release that gives one of them code of its own would silently end the
    deferral (it imports as usual then): this says so."""
    spec = DeferredInitFinder().find_spec(package, _parent_path(package))
    assert spec is not None, f"{package}'s __init__ now does more than re-export"


def _parent_path(package: str) -> list[str]:
    parent = importlib.import_module(package.rpartition(".")[0])
    return list(parent.__path__)


def test_install_is_idempotent() -> None:
    deferred_packages.install()
    deferred_packages.install()
    assert sum(isinstance(f, DeferredInitFinder) for f in sys.meta_path) == 1


def test_a_cold_tool_call_loads_one_resolver_and_every_name_stays_importable() -> None:
    # GIVEN a fresh interpreter that imports the tool API and serves GET /tools and a tool call
    code = f"""
import json, sys
import formwork.aws.api
from formwork.aws.local import invoke
from formwork.bootstrap import bootstrap
from formwork.config import Settings
from forms.storage.memory import InMemoryFormStore
app = bootstrap(Settings(), store=InMemoryFormStore())
statuses = [
    invoke(json.loads(open(f"tests/events/{{name}}.json").read()), app=app)["statusCode"]
    for name in ("list_tools", "call_tool")
]
watched = {ELSEWHERE!r}
served = [m for m in watched if m in sys.modules]
import aws_lambda_powertools.event_handler as handlers
import aws_lambda_powertools.utilities.data_classes as events
ran = ["__all__" in vars(handlers), "__all__" in vars(events)]
from aws_lambda_powertools.event_handler import AppSyncResolver, Response
from aws_lambda_powertools.utilities.data_classes import S3Event
complete = [all(hasattr(p, n) for n in p.__all__) for p in (handlers, events)]
try:
    handlers.no_such_name
    missing = "found"
except AttributeError:
    missing = "AttributeError"
print(json.dumps([statuses, served, ran, complete, missing]))
"""
    # THEN both calls are served without importing any other resolver or event class, nor
    # running either package's __init__; every name of theirs is still there, and a name they
    # do not have is an AttributeError
    assert run(code) == [[200, 200], [], [False, False], [True, True], "AttributeError"]


def test_the_bedrock_handler_loads_its_resolver_only() -> None:
    code = f"""
import json, sys
import formwork.aws.bedrock_agent
print(json.dumps([m for m in {ELSEWHERE!r} if m in sys.modules]))
"""
    assert run(code) == []
