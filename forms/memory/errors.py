"""The memory package's errors, in one hierarchy under ``forms.errors.FormworkError``.

The vocabulary's two (``InvalidVocabulary``, ``UnknownFactKey``) and their base ``FactError``
live with the vocabulary in the core (``forms.vocabulary``), which the compile check reads
without memory; they are importable from here as before.

* ``InvalidVocabulary`` and ``InvalidPolicy`` are programming errors in what a deployment
  declares (a bad key name, two keys with one name, an offer window shorter than the fill
  window). They are raised when the vocabulary or the policy is built, never at recall.
* ``UnknownFactKey`` is a lookup of a key the vocabulary does not hold; it carries the keys
  the name most likely meant (``did_you_mean``).
* ``FactConflict`` is the fact store's compare-and-set failure, the one ``Conflict`` of every
  store (``forms.errors``) under memory's older name: a revision planned on another version
  of the fact's history. It carries the head as stored now, so the caller can plan again
  without another read.

What a statement cannot become (a do-not-store key, words no rule reads) is not an exception:
``forms.memory.statements`` returns a ``Refusal``, data an API can hand back as it is.
"""

from __future__ import annotations

from forms.errors import Conflict
from forms.vocabulary import FactError, InvalidVocabulary, UnknownFactKey

__all__ = ["FactConflict", "FactError", "InvalidPolicy", "InvalidVocabulary", "UnknownFactKey"]


class InvalidPolicy(FactError):
    """A decay policy breaks a rule (a class without a rule, windows out of order)."""


FactConflict = Conflict
"""The fact store's older name for ``forms.errors.Conflict``: a revision planned on another
version of the fact, ``current`` the head as stored now (None: the key was never stated)."""
