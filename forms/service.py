"""The composition root for tool calls: resolve, compute (pure engine), commit, then dispatch.

``FormService`` is the one place where the engine meets storage, the clock, ids and dispatch.
Handlers (in-process, Lambda, MCP) call ``FormService.call`` with a verified principal, a
conversation id, a tool name, a tool-call id and the model's input, and get a JSON-ready result
back. Every failure a caller can cause comes back as data (``ok: false`` with an error code, a
message and a hint); nothing the model sends can raise out of ``call``.

Writes are compare-and-set: a conflict is retried on the instance the store hands back, a few
times. A write tool's call is recorded under its tool-call id, per conversation, whatever its
outcome: in the same commit as its changes, or on its own when it changed nothing or was
refused. The store refuses a second record of an id, so a retried call returns its first result
(within the replay window) and applies nothing twice, even when the retries race.
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
import re
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, Protocol

from pydantic import ValidationError

from forms.approvals import Approver
from forms.compiled import CompiledForm
from forms.engine import PredicateError, Transition, evaluate, transition
from forms.errors import (
    AmbiguousInstance,
    BadRequest,
    CallRecorded,
    ConflictError,
    FormClosed,
    InvalidFormDefinition,
    NotFound,
    ToolCallConflict,
    ToolCallExpired,
    ToolError,
    TooManyConflicts,
    UnknownForm,
    UnknownInstance,
    UnknownStep,
)
from forms.instance import CallRecord, FormInstance, InstanceState, NewCall, OutboxEntry
from forms.operations import (
    Author,
    plan_declines,
    plan_fill,
    plan_revise,
    resolve_field,
    touched_steps,
)
from forms.registry import FormRegistry, migration_commit
from forms.results import (
    Result,
    as_json,
    count,
    describe_validation,
    error_result,
    fill_result,
    hook_report,
    not_ready,
    revise_result,
    submitted_result,
    with_status_line,
)
from forms.storage.port import FormStore
from forms.tools import (
    TOOLS_BY_NAME,
    FormAbandonArgs,
    FormFillArgs,
    FormReadArgs,
    FormReviseArgs,
    FormStartArgs,
    ToolSpec,
)
from forms.view import (
    closed_view,
    field_view,
    form_tag,
    outline_view,
    status_line,
    step_view,
)

_log = logging.getLogger("formwork")

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$")
DEFAULT_REPLAY_WINDOW = timedelta(hours=24)
"""How long a retried tool call gets its first result back; later it is ``tool_call_expired``."""
WRITE_TOOLS = frozenset({"form_start", "form_fill", "form_revise", "form_abandon"})
"""The tools whose calls are recorded (reads have no effect to repeat)."""
_UNRECORDED = (TooManyConflicts, ToolCallConflict, ToolCallExpired)
"""Refusals that say nothing about the call itself: sending it again is the remedy, or it is
already someone else's. They are never recorded as the call's result."""


@dataclass(frozen=True, slots=True)
class CallId:
    """A write tool call being answered: its tool, id, and the fingerprint of what was sent."""

    tool: str
    id: str
    fingerprint: str


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


def check_id(value: str, what: str) -> str:
    """Reject ids that are empty, too long or carry characters outside a safe set."""
    if not isinstance(value, str) or not _ID.fullmatch(value):
        raise BadRequest(
            f"{what} must be 1-128 characters of letters, digits and . _ : @ -",
            f"send a plain {what}",
        )
    return value


def fingerprint(tool: str, payload: object) -> str:
    """A digest of a call as the model sent it (before validation, so a refused input binds
    its id too)."""
    try:
        canonical = json.dumps({"tool": tool, "input": payload}, sort_keys=True, default=str)
    except (ValueError, TypeError, RecursionError):  # an integer past the digit limit, say
        raise BadRequest(
            "the input cannot be read as JSON", "send plain JSON values (numbers of sane size)"
        ) from None
    return hashlib.sha256(canonical.encode()).hexdigest()


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
                reader: Result = getattr(self, "_" + tool)(caller, _args(spec, payload))
                return reader
            call = CallId(tool, tool_call_id, fingerprint(tool, payload))
            try:
                result: Result = getattr(self, "_" + tool)(caller, call, _args(spec, payload))
            except _UNRECORDED:
                raise
            except ToolError as exc:
                return self._record_alone(caller, call, error_result(exc), None)
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
        check_id(caller.conversation_id, "conversation id")
        everything = self.store.list_conversation(caller.principal, caller.conversation_id)
        if not everything:
            return None
        instances = [i for i in everything if i.state.status == "open"]
        lines: list[str] = []
        for stored in instances:
            try:
                form, instance = self._current(stored)
                same = sum(1 for i in instances if i.form_id == instance.form_id)
                line = status_line(form, instance, evaluate(form, instance), qualify=same > 1)
            except ToolError as exc:
                lines.append(f"[form: {stored.form_id}#{stored.id}] unavailable: {exc.message}")
                continue
            except (PredicateError, InvalidFormDefinition) as exc:
                _log.error("status line of %s failed: %s", stored.id, exc)
                lines.append(f"[form: {stored.form_id}#{stored.id}] unavailable: internal error")
                continue
            if line:
                lines.append(line)
        return lines

    # ------------------------------------------------------------------ tools

    def _form_list(self, caller: Caller, args: object) -> Result:
        del args
        mine = self.store.list_conversation(caller.principal, caller.conversation_id)
        return {
            "ok": True,
            "summary": f"{count(len(self.registry.forms()), 'form')} available; "
            f"{len(mine)} in this conversation.",
            "forms": [
                {
                    "id": f.id,
                    "title": f.title,
                    **({"about": f.description} if f.description else {}),
                }
                for f in self.registry.forms()
            ],
            "started": [
                {
                    "form": i.form_id,
                    "instance": i.id,
                    "status": self._list_status(i),
                    **({"reason": i.state.closed_reason} if i.state.closed_reason else {}),
                }
                for i in mine
            ],
        }

    def _list_status(self, stored: FormInstance) -> str:
        """An instance's status for form_list: a complete form still open says so."""
        if stored.state.status != "open":
            return stored.state.status
        try:
            form, instance = self._current(stored)
            ready = evaluate(form, instance).ready
        except (ToolError, PredicateError, InvalidFormDefinition):
            return "open"
        return "complete (still open for corrections)" if ready else "open"

    def _form_start(self, caller: Caller, call: CallId, args: FormStartArgs) -> Result:
        form = self.registry.latest(args.form)
        mine = self.store.list_conversation(caller.principal, caller.conversation_id)
        now = self.clock()
        base = FormInstance(
            id=self.new_id(),
            form_id=form.id,
            form_version=form.version,
            principal=caller.principal,
            conversation_id=caller.conversation_id,
            created_at=now,
            state=InstanceState(updated_at=now),
        )
        author = Author(source=_source(caller), actor=caller.principal, tool_call_id=call.id)
        plan = plan_fill(form, base, args.values or {}, author, now)
        plan_declines(form, base, plan, args.decline or (), author, now)
        step = transition(form, base, plan.changes, now)
        started = [i for i in mine if i.form_id == form.id and i.state.status == "open"]
        result = fill_result(form, step, plan, verb="Started")
        result["instance"] = base.id
        if started:
            result["note"] = (
                f"this conversation already had {len(started)} open {form.id}; pass instance "
                "ids from now on"
            )
        result = with_status_line(result, form, step, qualify=bool(started))
        try:
            self.store.create(step.after, self._new_call(call, result, base.id, now))
        except CallRecorded as taken:  # a retry of a start that already happened
            return self._replay(caller, call, taken.record)
        self._dispatch(step.dispatch)
        return self._after_dispatch(result, base.id, step, bool(started))

    def _form_read(self, caller: Caller, args: FormReadArgs) -> Result:
        instance, qualify = self._locate(caller, args.form, args.instance)
        form, instance = self._current(instance)
        ev = evaluate(form, instance)
        header: Result = {"ok": True, "form": form.id, "instance": instance.id}
        if instance.state.status != "open":
            header["closed"] = instance.state.status
            if instance.state.closed_reason:
                header["reason"] = instance.state.closed_reason
        part = (args.part or "").strip()
        closed = instance.state.status != "open"
        if closed and (not part or part.lower() == "outline"):
            view = closed_view(form, instance, ev)
            header["summary"] = (
                f"{form.title} is {instance.state.status}"
                + (f" ({instance.state.closed_reason})" if instance.state.closed_reason else "")
                + "; it takes no more changes. The answers on record follow."
            )
        elif not part:
            if ev.open_step is None:
                view = outline_view(form, instance, ev)
                header["summary"] = "Nothing left to ask; the outline follows."
            else:
                view = step_view(form, instance, ev, ev.open_step)
                header["summary"] = f"Open step: {form.steps[ev.open_step].title}."
        elif part.lower() == "outline":
            view = outline_view(form, instance, ev)
            header["summary"] = f"Outline of {form.title}."
        elif (step_id := form.resolve_step(part)) is not None:
            view = step_view(form, instance, ev, step_id)
            header["summary"] = f"Step: {form.steps[step_id].title}."
        elif (field_id := form.resolve_field(part)) is not None:
            view = field_view(form, instance, ev, field_id)
            header["summary"] = f"Field {form.fields[field_id].label} with its revisions."
        else:
            close = form.suggest_steps(part) + form.suggest_fields(part)
            raise UnknownStep(
                f"{part!r} is neither a step nor a field of {form.id!r}",
                ("did you mean " + ", ".join(repr(c) for c in close) + "? " if close else "")
                + 'omit part for the open step, or send "outline"',
            )
        line = status_line(form, instance, ev, qualify=qualify)
        return {**header, **view, **({"status_line": line} if line else {})}

    def _form_fill(self, caller: Caller, call: CallId, args: FormFillArgs) -> Result:
        def build(form: CompiledForm, instance: FormInstance) -> tuple[Transition, Result]:
            now = self.clock()
            author = Author(source=_source(caller), actor=caller.principal, tool_call_id=call.id)
            plan = plan_fill(form, instance, args.values or {}, author, now)
            plan_declines(form, instance, plan, args.decline or (), author, now)
            touched = touched_steps(form, plan.changes, plan.unchanged)
            step = transition(form, instance, plan.changes, now, touched_steps=touched)
            result = fill_result(form, step, plan, verb="Saved")
            if not args.submit or step.after.state.status != "open":
                return step, result
            refusal = not_ready(form, step.evaluation)
            if refusal is not None:
                return step, {**result, "submitted": False, "not_submitted": refusal}
            state = instance.state.model_copy(
                update={"status": "completed", "closed_reason": "submitted"}
            )
            step = transition(form, instance, plan.changes, now, state=state, touched_steps=touched)
            return step, submitted_result(form, step, plan)

        return self._write(caller, call, args, build)

    def _form_revise(self, caller: Caller, call: CallId, args: FormReviseArgs) -> Result:
        def build(form: CompiledForm, instance: FormInstance) -> tuple[Transition, Result]:
            now = self.clock()
            field_id = resolve_field(form, args.field)
            author = Author(source=_source(caller), actor=caller.principal, tool_call_id=call.id)
            plan = plan_revise(form, instance, field_id, args.action, args.value, author, now)
            if field_id != args.field:
                plan.resolved[args.field] = field_id
            step = transition(
                form,
                instance,
                plan.changes,
                now,
                touched_steps=touched_steps(form, plan.changes, plan.unchanged),
            )
            return step, revise_result(form, step, plan, args.action, field_id)

        return self._write(caller, call, args, build)

    def _form_abandon(self, caller: Caller, call: CallId, args: FormAbandonArgs) -> Result:
        def build(form: CompiledForm, instance: FormInstance) -> tuple[Transition, Result]:
            now = self.clock()
            state = instance.state.model_copy(
                update={"status": "abandoned", "closed_reason": args.reason.strip()}
            )
            step = transition(form, instance, {}, now, state=state)
            return step, {
                "ok": True,
                "summary": f"Abandoned {form.title}: {args.reason.strip()}. Answers are kept.",
            }

        return self._write(caller, call, args, build)

    # ------------------------------------------------------------------ plumbing

    def _write(
        self,
        caller: Caller,
        call: CallId,
        args: FormFillArgs | FormReviseArgs | FormAbandonArgs,
        build: Callable[[CompiledForm, FormInstance], tuple[Transition, Result]],
    ) -> Result:
        instance, qualify = self._locate(caller, args.form, args.instance)
        for attempt in range(self.max_conflict_retries + 1):
            if attempt:
                self.backoff(attempt - 1)
            if instance.state.status != "open":
                raise FormClosed(
                    f"this {instance.form_id} is {instance.state.status}"
                    + (f" ({instance.state.closed_reason})" if instance.state.closed_reason else "")
                    + "; it takes no more changes",
                    "nothing to do: it is already closed"
                    if call.tool == "form_abandon"
                    else "start the form again if the user wants to change something",
                )
            form, instance = self._current(instance)
            step, result = build(form, instance)
            result = with_status_line(result, form, step, qualify)
            if not step.commit.fields and step.commit.state == instance.state.model_copy(
                update={"updated_at": step.commit.state.updated_at}
            ):
                return self._record_alone(caller, call, result, instance.id)
            now = step.commit.state.updated_at
            commit = step.commit.model_copy(
                update={"call": self._new_call(call, result, instance.id, now)}
            )
            try:
                stored = self.store.commit(commit)
            except CallRecorded as taken:
                return self._replay(caller, call, taken.record)
            except ConflictError as conflict:
                instance = conflict.current or self.store.get(instance.id)
                continue
            self._dispatch(step.dispatch)
            return self._after_dispatch(result, stored.id, step, qualify)
        raise TooManyConflicts(
            "the form was busy with other writes; nothing was saved", "send the same call again"
        )

    def _new_call(
        self, call: CallId, result: Result, instance_id: str | None, now: datetime
    ) -> NewCall:
        record = CallRecord(
            tool=call.tool,
            fingerprint=call.fingerprint,
            result=as_json(result),
            at=now,
            instance_id=instance_id,
        )
        return NewCall(call_id=call.id, record=record)

    def _record_alone(
        self, caller: Caller, call: CallId, result: Result, instance_id: str | None
    ) -> Result:
        """Bind the call's id to a result that stored nothing (a refusal, or no change), so a
        different input under the same id is a conflict; a retry gets the first result."""
        try:
            self.store.record_call(
                caller.principal,
                caller.conversation_id,
                self._new_call(call, result, instance_id, self.clock()),
            )
        except CallRecorded as taken:
            return self._replay(caller, call, taken.record)
        return result

    def _replay(self, caller: Caller, call: CallId, record: CallRecord) -> Result:
        """The first result of a call, whole, with the form's status as it stands now; nothing
        is applied. A different call under the id is a conflict; one past the window expired."""
        if record.tool != call.tool or record.fingerprint != call.fingerprint:
            raise ToolCallConflict(
                "this tool_call_id was already used for a different call",
                "use a new tool_call_id for a new call",
            )
        age = self.clock() - record.at
        if age > self.replay_window:
            raise ToolCallExpired(
                f"this tool_call_id was used {_duration(age)} ago, longer than the "
                f"{_duration(self.replay_window)} a retry is answered for; it was not applied "
                "again",
                "use a new tool_call_id for a new call; form_read shows what is saved",
            )
        result: Result = {**record.result, "replayed": True}
        if record.instance_id is None:
            return result
        try:
            stored = self.store.get(record.instance_id)
        except NotFound:
            return result
        mine = self.store.list_conversation(caller.principal, caller.conversation_id)
        open_ = [i for i in mine if i.state.status == "open" and i.form_id == stored.form_id]
        fired = [k for k in result.get("fired", ()) if isinstance(k, str)]
        return self._as_now(result, stored, fired, len(open_) > 1)

    def _locate(
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

    def _current(self, instance: FormInstance) -> tuple[CompiledForm, FormInstance]:
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

    def _dispatch(self, entries: Sequence[OutboxEntry]) -> None:
        if entries and self.dispatcher is not None:
            self.dispatcher.dispatch(self, entries)

    def _after_dispatch(
        self, result: Result, instance_id: str, step: Transition, qualify: bool
    ) -> Result:
        """The result with the status as it stands after in-process hooks ran."""
        if not step.dispatch or self.dispatcher is None:
            return result
        try:
            instance = self.store.get(instance_id)
        except NotFound:
            return result
        fired = [e.key for e in step.dispatch]
        return self._as_now(result, instance, fired, qualify)

    def _as_now(
        self,
        result: Result,
        stored: FormInstance,
        fired: Sequence[str],
        qualify: bool,
    ) -> Result:
        """``result`` with the form's status line, closing and hook states as they are now.

        ``hooks`` reports every occurrence the call raised: those its own commit fired and the
        knock-ons (occurrences raised by their effects, transitively), with their state now.
        """
        form, instance = self._current(stored)
        updated = dict(result)
        line = status_line(form, instance, evaluate(form, instance), qualify=qualify)
        updated.pop("status_line", None)
        if line:
            updated["status_line"] = line
        if instance.state.status != "open":
            updated["closed"] = instance.state.status
            if instance.state.closed_reason:
                updated["reason"] = instance.state.closed_reason
            unknown = updated.get("unknown")
            if isinstance(unknown, list):  # a closed form takes no more answers: none to list
                updated["unknown"] = [
                    {k: v for k, v in u.items() if k != "still_to_ask"}
                    if isinstance(u, dict)
                    else u
                    for u in unknown
                ]
                if updated.get("hint", "").startswith("form_read"):
                    del updated["hint"]
        keys = caused_by(instance, fired) if self.dispatcher is not None else []
        if keys:
            updated["hooks"] = hook_report(instance, [instance.state.outbox[k] for k in keys])
        return updated

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
            form, instance = self._current(instance)
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
        from forms.hooks import reopen

        entry = reopen(self, instance_id, key)
        if entry is None:
            return False
        self._dispatch([entry])
        return True

    def run_hook(
        self, instance_id: str, key: str, *, max_attempts: int = 3, raise_on_retry: bool = False
    ) -> Sequence[OutboxEntry]:
        """Run one outbox entry's executor and commit its effects; see ``forms.hooks``."""
        from forms.hooks import run_hook

        return run_hook(
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
        from forms.approvals import decide

        try:
            check_id(approval_id, "approval id")
            if note is not None and len(note) > 1000:
                raise BadRequest("the note is over 1000 characters", "shorten it")
            decided = decide(self, approval_id, approver, decision, note)
        except ToolError as exc:
            return error_result(exc)
        self._dispatch(decided.dispatch)
        instance = self.store.get(decided.instance_id)
        form, instance = self._current(instance)
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
        from forms.approvals import expire_due

        expired = expire_due(self, instance_id)
        for decided in expired:
            self._dispatch(decided.dispatch)
        return [d.approval_id for d in expired]

    def mark_dispatched(self, instance_id: str, keys: Sequence[str]) -> list[str]:
        """Record that durable runs were started for ``keys``; see ``forms.hooks``."""
        from forms.hooks import mark_dispatched

        return mark_dispatched(self, instance_id, keys)


def _source(caller: Caller) -> Any:
    return caller.source


def _args(spec: ToolSpec, payload: object) -> Any:
    try:
        return spec.args.model_validate(payload)
    except ValidationError as exc:
        raise BadRequest(describe_validation(exc), "check the tool's input schema") from None


def caused_by(instance: FormInstance, fired: Sequence[str]) -> list[str]:
    """``fired`` and every outbox entry raised by their effects, transitively, in outbox order."""
    found = {k for k in fired if k in instance.state.outbox}
    grew = True
    while grew:
        grew = False
        for key, entry in instance.state.outbox.items():
            if key not in found and entry.cause in found:
                found.add(key)
                grew = True
    return [k for k in instance.state.outbox if k in found]


def _duration(span: timedelta) -> str:
    seconds = int(span.total_seconds())
    if seconds >= 2 * 86_400:
        return f"{seconds // 86_400} days"
    if seconds >= 2 * 3_600:
        return f"{seconds // 3_600} hours"
    if seconds >= 120:
        return f"{seconds // 60} minutes"
    return f"{seconds} seconds"


def tag(instance: FormInstance, qualify: bool) -> str:
    return form_tag(instance, qualify)
