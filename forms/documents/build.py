"""A form document turned into a ``FormDef``, then compiled by the one compiler.

``to_definition`` builds, for each step of the document, a ``Step`` class exactly as a person
would write it (annotated fields declared with ``field(...)``, the step's settings as class
keywords), the predicates from the document's rules (``forms.documents.rules``) and the
executors from its actions and from the names it gives, looked up in the deployment's
``executors``. ``compile_document`` hands that definition to ``compile_form``, so a document
passes every check a Python form does (ids, duplicates, aliases, references, arity) and comes
out as the same ``CompiledForm``, run by the same engine.

What only a document can get wrong is checked here, all of it in one pass, and reported in
one ``InvalidFormDefinition`` before the compiler runs: rules naming unknown or later fields
(with the closest names), comparisons a field's kind does not support, literals its type does
not accept, unknown steps in jumps, unknown fields in ``set`` actions and message
placeholders, executor names the deployment did not register, constraints that contradict
each other (a minimum over the maximum, a pattern that does not compile), block ids used
twice, and fact keys (``memory``) the deployment's vocabulary does not have, does not keep, or
whose values do not fit the field (``forms.documents.fact_keys``, the compiler's own check).
The fields' types, and the index rules and ``set`` values are checked against, are
``forms.documents.field_types``'s: the builder's edits check a draft with the same ones.
"""

from __future__ import annotations

import re
import types
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from forms.compile_checks import did_you_mean
from forms.compiled import CompiledForm
from forms.compiler import compile_form
from forms.definition import Checkpoint, Executor, FormDef, Step, field
from forms.documents.cycles import set_cycles
from forms.documents.fact_keys import key_problems
from forms.documents.field_types import index_document, read_set, types_of
from forms.documents.kinds import KIND
from forms.documents.model import (
    ChoiceField,
    Divider,
    FailAction,
    FieldDoc,
    FormDocument,
    HandOverAction,
    Heading,
    JumpAction,
    Paragraph,
    RunAction,
    SetAction,
    StepDoc,
    TerminateAction,
    TextField,
)
from forms.documents.rules import Predicate, RuleError, RuleField, compile_rule
from forms.effect_plans import as_effects
from forms.effects import Effect, Fail, HandOver, Jump, Patch, Terminate
from forms.errors import InvalidFormDefinition

if TYPE_CHECKING:
    from forms.vocabulary import Vocabulary

ExecutorRegistry = Mapping[str, Executor]
"""The executors a deployment lets documents name: ``{"notify_crm": notify_crm}``."""

_PLACEHOLDER = re.compile(r"\{([a-z][a-z0-9_]*)\}")
ACTIONS_ATTRIBUTE = "__form_actions__"
"""Set on a checkpoint executor compiled from actions: the actions (what export writes)."""


def compile_document(
    document: FormDocument,
    *,
    version: int = 1,
    executors: ExecutorRegistry | None = None,
    vocabulary: Vocabulary | None = None,
) -> CompiledForm:
    """``document`` compiled for the engine, as version ``version``; ``InvalidFormDefinition``
    (with every problem in ``problems``) when it does not compile. The fact keys its fields
    hold are checked against ``vocabulary``, the deployment's (None: Formwork's)."""
    definition = to_definition(
        document, version=version, executors=executors, vocabulary=vocabulary
    )
    return compile_form(definition, vocabulary=vocabulary)


def to_definition(
    document: FormDocument,
    *,
    version: int = 1,
    executors: ExecutorRegistry | None = None,
    vocabulary: Vocabulary | None = None,
) -> FormDef:
    """The ``FormDef`` a person would write for ``document`` (not yet compiled; its fact keys
    checked against ``vocabulary``, None: Formwork's)."""
    return _Builder(document, executors or {}, vocabulary).definition(version)


