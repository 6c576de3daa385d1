"""A Python form written out as a document, where a document can say what it says.

``export_document(definition)`` compiles the definition and describes each part as the
document model would. What a document cannot hold is left out and listed in ``gaps``, each
naming the part and the reason: a predicate or an executor is code (unless it came from a
document: rules and actions compiled from one carry their source, and an executor found in
``executors`` is written as its name), a type has no document kind (a nested model, a union),
approvals and migrations have no document form yet. A field's fact key (``memory=``) is
carried as the item's ``memory``. A definition with no gaps exports to a document that
compiles back to a form that behaves the same, memory included.
"""

from __future__ import annotations

import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from forms.compiled import CompiledCheckpoint, CompiledField, CompiledForm, CompiledStep
from forms.compiler import compile_form
from forms.definition import Executor, FormDef
from forms.documents.build import ACTIONS_ATTRIBUTE
from forms.documents.kinds import KINDS, LONG_TEXT_MAX
from forms.documents.model import FormDocument, Rule
from forms.documents.rules import RULE_ATTRIBUTE

if TYPE_CHECKING:
    from forms.vocabulary import Vocabulary


_BY_PATTERN = {kind.pattern: kind.name for kind in KINDS if kind.pattern is not None}
"""The kind a text field whose answers match one of the kinds' patterns writes out as."""
_TEXTS = sorted((kind for kind in KINDS if kind.longest is not None), key=lambda k: k.longest or 0)
"""The text kinds, shortest default first: a text field writes out as the first whose default
takes its longest answer."""


@dataclass(frozen=True, slots=True)
class Exported:
    """The document (parts a document cannot hold left out) and what was left out, and why."""

    document: FormDocument
    gaps: tuple[str, ...]


def export_document(
    definition: FormDef,
    *,
    executors: Mapping[str, Executor] | None = None,
    vocabulary: Vocabulary | None = None,
) -> Exported:
    """``definition`` as a document. ``executors`` names the executors a document may refer
    to (the same registry documents compile with); ``vocabulary`` is the one its fact keys
    are checked against when it is compiled (None: Formwork's)."""
    form = compile_form(definition, vocabulary=vocabulary)
    out = _Writer({id(fn): name for name, fn in (executors or {}).items()})
    steps = [out.step(form, step) for step in form.steps.values()]
    checkpoints = [c for c in map(out.checkpoint, form.checkpoints.values()) if c is not None]
    if definition.migrations:
        out.gaps.append("migrations: a document's versions are the store's; they are not exported")
    document = FormDocument.model_validate(
        {
            "id": form.id,
            "title": form.title,
            "description": definition.description,
            "steps": steps,
            "checkpoints": [{k: v for k, v in c.items() if v is not None} for c in checkpoints],
            "on_complete": out.named(definition.on_complete, "the form's on_complete"),
            "closes_on_complete": definition.closes_on_complete,
        }
    )
    return Exported(document, tuple(out.gaps))


class _Writer:
    """Writes a compiled form's parts as a document's, listing in ``gaps`` what it leaves out
    (in the order it meets them: steps and their fields, checkpoints, then the form)."""

    def __init__(self, names: dict[int, str]) -> None:
        self.names = names
        self.gaps: list[str] = []

    def named(self, fn: Any, where: str) -> str | None:
        """An executor's registered name (None: no executor, or one that is code)."""
        if fn is None:
            return None
        if id(fn) in self.names:
            return self.names[id(fn)]
        self.gaps.append(f"{where}: the executor is code; register it by name to export it")
        return None

    def rule(self, fn: Any, where: str) -> Rule | None:
        """The rule a predicate was compiled from (None: no predicate, or one that is code)."""
        if fn is None:
            return None
        found = getattr(fn, RULE_ATTRIBUTE, None)
        if found is None:
            self.gaps.append(f"{where}: the predicate is code; a document needs a rule")
        return found

    def step(self, form: CompiledForm, step: CompiledStep) -> dict[str, Any]:
        """A step as a document's: its items (fields with their rule and executor), its rule
        and its executor."""
        items = []
        for field_id in step.fields:
            item = _field(form.fields[field_id], self.gaps)
            if item is None:
                continue
            item["when"] = self.rule(form.fields[field_id].when, f"field {field_id!r} when")
            item["on_fill"] = self.named(
                form.fields[field_id].on_fill, f"field {field_id!r} on_fill"
            )
            items.append({k: v for k, v in item.items() if v not in (None, [], ())})
        fields = {
            "id": step.id,
            "title": step.title,
            "preview": step.preview or None,
            "guidance": step.guidance or None,
            "when": self.rule(step.when, f"step {step.id!r} when"),
            "on_complete": self.named(step.on_complete, f"step {step.id!r} on_complete"),
            "items": items,
        }
        return {k: v for k, v in fields.items() if v is not None}

    def checkpoint(self, checkpoint: CompiledCheckpoint) -> dict[str, Any] | None:
        """A checkpoint as a document's (a rule and actions), or None when it has none."""
        where = f"checkpoint {checkpoint.id!r}"
        if checkpoint.approval is not None:
            self.gaps.append(f"{where}: approvals have no document form yet")
            return None
        when = self.rule(checkpoint.when, f"{where} when")
        actions = getattr(checkpoint.run, ACTIONS_ATTRIBUTE, None)
        if actions is None and checkpoint.run is not None:
            run = self.named(checkpoint.run, f"{where} run")
            actions = [{"action": "run", "executor": run}] if run else None
        if when is None or not actions:
            if checkpoint.run is None:
                self.gaps.append(
                    f"{where}: it has no executor; a document checkpoint needs actions"
                )
            return None
        return {"id": checkpoint.id, "title": checkpoint.title, "when": when, "then": actions}


