"""The composition root for tool calls: resolve, compute (pure engine), commit, then dispatch.

``FormService`` is the one place where the engine meets storage, the clock, ids and dispatch.
Handlers (in-process, Lambda, MCP) call ``FormService.call`` with a verified principal, a
conversation id, a tool name, a tool-call id and the model's input, and get a JSON-ready result
back. Every failure a caller can cause comes back as data (``ok: false`` with an error code, a
message and a hint); nothing the model sends can raise out of ``call``.

Every write goes through one commit loop, ``commit_retrying``: load (migrating an instance
whose definition version is gone), plan, compare-and-set, and on a conflict wait and plan
again on the instance the store hands back. The write tools (``forms.writes``), hooks
(``forms.hooks``) and approvals (``forms.approvals``) are all built on it; the read tools live
in ``forms.reads``. A write tool's call is recorded under its tool-call id, per conversation,
whatever its outcome (``forms.calls``): the store refuses a second record of an id, so a
retried call returns its first result (within the replay window) and applies nothing twice,
even when the retries race.
"""

from __future__ import annotations

import logging
import random
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, Protocol

from pydantic import ValidationError

from forms import approvals, hooks, reads, writes
from forms.approvals import Approver
from forms.calls import (
    DEFAULT_REPLAY_WINDOW,
    UNRECORDED,
    WRITE_TOOLS,
    CallId,
    fingerprint,
)
from forms.compiled import CompiledForm
from forms.engine import PredicateError, Transition, evaluate
from forms.errors import (
    AmbiguousInstance,
    BadRequest,
    ConflictError,
    InvalidFormDefinition,
    ToolError,
    TooManyConflicts,
    UnknownForm,
    UnknownInstance,
)
from forms.instance import FormInstance, OutboxEntry
from forms.registry import FormRegistry, migration_commit
from forms.results import (
    Result,
    describe_validation,
    error_result,
)
from forms.storage.port import FormStore
from forms.tools import (
    TOOLS_BY_NAME,
    ToolSpec,
    check_id,
)
from forms.view import (
    form_tag,
    status_line,
)

_log = logging.getLogger("formwork")


@dataclass(frozen=True, slots=True)
class Caller:
    """Who is calling and from where. ``principal`` comes only from verified identity."""

    principal: str
    conversation_id: str
    source: str = "agent"


class Dispatcher(Protocol):
    """Runs the hook occurrences a commit put in the outbox, after the commit is stored."""

    def dispatch(self, runner: HookRunner, entries: Sequence[OutboxEntry]) -> None: ...


class HookRunner(Protocol):
    def run_hook(self, instance_id: str, key: str) -> Sequence[OutboxEntry]: ...


def jittered_backoff(attempt: int, base: float = 0.005, cap: float = 0.25) -> None:
    """Wait before retry ``attempt`` (0-based) of a conflicted commit: "full jitter", a random
    time up to ``base * 2**attempt`` seconds, capped. Spreading retries out is what lets twenty
    writers on one instance all land instead of colliding again in lockstep."""
    time.sleep(random.uniform(0, min(cap, base * 2**attempt)))


def utc_now() -> datetime:
    return datetime.now(UTC)


def new_instance_id() -> str:
    return "fi_" + uuid.uuid4().hex[:20]


