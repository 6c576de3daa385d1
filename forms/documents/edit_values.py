"""A rule's values, read as the fields they are compared with read an answer.

A rule's value (``{"field": "authorized_to_work", "op": "equals", "value": "false"}``) is
compared with a field's answer: the compiler reads it with the field's own type
(``rules.compile_rule``), so ``"false"`` against a boolean is false and ``"3"`` against an
integer is 3. The edits store it as read, so the draft holds the value the form runs with
rather than the text a model sent, and each string read as something else is noted, as every
other coerced string is (``Coerced``): ``when.value`` ``"false"`` -> ``false``. The reading is
the answers' (``FieldType.accept``): booleans from ``"true"``/``"false"``/``"yes"``/``"no"``,
integers and numbers from their JSON text, an option from its value in another case. A value
the type does not read is left as sent, for the rule's check to refuse, naming what the field
takes.
"""

from __future__ import annotations

from collections.abc import Mapping

from forms.documents.edit_parse import Coerced
from forms.documents.model import AllOf, AnyOf, Condition, Not, Rule
from forms.documents.rules import RuleField
from forms.documents.text import Scalar
from forms.schema import Accepted, FieldType


def read_rule(rule: Rule, known: Mapping[str, RuleField], at: str) -> tuple[Rule, list[Coerced]]:
    """``rule`` with each string value its field's type reads as another value replaced by
    that value, and where each was (``at`` is where the rule is in the call: ``when``,
    ``field.when``)."""
    read: list[Coerced] = []
    return _read(rule, known, at, read), read


def _read(rule: Rule, known: Mapping[str, RuleField], at: str, read: list[Coerced]) -> Rule:
    if isinstance(rule, AllOf):
        return AllOf(all=[_read(r, known, f"{at}.all.{n}", read) for n, r in enumerate(rule.all)])
    if isinstance(rule, AnyOf):
        return AnyOf(any=[_read(r, known, f"{at}.any.{n}", read) for n, r in enumerate(rule.any)])
    if isinstance(rule, Not):
        return Not(not_=_read(rule.not_, known, f"{at}.not", read))
    field = known.get(rule.field)
    if field is None or rule.value is None:
        return rule  # a name that is not a field: the rule's check names the closest ones
    value: Scalar | list[Scalar]
    if isinstance(rule.value, list):
        value = [_one(v, field.type, f"{at}.value.{n}", read) for n, v in enumerate(rule.value)]
    else:
        value = _one(rule.value, field.type, f"{at}.value", read)
    return rule if value == rule.value else Condition(field=rule.field, op=rule.op, value=value)


def _one(value: Scalar, type_: FieldType, at: str, read: list[Coerced]) -> Scalar:
    if not isinstance(value, str):
        return value
    outcome = type_.accept(value)
    if not isinstance(outcome, Accepted) or not outcome.coerced:
        return value
    stored: Scalar = outcome.json_value
    read.append(Coerced(at, value, stored))
    return stored
