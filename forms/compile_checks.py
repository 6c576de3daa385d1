"""What every check of the compiler shares: the error, a callable's arity, a suggestion.

``Problems`` collects what the checks find, so a definition's every problem is reported at
once: each check of one part (a step, a field, a reference) runs inside ``problems.each()``,
and the compiler stops after a stage whose results the next stages need (``stop_if_any``).
``fail`` builds the ``InvalidFormDefinition`` a check raises, its message prefixed with the form
id. ``arity`` checks that a predicate takes as many positional parameters as the engine may pass
it (``v``, or ``v, s``) and returns how many it takes (the most allowed when its signature cannot
be read). ``did_you_mean`` ends a message about an unknown id with the closest known one, if any.
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from forms.definition import FormDef
from forms.errors import InvalidFormDefinition


class Problems:
    """The definition errors found so far, in the order found."""

    def __init__(self) -> None:
        self.found: list[str] = []

    @contextmanager
    def each(self) -> Iterator[None]:
        """Run one part's checks; a problem they raise is recorded, and checking goes on."""
        try:
            yield
        except InvalidFormDefinition as exc:
            self.found.extend(exc.problems)

    def stop_if_any(self) -> None:
        """Raise every problem found so far, as one ``InvalidFormDefinition``."""
        if self.found:
            raise InvalidFormDefinition.of(self.found)


def fail(definition: FormDef, message: str) -> InvalidFormDefinition:
    return InvalidFormDefinition(f"form {definition.id!r}: {message}")


def arity(definition: FormDef, fn: Callable[..., Any], where: str, allowed: Iterable[int]) -> int:
    try:
        params = [
            p
            for p in inspect.signature(fn).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
    except (TypeError, ValueError):
        return max(allowed)
    count = len(params)
    if count not in allowed:
        wanted = " or ".join(str(n) for n in allowed)
        raise fail(definition, f"{where} takes {count} positional parameters; expected {wanted}")
    return count


def did_you_mean(name: str, known: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, list(known), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""
