"""A draft being edited: a working copy of the document as JSON data, with the lookups the
tools share (each failing as data, with the closest names) and what the edit noted.

An edit changes the copy, then ``finish`` validates it back into a ``FormDocument``, so a
draft is shape-valid after every edit (it may not compile yet: a step without fields is a
fine draft). The document the edit started from is never touched.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, JsonValue, ValidationError

from forms.documents.edit_arguments import Selection
from forms.documents.edit_errors import EditError
from forms.documents.edit_layout import pack
from forms.documents.edit_parse import Coerced, describe_errors, hint_for
from forms.documents.model import BLOCK_KINDS, FormDocument
from forms.suggest import rank

Data = dict[str, Any]


class Notes:
    """What an edit did on its own that the model should know."""

    def __init__(self, coerced: list[Coerced]) -> None:
        self.coerced = coerced
        self.ids: dict[str, str] = {}
        self.resolved: dict[str, str] = {}
        self.positions: list[dict[str, JsonValue]] = []
        self.dropped: list[str] = []
        self.layouts: dict[str, dict[str, JsonValue]] = {}

    def repacked(self, items: Sequence[Data], sent: Mapping[str, Mapping[str, Any]]) -> None:
        """Notes where each item whose layout the call sent (``sent``, by item id) went, when
        the packer changed a key the call sent (a place taken, a row that moved). An item
        the call sent no layout for was the packer's to place: nothing to report."""
        for item in items:
            wanted = sent.get(str(item["id"]))
            if wanted and any(
                v is not None and item["layout"].get(k) != v for k, v in wanted.items()
            ):
                self.layouts[str(item["id"])] = dict(item["layout"])

    def as_json(self) -> dict[str, JsonValue]:
        notes: dict[str, JsonValue] = {}
        if self.coerced:
            notes["coerced"] = [
                {"at": c.at, "sent": c.sent, "stored": c.stored} for c in self.coerced
            ]
        if self.resolved:
            notes["resolved"] = dict(self.resolved)
        if self.ids:
            notes["ids_rewritten"] = dict(self.ids)
        if self.positions:
            notes["position"] = list(self.positions)
        if self.dropped:
            notes["dropped"] = list(self.dropped)
        if self.layouts:
            notes["layout"] = dict(self.layouts)
        return notes


