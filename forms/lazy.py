"""Public names loaded on first use: the one ``__getattr__`` and ``__dir__`` (PEP 562) of the
packages that list their public names in ``__init__`` and load each from its module only when
it is first read, so importing the package costs nothing (``forms.surface``, ``forms.app``,
``forms.documents``, ``forms.memory``, ``formwork.aws.models``).

``forms`` itself keeps its own two functions: importing ``forms`` loads no submodule
(``tests/unit/test_public_api.py``), and this is one.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["exports"]


def exports(
    namespace: dict[str, Any], table: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The package's ``__getattr__`` and ``__dir__``: a name of ``table`` (name -> module) is
    imported from its module on first read and kept in ``namespace`` (the package's
    ``globals()``), so the next read is a plain attribute; any other name is the usual
    ``AttributeError``. ``__dir__`` lists what is loaded and everything ``__all__`` names."""
    package = namespace["__name__"]

    def load(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def listed() -> list[str]:
        return sorted({*namespace, *namespace["__all__"]})

    return load, listed
