"""Persistence for form instances: the port and the in-memory adapter.

The DynamoDB adapter is ``forms.storage.dynamodb.DynamoDBFormStore``: it takes an injected
boto3 client and imports no AWS library itself. It is not re-exported here so that importing
the engine stays as light as possible (a Lambda imports it only when it first needs storage).
The reusable adapter test suite lives in ``forms.storage.contract`` (it imports pytest).
"""

from forms.storage.memory import InMemoryFormStore
from forms.storage.port import FormStore

__all__ = ["FormStore", "InMemoryFormStore"]