class WorkingCopy:
    """The working copy of one draft document (what the edits change; the stored draft is
    ``forms.storage.drafts.Draft``)."""

    def __init__(self, document: FormDocument, notes: Notes) -> None:
        self.original = document
        self.data: Data = document.model_dump(mode="json", by_alias=True, exclude_none=True)
        self.notes = notes

    @property
    def steps(self) -> list[Data]:
        steps: list[Data] = self.data["steps"]
        return steps

    def items(self) -> Iterator[tuple[Data, Data]]:
        """Every (step, item), in order."""
        for step in self.steps:
            for item in step.setdefault("items", []):
                yield step, item

    def item_ids(self) -> set[str]:
        return {str(item["id"]) for _, item in self.items()}

    def field_count(self) -> int:
        return sum(1 for _, item in self.items() if item["kind"] not in BLOCK_KINDS)

    # ------------------------------------------------------------------ lookups

    def step(self, ref: str | None, selection: Selection | None) -> Data:
        """The step ``ref`` names, else the selected one (or the selected field's), else the
        only one; ``not_found`` / ``no_selection`` otherwise."""
        if ref is None:
            ref = self._selected_step(selection)
        if ref is None:
            raise EditError(
                "no_selection",
                "Which step? Nothing is selected and the form has several steps.",
                "Send `step` with one of: " + ", ".join(s["id"] for s in self.steps) + ".",
            )
        for step in self.steps:
            if step["id"] == ref:
                return step
        titled = [s for s in self.steps if str(s["title"]).casefold() == ref.casefold()]
        if len(titled) == 1:
            self.notes.resolved[ref] = titled[0]["id"]
            return titled[0]
        candidates = {str(s["id"]): (str(s["id"]), str(s["title"])) for s in self.steps}
        raise not_found("step", ref, candidates)

    def _selected_step(self, selection: Selection | None) -> str | None:
        if selection is not None and selection.step is not None:
            return selection.step
        if selection is not None and selection.field is not None:
            return str(self.locate(selection.field, None)[0]["id"])
        if len(self.steps) == 1:
            return str(self.steps[0]["id"])
        return None

    def locate(self, ref: str | None, step_ref: str | None) -> tuple[Data, Data]:
        """The (step, item) of the field or block ``ref`` names; with ``step_ref``, it must be
        in that step."""
        if ref is None:
            raise EditError(
                "no_selection",
                "Which field? Nothing is selected.",
                "Send `field` with the field's id (inspect_form lists them).",
            )
        found = [(s, i) for s, i in self.items() if i["id"] == ref]
        if not found:
            labelled = [
                (s, i)
                for s, i in self.items()
                if str(i.get("label", "")).casefold() == ref.casefold()
            ]
            if len(labelled) == 1:
                self.notes.resolved[ref] = labelled[0][1]["id"]
                found = labelled
        if not found:
            candidates = {
                str(i["id"]): (str(i["id"]), str(i.get("label", "")), *i.get("aliases", []))
                for _, i in self.items()
            }
            raise not_found("field", ref, candidates)
        step, item = found[0]
        if step_ref is not None and self.step(step_ref, None) is not step:
            raise EditError(
                "not_found",
                f'Field "{item["id"]}" is not in step "{step_ref}"; it is in step "{step["id"]}".',
                f'Leave out `step`, or send step "{step["id"]}".',
            )
        return step, item

    # ------------------------------------------------------------------ finishing

    def pack(self, step: Data, sent: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        """Lay out ``step``'s items (``edit_layout.pack``), noting where an item whose layout
        the call sent (``sent``, by id) went when it is not where the call said."""
        pack(step.setdefault("items", []))
        self.notes.repacked(step["items"], sent or {})

    def finish(self) -> FormDocument:
        """The copy as a document; ``invalid`` naming each problem when it is not one."""
        return finish(self.data)


def finish(data: Data) -> FormDocument:
    """``data`` as a document; ``invalid`` naming each problem when it is not one."""
    try:
        return FormDocument.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        raise EditError(
            "invalid",
            "That would make the form invalid: "
            + describe_errors(errors, data, lambda p: _place(data, p))
            + ".",
            hint_for(errors, "Fix the values named and send the call again; nothing was applied."),
        ) from None


def _place(data: Data, path: tuple[str | int, ...]) -> str:
    """A place in the document in words: ``field "age" minimum``, ``step "contact" title``."""
    rest = [str(p) for p in path]
    words: list[str] = []
    if path[:1] == ("steps",) and len(path) > 1 and isinstance(path[1], int):
        step = data["steps"][path[1]]
        rest = rest[2:]
        if path[2:3] == ("items",) and len(path) > 3 and isinstance(path[3], int):
            item = step["items"][path[3]]
            kind = "block" if item["kind"] in BLOCK_KINDS else "field"
            words.append(f'{kind} "{item["id"]}"')
            rest = rest[2:]
        else:
            words.append(f'step "{step["id"]}"')
    return " ".join([*words, ".".join(rest)]).strip()


def not_found(what: str, ref: str, candidates: Mapping[str, Sequence[str]]) -> EditError:
    close = rank(ref, candidates)
    listed = ", ".join(list(candidates)[:30])
    return EditError(
        "not_found",
        f'There is no {what} "{ref}" in the draft'
        + (f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else "."),
        f"The {what}s are: {listed}." if candidates else f"The draft has no {what}s yet.",
        close,
    )


def sent_updates(updates: BaseModel, example: str) -> Data:
    """The keys an update sent (``invalid`` when it sent none)."""
    sent: Data = updates.model_dump(mode="json", exclude_unset=True)
    if not sent:
        raise EditError(
            "invalid",
            "`updates` is empty: nothing to change.",
            f"Send the keys to change, e.g. {example}.",
        )
    return sent


def slot(position: int | None, length: int, notes: Notes, what: str) -> int:
    """Where ``position`` (0-based; None: last) lands among ``length`` places; past the end
    is last, and noted."""
    if position is None:
        return length
    if position > length:
        notes.positions.append({"what": what, "sent": position, "stored": length})
        return length
    return position


def plan_limit(what: str, limit: int) -> EditError:
    return EditError(
        "plan_limit",
        f"This plan allows at most {limit} {what} in a form, and the draft has {limit}.",
        f"Remove {what} you do not need, or ask the person to upgrade the plan (max_{what}).",
    )
