"""The storage ports have one shape (issue 25 item 3): the port holds the logic, an adapter
implements primitives. For each port below, the port's public methods are written once, in
the port (no adapter overrides one), what an adapter implements is private (a primitive, not a
second public API), and every adapter implements every primitive. Three ports are their
primitives (the delivery log, whose rules are functions over them, the selections and the
page-link ledger): each asks exactly its public methods. No adapter adds a public method to its
ports. The storage modules import without pytest; the contract suites need pytest and nothing
else of the test extra.

``FormStore`` is in it too: its reads, call records and writes (``create``, ``commit``,
``hand_over``) are the port's, written once over primitives.
"""

from __future__ import annotations

import inspect
import pkgutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import forms.storage
from forms.storage.approvals import ApprovalIndex
from forms.storage.calls import CALL_PRIMITIVES, CallRecords
from forms.storage.documents import FormDocumentStore, InMemoryFormDocumentStore
from forms.storage.drafts import PRIMITIVES as DRAFT_PRIMITIVES
from forms.storage.drafts import DraftStore, InMemoryDraftStore
from forms.storage.due import DueIndex
from forms.storage.dynamodb import DynamoDBFormStore
from forms.storage.dynamodb_documents import DynamoDBFormDocumentStore
from forms.storage.dynamodb_drafts import DynamoDBDraftStore
from forms.storage.dynamodb_facts import DynamoDBFactStore
from forms.storage.dynamodb_page_links import DynamoDBPageLinkLedger
from forms.storage.dynamodb_selections import DynamoDBSelectionStore
from forms.storage.facts import FactStore, InMemoryFactStore
from forms.storage.failed_hooks import FailedHookIndex
from forms.storage.memory import InMemoryFormStore
from forms.storage.open_forms import OpenFormIndex
from forms.storage.page_links import InMemoryPageLinkLedger, PageLinkLedger
from forms.storage.port import FORM_STORE_PRIMITIVES, FormStore, OutboxScan
from forms.storage.selections import InMemorySelectionStore, SelectionStore
from formwork.webhooks.dynamodb import DynamoDBDeliveryLog
from formwork.webhooks.log import DeliveryLog
from formwork.webhooks.memory import InMemoryDeliveryLog

ROOT = Path(__file__).resolve().parents[2]

PORTS: dict[type, tuple[tuple[str, ...], tuple[type, ...]]] = {
    FormStore: (FORM_STORE_PRIMITIVES, (InMemoryFormStore, DynamoDBFormStore)),
    FactStore: ((), (InMemoryFactStore, DynamoDBFactStore)),
    DraftStore: (DRAFT_PRIMITIVES, (InMemoryDraftStore, DynamoDBDraftStore)),
    FormDocumentStore: ((), (InMemoryFormDocumentStore, DynamoDBFormDocumentStore)),
    ApprovalIndex: ((), (InMemoryFormStore, DynamoDBFormStore)),
    FailedHookIndex: ((), (InMemoryFormStore, DynamoDBFormStore)),
    OpenFormIndex: ((), (InMemoryFormStore, DynamoDBFormStore)),
    DueIndex: ((), (InMemoryFormStore, DynamoDBFormStore)),
    CallRecords: (
        CALL_PRIMITIVES,
        (InMemoryDraftStore, DynamoDBDraftStore, InMemoryFormStore, DynamoDBFormStore),
    ),
}
"""Each port in the shape: the primitives it declares without ``abstractmethod`` (a port a
test wraps by its public methods alone cannot make them abstract), and its adapters."""

ADAPTER_EXTRAS: dict[type, set[str]] = {
    InMemoryDeliveryLog: {"records", "bindings"},
}
"""Public names an adapter adds beyond its port, and why: the in-memory delivery log lets a
test or an operator read everything it holds."""


def public(cls: type) -> set[str]:
    return {name for name in dir(cls) if not name.startswith("_")}


def primitives(port: type, declared: tuple[str, ...]) -> set[str]:
    return set(declared) | set(getattr(port, "__abstractmethods__", ()))


def ports_of(adapter: type) -> list[type]:
    """The ports ``adapter`` implements (a mixin of its own, ``InstanceReads``, is none)."""
    return [
        cls
        for cls in adapter.__mro__[1:]
        if cls in {*PORTS, *PRIMITIVE_PORTS, FormStore, OutboxScan}
    ]


@pytest.mark.parametrize("port", list(PORTS), ids=lambda port: port.__name__)
def test_what_a_port_asks_of_its_adapters_is_private(port: type) -> None:
    declared, _ = PORTS[port]
    asked = primitives(port, declared)
    assert asked, f"{port.__name__} asks nothing of its adapters"
    assert not {name for name in asked if not name.startswith("_")}


