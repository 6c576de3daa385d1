"""The facade handlers call: one tool call in, a JSON-ready result out.

``FormService`` is where the engine meets storage, the clock, ids and dispatch. Handlers
(in-process, Lambda, MCP) call ``FormService.call`` with a verified principal, a conversation
id, a tool name, a tool-call id and the model's input, and get a result back; a shell that
checked those itself hands a ``CheckedCall`` to ``FormService.call_checked`` instead
(``forms.app.checked``), so each is checked once per call. Every failure a caller can cause
comes back as data (``ok: false``, an error code, a message and a hint): nothing the model
sends can raise out of ``call``.

Every write goes through one commit loop (``forms.app.loop``): the write tools
(``forms.app.writes``), hook runs (``forms.app.hooks``), approval decisions
(``forms.app.approvals``); the read tools are ``forms.app.reads``. A write tool's call is
recorded under its tool-call id, per conversation, whatever its outcome (``forms.app.calls``):
the store refuses a second record of an id, so a retried call returns its first result (within
the replay window) and applies nothing twice, even when the retries race.

``memory`` (``forms.app.memory.Memory``: the fact store, vocabulary, decay policy and a
deadline) turns memory on for the deployment: ``form_start`` fills and offers fields that
declare fact keys from what the principal stated before, and answers to them are remembered.
"""

from __future__ import annotations

import logging
import random
import time
import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from forms.app import approvals, handovers, hooks, reads, writes
from forms.app.approvals import Approver
from forms.app.arguments import arguments, fill_fields
from forms.app.calls import UNRECORDED, WRITE_TOOLS, CallId, fingerprint
from forms.app.checked import CheckedCall, checked_spec
from forms.app.conversation import Caller
from forms.app.hooks import Dispatcher, HookRun
from forms.app.loop import MAX_CONFLICT_RETRIES, MAX_OVERTAKEN, CommitLoop, CommitPolicy
from forms.app.memory import Memory
from forms.app.page_writes import PagePost, page_call, page_write
from forms.app.writes import Writer
from forms.engine import evaluate
from forms.errors import BadRequest, InvalidFormDefinition, ToolError
from forms.evaluation import PredicateError
from forms.instance import FormInstance, OutboxEntry
from forms.registry import Forms
from forms.storage.approvals import ApprovalIndex
from forms.storage.port import FormStore
from forms.surface.plain import inline
from forms.surface.results import Result, error_result
from forms.surface.tools import ToolSpec, check_id
from forms.surface.view import status_line

