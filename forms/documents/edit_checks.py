"""What an edit may not break: the references between the parts of a draft.

Rules (``when`` of fields and steps, checkpoints' ``when``), checkpoints' ``set`` fields,
message placeholders and jump targets name other parts of the form. An edit that would leave
one of them pointing at nothing, reading a field declared after what it gates, comparing a
field in a way its (new) kind does not take, or setting a field to a value its type does not
hold, is refused: ``problems`` lists what is wrong with a document the way
``compile_document`` checks it (the same ``index_document``, ``compile_rule`` and
``read_set``), and an edit may not add to that list. So do the fact keys fields hold
(``memory``): a key the deployment's vocabulary does not have or keep, or whose values the
field's type does not fit, is found by the compiler's own check (``fact_keys.key_problems``).
A draft may stay incomplete (a step with no fields), never inconsistent.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from forms.documents.cycles import set_cycles
from forms.documents.fact_keys import KeyProblem, key_problems
from forms.documents.field_types import index_document, read_set
from forms.documents.model import (
    Action,
    AllOf,
    AnyOf,
    Condition,
    Divider,
    FailAction,
    FormDocument,
    HandOverAction,
    Heading,
    JumpAction,
    Paragraph,
    Rule,
    RunAction,
    SetAction,
    TerminateAction,
)
from forms.documents.rules import RuleError, compile_rule, reads

if TYPE_CHECKING:
    from forms.vocabulary import Vocabulary

PLACEHOLDER = re.compile(r"\{([a-z][a-z0-9_]*)\}")
"""A field named in a ``fail`` message: ``{field_id}``."""
_ANYWHERE = 10**9
"""The position a checkpoint's rule reads from: after every field."""


@dataclass(frozen=True, slots=True)
class DraftProblems:
    """What is wrong with a draft, in words: its items' own settings (contradicting
    constraints, reserved ids), the fact keys its fields hold, and its references (rules,
    checkpoints). Not ``forms.compile_checks.Problems``, which collects a compile's errors."""

    settings: tuple[str, ...] = ()
    references: tuple[str, ...] = ()
    keys: tuple[KeyProblem, ...] = ()


def problems(document: FormDocument, vocabulary: Vocabulary | None = None) -> DraftProblems:
    """Everything wrong with how the parts of ``document`` refer to each other, with its
    fields' own settings and with the fact keys they hold (against ``vocabulary``, None:
    Formwork's), in document order."""
    index = index_document(document)
    found: list[str] = []
    steps = [s.id for s in document.steps]

    def check(rule: Rule | None, before: int, where: str) -> None:
        if rule is not None:
            try:
                compile_rule(rule, index.known, before, where)
            except RuleError as exc:
                found.append(str(exc))

    for step in document.steps:
        check(step.when, index.first_field[step.id], f"the rule of step {step.id!r}")
        for item in step.items:
            if isinstance(item, Heading | Paragraph | Divider):
                continue
            known = index.known.get(item.id)
            check(item.when, known.position if known else 0, f"the rule of field {item.id!r}")
    for checkpoint in document.checkpoints:
        where = f"checkpoint {checkpoint.id!r}"
        check(checkpoint.when, _ANYWHERE, f"the rule of {where}")
        for action in checkpoint.then:
            if isinstance(action, SetAction):
                read = read_set(action, index, where)
                if isinstance(read, str):
                    found.append(read)
            if isinstance(action, JumpAction) and action.step not in steps:
                found.append(f"{where} jumps to {action.step!r}, which is not a step")
            if isinstance(action, FailAction):
                for name in PLACEHOLDER.findall(action.message):
                    if name not in index.known:
                        found.append(f"{where}: the message names {{{name}}}, not a field")
            if isinstance(action, HandOverAction):
                for renamed in action.rename:
                    if renamed.field not in index.known:
                        found.append(f"{where} hands over {renamed.field!r}, which is not a field")
    found.extend(set_cycles(document, index))
    return DraftProblems(index.problems, tuple(found), key_problems(document, vocabulary))


def introduced(
    before: FormDocument | None, after: FormDocument, vocabulary: Vocabulary | None = None
) -> DraftProblems:
    """The problems ``after`` has that ``before`` (None: nothing) did not."""
    now = problems(after, vocabulary)
    if before is None or not (now.settings or now.references or now.keys):
        return now  # the usual case: one index per edit, not two
    had = problems(before, vocabulary)
    return DraftProblems(
        tuple(p for p in now.settings if p not in had.settings),
        tuple(p for p in now.references if p not in had.references),
        tuple(p for p in now.keys if p not in had.keys),
    )


def readers(document: FormDocument, fields: set[str], steps: set[str]) -> list[str]:
    """The parts of ``document`` (outside ``fields`` and ``steps``) that name one of the
    ``fields`` (rules, ``set`` actions, placeholders) or ``steps`` (jumps), in words."""
    found: list[str] = []
    for step in document.steps:
        if step.id in steps:
            continue
        if step.when is not None and fields & set(reads(step.when)):
            found.append(f'step "{step.id}"')
        for item in step.items:
            if item.id in fields or isinstance(item, Heading | Paragraph | Divider):
                continue
            if item.when is not None and fields & set(reads(item.when)):
                found.append(f'field "{item.id}"')
    for checkpoint in document.checkpoints:
        named = set(reads(checkpoint.when))
        targets: set[str] = set()
        for action in checkpoint.then:
            if isinstance(action, SetAction):
                named.add(action.field)
            if isinstance(action, FailAction):
                named.update(PLACEHOLDER.findall(action.message))
            if isinstance(action, JumpAction):
                targets.add(action.step)
            if isinstance(action, HandOverAction):
                named.update(r.field for r in action.rename)
        if named & fields or targets & steps:
            found.append(f'checkpoint "{checkpoint.id}"')
    return found


def describe_rule(rule: Rule) -> str:
    """A rule in a few words: ``role equals "designer" and years greater than 3``."""
    if isinstance(rule, Condition):
        op = rule.op.replace("_", " ")
        if rule.value is None:
            return f"{rule.field} {op}"
        return f"{rule.field} {op} {json.dumps(rule.value)}"
    if isinstance(rule, AllOf | AnyOf):
        parts = rule.all if isinstance(rule, AllOf) else rule.any
        joiner = " and " if isinstance(rule, AllOf) else " or "
        inner = joiner.join(describe_rule(p) for p in parts)
        return inner if len(parts) == 1 else f"({inner})"
    return f"not ({describe_rule(rule.not_)})"


def describe_action(action: Action) -> str:
    """An action in a few words: ``run notify_crm``, ``fail "Engineering roles need…"``,
    ``jump to review``, ``set track to "junior"``."""
    if isinstance(action, FailAction):
        return f'fail "{_shortened(action.message)}"'
    if isinstance(action, TerminateAction):
        return f'terminate "{_shortened(action.reason)}"'
    if isinstance(action, JumpAction):
        return f"jump to {action.step}"
    if isinstance(action, SetAction):
        return f"set {action.field} to {json.dumps(action.value)}"
    if isinstance(action, HandOverAction):
        return f"hand over to {action.form}"
    assert isinstance(action, RunAction)
    return f"run {action.executor}"


def _shortened(text: str, limit: int = 24) -> str:
    """``text``, or its first words within ``limit`` characters and an ellipsis."""
    if len(text) <= limit:
        return text
    cut = text[: limit + 1].rsplit(" ", 1)[0] if " " in text[:limit] else text[:limit]
    return cut.rstrip(" ,.;:") + "…"
