"""The builder's canvas as data: a draft shown as the form it will be (``docs/pages.md``, "The
builder's canvas"; ``formwork.aws.canvas_pages`` renders it).

Nothing here derives the form a second way. The words come from where the builder and the
compiler already say them:

* each step and item, with its kind, required or optional, its fact key and its rule in
  words, from the draft's document and ``describe_rule`` (what ``inspect_form``'s outline
  says to the model);
* what each field accepts (its constraints in words: ``integer 1-10``, ``text, at most 200
  characters``) from the compiler, ``Catalog.check``, the one compiler publishing runs: the
  type string the form tools show a filling agent;
* the problems, exactly as ``Catalog.check`` reports them: the list ``publish`` would refuse
  with (``NotPublishable.problems``);
* the edit log, undo and redo from ``BuilderService.draft`` (who made each edit);
* the selection from ``BuilderService.selected`` and ``selection_line``.
"""

from __future__ import annotations

from dataclasses import dataclass

from forms.app.builder import BuilderService
from forms.app.catalog import Catalog, tenant_key
from forms.compiled import CompiledForm
from forms.documents import EditError, Selection, selection_line
from forms.documents.edit_checks import describe_action, describe_rule
from forms.documents.field_types import types_of
from forms.documents.model import (
    Divider,
    FieldDoc,
    FormDocument,
    Heading,
    Item,
    Paragraph,
    StepDoc,
    TextField,
)
from forms.errors import InvalidFormDefinition, NotFound
from forms.schema import field_type
from forms.surface.plain import inline

PAGE_CALL_PREFIX = "page-"
"""The tool-call ids of the canvas's own calls (undo, redo): an edit log entry under such an
id was the person's, any other a builder agent's tool call."""
PUBLISHED_SHOWN = 5
"""How many of the latest published versions the canvas lists."""


@dataclass(frozen=True, slots=True)
class CanvasItem:
    id: str
    kind: str
    block: bool
    """A display block (heading, paragraph, divider): no answer."""
    text: str
    """A field's label, a heading's or paragraph's text; empty for a divider."""
    required: bool
    help: str | None
    accepts: str | None
    """What the field accepts, in the compiler's words; None while the draft does not
    compile, and for a block."""
    when: str | None
    memory: str | None
    column: int
    """The first of the 12 columns it takes (1-12)."""
    width: int
    row: int
    selected: bool


@dataclass(frozen=True, slots=True)
class CanvasStep:
    id: str
    title: str
    when: str | None
    items: tuple[CanvasItem, ...]
    selected: bool


@dataclass(frozen=True, slots=True)
class CanvasEdit:
    index: int
    tool: str
    summary: str
    who: str
    """``agent`` (a builder tool call) or ``person`` (the canvas)."""
    by: str
    at: str
    in_force: bool


@dataclass(frozen=True, slots=True)
class CanvasVersion:
    version: int
    by: str
    at: str


@dataclass(frozen=True, slots=True)
class Canvas:
    form_id: str
    title: str
    description: str
    version: int
    """The draft's version (it goes up with every edit, undo and redo)."""
    steps: tuple[CanvasStep, ...]
    checkpoints: tuple[str, ...]
    problems: tuple[str, ...]
    """Why the draft cannot be published now, in the compiler's words; empty: it can."""
    edits: tuple[CanvasEdit, ...]
    """The edit log, newest first."""
    undo: str | None
    redo: str | None
    changed_by: str
    changed_at: str
    selection: str
    """The selection as the model reads it (``Selected field "email": ...``)."""
    published: tuple[CanvasVersion, ...]
    """The latest published versions, newest first."""
    latest: int
    """The latest published version (0: never published)."""