_log = logging.getLogger("formwork")
_tuple_new = tuple.__new__  # a named tuple from its fields in order, without its Python __new__


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
    """Tool calls over a registry of forms, a store and a dispatcher.

    Every part is given, none is a default of the service's own: the composition root
    (``formwork.bootstrap``) decides the clock, the instance ids, the timer memory's deadline
    is measured on, and ``policy`` (``forms.app.loop.CommitPolicy``), how the commit loop
    retries and how long a call is replayed: the one it hands to every service.
    ``dispatcher``, ``memory`` and ``count`` may be None: no hooks run here, no memory, no
    metric."""

    def __init__(
        self,
        registry: Forms,
        store: FormStore,
        dispatcher: Dispatcher | None,
        *,
        clock: Callable[[], datetime],
        new_id: Callable[[], str],
        timer: Callable[[], float],
        policy: CommitPolicy,
        memory: Memory | None = None,
        count: Callable[[str], None] | None = None,
    ) -> None:
        self.count = count
        """Counts an operational event by metric name (``hooks.HOOK_FAILED``); None: none."""
        self.loop = CommitLoop(registry, store, clock=clock, timer=timer, policy=policy)
        self.dispatcher = dispatcher
        self._writer = Writer(
            loop=self.loop,
            dispatch=self.dispatch_entries,
            new_id=new_id,
            runs_hooks=dispatcher is not None,
            memory=memory,
        )

    @property
    def policy(self) -> CommitPolicy:
        """How the service's commit loop retries, and how long a call is replayed."""
        return self.loop.policy

    @property
    def replay_window(self) -> timedelta:
        """How long a retried tool call gets its first result back."""
        return self.loop.policy.replay_window

    @property
    def memory(self) -> Memory | None:
        """Memory for the deployment: recall into ``form_start`` and facts from answers
        (``forms.app.memory``); None when the deployment has none."""
        return self._writer.memory

    @property
    def registry(self) -> Forms:
        return self.loop.registry

    @property
    def store(self) -> FormStore:
        return self.loop.store

    @property
    def clock(self) -> Callable[[], datetime]:
        return self.loop.clock

    # ------------------------------------------------------------------ entry point

    def call(self, caller: Caller, tool: str, tool_call_id: str, payload: object) -> Result:
        """Run one tool call, its conversation id, tool and tool-call id checked here
        (``forms.app.checked.check_call``'s checks, without the ``CheckedCall`` it would make
        only to be unpacked: ``checked_spec``); every failure comes back as data."""
        try:  # every failure as data (``_failure``), with no closure on the path of every call
            return self._run(
                caller, checked_spec(caller, tool, tool_call_id), tool_call_id, payload
            )
        except Exception as exc:
            return _failure(tool, exc)

    def call_checked(self, checked: CheckedCall, payload: object) -> Result:
        """Run one tool call a shell checked (``check_call``, or its request types and
        ``typed_call``): nothing of it is checked again; every failure comes back as data."""
        try:
            caller, spec, tool_call_id = checked
            return self._run(caller, spec, tool_call_id, payload)
        except Exception as exc:
            return _failure(checked.tool, exc)

    def page_write(self, caller: Caller, instance_id: str, post: PagePost) -> Result:
        """Run one of the person's moves from their form page (``forms.app.page_writes``):
        the tools' write path, by ``user``, recorded under the post's key like a tool call
        (so the same post sent again gets the same answer); every failure comes back as data."""
        try:
            call = page_call(post)
            try:
                return page_write(self._writer, caller, instance_id, post, call)
            except UNRECORDED:
                raise
            except ToolError as exc:
                return writes.record_alone(self._writer, caller, call, error_result(exc), None)
        except Exception as exc:
            return _failure(f"page {post.action}", exc)

    def _run(self, caller: Caller, spec: ToolSpec, tool_call_id: str, payload: object) -> Result:
        tool = spec.name  # ``checked.tool``, without the property's call
        try:
            payload = payload if payload is not None else {}
            if tool == "form_read":  # a recall owed since the start is delivered first
                owed = writes.owed_recall(self._writer, caller)
                return reads.form_read(self.loop, caller, arguments(spec, payload), owed)
            if tool not in WRITE_TOOLS:
                return _READERS[tool](self.loop, caller, arguments(spec, payload))
            fingerprinted = (tool, tool_call_id, fingerprint(tool, payload), True)
            call = _tuple_new(CallId, fingerprinted)  # in C, as ``check_call`` makes its own
            parse, write = _WRITERS[tool]
            try:
                result = write(self._writer, caller, call, parse(spec, payload))
            except UNRECORDED:
                raise
            except ToolError as exc:
                return writes.record_alone(self._writer, caller, call, error_result(exc), None)
            return result
        except ToolError as exc:
            return error_result(exc)

    def status(self, caller: Caller) -> list[str]:
        """The tier-0 status lines of the conversation's open forms (for the system prompt)."""
        return self.conversation_status(caller) or []

    def conversation_status(self, caller: Caller) -> list[str] | None:
        """Like ``status``, but None when the caller has no form at all in this conversation
        (which is also what another principal's conversation looks like). One store read."""
        return reads.conversation_status(self.loop, caller)

    # ------------------------------------------------------------------ hooks

    def dispatch_entries(
        self, instance: FormInstance, entries: Sequence[OutboxEntry]
    ) -> FormInstance | None:
        """Hand what a commit put in the outbox to the dispatcher (after it is stored).

        ``instance`` is the instance as that commit stored it; returns it as in-process hooks
        left it (itself when nothing ran), or None when the hooks run elsewhere."""
        if not entries or self.dispatcher is None:
            return instance
        return self.dispatcher.dispatch(self, entries, instance)

    def run(self, instance: FormInstance | str, key: str) -> HookRun:
        """Run one outbox entry's executor on ``instance`` (as stored, or its id) and commit its
        effects; see ``forms.app.hooks``. What in-process dispatch calls."""
        return hooks.run_hook(self.loop, instance, key, count=self.count)

    def run_hook(
        self, instance_id: str, key: str, *, max_attempts: int = 3, raise_on_retry: bool = False
    ) -> Sequence[OutboxEntry]:
        """Run one outbox entry's executor and commit its effects; returns the outbox entries
        its effects added. What durable runners call (``forms.app.hooks``)."""
        run = hooks.run_hook(
            self.loop,
            instance_id,
            key,
            max_attempts=max_attempts,
            raise_on_retry=raise_on_retry,
            count=self.count,
        )
        return run.added

    def retry_hook(self, instance_id: str, key: str) -> bool:
        """Operator action: put a failed outbox entry back to pending and dispatch it again.

        The occurrence and its key stay the same, so the executor sees the key it saw before.
        Returns False when there is no such failed entry.
        """
        done = hooks.reopen(self.loop, instance_id, key)
        if done is None or done.value is None:
            return False
        self.dispatch_entries(done.instance, [done.value])
        return True

    def mark_dispatched(self, instance_id: str, keys: Sequence[str]) -> list[str]:
        """Record that durable runs were started for ``keys``; see ``forms.app.hooks``."""
        return hooks.mark_dispatched(self.loop, instance_id, keys)

    # ------------------------------------------------------------------ approvals

    def decide(
        self,
        approver: Approver,
        approval_id: str,
        decision: Literal["approved", "rejected"],
        note: str | None = None,
    ) -> Result:
        """An approver's decision on a pending approval, as data (see ``forms.app.approvals``)."""
        try:
            check_id(approval_id, "approval id")
            if note is not None and len(note) > 1000:
                raise BadRequest("the note is over 1000 characters", "shorten it")
            decided = approvals.decide(self.loop, approval_id, approver, decision, note)
        except ToolError as exc:
            return error_result(exc)
        self._notify_decided(approval_id)
        after = self.dispatch_entries(decided.instance, decided.dispatch)
        if after is None:
            after = self.loop.load(decided.instance_id) or decided.instance
        form, instance = self.loop.settle(after)
        line = status_line(form, instance, evaluate(form, instance))
        result: Result = {
            "ok": True,
            "summary": f"Recorded {decision} on {inline(form.fields[decided.field].label)}.",
            "approval": approval_id,
            "instance": instance.id,
            "form_status": instance.state.status,
        }
        if line:
            result["status_line"] = line
        return result

    def _notify_decided(self, approval_id: str) -> None:
        """Tell a dispatcher that runs approval waits elsewhere (``DecisionNotifier``), best
        effort, that ``approval_id`` was decided, so its wait ends now rather than at its
        deadline. Never fails the decision: it is already stored; at worst the approval's
        workflow finds it decided when its timer fires."""
        if not isinstance(self.dispatcher, approvals.DecisionNotifier):
            return
        try:
            self.dispatcher.notify_decided(approval_id)
        except Exception:
            _log.warning("could not notify the approval's workflow", exc_info=True)

    def approval(self, approver: Approver, approval_id: str) -> approvals.ApprovalView | None:
        """One approval as ``approver`` sees it, or None when there is none they may decide
        (see ``forms.app.approvals.approval_view``)."""
        return approvals.approval_view(self.loop, approver, approval_id)

    def approval_queue(
        self,
        approver: Approver,
        *,
        limit: int = 20,
        after: str | None = None,
        settled_limit: int = 10,
        settled_after: str | None = None,
    ) -> approvals.ApprovalQueue:
        """The approvals ``approver`` may decide, due first, and those settled lately (see
        ``forms.app.approvals.approval_queue``); ``ValueError`` for a bad limit or cursor."""
        store = self.loop.store
        if not isinstance(store, ApprovalIndex):  # both adapters are: a wrapper that is not
            raise TypeError(f"{type(store).__name__} keeps no approval index")
        return approvals.approval_queue(
            store,
            self.loop.registry,
            approver,
            limit=limit,
            after=after,
            settled_limit=settled_limit,
            settled_after=settled_after,
        )

    def expire_approvals(self, instance_id: str) -> list[str]:
        """Apply the timeout outcome of every approval of an instance past its deadline, then
        dispatch what that fires. Returns the approval ids expired."""
        expired = approvals.expire_due(self.loop, instance_id)
        for decided in expired:
            self.dispatch_entries(decided.instance, decided.dispatch)
        return [d.approval_id for d in expired]