class FormService:
    """Tool calls over a registry of forms, a store and a dispatcher."""

    def __init__(
        self,
        registry: FormRegistry,
        store: FormStore,
        dispatcher: Dispatcher | None = None,
        *,
        clock: Callable[[], datetime] = utc_now,
        new_id: Callable[[], str] = new_instance_id,
        max_conflict_retries: int = 10,
        backoff: Callable[[int], None] | None = None,
        replay_window: timedelta = DEFAULT_REPLAY_WINDOW,
    ) -> None:
        self.registry = registry
        self.store = store
        self.dispatcher = dispatcher
        self.clock = clock
        self.new_id = new_id
        self.max_conflict_retries = max_conflict_retries
        self.backoff = backoff if backoff is not None else jittered_backoff
        self.replay_window = replay_window

    # ------------------------------------------------------------------ entry point

    def call(self, caller: Caller, tool: str, tool_call_id: str, payload: object) -> Result:
        """Run one tool call; every failure comes back as data."""
        try:
            check_id(caller.conversation_id, "conversation id")
            check_id(tool_call_id, "tool_call_id")
            spec = TOOLS_BY_NAME.get(tool)
            if spec is None:
                known = ", ".join(TOOLS_BY_NAME)
                raise BadRequest(f"there is no tool {tool!r}", f"the tools are: {known}")
            payload = payload if payload is not None else {}
            if tool not in WRITE_TOOLS:
                return _READERS[tool](self, caller, _args(spec, payload))
            call = CallId(tool, tool_call_id, fingerprint(tool, payload))
            try:
                result = _WRITERS[tool](self, caller, call, _args(spec, payload))
            except UNRECORDED:
                raise
            except ToolError as exc:
                return writes.record_alone(self, caller, call, error_result(exc), None)
            return result
        except ToolError as exc:
            return error_result(exc)
        except (PredicateError, InvalidFormDefinition) as exc:
            _log.error("form definition failed in %s: %s", tool, exc)
            return {
                "ok": False,
                "error": "definition_error",
                "message": f"the form definition failed: {exc}; nothing was saved",
                "hint": "tell the user something went wrong on our side",
            }
        except Exception:
            _log.exception("tool call %s failed", tool)
            return {
                "ok": False,
                "error": "internal_error",
                "message": "the call failed on our side",
                "hint": "read the form to see what was saved, then retry once; if it fails "
                "again, tell the user",
            }

    def status(self, caller: Caller) -> list[str]:
        """The tier-0 status lines of the conversation's open forms (for the system prompt)."""
        return self.conversation_status(caller) or []

    def conversation_status(self, caller: Caller) -> list[str] | None:
        """Like ``status``, but None when the caller has no form at all in this conversation
        (which is also what another principal's conversation looks like). One store read."""
        return reads.conversation_status(self, caller)

    # ------------------------------------------------------------------ plumbing

    def locate(
        self, caller: Caller, form_name: str, instance_id: str | None
    ) -> tuple[FormInstance, bool]:
        """The caller's instance of a form: by id, or the only open one (else the latest).

        Also says whether the conversation has several open instances of that form, in which
        case the status line names the instance.
        """
        mine = self.store.list_conversation(caller.principal, caller.conversation_id)
        if instance_id is not None:
            check_id(instance_id, "instance id")
            for instance in mine:
                if instance.id == instance_id:
                    open_ = [i for i in mine if i.state.status == "open"]
                    return instance, sum(i.form_id == instance.form_id for i in open_) > 1
            raise UnknownInstance(
                f"no instance {instance_id!r} in this conversation",
                "call form_list to see this conversation's forms",
            )
        form = self.registry.latest(form_name)
        ofthis = [i for i in mine if i.form_id == form.id]
        if not ofthis:
            raise UnknownForm(
                f"this conversation has no {form.id} yet", "call form_start to begin it"
            )
        open_ = [i for i in ofthis if i.state.status == "open"]
        if len(open_) > 1:
            raise AmbiguousInstance(
                f"this conversation has {len(open_)} open {form.id}",
                "pass instance, one of: " + ", ".join(i.id for i in open_),
            )
        return (open_[0] if open_ else ofthis[-1]), False

    def current(self, instance: FormInstance) -> tuple[CompiledForm, FormInstance]:
        """The definition for ``instance``, migrating it first when its version is gone."""
        form, chain = self.registry.for_instance(instance)
        if not chain:
            return form, instance
        for attempt in range(self.max_conflict_retries + 1):
            if attempt:
                self.backoff(attempt - 1)
            try:
                commit = migration_commit(form, instance, chain, self.clock())
                return form, self.store.commit(commit)
            except ConflictError as conflict:
                instance = conflict.current or self.store.get(instance.id)
                form, chain = self.registry.for_instance(instance)
                if not chain:
                    return form, instance
        raise TooManyConflicts("the form was busy; nothing was saved", "send the call again")

    def dispatch_entries(self, entries: Sequence[OutboxEntry]) -> None:
        """Hand what a commit put in the outbox to the dispatcher (after it is stored)."""
        if entries and self.dispatcher is not None:
            self.dispatcher.dispatch(self, entries)

    # ------------------------------------------------------------------ results

    def commit_retrying(
        self,
        instance: FormInstance,
        plan: Callable[[CompiledForm, FormInstance, datetime], Transition | None],
    ) -> Transition | None:
        """Compute a transition from ``instance`` and commit it compare-and-set; on a conflict,
        wait (jittered backoff) and compute again from the instance the store hands back.

        ``plan(form, instance, now)`` returns the transition to commit, or None to stop without
        writing (the work turned out to be done already). Returns what was committed, or None.
        Raises ``TooManyConflicts`` when every attempt lost.
        """
        for attempt in range(self.max_conflict_retries + 1):
            if attempt:
                self.backoff(attempt - 1)
            form, instance = self.current(instance)
            step = plan(form, instance, self.clock())
            if step is None:
                return None
            try:
                self.store.commit(step.commit)
            except ConflictError as conflict:
                instance = conflict.current or self.store.get(instance.id)
                continue
            return step
        raise TooManyConflicts(
            "the form was busy with other writes; nothing was saved", "send the same call again"
        )

    def retry_hook(self, instance_id: str, key: str) -> bool:
        """Operator action: put a failed outbox entry back to pending and dispatch it again.

        The occurrence and its key stay the same, so the executor sees the key it saw before.
        Returns False when there is no such failed entry.
        """
        entry = hooks.reopen(self, instance_id, key)
        if entry is None:
            return False
        self.dispatch_entries([entry])
        return True

    def run_hook(
        self, instance_id: str, key: str, *, max_attempts: int = 3, raise_on_retry: bool = False
    ) -> Sequence[OutboxEntry]:
        """Run one outbox entry's executor and commit its effects; see ``forms.hooks``."""
        return hooks.run_hook(
            self, instance_id, key, max_attempts=max_attempts, raise_on_retry=raise_on_retry
        )

    def decide(
        self,
        approver: Approver,
        approval_id: str,
        decision: Literal["approved", "rejected"],
        note: str | None = None,
    ) -> Result:
        """An approver's decision on a pending approval, as data (see ``forms.approvals``)."""
        try:
            check_id(approval_id, "approval id")
            if note is not None and len(note) > 1000:
                raise BadRequest("the note is over 1000 characters", "shorten it")
            decided = approvals.decide(self, approval_id, approver, decision, note)
        except ToolError as exc:
            return error_result(exc)
        self.dispatch_entries(decided.dispatch)
        instance = self.store.get(decided.instance_id)
        form, instance = self.current(instance)
        line = status_line(form, instance, evaluate(form, instance))
        result: Result = {
            "ok": True,
            "summary": f"Recorded {decision} on {form.fields[decided.field].label}.",
            "approval": approval_id,
            "instance": instance.id,
            "form_status": instance.state.status,
        }
        if line:
            result["status_line"] = line
        return result

    def expire_approvals(self, instance_id: str) -> list[str]:
        """Apply the timeout outcome of every approval of an instance past its deadline, then
        dispatch what that fires. Returns the approval ids expired."""
        expired = approvals.expire_due(self, instance_id)
        for decided in expired:
            self.dispatch_entries(decided.dispatch)
        return [d.approval_id for d in expired]

    def mark_dispatched(self, instance_id: str, keys: Sequence[str]) -> list[str]:
        """Record that durable runs were started for ``keys``; see ``forms.hooks``."""
        return hooks.mark_dispatched(self, instance_id, keys)


def _source(caller: Caller) -> Any:
    return caller.source


def _args(spec: ToolSpec, payload: object) -> Any:
    try:
        return spec.args.model_validate(payload)
    except ValidationError as exc:
        raise BadRequest(describe_validation(exc), "check the tool's input schema") from None


def tag(instance: FormInstance, qualify: bool) -> str:
    return form_tag(instance, qualify)


_READERS: dict[str, Callable[[FormService, Caller, Any], Result]] = {
    "form_list": reads.form_list,
    "form_read": reads.form_read,
}
_WRITERS: dict[str, Callable[[FormService, Caller, CallId, Any], Result]] = {
    "form_start": writes.form_start,
    "form_fill": writes.form_fill,
    "form_revise": writes.form_revise,
    "form_abandon": writes.form_abandon,
}
"""Each tool's function, by name (``WRITE_TOOLS`` are the writers)."""
