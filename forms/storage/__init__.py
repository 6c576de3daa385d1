"""Persistence for form instances: the port and the in-memory adapter.

The reusable adapter test suite lives in ``forms.storage.contract`` (it imports pytest, so it
is not re-exported here).
"""

from forms.storage.memory import InMemoryFormStore
from forms.storage.port import FormStore

__all__ = ["FormStore", "InMemoryFormStore"]
