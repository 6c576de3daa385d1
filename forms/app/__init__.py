"""The application layer: the one commit loop and everything built on it.

``forms.app.loop`` is the loop every write goes through (load, migrate, plan, compare-and-set,
retry); the write tools (``writes``), the read tools (``reads``), hook runs (``hooks``) and
approval decisions (``approvals``) are built on it, tool calls are recorded for replay
(``calls``), and ``service.FormService`` is the facade handlers call. It uses the core and the
model-facing surface (``forms.surface``) and reaches storage only through the port
(``forms.storage.port``).

``__all__`` is the application's public API: what the shells (the Lambda functions,
``formwork``'s composition root, client, agents and MCP server, the Temporal workflows, the
local stack and the demo) may use; everything else in these modules is the layer's own. A shell
imports a public name from the package (``from forms.app import FormService``) or from a module
of it (``from forms.app.service import FormService``): the same object, and never a name
``__all__`` leaves out (``tests/unit/test_public_names.py``). Each name is loaded from its
module on first use (PEP 562), not when the package is imported, so a Lambda handler pays at a
cold start only for the modules it uses. Three of the names are modules, each named for the one
use case it serves, which is imported from it (``from forms.app.canvas import canvas``; so
``memory_page`` and ``page_version``): a package's attribute is the module or the function,
never both (Python sets a submodule's on its package when it loads), so a name its module bears
is not loaded through the package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from forms.lazy import exports

if TYPE_CHECKING:
    from forms.app.approvals import ApprovalQueue, ApprovalView, Approver, Decision, QueuedApproval
    from forms.app.behind import Behind
    from forms.app.builder import BuilderService
    from forms.app.builder_tools import BUILDER_ARGUMENTS
    from forms.app.catalog import Catalog, tenant_key
    from forms.app.checked import CheckedCall, check_call, typed_call
    from forms.app.conversation import Caller
    from forms.app.facts import Written
    from forms.app.hooks import Dispatcher, HookRunner, InProcessDispatcher
    from forms.app.loop import CommitPolicy
    from forms.app.memory import Memory
    from forms.app.memory_api import FactRefused, MemoryApi
    from forms.app.migrations import (
        MigrationPlan,
        MigrationStarter,
        StartedMigration,
        StartFailed,
        migrate_page,
        plan_migration,
        start_migration,
    )
    from forms.app.operations import (
        FailedBatch,
        FailedHooks,
        FailureQueue,
        NotAnOperator,
        Operator,
        Received,
        Sweeper,
        batch_from_message,
        failed_hooks,
        redrive,
        relay_failures,
        require_operator,
        require_platform,
        retry_failed_hook,
    )
    from forms.app.page_writes import PagePost, typed_value
    from forms.app.pages import DONE, Notice, form_page, notice
    from forms.app.service import FormService, jittered_backoff, new_instance_id

_EXPORTS = {
    "ApprovalQueue": "forms.app.approvals",
    "ApprovalView": "forms.app.approvals",
    "Approver": "forms.app.approvals",
    "Decision": "forms.app.approvals",
    "QueuedApproval": "forms.app.approvals",
    "Behind": "forms.app.behind",
    "BuilderService": "forms.app.builder",
    "BUILDER_ARGUMENTS": "forms.app.builder_tools",
    "Catalog": "forms.app.catalog",
    "tenant_key": "forms.app.catalog",
    "CheckedCall": "forms.app.checked",
    "check_call": "forms.app.checked",
    "typed_call": "forms.app.checked",
    "Caller": "forms.app.conversation",
    "Written": "forms.app.facts",
    "Dispatcher": "forms.app.hooks",
    "HookRunner": "forms.app.hooks",
    "InProcessDispatcher": "forms.app.hooks",
    "CommitPolicy": "forms.app.loop",
    "Memory": "forms.app.memory",
    "FactRefused": "forms.app.memory_api",
    "MemoryApi": "forms.app.memory_api",
    "MigrationPlan": "forms.app.migrations",
    "MigrationStarter": "forms.app.migrations",
    "StartFailed": "forms.app.migrations",
    "StartedMigration": "forms.app.migrations",
    "migrate_page": "forms.app.migrations",
    "plan_migration": "forms.app.migrations",
    "start_migration": "forms.app.migrations",
    "FailedBatch": "forms.app.operations",
    "FailedHooks": "forms.app.operations",
    "FailureQueue": "forms.app.operations",
    "NotAnOperator": "forms.app.operations",
    "Operator": "forms.app.operations",
    "Received": "forms.app.operations",
    "Sweeper": "forms.app.operations",
    "batch_from_message": "forms.app.operations",
    "failed_hooks": "forms.app.operations",
    "redrive": "forms.app.operations",
    "relay_failures": "forms.app.operations",
    "require_operator": "forms.app.operations",
    "require_platform": "forms.app.operations",
    "retry_failed_hook": "forms.app.operations",
    "PagePost": "forms.app.page_writes",
    "typed_value": "forms.app.page_writes",
    "DONE": "forms.app.pages",
    "Notice": "forms.app.pages",
    "form_page": "forms.app.pages",
    "notice": "forms.app.pages",
    "FormService": "forms.app.service",
    "jittered_backoff": "forms.app.service",
    "new_instance_id": "forms.app.service",
}
"""Each public name but the modules, by the module that defines it."""

__all__ = [
    "BUILDER_ARGUMENTS",
    "DONE",
    "ApprovalQueue",
    "ApprovalView",
    "Approver",
    "Behind",
    "BuilderService",
    "Caller",
    "Catalog",
    "CheckedCall",
    "CommitPolicy",
    "Decision",
    "Dispatcher",
    "FactRefused",
    "FailedBatch",
    "FailedHooks",
    "FailureQueue",
    "FormService",
    "HookRunner",
    "InProcessDispatcher",
    "Memory",
    "MemoryApi",
    "MigrationPlan",
    "MigrationStarter",
    "NotAnOperator",
    "Notice",
    "Operator",
    "PagePost",
    "QueuedApproval",
    "Received",
    "StartFailed",
    "StartedMigration",
    "Sweeper",
    "Written",
    "batch_from_message",
    "canvas",
    "check_call",
    "failed_hooks",
    "form_page",
    "jittered_backoff",
    "memory_page",
    "migrate_page",
    "new_instance_id",
    "notice",
    "page_version",
    "plan_migration",
    "redrive",
    "relay_failures",
    "require_operator",
    "require_platform",
    "retry_failed_hook",
    "start_migration",
    "tenant_key",
    "typed_call",
    "typed_value",
]


# Hidden from type checkers: ``from forms.app import Typo`` stays an error.
if not TYPE_CHECKING:
    __getattr__, __dir__ = exports(globals(), _EXPORTS)  # forms.lazy: loaded on first read
