"""What the settings name by reference: the forms, the executors and the fact keys a deployment
names as ``package.module:attribute``, loaded and checked (``formwork.bootstrap`` builds the
registry and the vocabulary from them on first use).

Every failure is a ``ConfigError`` naming the variable, so a deployment that names something
that is not there answers its first request with a 500 whose log line says which variable to
fix. The engine's modules are imported inside the loaders, never with this module: a cold start
that never needs the forms does not pay for them.
"""

from __future__ import annotations

import pkgutil
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from formwork.config import ConfigError, Settings

if TYPE_CHECKING:
    from forms.definition import Executor, FormDef
    from forms.memory import FactKey, Vocabulary
    from forms.registry import FormRegistry


def load_attribute(variable: str, reference: str) -> Any:
    """What ``module:attribute`` (the value of ``variable``) names, resolved by the standard
    library's ``pkgutil.resolve_name``; a ``ConfigError`` naming the variable when the module
    cannot be imported or has no such attribute."""
    module_name, _, attribute = reference.partition(":")
    try:
        return pkgutil.resolve_name(reference)
    except ImportError as exc:
        raise ConfigError(f"{variable}={reference!r}: cannot import {module_name}: {exc}") from exc
    except AttributeError:
        if module_name not in sys.modules:  # raised by the module's own code while importing
            raise
        raise ConfigError(
            f"{variable}={reference!r}: module {module_name} has no {attribute}"
        ) from None
    except ValueError:
        raise ConfigError(
            f'{variable}={reference!r} is not valid: expected "package.module:attribute"'
        ) from None


def load_forms(reference: str) -> tuple[FormDef, ...] | FormRegistry:
    """What ``module:attribute`` names: a ``FormDef``, a non-empty sequence of them, or a
    ``FormRegistry`` (several versions of a form, say), as ``formwork check`` accepts."""
    from forms.definition import FormDef
    from forms.registry import FormRegistry

    value = load_attribute("FORMWORK_FORMS", reference)
    if isinstance(value, FormRegistry):
        return value
    if isinstance(value, FormDef):
        return (value,)
    if (
        not isinstance(value, Sequence)
        or isinstance(value, str)
        or not value
        or not all(isinstance(item, FormDef) for item in value)
    ):
        raise ConfigError(
            f"FORMWORK_FORMS={reference!r}: expected a FormDef, a non-empty sequence of "
            f"FormDef or a FormRegistry, found {type(value).__name__}"
        )
    return tuple(value)


def build_registry(settings: Settings, vocabulary: Vocabulary | None = None) -> FormRegistry:
    """The forms ``FORMWORK_FORMS`` names, their fact keys checked against ``vocabulary``
    (None: Formwork's, loaded only by forms that use memory). A ``FormRegistry`` named there
    is used as it is, with its own."""
    from forms.registry import FormRegistry

    loaded = load_forms(settings.forms)
    if isinstance(loaded, FormRegistry):
        return loaded
    return FormRegistry(loaded, vocabulary=vocabulary)


def load_executors(reference: str | None) -> dict[str, Executor]:
    """What ``module:attribute`` names: a mapping of executor name -> executor (a callable),
    the executors a published form document may name (``FORMWORK_EXECUTORS``); none when
    ``reference`` is None."""
    if reference is None:
        return {}
    value = load_attribute("FORMWORK_EXECUTORS", reference)
    if not isinstance(value, Mapping) or not all(
        isinstance(name, str) and callable(executor) for name, executor in value.items()
    ):
        raise ConfigError(
            f"FORMWORK_EXECUTORS={reference!r}: expected a mapping of names to executors "
            f"(callables), found {type(value).__name__}"
        )
    return dict(value)


def load_fact_keys(reference: str | None) -> tuple[FactKey, ...]:
    """What ``module:attribute`` names: a ``FactKey`` or a sequence of them, the keys the
    deployment adds to the fact vocabulary (``FORMWORK_FACT_KEYS``); none when ``reference``
    is None."""
    if reference is None:
        return ()
    from forms.memory import FactKey

    value = load_attribute("FORMWORK_FACT_KEYS", reference)
    if isinstance(value, FactKey):
        return (value,)
    if (
        not isinstance(value, Sequence)
        or isinstance(value, str)
        or not all(isinstance(key, FactKey) for key in value)
    ):
        raise ConfigError(
            f"FORMWORK_FACT_KEYS={reference!r}: expected a FactKey or a sequence of FactKey "
            f"(forms.memory.fact_key), found {type(value).__name__}"
        )
    return tuple(value)


def build_vocabulary(settings: Settings) -> Vocabulary:
    """Formwork's fact keys plus the deployment's (``FORMWORK_FACT_KEYS``); a ``ConfigError``
    naming the variable and every problem when they do not make one vocabulary (a malformed
    name, a name declared twice or taken by a default key)."""
    from forms.memory import InvalidVocabulary, Vocabulary

    extra = load_fact_keys(settings.fact_keys)
    if not extra:
        return Vocabulary.default()
    try:
        return Vocabulary.default().extended(extra)
    except InvalidVocabulary as bad:
        raise ConfigError(
            f"FORMWORK_FACT_KEYS={settings.fact_keys!r}: " + "; ".join(bad.problems)
        ) from None