def canvas(builder: BuilderService, catalog: Catalog, principal: str, form_id: str) -> Canvas:
    """The principal's tenant's draft of ``form_id`` as its canvas; ``NotFound`` when the
    tenant has none."""
    view = builder.draft(principal, form_id)
    document = view.document
    selection = builder.selected(principal, form_id)
    compiled: CompiledForm | None = None
    problems: tuple[str, ...] = ()
    try:
        compiled = catalog.check(document)
    except InvalidFormDefinition as invalid:
        problems = invalid.problems
    edits = tuple(
        CanvasEdit(
            line.index,
            line.tool,
            line.summary,
            "person" if line.call_id.startswith(PAGE_CALL_PREFIX) else "agent",
            line.by,
            _time(line.at.isoformat()),
            line.in_force,
        )
        for line in reversed(view.log)
    )
    draft = view.draft
    latest, published = _published(catalog, principal, form_id)
    return Canvas(
        form_id=form_id,
        title=document.title,
        description=document.description,
        version=draft.version,
        steps=tuple(_step(step, compiled, selection) for step in document.steps),
        checkpoints=tuple(
            f"{c.title or c.id}: when {describe_rule(c.when)}, "
            + ", ".join(map(describe_action, c.then))
            for c in document.checkpoints
        ),
        problems=problems,
        edits=edits,
        undo=draft.current.summary if draft.undo_target is not None else None,
        redo=draft.redo[0].summary if draft.redo else None,
        changed_by=draft.changed_by,
        changed_at=_time(draft.changed_at.isoformat()),
        selection=_selection_text(document, selection),
        published=published,
        latest=latest,
    )


def _step(step: StepDoc, compiled: CompiledForm | None, selection: Selection | None) -> CanvasStep:
    field = selection.field if selection is not None else None
    items = tuple(_item(item, compiled, field) for item in step.items)
    return CanvasStep(
        step.id,
        step.title,
        describe_rule(step.when) if step.when is not None else None,
        items,
        selection is not None and field is None and selection.step == step.id,
    )


def _item(item: Item, compiled: CompiledForm | None, selected: str | None) -> CanvasItem:
    layout = item.layout
    column, width, row = (layout.x + 1, layout.w, layout.y) if layout is not None else (1, 12, 0)
    if isinstance(item, Heading | Paragraph | Divider):
        text = "" if isinstance(item, Divider) else item.text
        return CanvasItem(
            item.id, item.kind, True, text, False, None, None, None, None, column, width, row,
            item.id == selected,
        )  # fmt: skip
    return CanvasItem(
        item.id,
        item.kind,
        False,
        item.label,
        item.required,
        item.help,
        _accepts(item, compiled),
        describe_rule(item.when) if item.when is not None else None,
        item.memory,
        column,
        width,
        row,
        item.id == selected,
    )


def _accepts(item: FieldDoc, compiled: CompiledForm | None) -> str | None:
    """What the field accepts in the compiler's words: its compiled type string when the
    draft compiles, else the compiler's type of the field alone (``forms.schema.field_type``
    of the annotation the compiler would declare, ``types_of``); None when the field's
    settings give no type yet (the problems say why)."""
    found = compiled.fields.get(item.id) if compiled is not None else None
    if found is not None:
        return inline(found.type.type_string)
    annotation = types_of(item).annotation
    if annotation is None:
        return None
    example = item.example if isinstance(item, TextField) else None
    try:
        return inline(field_type(annotation, example).type_string)
    except TypeError:  # pragma: no cover - the index builds only annotations pydantic takes
        return None


def _selection_text(document: FormDocument, selection: Selection | None) -> str:
    try:
        return selection_line(document, selection)
    except EditError:  # selected, then deleted
        return "Nothing is selected (the selected item is no longer in the form)."


def _published(
    catalog: Catalog, principal: str, form_id: str
) -> tuple[int, tuple[CanvasVersion, ...]]:
    tenant = tenant_key(principal)
    latest = catalog.documents.catalog(tenant).get(form_id, 0)
    shown: list[CanvasVersion] = []
    for version in range(latest, max(latest - PUBLISHED_SHOWN, 0), -1):
        try:
            found = catalog.documents.published(tenant, form_id, version)
        except NotFound:  # pragma: no cover - versions are dense and never removed
            continue
        shown.append(CanvasVersion(version, found.by, _time(found.at.isoformat())))
    return latest, tuple(shown)


def _time(iso: str) -> str:
    """An instant as the page shows it: ``2026-05-04 09:30 UTC``."""
    return iso[:16].replace("T", " ") + " UTC"
