"""The memory package's errors, in one hierarchy under ``forms.errors.FormworkError``.

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

from collections.abc import Sequence

from forms.errors import Conflict, FormworkError


class FactError(FormworkError):
    """Base of the memory package's own errors (not of the store's)."""


class InvalidVocabulary(FactError):
    """A fact vocabulary breaks a rule; ``problems`` holds one message per problem."""

    def __init__(self, problems: Sequence[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems: tuple[str, ...] = tuple(problems)


class InvalidPolicy(FactError):
    """A decay policy breaks a rule (a class without a rule, windows out of order)."""


class UnknownFactKey(FactError, KeyError):
    """No key of the vocabulary has this name; ``did_you_mean`` ranks the likely ones."""

    def __init__(self, key: str, did_you_mean: Sequence[str] = ()) -> None:
        hint = f"; did you mean {', '.join(did_you_mean)}?" if did_you_mean else ""
        super().__init__(f"unknown fact key {key!r}{hint}")
        self.key = key
        self.did_you_mean: tuple[str, ...] = tuple(did_you_mean)

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


FactConflict = Conflict
"""The fact store's older name for ``forms.errors.Conflict``: a revision planned on another
version of the fact, ``current`` the head as stored now (None: the key was never stated)."""
