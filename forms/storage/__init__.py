"""Persistence for form instances: the port and its adapters (in memory, DynamoDB).

The DynamoDB adapter takes an injected boto3 client and imports no AWS library itself, so the
engine stays importable without one. The reusable adapter test suite lives in
``forms.storage.contract`` (it imports pytest, so it is not re-exported here).
"""

from forms.storage.dynamodb import DynamoDBFormStore
from forms.storage.memory import InMemoryFormStore
from forms.storage.port import FormStore

__all__ = ["DynamoDBFormStore", "FormStore", "InMemoryFormStore"]
