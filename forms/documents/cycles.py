"""Checkpoints of a document that would trigger each other without end.

A checkpoint's ``set`` action writes a field; a checkpoint whose rule reads that field can
start to hold on that write, and its own ``set`` actions write again. When such writes lead
from a checkpoint back to itself through at least one other (``a`` sets what ``b`` reads, and
``b`` sets what ``a`` reads), each firing can raise the next: the instance writes until
something stops it. The compiler sees every rule and every ``set`` of a document, so such a
cycle is refused when the document compiles (``forms.documents.build``) and at the builder
edit that would create it (``forms.documents.edit_checks``), naming the checkpoints.

A checkpoint that sets a field its own rule reads is not a cycle: it fires on a commit where
its rule holds, and the one commit its actions make leaves the rule holding (no new crossing)
or not holding (it has to be crossed again by someone else's write). Chains through executors
(``run``) or Python checkpoints cannot be seen here; the engine bounds them at run time
(``forms.instance.KNOCK_ON_LIMIT``).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any

from forms.documents.field_types import FieldIndex, read_set
from forms.documents.model import (
    AllOf,
    AnyOf,
    CheckpointDoc,
    Condition,
    FormDocument,
    Not,
    Rule,
    SetAction,
)
from forms.documents.rules import RuleError, RuleField, compile_rule, reads

_ANYWHERE = 10**9
"""The position a checkpoint's rule reads from: after every field."""


def set_cycles(document: FormDocument, index: FieldIndex) -> list[str]:
    """One sentence per cycle of ``set`` actions over checkpoint rules in ``document`` (whose
    fields ``index`` describes), each naming its checkpoints in the order they would fire
    (``a -> b -> a``); each cycle once, from the checkpoint that comes first in the document.

    ``a`` raises ``b`` when ``a`` sets a field ``b``'s rule reads and, with the values ``a``
    sets, that rule can hold (a condition on another field may go either way): so
    ``status equals "new" -> set status "triaged"`` followed by ``status equals "triaged" ->
    set status "done"`` is a chain that ends, not a cycle."""
    checkpoints = document.checkpoints
    order = [c.id for c in checkpoints]
    read = {c.id: set(reads(c.when)) for c in checkpoints}
    sets = {c.id: _set_values(c, index) for c in checkpoints}
    raises = {
        a.id: [
            b.id
            for b in checkpoints
            if b.id != a.id
            and read[b.id] & set(sets[a.id])
            and _may_hold(b.when, sets[a.id], index.known) is not False
        ]
        for a in checkpoints
    }
    found: list[str] = []
    seen: set[frozenset[str]] = set()
    for start in order:
        path = _path_back(start, raises)
        if path is None or frozenset(path) in seen:
            continue
        seen.add(frozenset(path))
        loop = " -> ".join(f'"{c}"' for c in [*path, start])
        pairs = zip(path, [*path[1:], start], strict=True)
        fields = sorted({f for a, b in pairs for f in sets[a] if f in read[b]})
        found.append(
            f"checkpoints {loop} would trigger each other without end: each sets a field the "
            f"next one's rule reads ({', '.join(fields)}) to a value that makes it hold; "
            "change a rule or a value so the chain ends"
        )
    return found


def _set_values(checkpoint: CheckpointDoc, index: FieldIndex) -> dict[str, Any]:
    """The fields ``checkpoint`` sets and the values it sets them to, as their types read
    them (a value that does not fit is left out: it is refused on its own)."""
    values: dict[str, Any] = {}
    for action in checkpoint.then:
        if isinstance(action, SetAction):
            read = read_set(action, index, "")
            if not isinstance(read, str):
                values[action.field] = read.typed
    return values


def _may_hold(rule: Rule, values: Mapping[str, Any], known: Mapping[str, RuleField]) -> bool | None:
    """Whether ``rule`` holds once ``values`` are written: True or False when those values
    decide it, None when it depends on other answers (or does not compile)."""
    if isinstance(rule, Condition):
        if rule.field not in values:
            return None
        try:
            predicate, _ = compile_rule(rule, known, _ANYWHERE, "")
        except RuleError:
            return None
        return predicate(SimpleNamespace(**{rule.field: values[rule.field]}))
    if isinstance(rule, Not):
        inner = _may_hold(rule.not_, values, known)
        return None if inner is None else not inner
    parts = [
        _may_hold(r, values, known) for r in (rule.all if isinstance(rule, AllOf) else rule.any)
    ]
    decisive = isinstance(rule, AnyOf)  # one True decides an any, one False an all
    if decisive in parts:
        return decisive
    return (not decisive) if all(p is not None for p in parts) else None


def _path_back(start: str, raises: dict[str, list[str]]) -> list[str] | None:
    """The shortest path of checkpoints from ``start`` back to it (without repeating
    ``start`` at the end), or None; breadth first, in document order."""
    parents: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following: list[str] = []
        for node in frontier:
            for nxt in raises[node]:
                if nxt == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(parents[path[-1]])
                    return list(reversed(path))
                if nxt not in parents:
                    parents[nxt] = node
                    following.append(nxt)
        frontier = following
    return None
