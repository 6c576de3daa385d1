"""``python -m formwork.infra.compiled`` (``make compiled``): the engine's core compiled with mypyc.

The engine is plain, strictly typed Python, and stays the definition of its behaviour. mypyc
(part of mypy, which type-checks the project already) compiles such modules to C extensions
that run the same code without the interpreter's dispatch: the modules in ``MODULES``, the
pure core and the write path a tool call spends most of its Python time in, make a one-field
fill about a seventh cheaper (docs/performance.md, "The compiled core"). Nothing here is
written by hand; mypyc is the well-kept tool for it (Black and mypy itself ship compiled by
it), where Cython would mean a second language and annotations of its own.

The build never touches the source tree: a compiled module beside its ``.py`` is imported
instead of it, so an edit would silently not run. ``build`` copies ``forms/`` into
``.local/compiled/`` (``OUT``) and compiles ``MODULES`` there, in place; ``FORMWORK_COMPILED``
naming that folder puts it first (``use_from_environment``), with every other module of the
copy as source. ``make compiled`` rebuilds it whenever a file of ``forms/`` changes; ``make
test`` runs the unit and functional tests on it again (``make test-compiled``), so both builds
answer to the same tests, and ``make bench-peer`` measures it, its report saying which build
ran (``build_note``).

Why these modules and no others. A compiled function checks its arguments against their
declared types, and a class defined in a compiled module becomes native: no instance
attributes beyond its own, no subclass in Python, no patching of what it calls. The modules
here hold functions, named tuples (which stay Python classes), and a few classes nothing
subclasses or patches (the commit loop and its policy, the incremental pass's working object,
the predicate error); the whole unit and functional suites pass on either build.
Left as source: the service (public, and subclassed by embedders' tests), the stores (adapters
are subclassed to instrument them), the instance's pydantic models and the ``Marked`` dicts,
and the rendering (its tests hand it light stand-ins for a transition, which a compiled
function refuses); compiling the service and the rendering as well made the call about 5%
cheaper again in a trial. ``tests/unit/test_compiled_core.py`` checks that each pass ran the
build it names.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / ".local" / "compiled"
ENV = "FORMWORK_COMPILED"
"""The variable naming a build to run (``use_from_environment``): the tests and the benches."""
_SOURCES = "SOURCES"
MODULES = (
    "forms.engine",
    "forms.edges",
    "forms.evaluation",
    "forms.incremental",
    "forms.one_write",
    "forms.operations",
    "forms.undo_targets",
    "forms.app.arguments",
    "forms.app.checked",
    "forms.app.loop",
    "forms.app.writes",
)
"""The compiled modules, by name (their sources under ``forms/``)."""


def source_of(module: str) -> Path:
    """The path, relative to the repository's root, of ``module``'s source."""
    return Path(*module.split(".")).with_suffix(".py")


def build(out: Path = OUT) -> None:
    """A fresh copy of ``forms/`` in ``out`` with ``MODULES`` compiled in place (about 40 s)."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    shutil.copytree(
        ROOT / "forms",
        out / "forms",
        ignore=lambda folder, names: [n for n in names if _left_out(Path(n))],
    )
    copied = sources_digest(out)  # what is compiled, even if forms/ changes meanwhile
    command = [
        sys.executable,
        "-m",
        "mypyc",
        "--config-file",
        str(ROOT / "pyproject.toml"),
        *(str(source_of(m)) for m in MODULES),
    ]
    done = subprocess.run(command, cwd=out, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.stderr.write(done.stdout + done.stderr)
        raise SystemExit(f"mypyc failed (exit {done.returncode})")
    shutil.rmtree(out / "build", ignore_errors=True)
    (out / _SOURCES).write_text(copied + "\n")


def sources_digest(root: Path) -> str:
    """A digest of the files of ``root``'s ``forms/`` a build copies, names and contents: what
    a build is of (``root``: the repository, or a build's own copy)."""
    digest = hashlib.sha256()
    for path in sorted((root / "forms").rglob("*")):
        relative = path.relative_to(root)
        if not path.is_file() or _left_out(relative):
            continue
        digest.update(relative.as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def _left_out(path: Path) -> bool:
    """Whether a build leaves ``path`` out of its copy of ``forms/`` (and of its digest): the
    bytecode caches, and any extension module beside a source."""
    return "__pycache__" in path.parts or path.suffix in (".so", ".pyc")


def use_from_environment() -> None:
    """Run the build ``FORMWORK_COMPILED`` names, when it is set: its folder first on
    ``sys.path``, before anything imports ``forms``. ``SystemExit`` when ``forms`` is
    imported already, or the build is not of the sources as they are now (an edit since:
    ``make compiled``), so a run never measures or tests a stale build unawares."""
    folder = os.environ.get(ENV)
    if not folder:
        return
    out = Path(folder).resolve()
    if str(out) in sys.path:
        return  # put there already (the tests' conftest, then a bench module they import)
    if "forms" in sys.modules:
        raise SystemExit(f"{ENV} is set, but forms was imported before the build was put first")
    stamp = out / _SOURCES
    built = stamp.read_text().strip() if stamp.exists() else None
    if built != sources_digest(ROOT):
        raise SystemExit(
            f"{ENV}={folder} is not a build of forms/ as it is now: run `make compiled`"
        )
    sys.path.insert(0, str(out))
    # bound now: a later entry put before it (pytest puts the root first to import a test
    # module) finds ``forms`` imported already, and its modules under the build's folder
    importlib.import_module("forms")


def compiled_modules() -> tuple[str, ...]:
    """Which of ``MODULES`` this interpreter imports compiled (an extension, not a source)."""
    return tuple(m for m in MODULES if not _is_source(importlib.import_module(m).__file__))


def _is_source(path: str | None) -> bool:
    return path is None or path.endswith(".py")


def build_note() -> str:
    """The engine's build, as a report names it: compiled (which modules, by mypyc of which
    mypy) or plain Python."""
    compiled = compiled_modules()
    if not compiled:
        return "the engine as plain Python (no module compiled)"
    from mypy.version import __version__ as mypy_version  # only for a compiled build

    whole = "its core" if len(compiled) == len(MODULES) else f"{len(compiled)} of its core"
    names = ", ".join(m.removeprefix("forms.") for m in compiled)
    return f"the engine with {whole} compiled by mypyc {mypy_version} ({names})"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m formwork.infra.compiled")
    parser.add_argument("--out", type=Path, default=OUT, help=f"where to build (default {OUT})")
    args = parser.parse_args(argv)
    build(args.out)
    print(f"compiled {len(MODULES)} modules into {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
