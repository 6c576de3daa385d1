"""Modules short enough to read in one sitting, functions short enough to hold in one's head.

Every module of the project's packages is at most ``MODULE_LINES`` lines and every function
(methods and nested functions too) at most ``FUNCTION_LINES``, counted from ``def`` (or its
first decorator's line, as ``ast`` gives it) to the last line of the body. A module or function
past its limit is named in ``ALLOWED`` with the reason it is right as it is, or in
``TO_SPLIT`` with who is splitting it: that list is work to do, and it only shrinks. Read from
the source with ``ast``; nothing is imported to check it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("forms", "functions", "formwork", "workflows", "infra", "examples")
MODULE_LINES = 400
FUNCTION_LINES = 60

_SCRIPT = (
    "a scripted demo scene: read top to bottom it is the transcript the demo prints, each turn's "
    "words, call and check in the order shown (its docstring says so)"
)
ALLOWED: dict[str, str] = {
    "examples/demo/scenes.py:travel_claim": _SCRIPT,
    "examples/demo/scenes.py:pi_intake": _SCRIPT,
    "examples/demo/job_scene.py:apply_for_the_job": _SCRIPT,
    "examples/demo/page_scene.py:review_on_the_page": _SCRIPT,
    "examples/demo/approval_page_scene.py:decide_on_the_page": _SCRIPT,
}
"""Past the limit for a stated reason: a module path, or ``path:qualified.name`` for a
function, and why it stays whole."""

TO_SPLIT: dict[str, str] = {
    # modules
    # functions
}
"""Past the limit because its owner is changing it this wave: to split, then to leave this
list. Pruned by the lead as the splits land."""


def sources() -> Iterator[Path]:
    for package in PACKAGES:
        yield from sorted((ROOT / package).rglob("*.py"))


def functions(tree: ast.AST, prefix: str = "") -> Iterator[tuple[str, int]]:
    """(qualified name, lines) for every function in a tree, methods and nested ones too."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            name = f"{prefix}{node.name}"
            yield name, (node.end_lineno or node.lineno) - node.lineno + 1
            yield from functions(node, f"{name}.")
        elif isinstance(node, ast.ClassDef):
            yield from functions(node, f"{prefix}{node.name}.")


def measured() -> dict[str, int]:
    """Every module and function past its limit, by the key the lists use, with its lines."""
    found: dict[str, int] = {}
    for path in sources():
        text = path.read_text()
        where = path.relative_to(ROOT).as_posix()
        if (lines := len(text.splitlines())) > MODULE_LINES:
            found[where] = lines
        for name, length in functions(ast.parse(text, filename=where)):
            if length > FUNCTION_LINES:
                found[f"{where}:{name}"] = length
    return found


def test_no_module_or_function_is_past_its_limit_unless_listed_with_a_reason() -> None:
    unlisted = {key: lines for key, lines in measured().items() if key not in ALLOWED | TO_SPLIT}
    assert unlisted == {}


def test_every_listed_entry_is_still_past_its_limit() -> None:
    # a split that landed leaves its list: the lists name only what is still long
    found = measured()
    assert sorted(set(ALLOWED) - set(found)) == []
    assert sorted(set(TO_SPLIT) - set(found)) == []


def test_every_entry_says_why() -> None:
    assert not set(ALLOWED) & set(TO_SPLIT)
    assert all(reason.strip() for reason in (ALLOWED | TO_SPLIT).values())


def test_the_measure_sees_what_it_is_about() -> None:
    # not vacuous: the scan reads every package, and finds methods and nested functions
    assert {path.relative_to(ROOT).parts[0] for path in sources()} == set(PACKAGES)
    tree = ast.parse("class A:\n    def f(self):\n        def g():\n            pass\n")
    assert dict(functions(tree)) == {"A.f": 3, "A.f.g": 2}