def _field(field: CompiledField, gaps: list[str]) -> dict[str, Any] | None:
    """The document item for ``field`` (without its rule and executor), or None after
    recording why its type has no document kind."""
    schema = field.type.json_schema
    required = not field.type.optional
    if not required:
        branches = [b for b in schema.get("anyOf", []) if b.get("type") != "null"]
        schema = branches[0] if len(branches) == 1 else schema
    item: dict[str, Any] = {
        "id": field.id,
        "label": field.label,
        "help": field.ask,
        "required": required,
        "no_preference": field.no_preference,
        "aliases": list(field.aliases),
        "memory": field.memory,
    }
    kind = _kind(schema, field)
    if kind is None:
        gaps.append(f"field {field.id!r}: its type ({field.type.type_string}) has no document kind")
        return None
    item.update(kind)
    return item


def _kind(schema: Mapping[str, Any], field: CompiledField) -> dict[str, Any] | None:
    kind = schema.get("type")
    if "enum" in schema and kind == "string":
        return {"kind": "single_choice", "options": [{"value": v} for v in schema["enum"]]}
    if kind == "array" and "enum" in schema.get("items", {}):
        values = schema["items"]["enum"]
        return {
            "kind": "multiple_choice",
            "options": [{"value": v} for v in values],
            "min_selected": schema.get("minItems"),
            "max_selected": schema.get("maxItems"),
        }
    if kind == "boolean":
        return {"kind": "boolean", "must_be_true": schema.get("const") is True}
    if kind == "integer":
        return {
            "kind": "integer",
            "minimum": schema.get("minimum"),
            "maximum": schema.get("maximum"),
        }
    if kind == "string" and schema.get("format") == "email":
        return {"kind": "email"}
    if kind == "string" and schema.get("format") == "date":
        return {"kind": "date", "earliest": _bound(field, "ge"), "latest": _bound(field, "le")}
    if kind == "string" and schema.get("pattern") in _BY_PATTERN:
        return {"kind": _BY_PATTERN[schema["pattern"]]}
    if kind == "string":
        longest = schema.get("maxLength")
        return {
            "kind": _text_kind(longest),
            "min_length": schema.get("minLength"),
            "max_length": min(longest, 10_000) if longest is not None else LONG_TEXT_MAX,
            "pattern": schema.get("pattern"),
            "example": field.example,
        }
    numbers = [b for b in schema.get("anyOf", []) if b.get("type") == "number"]
    if numbers:  # a Decimal: a number or a numeric string
        return {
            "kind": "decimal",
            "minimum": numbers[0].get("minimum"),
            "maximum": numbers[0].get("maximum"),
            "decimal_places": _bound(field, "decimal_places"),
        }
    return None


def _text_kind(longest: int | None) -> str:
    """The text kind a field whose answers are at most ``longest`` long writes out as."""
    fits = [k for k in _TEXTS if longest is None or longest <= (k.longest or 0)]
    return (fits or _TEXTS[-1:])[0].name


def _bound(field: CompiledField, name: str) -> Any:
    """A constraint of the field's annotation (``ge``, ``le``, ``decimal_places``), if set."""
    annotation = field.type.annotation
    for part in typing.get_args(annotation) or (annotation,):
        for meta in getattr(part, "metadata", ()) or ():
            value = getattr(meta, name, None)
            if value is not None:
                return value
        for meta in typing.get_args(part)[1:]:
            for inner in getattr(meta, "metadata", ()) or ():
                value = getattr(inner, name, None)
                if value is not None:
                    return value
    return None