class _Builder:
    def __init__(
        self,
        document: FormDocument,
        executors: ExecutorRegistry,
        vocabulary: Vocabulary | None,
    ) -> None:
        self.document = document
        self.executors = executors
        self.index = index = index_document(document)
        self.problems: list[str] = list(index.problems)
        self.problems += [p.message for p in key_problems(document, vocabulary)]
        self.known: Mapping[str, RuleField] = index.known
        self.first_field: Mapping[str, int] = index.first_field
        self.hands_over_to: dict[str, dict[str, str | None]] = {}
        """What the hand_over actions declare: the forms handed over to, with renames."""

    def definition(self, version: int) -> FormDef:
        doc = self.document
        steps = [self._step(step) for step in doc.steps]
        checkpoints = [self._checkpoint(c) for c in doc.checkpoints]
        on_complete = self._executor(doc.on_complete, "the form's on_complete")
        self.problems += set_cycles(doc, self.index)
        if self.problems:
            raise InvalidFormDefinition.of([f"form {doc.id!r}: {p}" for p in self.problems])
        return FormDef(
            id=doc.id,
            version=version,
            title=doc.title,
            description=doc.description,
            steps=steps,
            checkpoints=checkpoints,
            on_complete=on_complete,
            closes_on_complete=doc.closes_on_complete,
            hands_over_to=self.hands_over_to,
        )

    # ------------------------------------------------------------------ steps and fields

    def _step(self, step: StepDoc) -> type[Step]:
        where = f"step {step.id!r} when"
        when = self._rule(step.when, self.first_field[step.id], where)
        texts = [i.text for i in step.items if isinstance(i, Heading | Paragraph)]
        guidance = "\n".join([*([step.guidance] if step.guidance else []), *texts]) or None
        annotations: dict[str, Any] = {}
        namespace: dict[str, Any] = {"__annotations__": annotations}
        for item in step.items:
            if isinstance(item, Heading | Paragraph | Divider):
                continue
            annotation = types_of(item).annotation  # None: the index recorded why
            if annotation is None:
                continue
            known = self.known.get(item.id)
            before = known.position if known is not None else 0
            annotations[item.id] = annotation
            namespace[item.id] = field(
                item.label,
                ask=_ask(item),
                when=self._rule(item.when, before, f"field {item.id!r} when"),
                on_fill=self._executor(item.on_fill, f"field {item.id!r} on_fill"),
                aliases=item.aliases,
                example=item.example if isinstance(item, TextField) else KIND[item.kind].example,
                memory=item.memory,
                no_preference=item.no_preference,
            )
        settings: dict[str, Any] = {"id": step.id, "title": step.title}
        optional = {
            "preview": step.preview,
            "guidance": guidance,
            "when": when,
            "on_complete": self._executor(step.on_complete, f"step {step.id!r} on_complete"),
        }
        settings.update({k: v for k, v in optional.items() if v is not None})
        return types.new_class(
            _class_name(step.id), (Step,), settings, lambda body: body.update(namespace)
        )

    def _rule(self, rule: Any, before: int, where: str) -> Predicate | None:
        if rule is None:
            return None
        try:
            predicate, _ = compile_rule(rule, self.known, before, where)
        except RuleError as exc:
            self.problems.append(str(exc))
            return None
        return predicate

    def _executor(self, name: str | None, where: str) -> Executor | None:
        if name is None:
            return None
        found = self.executors.get(name)
        if found is None:
            self.problems.append(
                f"{where} names executor {name!r}, which this deployment does not register"
                + did_you_mean(name, self.executors)
            )
        return found

    # ------------------------------------------------------------------ checkpoints

    def _checkpoint(self, doc: Any) -> Checkpoint:
        where = f"checkpoint {doc.id!r}"
        when = self._rule(doc.when, len(self.known) + 1_000_000, f"{where} when")
        steps = [s.id for s in self.document.steps]
        plan: list[Callable[[Any], list[Effect]]] = []
        for action in doc.then:
            made = self._action(action, where, steps)
            if made is not None:
                plan.append(made)

        def run(ctx: Any) -> list[Effect]:
            return [effect for part in plan for effect in part(ctx)]

        setattr(run, ACTIONS_ATTRIBUTE, list(doc.then))
        return Checkpoint(doc.id, when=when or _never, run=run, title=doc.title)

    def _action(
        self, action: Any, where: str, steps: list[str]
    ) -> Callable[[Any], list[Effect]] | None:
        if isinstance(action, FailAction):
            message = action.message
            for name in _PLACEHOLDER.findall(message):
                if name not in self.known:
                    self.problems.append(
                        f"{where}: the message names {{{name}}}, which is not a field"
                        + did_you_mean(name, self.known)
                    )
            return lambda ctx: [Fail(_render(message, ctx.values))]
        if isinstance(action, TerminateAction):
            reason = action.reason
            return lambda ctx: [Terminate(reason)]
        if isinstance(action, JumpAction):
            if action.step not in steps:
                self.problems.append(
                    f"{where} jumps to {action.step!r}, which is not a step"
                    + did_you_mean(action.step, steps)
                )
            target = action.step
            return lambda ctx: [Jump(target)]
        if isinstance(action, SetAction):
            return self._set(action, where)
        if isinstance(action, HandOverAction):
            return self._hand_over(action, where)
        assert isinstance(action, RunAction)
        executor = self._executor(action.executor, f"{where} run")
        if executor is None:
            return None
        return lambda ctx: list(as_effects(executor(ctx)))

    def _hand_over(self, action: HandOverAction, where: str) -> Callable[[Any], list[Effect]]:
        for renamed in action.rename:
            if renamed.field not in self.known:
                self.problems.append(
                    f"{where} hands over {renamed.field!r}, which is not a field"
                    + did_you_mean(renamed.field, self.known)
                )
        declared = self.hands_over_to.setdefault(action.form, {})
        declared.update({r.field: r.to for r in action.rename})
        form, reason = action.form, action.reason
        return lambda ctx: [HandOver(form, reason)]

    def _set(self, action: SetAction, where: str) -> Callable[[Any], list[Effect]] | None:
        read = read_set(action, self.index, where)  # the builder's edits check it the same way
        if isinstance(read, str):
            unknown = action.field not in self.known
            self.problems.append(read + (did_you_mean(action.field, self.known) if unknown else ""))
            return None
        name, value = action.field, read.json_value
        return lambda ctx: [Patch({name: value})]


# ---------------------------------------------------------------------- helpers


def _ask(item: FieldDoc) -> str | None:
    """The field's help, and the options' labels where they say more than their values."""
    parts = [item.help] if item.help else []
    if isinstance(item, ChoiceField):
        labelled = [o for o in item.options if o.label and o.label != o.value]
        if labelled:
            parts.append("options: " + "; ".join(f"{o.value} = {o.label}" for o in labelled))
    return " ".join(parts) or None


def _class_name(step_id: str) -> str:
    return "".join(part.capitalize() for part in step_id.split("_")) or "Step"


def _render(message: str, values: Any) -> str:
    """``{field}`` in ``message`` replaced by that field's answer (nothing when it has none)."""

    def answer(match: re.Match[str]) -> str:
        value = getattr(values, match.group(1), None)
        return "" if value is None else str(value)

    return _PLACEHOLDER.sub(answer, message)


def _never(v: Any) -> bool:
    return False
