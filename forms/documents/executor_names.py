"""The executor names a document gives (``on_fill``, a step's and the form's ``on_complete``,
a checkpoint's ``run``), checked against the names a deployment registers.

Code cannot live in a document: what needs code is an executor the deployment registers in
Python by name (``compile_document(..., executors=...)``). A name nobody registered is refused
when the document compiles (publishing), and, with this check, when the builder's edit that
gives it is made (``edits.apply_edit``, ``executors=``), with the registered names it likely
meant, as a fact key the vocabulary does not have is (``fact_keys``).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass

from forms.documents.model import Divider, FormDocument, Heading, Paragraph, RunAction
from forms.suggest import rank


@dataclass(frozen=True, slots=True)
class UnknownExecutor:
    """A place of a document naming an executor the deployment does not register: where, the
    name, the sentence, and the registered names it likely meant."""

    where: str
    name: str
    message: str
    did_you_mean: tuple[str, ...] = ()


def named_executors(document: FormDocument) -> Iterator[tuple[str, str]]:
    """(where, name) of every executor ``document`` names, in document order."""
    for step in document.steps:
        for item in step.items:
            if not isinstance(item, Heading | Paragraph | Divider) and item.on_fill is not None:
                yield f"field {item.id!r} on_fill", item.on_fill
        if step.on_complete is not None:
            yield f"step {step.id!r} on_complete", step.on_complete
    for checkpoint in document.checkpoints:
        for action in checkpoint.then:
            if isinstance(action, RunAction):
                yield f"checkpoint {checkpoint.id!r} run", action.executor
    if document.on_complete is not None:
        yield "the form's on_complete", document.on_complete


def unknown_executors(
    document: FormDocument, registered: Collection[str]
) -> tuple[UnknownExecutor, ...]:
    """Each place of ``document`` naming an executor not in ``registered``, in order."""
    candidates = {name: (name,) for name in registered}
    found: list[UnknownExecutor] = []
    for where, name in named_executors(document):
        if name in registered:
            continue
        close = tuple(rank(name, candidates))
        ending = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        found.append(
            UnknownExecutor(
                where,
                name,
                f"{where} names executor {name!r}, which this deployment does not register"
                + ending,
                close,
            )
        )
    return tuple(found)
