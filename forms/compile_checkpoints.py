"""Compiling checkpoints and the approvals they ask for.

``build_checkpoints`` checks each ``Checkpoint`` (an id in snake_case or kebab-case, used once
however it is spelt; a callable ``when`` and ``run``) and compiles it. ``check_approvals`` checks
what an approval needs: a decision field declared ``decided_by_approver=True`` that accepts
``"approved"`` and ``"rejected"`` and records no other approval, a role, a positive timeout and
no ``run=`` beside it; and that every field decided by an approver has an approval naming it. It
binds each approval to the answers its decision is made on: those it declares, or else the
fields its predicate reads.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace

from forms.compile_checks import Problems, arity, did_you_mean, fail
from forms.compiled import CompiledCheckpoint, CompiledField, normalise
from forms.definition import Approval, Checkpoint, FormDef
from forms.refs import references

_CHECKPOINT_ID = re.compile(r"^[a-z](?:[a-z0-9_]{0,62}|[a-z0-9-]{0,62})$")
"""snake_case or kebab-case (not both in one id): a checkpoint id is a name in a string, like
a form id, so either spelling is accepted."""


def build_checkpoints(definition: FormDef, problems: Problems) -> dict[str, CompiledCheckpoint]:
    """The compiled checkpoints; each that breaks a rule is recorded in ``problems``."""
    found: dict[str, CompiledCheckpoint] = {}
    for checkpoint in definition.checkpoints:
        with problems.each():
            built = _build_checkpoint(definition, checkpoint, found)
            found[built.id] = built
    return found


def _build_checkpoint(
    definition: FormDef, checkpoint: object, found: Mapping[str, CompiledCheckpoint]
) -> CompiledCheckpoint:
    if not isinstance(checkpoint, Checkpoint):
        raise fail(definition, f"{checkpoint!r} is not a Checkpoint")
    if not isinstance(checkpoint.id, str) or not _CHECKPOINT_ID.match(checkpoint.id):
        raise fail(
            definition,
            f"checkpoint id {checkpoint.id!r} must be snake_case or kebab-case: lowercase "
            "letters and digits joined by _ or by -, starting with a letter, at most 63 "
            "characters",
        )
    twin = next((c for c in found if normalise(c) == normalise(checkpoint.id)), None)
    if twin is not None:
        raise fail(
            definition,
            f"checkpoint id {checkpoint.id!r} is used twice"
            + (f" (as {twin!r})" if twin != checkpoint.id else ""),
        )
    if not callable(checkpoint.when) or (
        checkpoint.run is not None and not callable(checkpoint.run)
    ):
        raise fail(definition, f"checkpoint {checkpoint.id!r}: when/run must be callable")
    return CompiledCheckpoint(
        id=checkpoint.id,
        title=checkpoint.title or re.sub(r"[-_]", " ", checkpoint.id),
        when=checkpoint.when,
        when_arity=arity(definition, checkpoint.when, f"checkpoint {checkpoint.id!r}", (1, 2)),
        run=checkpoint.run,
        approval=checkpoint.approval,
    )


def check_approvals(
    definition: FormDef,
    fields: Mapping[str, CompiledField],
    checkpoints: Mapping[str, CompiledCheckpoint],
    problems: Problems,
) -> dict[str, CompiledCheckpoint]:
    """An approval names a decision field that only approvals write, and vice versa, and the
    answers its decision is bound to. Returns the checkpoints with those bindings; each
    approval that breaks a rule is recorded in ``problems``."""
    owners: dict[str, str] = {}
    bound = dict(checkpoints)
    for cp in checkpoints.values():
        if cp.approval is not None:
            with problems.each():
                bound[cp.id] = _check_approval(definition, fields, cp, cp.approval, owners)
    for f in fields.values():
        if f.decided_by_approver and f.id not in owners:
            with problems.each():
                raise fail(
                    definition,
                    f"field {f.id!r} is decided_by_approver but no Checkpoint(approval=...) "
                    "names it",
                )
    return bound


def _check_approval(
    definition: FormDef,
    fields: Mapping[str, CompiledField],
    cp: CompiledCheckpoint,
    approval: Approval,
    owners: dict[str, str],
) -> CompiledCheckpoint:
    where = f"checkpoint {cp.id!r}"
    if approval.field in fields:
        owners.setdefault(approval.field, cp.id)
    if cp.run is not None:
        raise fail(definition, f"{where}: an approval checkpoint cannot also have run=")
    if approval.field not in fields:
        raise fail(
            definition,
            f"{where}: approval field {approval.field!r} is not a field"
            + did_you_mean(approval.field, fields),
        )
    decision = fields[approval.field]
    if not decision.decided_by_approver:
        raise fail(
            definition,
            f"{where}: field {approval.field!r} must be declared with decided_by_approver=True",
        )
    for value in ("approved", "rejected"):
        if not hasattr(decision.type.validate(value), "json_value"):
            raise fail(definition, f"{where}: field {approval.field!r} must accept {value!r}")
    if not approval.role.strip() or approval.timeout_seconds <= 0:
        raise fail(definition, f"{where}: approval needs a role and a positive timeout")
    if owners[approval.field] != cp.id:
        raise fail(
            definition,
            f"field {approval.field!r} records two approvals ({owners[approval.field]!r} "
            f"and {cp.id!r})",
        )
    return replace(cp, binds=_approval_binds(definition, cp, approval, fields))


def _approval_binds(
    definition: FormDef,
    cp: CompiledCheckpoint,
    approval: Approval,
    fields: Mapping[str, CompiledField],
) -> tuple[str, ...]:
    """The fields a decision is bound to: declared, or those the predicate reads."""
    where = f"checkpoint {cp.id!r}"
    if approval.binds is not None:
        names = list(approval.binds)
        for name in names:
            if name not in fields:
                raise fail(
                    definition,
                    f"{where}: approval binds {name!r}, which is not a field"
                    + did_you_mean(name, fields),
                )
    else:
        refs = references(cp.when, style="predicate")
        if refs is None:
            raise fail(
                definition,
                f"{where}: the predicate's source cannot be read to find the answers its "
                "approval depends on; declare them with Approval(binds=[...])",
            )
        names = [r.name for r in refs if r.kind == "field" and r.name in fields]
    chosen = set(names)
    for name in chosen:
        if fields[name].decided_by_approver:
            raise fail(
                definition,
                f"{where}: approval binds {name!r}, a decision field; bind the answers decided on",
            )
    if not chosen:
        raise fail(
            definition,
            f"{where}: the approval is bound to no answer; name them with Approval(binds=[...])",
        )
    return tuple(f for f in fields if f in chosen)
