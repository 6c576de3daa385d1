"""What workflows, activities and starters exchange, and the hook retry policy.

Plain dataclasses and the standard library only: the workflow sandbox re-imports this module.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

from temporalio.common import RetryPolicy

from forms.keys import parse_key

HOOK_WORKFLOW = "HookWorkflow"
RUN_HOOK_ACTIVITY = "run_hook_activity"
APPROVAL_WORKFLOW = "ApprovalWorkflow"
SETTLE_APPROVAL_ACTIVITY = "settle_approval_activity"
DECIDED_SIGNAL = "decided"
"""Sent to an approval's workflow (id = the approval id) after a decision is stored."""

NON_RETRYABLE = ("InvalidFormDefinition", "EffectError", "ConfigError")
"""Errors no retry can mend: a definition that cannot run, an effect the engine refuses.

``run_hook`` records both on the entry as final itself; these names stop Temporal retrying if
one escapes anyway (the activity's error type is the exception's class name)."""


@dataclass(frozen=True)
class HookPolicy:
    """How one hook occurrence is retried. Fixed when its workflow starts (part of its input),
    so a replay of the workflow never sees a different policy."""

    max_attempts: int = 5
    initial_interval_seconds: float = 1.0
    backoff: float = 2.0
    max_interval_seconds: float = 60.0
    timeout_seconds: float = 300.0
    """One attempt's limit, start to close."""
    heartbeat_seconds: float = 30.0
    """A worker silent for this long is presumed dead and the attempt is retried elsewhere."""

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1 (0 would mean retry forever)")

    def retry_policy(self, after: int = 0) -> RetryPolicy:
        """Temporal's retry policy for the attempts left once ``after`` have been made (the
        first interval is then the one that would have followed them)."""
        return RetryPolicy(
            initial_interval=self.interval(after + 1),
            backoff_coefficient=self.backoff,
            maximum_interval=timedelta(seconds=self.max_interval_seconds),
            maximum_attempts=self.max_attempts - after,
            non_retryable_error_types=list(NON_RETRYABLE),
        )

    def interval(self, failed: int) -> timedelta:
        """The pause after the ``failed``-th failed attempt (1 s, 2 s, 4 s, ... at most the
        maximum interval)."""
        seconds = self.initial_interval_seconds * self.backoff ** max(failed - 1, 0)
        return timedelta(seconds=min(seconds, self.max_interval_seconds))


@dataclass(frozen=True)
class HookInput:
    """One outbox entry to run: the workflow's id is ``key``."""

    instance_id: str
    key: str
    policy: HookPolicy = field(default_factory=HookPolicy)
    local_first: bool = False
    """Run the first attempt as a local activity, in the workflow task that starts the run
    (``formwork.temporal.hooks``): set for the hooks a tool call waits for, which are not slow."""
    attempts_before: int = 0
    """Attempts made before this activity's first (the local one): added to Temporal's
    attempt number, so the policy's count covers both."""


@dataclass(frozen=True)
class HookOutcome:
    """What one run left on the instance.

    ``status`` is the entry's status after the run (``done``, ``failed`` or ``pending``), or
    ``gone`` when the instance or the entry no longer exists. ``dispatched`` lists the keys of
    the follow-up occurrences this run started (hooks its effects fired).
    """

    key: str
    status: str
    attempt: int
    error: str | None = None
    dispatched: list[str] = field(default_factory=list)


def instance_of(key: str, hook_id: str, occurrence: int) -> str:
    """The instance id inside an idempotency key ``{instance_id}:{hook_id}:{occurrence}``."""
    parts = parse_key(key)
    if (parts.hook_id, parts.occurrence) != (hook_id, occurrence):
        raise ValueError(f"{key!r} is not a key of hook {hook_id!r} occurrence {occurrence}")
    return parts.instance_id


APPROVAL_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(seconds=60),
    maximum_attempts=30,
    non_retryable_error_types=list(NON_RETRYABLE),
)
"""The approval activity's retries: about half an hour of trying (a table throttled, a
deadline a worker's clock does not see as passed yet) before the run fails; the sweeper then
starts it again (``docs/dispatch.md``)."""


@dataclass(frozen=True)
class ApprovalInput:
    """One pending approval to wait for: the workflow's id is ``key`` (the approval id).

    ``deadline`` is the outbox entry's, ISO 8601 (None: wait for a decision only). ``policy``
    is passed on to the hook runs the decision or the timeout fires.
    """

    instance_id: str
    key: str
    deadline: str | None
    policy: HookPolicy = field(default_factory=HookPolicy)


@dataclass(frozen=True)
class ApprovalCheck:
    """What the approval activity is asked: settle ``key`` if ``due`` (its deadline passed),
    else only report where it stands."""

    instance_id: str
    key: str
    due: bool
    policy: HookPolicy = field(default_factory=HookPolicy)


@dataclass(frozen=True)
class ApprovalOutcome:
    """Where an approval stands after a check.

    ``status`` is the entry's (``done`` once decided or expired, ``pending``), or ``gone``.
    ``expired`` says this check wrote the timeout outcome. ``decision``, ``by`` and ``actor``
    describe the revision that settled it (``by`` is ``approver`` or ``operator``, ``actor``
    the approver's principal or ``timeout``). ``dispatched`` lists the hook runs started for
    what the settlement fired.
    """

    key: str
    status: str
    expired: bool = False
    decision: str | None = None
    by: str | None = None
    actor: str | None = None
    dispatched: list[str] = field(default_factory=list)
