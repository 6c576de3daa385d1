"""The rule language of form documents, checked and turned into predicates.

A rule reads earlier fields only (as a Python predicate may), and compiles to an ordinary
predicate ``(v) -> bool`` over the live values, so the engine runs it exactly as it runs a
predicate written in Python: held answers, restore on flip, rising edges and keys are the
same. What a rule reads is known from the rule itself, so it is checked here, before the form
compiles: every field it names exists (else the closest names are offered), is declared before
what the rule gates, and takes the comparison and the literal the rule gives it (a literal is
validated with the field's own type, so ``"2000"`` against a decimal field is the number 2000,
and ``"airr"`` against a choice of air, rail and car is an error naming the choices).

Semantics: a comparison on a field with no live answer (unanswered, declined, or not
applying) does not hold; only ``not_answered`` does. ``contains`` is membership for a multiple
choice and a case-insensitive substring test for text.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from forms.compile_checks import did_you_mean
from forms.documents.kinds import KIND, Family
from forms.documents.model import AllOf, AnyOf, Condition, Not, Rule
from forms.documents.text import Scalar
from forms.schema import Accepted, FieldType

Predicate = Callable[[Any], bool]

RULE_ATTRIBUTE = "__form_rule__"
"""Set on a predicate compiled from a rule: the rule it came from (what export writes)."""

OPS_BY_FAMILY: Mapping[Family, frozenset[str]] = {
    "ordered": frozenset(
        {"equals", "not_equals", "greater_than", "greater_or_equal", "less_than", "less_or_equal"}
    ),
    "text": frozenset({"equals", "not_equals", "contains"}),
    "boolean": frozenset({"equals", "not_equals"}),
    "single_choice": frozenset({"equals", "not_equals"}),
    "multiple_choice": frozenset({"contains"}),
}
"""The comparisons each family of kinds takes (``forms.documents.kinds``), besides
``answered`` / ``not_answered`` (every kind) and ``in`` / ``not_in`` (all but a multiple
choice)."""
_ALWAYS = frozenset({"answered", "not_answered"})
_MEMBERSHIP = frozenset({"in", "not_in"})


@dataclass(frozen=True, slots=True)
class RuleField:
    """A field a rule may name: its kind, its type (of one item, for a multiple choice) and
    its position in definition order."""

    kind: str
    type: FieldType
    position: int


class RuleError(ValueError):
    """A rule that cannot compile; the message says where and why."""


def compile_rule(
    rule: Rule, fields: Mapping[str, RuleField], before: int, where: str
) -> tuple[Predicate, frozenset[str]]:
    """The predicate of ``rule`` and the fields it reads, for an item at position ``before``
    (a rule may read only fields at lower positions). ``RuleError`` names every problem."""
    problems: list[str] = []
    test = _build(rule, fields, before, where, problems)
    if problems:
        raise RuleError("; ".join(problems))
    read = frozenset(reads(rule))

    def predicate(v: Any) -> bool:
        return test(v)

    setattr(predicate, RULE_ATTRIBUTE, rule)
    return predicate, read


def reads(rule: Rule) -> Iterator[str]:
    """The fields ``rule`` reads, in order (with repeats)."""
    if isinstance(rule, Condition):
        yield rule.field
    elif isinstance(rule, AllOf):
        for part in rule.all:
            yield from reads(part)
    elif isinstance(rule, AnyOf):
        for part in rule.any:
            yield from reads(part)
    else:
        yield from reads(rule.not_)


def _build(
    rule: Rule, fields: Mapping[str, RuleField], before: int, where: str, problems: list[str]
) -> Callable[[Any], bool]:
    if isinstance(rule, AllOf):
        parts = [_build(r, fields, before, where, problems) for r in rule.all]
        return lambda v: all(part(v) for part in parts)
    if isinstance(rule, AnyOf):
        parts = [_build(r, fields, before, where, problems) for r in rule.any]
        return lambda v: any(part(v) for part in parts)
    if isinstance(rule, Not):
        inner = _build(rule.not_, fields, before, where, problems)
        return lambda v: not inner(v)
    return _condition(rule, fields, before, where, problems)


def _condition(
    rule: Condition, fields: Mapping[str, RuleField], before: int, where: str, problems: list[str]
) -> Callable[[Any], bool]:
    known = fields.get(rule.field)
    never: Callable[[Any], bool] = lambda v: False  # noqa: E731 (a placeholder after an error)
    if known is None:
        problems.append(
            f"{where} reads {rule.field!r}, which is not a field of this form"
            + did_you_mean(rule.field, fields)
        )
        return never
    if known.position >= before:
        problems.append(
            f"{where} reads {rule.field!r}, which is declared after it; a rule may only read "
            "fields declared before the field or step it gates"
        )
        return never
    name, op = rule.field, rule.op
    if op in _ALWAYS:
        wanted = op == "answered"
        return lambda v: (getattr(v, name) is not None) == wanted
    family = KIND[known.kind].family
    assert family is not None, "a block holds no answer, so no rule reads one"
    allowed = OPS_BY_FAMILY[family] | (_MEMBERSHIP if family != "multiple_choice" else frozenset())
    if op not in allowed:
        problems.append(
            f"{where}: {op!r} does not apply to {name!r} ({known.kind}); use one of "
            + ", ".join(sorted(allowed | _ALWAYS))
        )
        return never
    literals = rule.value if isinstance(rule.value, list) else [rule.value]
    if op == "contains" and family == "text":
        if not isinstance(rule.value, str):
            problems.append(f"{where}: 'contains' on {name!r} takes text, got {rule.value!r}")
            return never
        needle = rule.value.casefold()
        return lambda v: (x := getattr(v, name)) is not None and needle in str(x).casefold()
    typed = [_literal(v, known, name, where, problems) for v in literals if v is not None]
    if len(typed) != len(literals):
        return never
    if op in _MEMBERSHIP:
        inside = op == "in"
        return lambda v: (x := getattr(v, name)) is not None and (x in typed) == inside
    value = typed[0]
    if op == "contains":  # a multiple choice: one of the options picked
        return lambda v: (x := getattr(v, name)) is not None and value in x
    return _compare(name, op, value)


def _compare(name: str, op: str, value: Any) -> Callable[[Any], bool]:
    tests: Mapping[str, Callable[[Any, Any], bool]] = {
        "equals": lambda x, y: bool(x == y),
        "not_equals": lambda x, y: bool(x != y),
        "greater_than": lambda x, y: bool(x > y),
        "greater_or_equal": lambda x, y: bool(x >= y),
        "less_than": lambda x, y: bool(x < y),
        "less_or_equal": lambda x, y: bool(x <= y),
    }
    test = tests[op]
    return lambda v: (x := getattr(v, name)) is not None and test(x, value)


def _literal(
    value: Scalar, known: RuleField, name: str, where: str, problems: list[str]
) -> Any | None:
    """``value`` as the field's type reads it (``RuleField.type`` is the item type of a multiple
    choice), or None after recording why it is not one."""
    outcome = known.type.accept(value)
    if not isinstance(outcome, Accepted):
        problems.append(f"{where}: {value!r} is not a value of {name!r}: {outcome.message}")
        return None
    return outcome.typed