@pytest.mark.parametrize(
    ("port", "adapter"),
    [(port, adapter) for port, (_, adapters) in PORTS.items() for adapter in adapters],
    ids=lambda cls: cls.__name__,
)
def test_every_adapter_implements_every_primitive_and_no_public_method(
    port: type, adapter: type
) -> None:
    declared, _ = PORTS[port]
    for name in primitives(port, declared):
        assert getattr(adapter, name) is not getattr(port, name), f"{adapter.__name__}.{name}"
    overridden = {
        name
        for name in public(port)
        if inspect.isfunction(getattr(port, name, None))
        and getattr(adapter, name) is not getattr(port, name)
    }
    assert not overridden, f"{adapter.__name__} overrides the port's logic: {sorted(overridden)}"


PRIMITIVE_PORTS: dict[type, tuple[type, ...]] = {
    DeliveryLog: (InMemoryDeliveryLog, DynamoDBDeliveryLog),
    SelectionStore: (InMemorySelectionStore, DynamoDBSelectionStore),
    PageLinkLedger: (InMemoryPageLinkLedger, DynamoDBPageLinkLedger),
}
"""Ports that are their primitives: each public method one storage request (a pointer put or
read, a claim, a compare-and-set), nothing to write once above them."""

ADAPTERS: list[type] = sorted(
    {adapter for _, adapters in PORTS.values() for adapter in adapters}
    | {adapter for adapters in PRIMITIVE_PORTS.values() for adapter in adapters},
    key=lambda cls: cls.__name__,
)


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda cls: cls.__name__)
def test_an_adapter_adds_no_public_method_to_its_ports(adapter: type) -> None:
    offered = set().union(*(public(port) for port in ports_of(adapter)))
    extra = public(adapter) - offered - ADAPTER_EXTRAS.get(adapter, set())
    assert not extra, f"{adapter.__name__} adds {sorted(extra)}"


def test_the_form_store_writes_once_and_asks_nothing_abstract() -> None:
    """``FormStore``'s reads, call records and writes are the port's (its adapters are
    checked with the other ports); a wrapper over its public methods still builds."""
    for name in ("create", "commit", "hand_over", "get", "list_conversation", "record_call"):
        assert inspect.isfunction(getattr(FormStore, name)), name
    assert not FormStore.__abstractmethods__


@pytest.mark.parametrize("port", list(PRIMITIVE_PORTS), ids=lambda port: port.__name__)
def test_a_port_of_primitives_asks_exactly_its_public_methods(port: type) -> None:
    assert public(port) == set(getattr(port, "__abstractmethods__", ()))


def test_the_delivery_log_is_its_primitives_and_the_rules_are_written_once() -> None:
    assert DeliveryLog.__abstractmethods__ == {"get", "put", "bind"}
    assert public(DeliveryLog) == {"get", "put", "bind"}
    from formwork.webhooks import log

    for rule in ("claim_delivery", "finish_delivery", "release_delivery", "bind_signature"):
        parameters = list(inspect.signature(getattr(log, rule)).parameters.values())
        assert parameters[0].annotation in ("DeliveryLog", DeliveryLog), rule


def test_a_lost_compare_and_set_is_one_conflict_in_every_store() -> None:
    from forms.errors import Conflict
    from forms.memory.errors import FactConflict
    from forms.storage.drafts import DraftConflict
    from formwork.webhooks.log import DeliveryConflict

    assert FactConflict is Conflict and DraftConflict is Conflict
    assert issubclass(DeliveryConflict, Conflict)
    error: Any = DeliveryConflict(None, subject="stripe/evt-1", expected=2)
    assert (error.kind, error.subject, error.expected, error.current) == (
        "delivery",
        "stripe/evt-1",
        2,
        None,
    )


def test_the_storage_modules_import_without_pytest() -> None:
    """Only the contract suites need the test extra: every other module of the storage
    package and of the delivery log imports with pytest unavailable."""
    names = [
        f"forms.storage.{module.name}"
        for module in pkgutil.iter_modules(forms.storage.__path__)
        if "contract" not in module.name
    ]
    names += ["formwork.webhooks.log", "formwork.webhooks.memory", "formwork.webhooks.dynamodb"]
    program = (
        "import sys, importlib\n"
        "sys.modules['pytest'] = None\n"
        f"for name in {names!r}:\n"
        "    importlib.import_module(name)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr


def test_the_contract_suites_need_pytest_and_nothing_else_of_the_test_extra() -> None:
    """An adapter's author runs a contract suite with the package and pytest alone: no
    suite imports the repository's tests, hypothesis, moto or an AWS library."""
    names = [
        f"forms.storage.{module.name}"
        for module in pkgutil.iter_modules(forms.storage.__path__)
        if "contract" in module.name
    ]
    names += ["formwork.webhooks.contract", "formwork.webhooks.secrets_contract"]
    blocked = ["tests", "hypothesis", "moto", "boto3", "botocore"]
    program = (
        "import sys, importlib\n"
        f"for name in {blocked!r}:\n"
        "    sys.modules[name] = None\n"
        f"for name in {names!r}:\n"
        "    importlib.import_module(name)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