def _failure(tool: str, exc: Exception) -> Result:
    """What a call that raised ``exc`` answers (called while it is being handled, so a
    logged traceback is its own): a refusal as data, a definition that failed, or our fault."""
    if isinstance(exc, ToolError):
        return error_result(exc)
    if isinstance(exc, PredicateError | InvalidFormDefinition):
        _log.error("form definition failed in %s: %s", tool, exc)
        return {
            "ok": False,
            "error": "definition_error",
            "message": f"the form definition failed: {exc}; nothing was saved",
            "hint": "tell the user something went wrong on our side",
        }
    _log.exception("tool call %s failed", tool)
    return {
        "ok": False,
        "error": "internal_error",
        "message": "the call failed on our side",
        "hint": "read the form to see what was saved, then retry once; if it fails "
        "again, tell the user",
    }


_READERS: dict[str, Callable[[CommitLoop, Caller, Any], Result]] = {
    "form_list": reads.form_list,
    "form_read": reads.form_read,
}
_WRITERS: dict[
    str,
    tuple[Callable[[ToolSpec, object], Any], Callable[[Writer, Caller, CallId, Any], Result]],
] = {
    "form_start": (arguments, handovers.form_start),
    # a fill's write reads its arguments' fields: they are validated without the model
    "form_fill": (fill_fields, writes.fill),
    "form_revise": (arguments, writes.form_revise),
    "form_abandon": (arguments, writes.form_abandon),
}
"""Each tool's function, by name (``WRITE_TOOLS`` are the writers), each writer with what
makes its arguments from the call's input."""

__all__ = [
    "MAX_CONFLICT_RETRIES",
    "MAX_OVERTAKEN",
    "Caller",
    "CommitPolicy",
    "Dispatcher",
    "FormService",
    "Memory",
    "jittered_backoff",
    "new_instance_id",
]
