"""Memory: facts a principal stated, kept per key with their half-life, recalled into forms.

A remembered fact in a sentence can hedge ("I think you said 70 kg: still right?"); the same
fact as a field value cannot: it sits above the user's submit button, attributed to them. So
the bar for writing a fact into a field is higher than for mentioning it, and what cannot
hedge is offered instead. This package is the pure part: no storage, no clock, no IO.

* ``vocabulary``: the keys (``person.date_of_birth``, ``person.weight_kg``...), each with a
  label, a value type, a unit and a decay class; ``Vocabulary.check_field`` is the compile
  check of a field that declares a key (the key exists, is stored, and its type fits). The
  vocabulary, its type fit (``fit``) and its errors live in the core (``forms.vocabulary``,
  ``forms.fact_fit``), which checks keys without memory; they are importable from here.
* ``decay``: decay classes and the policy saying, by a fact's age, whether it fills, is
  offered, or is not used.
* ``derivations``: rules reading stated words into a unit (``5'8"`` to 173 cm), extractively.
* ``facts``: the append-only, bi-temporal revisions of a key, the head a store keeps, and
  ``apply_revision``, the one definition of an append.
* ``statements``: planning the revision a statement, confirmation or deletion appends, or the
  ``Refusal`` (data) saying why not.
* ``recall``: planning what memory fills and offers in a form's empty fields, and the
  precedence of every source of a starting value.

The processing model of one statement: read the key's head from the store (``FactStore``),
``plan_statement`` it (a revision planned on the head's version, or a refusal: nothing
written), ``FactStore.append`` it (compare-and-set on that version; on ``FactConflict`` plan
again on the head it carries). Of one recall: read the principal's settings (memory off: stop,
no fact read), read the facts in force (one query), ``plan_recall``, then write the fills by a
commit that holds only while each field is still empty, and show the offers.

Every name in ``__all__`` is loaded from its module on first use (PEP 562), as ``forms`` does:
using one name loads its module, not the whole package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from forms.lazy import exports

if TYPE_CHECKING:
    from forms.memory.decay import (
        DEFAULT_RULES,
        FOREVER,
        DecayClass,
        DecayPolicy,
        DecayRule,
        Use,
    )
    from forms.memory.derivations import (
        DEFAULT_DERIVATIONS,
        DerivationRule,
        Derivations,
        Derived,
    )
    from forms.memory.errors import (
        FactConflict,
        FactError,
        InvalidPolicy,
        InvalidVocabulary,
        UnknownFactKey,
    )
    from forms.memory.facts import (
        Derivation,
        Fact,
        FactHead,
        FactHistory,
        FactRevision,
        MemorySettings,
        Source,
        apply_revision,
    )
    from forms.memory.fit import TypeFit, type_fit
    from forms.memory.recall import (
        PRECEDENCE,
        Fill,
        Offer,
        Origin,
        Prefill,
        RecallField,
        RecallPlan,
        Skip,
        plan_recall,
        prefill_values,
    )
    from forms.memory.statements import (
        Refusal,
        Statement,
        plan_confirmation,
        plan_deletion,
        plan_statement,
    )
    from forms.memory.vocabulary import DEFAULT_KEYS, FactKey, Vocabulary, fact_key

_EXPORTS: dict[str, str] = {
    "DEFAULT_RULES": "forms.memory.decay",
    "FOREVER": "forms.memory.decay",
    "DecayClass": "forms.memory.decay",
    "DecayPolicy": "forms.memory.decay",
    "DecayRule": "forms.memory.decay",
    "Use": "forms.memory.decay",
    "DEFAULT_DERIVATIONS": "forms.memory.derivations",
    "DerivationRule": "forms.memory.derivations",
    "Derivations": "forms.memory.derivations",
    "Derived": "forms.memory.derivations",
    "FactConflict": "forms.memory.errors",
    "FactError": "forms.memory.errors",
    "InvalidPolicy": "forms.memory.errors",
    "InvalidVocabulary": "forms.memory.errors",
    "UnknownFactKey": "forms.memory.errors",
    "Derivation": "forms.memory.facts",
    "Fact": "forms.memory.facts",
    "FactHead": "forms.memory.facts",
    "FactHistory": "forms.memory.facts",
    "FactRevision": "forms.memory.facts",
    "MemorySettings": "forms.memory.facts",
    "Source": "forms.memory.facts",
    "apply_revision": "forms.memory.facts",
    "TypeFit": "forms.memory.fit",
    "type_fit": "forms.memory.fit",
    "PRECEDENCE": "forms.memory.recall",
    "Fill": "forms.memory.recall",
    "Offer": "forms.memory.recall",
    "Origin": "forms.memory.recall",
    "Prefill": "forms.memory.recall",
    "RecallField": "forms.memory.recall",
    "RecallPlan": "forms.memory.recall",
    "Skip": "forms.memory.recall",
    "plan_recall": "forms.memory.recall",
    "prefill_values": "forms.memory.recall",
    "Refusal": "forms.memory.statements",
    "Statement": "forms.memory.statements",
    "plan_confirmation": "forms.memory.statements",
    "plan_deletion": "forms.memory.statements",
    "plan_statement": "forms.memory.statements",
    "DEFAULT_KEYS": "forms.memory.vocabulary",
    "FactKey": "forms.memory.vocabulary",
    "Vocabulary": "forms.memory.vocabulary",
    "fact_key": "forms.memory.vocabulary",
}
"""Where each public name lives: imported from there the first time it is asked for."""

__all__ = [
    "DEFAULT_DERIVATIONS",
    "DEFAULT_KEYS",
    "DEFAULT_RULES",
    "FOREVER",
    "PRECEDENCE",
    "DecayClass",
    "DecayPolicy",
    "DecayRule",
    "Derivation",
    "DerivationRule",
    "Derivations",
    "Derived",
    "Fact",
    "FactConflict",
    "FactError",
    "FactHead",
    "FactHistory",
    "FactKey",
    "FactRevision",
    "Fill",
    "InvalidPolicy",
    "InvalidVocabulary",
    "MemorySettings",
    "Offer",
    "Origin",
    "Prefill",
    "RecallField",
    "RecallPlan",
    "Refusal",
    "Skip",
    "Source",
    "Statement",
    "TypeFit",
    "UnknownFactKey",
    "Use",
    "Vocabulary",
    "apply_revision",
    "fact_key",
    "plan_confirmation",
    "plan_deletion",
    "plan_recall",
    "plan_statement",
    "prefill_values",
    "type_fit",
]


if not TYPE_CHECKING:  # hidden from type checkers: ``from forms.memory import Typo`` stays an error
    __getattr__, __dir__ = exports(globals(), _EXPORTS)  # forms.lazy: loaded on first read
