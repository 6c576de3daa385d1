"""Persistence: the storage ports, their in-memory adapters and (not imported here) their
DynamoDB adapters.

Every port has one shape, the fact store's: **the port holds the logic, an adapter implements
primitives.** A port's public methods are written once, in the port (``NotFound``, planning a
change with its one definition, the size check, the copies handed out, a list's order); an
adapter implements private primitives (``_read_head``, ``_write``, ``_add_call``...), each one
storage request or one step under a lock, and keeps its engine, schema and atomicity to itself.
A lost compare-and-set is ``forms.errors.Conflict`` in every store, carrying what is stored
now; DynamoDB's refusals become it in one place (``dynamodb_requests.refused``).

- ``port.FormStore``, ``facts.FactStore``, ``drafts.DraftStore``,
  ``documents.FormDocumentStore``: in the shape.
- ``calls.CallRecords``: the call records the form and draft stores share.
- ``approvals``, ``failed_hooks``, ``open_forms``, ``due``: the sparse indexes beside the
  instances, one read primitive each.
- ``port.OutboxScan``: the sweeper's scan, a port of one method.

``tests/unit/test_port_shape.py`` holds the shape; ``docs/storage.md`` has a table of every
port's logic and primitives. The DynamoDB adapters (``dynamodb*.py``) take an injected boto3
client and import no AWS library themselves; they are not re-exported here, so importing the
engine stays as light as possible (a Lambda imports them only when it first needs storage).
The reusable adapter test suites live in the ``*contract*`` modules, the only ones that import
pytest; their builders (``contract_builders``, ``facts_contract_builders``) need none.
"""

from forms.storage.memory import InMemoryFormStore
from forms.storage.port import FormStore

__all__ = ["FormStore", "InMemoryFormStore"]
