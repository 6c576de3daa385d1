"""The synthetic form of the anchor measurement, at any size.

Steps of ten fields each; step k > 1 applies once step k-1 is complete. Every step has: kind
(x|y), name (string, 2+), email, count (integer >= 0), date, and a branch: gx1 (string 2+,
kind x), gy1 (string 2+, kind y), gx2 (number >= 0, kind x), gy2 (a|b|c, kind y), gx3 (optional
boolean, kind x and gx1 answered). Built with ``type()`` so one factory serves every size.

``chained=False`` drops the chain: every step applies from the start (a long form whose steps
are all ahead of the agent at once, the shape whose status line grew with its steps).

``steps`` spreads the same number of fields over fewer or more steps (the many-step shapes):
a step of more than ten fields adds optional notes (``note_{k}_{j}``, text) after the ten; a
step of fewer keeps the first ones of the ten in the order above (at least five: kind, name,
email, count and date, which the bench's fills write). Such steps carry no author's preview,
so the status line derives the preview of each later step it shows from its labels.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from forms import FormDef, Step, field
from forms.state import FormState, Values

EMAIL = Annotated[str, Field(pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$")]
NAME = Annotated[str, Field(min_length=2)]


def _is(kind_field: str, wanted: str) -> Any:
    return lambda v: getattr(v, kind_field) == wanted


def _x_with_gx1(kind_field: str, gx1_field: str) -> Any:
    return lambda v: getattr(v, kind_field) == "x" and getattr(v, gx1_field) is not None


def _after(previous: str) -> Any:
    def applies(v: Values, s: FormState) -> bool:
        del v
        return s.step_complete(previous)

    return applies


def make_step(k: int, chained: bool = True, size: int = 10, preview: bool = True) -> type[Step]:
    if size < 5:
        raise ValueError("a synthetic step has at least five fields")
    kind = f"kind_{k}"
    annotations: dict[str, Any] = {
        kind: Literal["x", "y"],
        f"name_{k}": NAME,
        f"email_{k}": EMAIL,
        f"count_{k}": Annotated[int, Field(ge=0)],
        f"date_{k}": Any,
        f"gx1_{k}": NAME,
        f"gy1_{k}": NAME,
        f"gx2_{k}": Annotated[float, Field(ge=0)],
        f"gy2_{k}": Literal["a", "b", "c"],
        f"gx3_{k}": bool | None,
    }
    from datetime import date

    annotations[f"date_{k}"] = date
    namespace: dict[str, Any] = {
        "__annotations__": annotations,
        "id": f"s{k}",
        "title": f"Step {k}",
        kind: field(f"Kind {k}"),
        f"name_{k}": field(f"Name {k}"),
        f"email_{k}": field(f"Email {k}"),
        f"count_{k}": field(f"Count {k}"),
        f"date_{k}": field(f"Date {k}"),
        f"gx1_{k}": field(f"X one {k}", when=_is(kind, "x")),
        f"gy1_{k}": field(f"Y one {k}", when=_is(kind, "y")),
        f"gx2_{k}": field(f"X two {k}", when=_is(kind, "x")),
        f"gy2_{k}": field(f"Y two {k}", when=_is(kind, "y")),
        f"gx3_{k}": field(f"X three {k}", when=_x_with_gx1(kind, f"gx1_{k}")),
    }
    for name in list(annotations)[size:]:
        del annotations[name], namespace[name]
    for j in range(10, size):
        annotations[f"note_{k}_{j}"] = str | None
        namespace[f"note_{k}_{j}"] = field(f"Note {j} of step {k}")
    if preview:
        namespace["preview"] = f"ten fields of step {k}"
    if k > 1 and chained:
        namespace["when"] = _after(f"s{k - 1}")
    return type(f"SyntheticStep{k}", (Step,), namespace)


def synthetic_form(fields: int, chained: bool = True, steps: int | None = None) -> FormDef:
    """``fields`` fields in ``steps`` steps (default: ten fields a step)."""
    count = max(1, fields // 10) if steps is None else steps
    size = 10 if steps is None else fields // steps
    return FormDef(
        id=f"synthetic-{count * size}"
        + ("" if steps is None else f"-in-{count}")
        + ("" if chained else "-open"),
        version=1,
        title=f"Synthetic form of {count * size} fields",
        steps=[make_step(k, chained, size, steps is None) for k in range(1, count + 1)],
    )


def x_branch(k: int, size: int = 10) -> dict[str, Any]:
    """Answers that complete step k (of ``size`` fields) on the x branch."""
    answers = {
        f"kind_{k}": "x",
        f"name_{k}": "Ada",
        f"email_{k}": f"ada{k}@example.com",
        f"count_{k}": k,
        f"date_{k}": "2026-01-02",
        f"gx1_{k}": "alpha",
        f"gx2_{k}": 1.5,
    }
    kept = [f"{name}_{k}" for name in _ORDER[:size]]
    return {key: value for key, value in answers.items() if key in kept}


_ORDER = ("kind", "name", "email", "count", "date", "gx1", "gy1", "gx2", "gy2", "gx3")
"""The ten fields of a step, in the order a smaller step keeps them."""
