"""The composition root for tool calls: resolve, compute (pure engine), commit, then dispatch.

``FormService`` is the one place where the engine meets storage, the clock, ids and dispatch.
Handlers (in-process, Lambda, MCP) call ``FormService.call`` with a verified principal, a
conversation id, a tool name, a tool-call id and the model's input, and get a JSON-ready result
back. Every failure a caller can cause comes back as data (``ok: false`` with an error code, a
message and a hint); nothing the model sends can raise out of ``call``.

Writes are compare-and-set: a conflict is retried on the instance the store hands back, a few
times. A write records its tool-call id in the same commit, so a replayed call returns its
first result and applies nothing twice.
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
import re
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal, Protocol

from pydantic import ValidationError

from forms.approvals import Approver
from forms.compiled import CompiledForm
from forms.engine import PredicateError, Transition, evaluate, transition
from forms.errors import (
    AmbiguousInstance,
    BadRequest,
    ConflictError,
    FormClosed,
    InvalidFormDefinition,
    NotFound,
    ToolCallConflict,
    ToolError,
    TooManyConflicts,
    UnknownForm,
    UnknownInstance,
    UnknownStep,
)
from forms.instance import CallRecord, FormInstance, InstanceState, OutboxEntry
from forms.operations import (
    Author,
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
    revise_result,
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
)
from forms.view import field_view, form_tag, outline_view, status_line, step_view

_log = logging.getLogger("formwork")

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$")
MAX_CALLS_KEPT = 200
"""Tool-call records kept per instance for replay; the oldest are dropped past this."""


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


def fingerprint(tool: str, payload: Mapping[str, Any]) -> str:
    canonical = json.dumps({"tool": tool, "input": payload}, sort_keys=True, default=str)
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
    ) -> None:
        self.registry = registry
        self.store = store
        self.dispatcher = dispatcher
        self.clock = clock
        self.new_id = new_id
        self.max_conflict_retries = max_conflict_retries
        self.backoff = backoff if backoff is not None else jittered_backoff

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
            try:
                args = spec.args.model_validate(payload if payload is not None else {})
            except ValidationError as exc:
                raise BadRequest(
                    describe_validation(exc), "check the tool's input schema"
                ) from None
            handler = getattr(self, "_" + tool)
            result: Result = handler(caller, tool_call_id, args)
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

    def _form_list(self, caller: Caller, call_id: str, args: object) -> Result:
        del call_id, args
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
                    "status": i.state.status,
                    **({"reason": i.state.closed_reason} if i.state.closed_reason else {}),
                }
                for i in mine
            ],
        }

    def _form_start(self, caller: Caller, call_id: str, args: FormStartArgs) -> Result:
        form = self.registry.latest(args.form)
        mine = self.store.list_conversation(caller.principal, caller.conversation_id)
        for existing in mine:
            record = existing.state.calls.get(call_id)
            if record is not None:
                return self._replay(record, "form_start", args, existing, False)
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
        author = Author(source=_source(caller), actor=caller.principal, tool_call_id=call_id)
        plan = plan_fill(form, base, args.values or {}, author, now)
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
        created = self._with_call(step, "form_start", call_id, args, result).after
        self.store.create(created)
        self._dispatch(step.dispatch)
        return self._after_dispatch(result, created.id, step, bool(started))

    def _form_read(self, caller: Caller, call_id: str, args: FormReadArgs) -> Result:
        del call_id
        instance, qualify = self._locate(caller, args.form, args.instance)
        form, instance = self._current(instance)
        ev = evaluate(form, instance)
        header: Result = {"ok": True, "form": form.id, "instance": instance.id}
        if instance.state.status != "open":
            header["closed"] = instance.state.status
            if instance.state.closed_reason:
                header["reason"] = instance.state.closed_reason
        part = (args.part or "").strip()
        if not part:
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

    def _form_fill(self, caller: Caller, call_id: str, args: FormFillArgs) -> Result:
        def build(form: CompiledForm, instance: FormInstance) -> tuple[Transition, Result]:
            now = self.clock()
            author = Author(source=_source(caller), actor=caller.principal, tool_call_id=call_id)
            plan = plan_fill(form, instance, args.values, author, now)
            step = transition(
                form,
                instance,
                plan.changes,
                now,
                touched_steps=touched_steps(form, plan.changes, plan.unchanged),
            )
            return step, fill_result(form, step, plan, verb="Saved")

        return self._write(caller, call_id, "form_fill", args, build)

    def _form_revise(self, caller: Caller, call_id: str, args: FormReviseArgs) -> Result:
        def build(form: CompiledForm, instance: FormInstance) -> tuple[Transition, Result]:
            now = self.clock()
            field_id = resolve_field(form, args.field)
            author = Author(source=_source(caller), actor=caller.principal, tool_call_id=call_id)
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

        return self._write(caller, call_id, "form_revise", args, build)

    def _form_abandon(self, caller: Caller, call_id: str, args: FormAbandonArgs) -> Result:
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

        return self._write(caller, call_id, "form_abandon", args, build)

    # ------------------------------------------------------------------ plumbing

    def _write(
        self,
        caller: Caller,
        call_id: str,
        tool: str,
        args: FormFillArgs | FormReviseArgs | FormAbandonArgs,
        build: Callable[[CompiledForm, FormInstance], tuple[Transition, Result]],
    ) -> Result:
        instance, qualify = self._locate(caller, args.form, args.instance)
        for attempt in range(self.max_conflict_retries + 1):
            if attempt:
                self.backoff(attempt - 1)
            record = instance.state.calls.get(call_id)
            if record is not None:
                return self._replay(record, tool, args, instance, qualify)
            if instance.state.status != "open":
                raise FormClosed(
                    f"this {instance.form_id} is {instance.state.status}"
                    + (f" ({instance.state.closed_reason})" if instance.state.closed_reason else "")
                    + "; it takes no more changes",
                    "nothing to do: it is already closed"
                    if tool == "form_abandon"
                    else "start the form again if the user wants to change something",
                )
            form, instance = self._current(instance)
            step, result = build(form, instance)
            result = with_status_line(result, form, step, qualify)
            if not step.commit.fields and step.commit.state == instance.state.model_copy(
                update={"updated_at": step.commit.state.updated_at}
            ):
                return result
            step = self._with_call(step, tool, call_id, args, result)
            try:
                stored = self.store.commit(step.commit)
            except ConflictError as conflict:
                instance = conflict.current or self.store.get(instance.id)
                continue
            self._dispatch(step.dispatch)
            return self._after_dispatch(result, stored.id, step, qualify)
        raise TooManyConflicts(
            "the form was busy with other writes; nothing was saved", "send the same call again"
        )

    def _with_call(
        self, step: Transition, tool: str, call_id: str, args: Any, result: Result
    ) -> Transition:
        now = step.commit.state.updated_at
        record = CallRecord(
            tool=tool,
            fingerprint=fingerprint(tool, args.model_dump(mode="json")),
            result=as_json(result),
            at=now,
        )
        calls = dict(step.commit.state.calls)
        calls[call_id] = record
        if len(calls) > MAX_CALLS_KEPT:
            for old in sorted(calls, key=lambda k: calls[k].at)[: len(calls) - MAX_CALLS_KEPT]:
                del calls[old]
        state = step.commit.state.model_copy(update={"calls": calls})
        commit = step.commit.model_copy(update={"state": state})
        after = step.after.model_copy(update={"state": state})
        return Transition(
            commit=commit,
            after=after,
            evaluation=step.evaluation,
            dispatch=step.dispatch,
            before=step.before,
        )

    def _replay(
        self, record: CallRecord, tool: str, args: Any, instance: FormInstance, qualify: bool
    ) -> Result:
        """The first result of a call, with the status as it stands now; nothing is applied."""
        if record.tool != tool or record.fingerprint != fingerprint(
            tool, args.model_dump(mode="json")
        ):
            raise ToolCallConflict(
                "this tool_call_id was already used for a different call",
                "use a new tool_call_id for a new call",
            )
        result: Result = {**record.result, "replayed": True}
        form, instance = self._current(instance)
        line = status_line(form, instance, evaluate(form, instance), qualify=qualify)
        result.pop("status_line", None)
        if line:
            result["status_line"] = line
        if instance.state.status != "open":
            result["closed"] = instance.state.status
        return result

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
        form, instance = self._current(instance)
        ev = evaluate(form, instance)
        updated = dict(result)
        line = status_line(form, instance, ev, qualify=qualify)
        updated.pop("status_line", None)
        if line:
            updated["status_line"] = line
        if instance.state.status != "open":
            updated["closed"] = instance.state.status
            if instance.state.closed_reason:
                updated["reason"] = instance.state.closed_reason
        hooks = hook_report(instance, step.dispatch)
        if hooks:
            updated["hooks"] = hooks
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


def tag(instance: FormInstance, qualify: bool) -> str:
    return form_tag(instance, qualify)
