"""Checking the names a form's callables mention against the form's ids.

Predicates and executors are read from their source (``forms.refs``): every ``v.field``,
``s.step_complete("step")``, ``s.fired("checkpoint")``, ``Jump("step")`` and ``Patch({"field":
...})`` must name an id that exists (the message suggests the closest one when it does not).
Field and step predicates must also look back: they may read only fields declared before what
they gate, ask only about earlier steps, and never ask ``fired``; that ordering is what makes one
evaluation pass in definition order a fixed point. Checkpoint predicates and executors may name
anything. A callable whose source cannot be read is not checked here (``Values`` enforces the
order at run time).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

from forms.compile_checks import Problems, did_you_mean, fail
from forms.compiled import CompiledCheckpoint, CompiledField, CompiledStep
from forms.definition import FormDef
from forms.refs import Ref, references

Style = Literal["predicate", "executor"]


def check_references(
    definition: FormDef,
    fields: Mapping[str, CompiledField],
    steps: Mapping[str, CompiledStep],
    checkpoints: Mapping[str, CompiledCheckpoint],
    field_index: Mapping[str, int],
    step_index: Mapping[str, int],
    problems: Problems,
) -> None:
    """Every name a predicate or executor mentions must exist, and predicates must look back.
    Each reference is checked on its own: every bad one is recorded in ``problems``."""
    del field_index
    # (callable, how it is read, who owns it, horizons: a predicate sees earlier parts only)
    owned: list[tuple[Callable[..., Any], Style, str, int | None, int | None]] = []
    for step in steps.values():
        if step.when:
            owned.append(
                (step.when, "predicate", f"step {step.id!r} when", step.first_field, step.index)
            )
        if step.on_complete:
            owned.append(
                (step.on_complete, "executor", f"step {step.id!r} on_complete", None, None)
            )
    for f in fields.values():
        if f.when:
            owned.append((f.when, "predicate", f"field {f.id!r} when", f.index, step_index[f.step]))
        if f.on_fill:
            owned.append((f.on_fill, "executor", f"field {f.id!r} on_fill", None, None))
    for cp in checkpoints.values():
        owned.append((cp.when, "predicate", f"checkpoint {cp.id!r} when", None, None))
        if cp.run:
            owned.append((cp.run, "executor", f"checkpoint {cp.id!r} run", None, None))
    if definition.on_close:
        owned.append((definition.on_close, "executor", "form on_close", None, None))
    if definition.on_complete:
        owned.append((definition.on_complete, "executor", "form on_complete", None, None))
    for fn, style, owner, field_horizon, step_horizon in owned:
        for ref in references(fn, style=style) or ():
            with problems.each():
                _check_ref(
                    definition, ref, owner, fields, steps, checkpoints, field_horizon, step_horizon
                )


def _check_ref(
    definition: FormDef,
    ref: Ref,
    owner: str,
    fields: Mapping[str, CompiledField],
    steps: Mapping[str, CompiledStep],
    checkpoints: Mapping[str, CompiledCheckpoint],
    field_horizon: int | None,
    step_horizon: int | None,
) -> None:
    at = f"{owner} ({ref.where}): {ref.context}"
    if ref.kind == "field":
        if ref.name not in fields:
            raise fail(
                definition, f"{at}: {ref.name!r} is not a field{did_you_mean(ref.name, fields)}"
            )
        if field_horizon is not None and fields[ref.name].index >= field_horizon:
            raise fail(
                definition,
                f"{at}: {ref.name!r} is declared after what this predicate gates; predicates may "
                "only read fields declared before it",
            )
    elif ref.kind == "step":
        if ref.name not in steps:
            raise fail(
                definition, f"{at}: {ref.name!r} is not a step{did_you_mean(ref.name, steps)}"
            )
        if step_horizon is not None and steps[ref.name].index >= step_horizon:
            raise fail(
                definition,
                f"{at}: step {ref.name!r} is not decided yet at that point; predicates may only "
                "ask about earlier steps",
            )
    else:
        if ref.name not in checkpoints:
            raise fail(
                definition,
                f"{at}: {ref.name!r} is not a checkpoint{did_you_mean(ref.name, checkpoints)}",
            )
        if field_horizon is not None or step_horizon is not None:
            raise fail(definition, f"{at}: only checkpoints and executors may ask fired(...)")
