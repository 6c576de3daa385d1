"""The demo in this process: ``InProcess``, a ``Transport`` with no HTTP and the same output
on every run.

``InProcess`` runs ``FormService`` here, on the in-memory store and the in-process dispatcher,
with a fixed ``Clock`` and sequential ids; an approval is decided through
``FormService.decide`` and answered with the status the API would give; the builder is
``BuilderService`` on in-memory drafts, publishing into the ``Catalog`` the form service reads.

Memory is on, wired as the App wires it: ``Memory`` on an in-memory fact store
(``CountingFactStore``, which counts the fact reads made for each principal, so the demo can
show that memory off reads none), Formwork's vocabulary and decay policy, the service's clock.
Two things differ, both so that what memory recalls and records is the same on every run: its
reads and writes run in the calling thread (``InThisThread``) and its deadline is not measured
(a thread pool under load could miss it now and then). The user's fact editor is
``formwork.examples.demo.fact_editor.InProcessFactEditor``, which answers as the ``/memory``
routes do.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, Future
from datetime import UTC, datetime, timedelta
from typing import Any, ParamSpec, TypeVar

from forms import Approver, Caller, FormService
from forms.app.approvals import Decision
from forms.app.builder import BuilderService
from forms.app.catalog import Catalog
from forms.app.hooks import InProcessDispatcher
from forms.app.loop import CommitPolicy
from forms.app.memory import Memory
from forms.app.service import jittered_backoff
from forms.documents import Limits
from forms.errors import NotFound, ToolError
from forms.examples import EXAMPLES
from forms.memory import DecayPolicy, FactHead, FactRevision, Vocabulary
from forms.registry import FormRegistry
from forms.storage import InMemoryFormStore
from forms.storage.documents import InMemoryFormDocumentStore
from forms.storage.drafts import InMemoryDraftStore
from forms.storage.facts import InMemoryFactStore
from formwork.config import DEFAULT_PUBLISHER_ROLE
from formwork.examples.demo.fact_editor import InProcessFactEditor
from formwork.examples.executors import EXECUTORS

P = ParamSpec("P")
T = TypeVar("T")

DECISION_STATUS = {"unknown_approval": 404, "form_closed": 409, "bad_request": 400}
"""The HTTP status ``POST /approvals/{id}`` answers for each refusal (``formwork.aws.api``)."""


class Clock:
    """A fixed start that ticks one second per reading."""

    def __init__(self) -> None:
        self.now = datetime(2025, 3, 10, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


class InThisThread(Executor):
    """Runs each piece of work when it is submitted, in the calling thread: its future is
    done (with the result or the exception) before ``submit`` returns."""

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        done: Future[T] = Future()
        try:
            done.set_result(fn(*args, **kwargs))
        except Exception as failed:
            done.set_exception(failed)
        return done


class CountingFactStore(InMemoryFactStore):
    """The in-memory fact store, counting per principal the reads of facts (a head, every
    head, a history, an export); reading the memory switch is not a fact read."""

    def __init__(self) -> None:
        super().__init__()
        self.fact_reads: Counter[str] = Counter()

    def head(self, principal: str, key: str) -> FactHead | None:
        self.fact_reads[principal] += 1
        return super().head(principal, key)

    def heads(self, principal: str) -> list[FactHead]:
        self.fact_reads[principal] += 1
        return super().heads(principal)

    def history(self, principal: str, key: str) -> list[FactRevision]:
        self.fact_reads[principal] += 1
        return super().history(principal, key)

    def export(self, principal: str) -> list[FactRevision]:
        self.fact_reads[principal] += 1
        return super().export(principal)


class InProcess:
    """``FormService`` in this process: in-memory store, fixed clock, sequential ids.

    Memory is on, as the App wires it (``Memory`` on an in-memory fact store, Formwork's
    vocabulary and decay policy, the service's clock), except that its reads and writes run
    in the calling thread and its deadline is not measured, so recall is the same on every
    run. (A slow or failing fact store is the tests' to show:
    ``tests/unit/test_memory_recall.py``.)"""

    principal = "user-1"
    tenant = "acme"
    other_tenant = "globex"

    def __init__(self) -> None:
        ids = iter(range(1, 1000))
        clock = Clock()
        vocabulary, policy = Vocabulary.default(), DecayPolicy.default()
        self.facts = CountingFactStore()
        commits = CommitPolicy(backoff=jittered_backoff)  # every commit loop's, as the App's
        self.fact_editor = InProcessFactEditor(self.facts, vocabulary, policy, clock, commits)
        self.catalog = Catalog(
            FormRegistry(EXAMPLES, vocabulary=vocabulary),
            InMemoryFormDocumentStore(),
            timer=lambda: 0.0,
            executors=EXECUTORS,
            ttl=0.0,
        )
        self.service = FormService(
            self.catalog,
            InMemoryFormStore(),
            InProcessDispatcher(),
            clock=clock,
            new_id=lambda: f"fi_{next(ids):04d}",
            timer=lambda: 0.0,
            policy=commits,
            memory=Memory(
                self.facts,
                vocabulary=vocabulary,
                policy=policy,
                timer=lambda: 0.0,
                executor=InThisThread(),
            ),
        )
        self.builder = BuilderService(
            InMemoryDraftStore(),
            self.catalog,
            clock=clock,
            limits=lambda tenant: Limits(),
            policy=commits,
            selections=None,
        )

    def describe(self) -> str:
        return "in-process (FormService, in-memory store, fixed clock)"

    def call(self, caller: Caller, tool: str, tool_call_id: str, payload: dict[str, Any]) -> Any:
        return self.service.call(caller, tool, tool_call_id, payload)

    def status(self, caller: Caller) -> list[str]:
        return self.service.status(caller)

    def value(self, caller: Caller, form: str, instance: str, field_id: str) -> Any:
        revision = self.service.store.get(instance).field(field_id).in_force()
        return revision.value if revision is not None else None

    def decide(
        self,
        approver: str,
        roles: Sequence[str],
        approval_id: str,
        decision: Decision,
        note: str | None = None,
    ) -> tuple[int, dict[str, Any]]:
        who = Approver(approver, frozenset(roles))
        result = self.service.decide(who, approval_id, decision, note)
        status = 200 if result["ok"] else DECISION_STATUS.get(result["error"], 200)
        if status != 200:
            return status, {"error": result["error"], "message": result["message"]}
        return status, result

    def workflow(self, key: str, wait: float = 0.0) -> dict[str, str] | None:
        return None

    def build(
        self,
        principal: str,
        form_id: str,
        tool: str,
        tool_call_id: str,
        payload: dict[str, Any],
        selection: dict[str, str] | None = None,
        *,
        chat_id: str,
        cancelled: bool = False,
    ) -> dict[str, Any]:
        return self.builder.call(
            principal,
            form_id,
            tool,
            tool_call_id,
            payload,
            selection=selection,
            chat=chat_id,
            cancelled=cancelled,
        )

    def draft(self, principal: str, form_id: str) -> tuple[int, dict[str, Any]]:
        try:
            return 200, self.builder.draft(principal, form_id).as_json()
        except NotFound as missing:
            return 404, {"error": "not_found", "message": str(missing)}

    def publish(
        self, principal: str, roles: Sequence[str], form_id: str
    ) -> tuple[int, dict[str, Any]]:
        # the HTTP layer's role check, as formwork.aws.builder_routes makes it
        if DEFAULT_PUBLISHER_ROLE not in roles:
            return 403, {"error": "forbidden", "message": "publishing needs the publisher role"}
        try:
            published = self.builder.publish(principal, form_id)
        except NotFound as missing:
            return 404, {"error": "not_found", "message": str(missing)}
        except ToolError as refused:
            return 409, {"error": refused.code, "message": str(refused)}
        return 200, {"form": published.form_id, "version": published.version}

    def state_fact(
        self, principal: str, key: str, statement: dict[str, Any]
    ) -> tuple[int, dict[str, Any]]:
        return self.fact_editor.state_fact(principal, key, statement)

    def read_fact(
        self, principal: str, key: str, as_of: str | None = None
    ) -> tuple[int, dict[str, Any]]:
        then = datetime.fromisoformat(as_of) if as_of is not None else None
        return self.fact_editor.read_fact(principal, key, then)

    def list_facts(self, principal: str) -> tuple[int, dict[str, Any]]:
        return self.fact_editor.list_facts(principal)

    def switch_memory(self, principal: str, enabled: bool) -> tuple[int, dict[str, Any]]:
        return self.fact_editor.switch_memory(principal, enabled)

    def facts_read(self, principal: str) -> int | None:
        return self.facts.fact_reads[principal]
