"""Deploys do not break running workflows: the committed histories of every workflow type
(``tests/temporal/histories``, recorded by ``make record-histories``) replay on this code.

A worker that picks up a workflow started by older code replays its history; a change to what
a workflow does (another activity, a timer, a different order) makes that replay fail with a
non-determinism error, and the run is stuck. The Replayer does the same check offline: no
server, no worker. docs/dispatch.md, "Changing a workflow", says how to change one safely.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest
from temporalio import workflow
from temporalio.client import WorkflowHistory
from temporalio.worker import Replayer
from temporalio.workflow import NondeterminismError

from formwork.temporal.shared import HOOK_WORKFLOW, RUN_HOOK_ACTIVITY, HookInput, HookOutcome
from formwork.temporal.worker import WORKFLOWS
from tests.temporal.record import HISTORIES
from tests.temporal.scenarios import SCENARIOS


def recorded() -> list[WorkflowHistory]:
    histories = []
    for path in sorted(HISTORIES.glob("*.json")):
        text = path.read_text()
        first = json.loads(text)["events"][0]["workflowExecutionStartedEventAttributes"]
        workflow_id = first.get("workflowId") or path.stem
        histories.append(WorkflowHistory.from_json(workflow_id, text))
    return histories


def workflow_type(history: WorkflowHistory) -> str:
    first = history.events[0].workflow_execution_started_event_attributes
    return first.workflow_type.name


async def each(histories: list[WorkflowHistory]) -> AsyncIterator[WorkflowHistory]:
    for history in histories:
        yield history


def test_every_workflow_type_and_scenario_has_a_recorded_history() -> None:
    histories = recorded()
    # THEN each workflow the worker serves has histories, and each scenario was recorded
    served = {getattr(w, "__temporal_workflow_definition").name for w in WORKFLOWS}
    assert served <= {workflow_type(h) for h in histories}
    assert set(SCENARIOS) <= {p.stem.rsplit("-", 1)[0] for p in HISTORIES.glob("*.json")}


def test_the_recorded_histories_replay_on_this_code() -> None:
    # GIVEN the histories of runs of every workflow type, recorded by an earlier build
    histories = recorded()
    # WHEN this code's workflows replay them THEN nothing is non-deterministic
    result = asyncio.run(Replayer(workflows=list(WORKFLOWS)).replay_workflows(each(histories)))
    assert result.replay_failures == {}


@workflow.defn(name=HOOK_WORKFLOW)
class HookWorkflowWithATimerFirst:
    """A careless change: a pause before the activity, with no ``workflow.patched`` guard."""

    @workflow.run
    async def run(self, hook: HookInput) -> HookOutcome:
        await workflow.sleep(timedelta(seconds=1))
        outcome: HookOutcome = await workflow.execute_activity(
            RUN_HOOK_ACTIVITY,
            hook,
            start_to_close_timeout=timedelta(seconds=30),
            result_type=HookOutcome,
        )
        return outcome


def test_an_unguarded_change_to_a_workflow_fails_the_replay() -> None:
    # GIVEN the recorded HookWorkflow runs
    hooks = [h for h in recorded() if workflow_type(h) == HOOK_WORKFLOW]
    assert hooks
    # WHEN a workflow that now starts with a timer replays them THEN the replay fails
    replayer = Replayer(workflows=[HookWorkflowWithATimerFirst])
    with pytest.raises(NondeterminismError):
        asyncio.run(replayer.replay_workflow(hooks[0]))


def test_the_histories_folder_holds_json_only() -> None:
    assert all(p.suffix == ".json" for p in Path(HISTORIES).iterdir())
