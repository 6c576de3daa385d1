"""The backlog function loads the workflow service's messages only.

``temporalio.service`` imports the messages of every Temporal service (the cloud service's
alone are some forty modules); the backlog function asks the workflow service one thing. The
three others' packages are in ``formwork.aws.deferred_packages.DEFERRED``: each ``__init__``
only re-exports (and, with gRPC installed, its stubs), so a name loads when first read.
"""

from __future__ import annotations

import pytest

from tests.functional.test_cold_start import run

SERVICES = (
    "temporalio.api.cloud.cloudservice.v1",
    "temporalio.api.operatorservice.v1",
    "temporalio.api.testservice.v1",
)
"""The services the backlog never asks."""

INVOKED = f"""
import sys, json
import formwork.aws.backlog
from temporalio import service
asked = []
async def connect(config):  # the real client, not connected
    return service._BridgeServiceClient(config)
async def rpc_call(self, rpc, req, resp_type, **options):
    asked.append(rpc)
    return resp_type()
service._BridgeServiceClient.connect = staticmethod(connect)
service._BridgeServiceClient._rpc_call = rpc_call
from formwork.bootstrap import bootstrap
from formwork.config import Settings, TemporalSettings
app = bootstrap(Settings(temporal=TemporalSettings(task_queue="q")))
summary = formwork.aws.backlog.lambda_handler({{}}, None, app=app)
loaded = sorted(m for m in sys.modules if m.startswith({SERVICES!r}) and m not in {SERVICES!r})
print(json.dumps([summary["task_queue"], asked, loaded]))
"""


def test_the_backlog_function_loads_no_other_service_s_messages() -> None:
    # GIVEN a fresh interpreter, Temporal's client real but for the wire
    # WHEN the backlog handler is imported and runs
    # THEN it asked the workflow service, and no module of the other services loaded
    queue, asked, loaded = run(INVOKED)
    assert (queue, asked) == ("q", ["describe_task_queue", "describe_task_queue"])
    assert loaded == []


NAMES = """
import importlib, json
{first}
package = importlib.import_module({package!r})
names = {names!r} or sorted(package.__all__)  # each name read before __all__, when given
found = {{n: f"{{v.__module__}}.{{v.__qualname__}}" for n in names for v in [getattr(package, n)]}}
print(json.dumps([sorted(package.__all__), found]))
"""


@pytest.mark.parametrize("package", SERVICES)
def test_every_name_is_there_as_the_package_has_it(package: str) -> None:
    # GIVEN the package imported as usual, and deferred (formwork.aws installs the finder)
    eager = run(NAMES.format(first="", package=package, names=[]))
    deferred = run(NAMES.format(first="import formwork.aws", package=package, names=eager[0]))
    # THEN each name of its __all__ is there, the same object, read before __all__ is
    assert deferred == eager
    assert len(eager[0]) > 5
