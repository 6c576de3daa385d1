"""The published reports, the code each one measures, and the commit each one describes.

A report under ``bench/results/`` is true of the code it was written from, and of nothing
later. So every report says, on the line after its title, the commit it measured and the code
paths it covers (``stamped``), declared here in one place (``REPORTS``); and
``tests/unit/test_bench_reports.py`` fails when ``git log`` shows a commit touching those paths
after the report's commit, naming the command that writes it again. ``python -m
bench.reports`` prints the same verdict for every report.

A report written from a checkout with uncommitted changes to the code it covers says so (it
describes no commit), and the test refuses it too: publish from a clean checkout of a
commit, after committing the code (a commit that carried the code and its report together
would be later than the commit the report names).

The paths are git pathspecs, deliberately coarse: a bench runs through most of the engine
package, so a change anywhere in it may move a figure, and a report flagged for a change
that moved nothing costs one run to renew (the deterministic ones take seconds, the engine's
about a minute, the backend's about four). Only parts no bench measures are left out of
each. The bench's own modules a report's command runs are read from its imports
(``bench_files``: the command's module and every bench module it imports, at any depth), and
the test holds that its paths cover each of them (``uncovered``), so a bench module a report
takes up later cannot change its figures unnoticed.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.runs import RESULTS

ROOT = RESULTS.parent.parent
"""The repository's root (where ``git`` is asked)."""

_CONTRACTS = ":(exclude,glob)forms/**/*_contract.py"
"""The contract suites shipped beside the ports (tests of a store or dispatcher): no bench
runs them."""
_NOT_RUN = (_CONTRACTS, ":(exclude)forms/documents/", ":(exclude)forms/app/builder*.py")
"""The builder's documents and tools: only the builder bench runs them."""


@dataclass(frozen=True, slots=True)
class Report:
    """One tracked report: its file under ``bench/results/``, the command that writes it
    there, and the code it measures (git pathspecs, from the repository's root)."""

    name: str
    command: str
    covers: tuple[str, ...]
    needs: str = ""
    """What its command needs that CI cannot install (empty: nothing). Such a report is a
    snapshot: its header names the commit it describes and says so, and a later change to the
    code it covers is reported (``python -m bench.reports``), not failed."""


REPORTS: tuple[Report, ...] = (
    Report(
        "engine.md",
        "python -m bench.engine_perf --publish",
        (
            "forms/",
            _CONTRACTS,
            ":(exclude)forms/app/builder*.py",
            "bench/engine_perf.py",
            "bench/synthetic.py",
            # the document-form cases export, compile and publish a document
            "bench/document_forms.py",
        ),
    ),
    Report(
        "perf.md",
        "python -m bench.backend_perf --publish",
        (
            "forms/",
            *_NOT_RUN,
            "functions/",
            # The composition root, the settings and the process's App every handler imports
            # and builds; the Temporal adapter's settings (the settings import them) and the
            # backlog function's client (its cold start is timed). No bench runs the client
            # side: the agents, the typed client, the MCP servers.
            "formwork/",
            ":(exclude)formwork/agents/",
            ":(exclude)formwork/client/",
            ":(exclude)formwork/mcp/",
            "workflows/",
            "infra/local/",
            "template.yaml",
            "bench/backend_perf.py",
            "bench/backend/",
            "bench/http_floor_perf.py",
        ),
    ),
    Report(
        "builder.md",
        "python -m bench.builder_bench --publish",
        (
            "forms/",
            _CONTRACTS,
            "examples/__init__.py",
            "examples/executors.py",
            "examples/job_application.py",
            "bench/builder_bench/",
            "bench/forms_bench/__init__.py",
            "bench/forms_bench/ledger.py",  # the token counts
        ),
    ),
    Report(
        "memory.md",
        "python -m bench.memory_bench --publish",
        ("forms/", *_NOT_RUN, "bench/memory_bench/"),
    ),
    Report(
        "sweep.md",
        "python -m bench.sweep_perf --publish",
        (
            "forms/storage/",
            "functions/relay.py",
            "infra/local/",
            "template.yaml",
            "bench/sweep_perf.py",
        ),
    ),
    Report(
        "hook_path.md",
        "python -m bench.hook_path_perf --publish",
        (
            "forms/",
            *_NOT_RUN,
            "formwork/",
            "workflows/",
            "functions/",
            "infra/local/",
            "template.yaml",
            "bench/hook_path_perf.py",
            "bench/backend/",
        ),
    ),
    Report(
        "peer.md",
        "python -m bench.peer_perf --publish",
        (
            "forms/",
            *_NOT_RUN,
            "bench/peer_perf.py",
            "bench/peer/",
            # the Formwork side: the engine bench's fixtures and timing
            "bench/engine_perf.py",
            "bench/synthetic.py",
            "bench/document_forms.py",
            "infra/compiled.py",  # the build it runs
        ),
        needs="the peer engine's sources (bench/peer/README.md)",
    ),
    Report(
        "report.md",
        "python -m bench.forms_bench",
        ("forms/", *_NOT_RUN, "formwork/agents/", "bench/forms_bench/"),
    ),
)
"""Every tracked report (``bench/results/*.md``), in one place."""

SHARED = frozenset({"bench/__init__.py", "bench/reports.py", "bench/runs.py"})
"""Bench modules every bench imports that measure nothing (where a report goes, its stamp)."""

_BY_NAME = {r.name: r for r in REPORTS}
_STAMP = re.compile(
    r"^Measured at commit (?P<commit>[0-9a-f]{40})(?P<dirty> with uncommitted changes)?",
    re.MULTILINE,
)


def report(name: str) -> Report:
    """The declaration of the report written as ``name`` (``KeyError``: an undeclared one)."""
    return _BY_NAME[name]


def git(*args: str, root: Path = ROOT) -> str | None:
    """``git args`` in the repository at ``root``, its output stripped; None when git is
    missing, this is no checkout, or the command fails."""
    try:
        done = subprocess.run(
            ["git", *args], cwd=root, capture_output=True, text=True, check=False, timeout=60
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def header(entry: Report) -> str:
    """The line a report carries after its title: the commit it measures (with uncommitted
    changes to the code it covers, when there are some), the paths, and how to write it
    again."""
    commit = git("rev-parse", "--verify", "HEAD")
    paths = ", ".join(f"`{p}`" for p in entry.covers)
    tail = (
        f"Code it covers: {paths} (declared in `bench/reports.py`). Written by `{entry.command}`."
    )
    if commit is None:
        return f"Measured at no known commit (no git checkout). {tail}"
    if git("status", "--porcelain", "--", *entry.covers):
        return (
            f"Measured at commit {commit} with uncommitted changes to the code it covers, "
            f"so it describes no commit. {tail}"
        )
    if entry.needs:
        tail += (
            f" A snapshot of that commit: it needs {entry.needs}, which CI does not have, so "
            "it is not renewed with every change to that code (`python -m bench.reports` "
            "counts the changes since)."
        )
    return f"Measured at commit {commit}. {tail}"


def stamped(name: str, text: str) -> str:
    """``text`` (a report starting with its title line) with the header of report ``name``
    after the title."""
    title, _, rest = text.partition("\n")
    return f"{title}\n\n{header(report(name))}\n{rest}"


@dataclass(frozen=True, slots=True)
class Stamp:
    """What a report's header says: the commit (None: none named) and whether the code it
    covers had uncommitted changes."""

    commit: str | None
    dirty: bool


def read_stamp(text: str) -> Stamp:
    """The stamp of a report's text (``Stamp(None, False)`` when it carries none)."""
    found = _STAMP.search(text)
    if found is None:
        return Stamp(None, False)
    return Stamp(found.group("commit"), found.group("dirty") is not None)


def stamp_problems(entry: Report, root: Path = ROOT) -> list[str]:
    """Why report ``entry``'s header names no commit of this history it can describe (empty:
    it names one): the report or its stamp missing, a stamp on uncommitted changes, or a
    commit this repository does not have. Needs git."""
    return _stamped(entry, root)[1]


def staleness(entry: Report, root: Path = ROOT) -> list[str]:
    """Why report ``entry`` (in ``bench/results/`` under ``root``) no longer describes the
    code (empty: it does): ``stamp_problems``, or else the commits touching the code it
    covers after its own, newest first. Needs git (the caller checks that ``git`` answers
    first)."""
    commit, problems = _stamped(entry, root)
    return problems or _later(entry, commit, root)


def _later(entry: Report, commit: str, root: Path) -> list[str]:
    """The commits after ``commit`` touching the code ``entry`` covers, newest first."""
    later = git("log", "--format=%h %s", f"{commit}..HEAD", "--", *entry.covers, root=root)
    if later is None:
        return ["git log failed"]
    return [line[:100] for line in later.splitlines()]


def _stamped(entry: Report, root: Path) -> tuple[str, list[str]]:
    """The commit report ``entry`` names, and why it cannot be used (empty: it can)."""
    path = root / RESULTS.relative_to(ROOT) / entry.name
    if not path.is_file():
        return "", [f"{path} is missing"]
    stamp = read_stamp(path.read_text(encoding="utf-8"))
    if stamp.commit is None:
        return "", ["its header names no commit"]
    if stamp.dirty:
        return "", [f"it was written with uncommitted changes on {stamp.commit[:12]}"]
    if git("cat-file", "-e", f"{stamp.commit}^{{commit}}", root=root) is None:
        return "", [f"it names {stamp.commit[:12]}, which is not in this repository's history"]
    return stamp.commit, []


def bench_files(module: str, root: Path = ROOT) -> set[str]:
    """The files of bench module ``module`` (its ``__main__`` too, for a package) and of every
    bench module it imports, at any depth and wherever the import stands (a function's too), as
    paths from ``root``."""
    found: set[str] = set()
    pending = [module, f"{module}.__main__"]  # ``python -m`` runs a package's __main__
    while pending:
        name = pending.pop()
        path = _module_file(name, root)
        if path is None or path in found:
            continue
        found.add(path)
        if "." in name:  # importing a module runs its package's __init__ first
            pending.append(name.rpartition(".")[0])
        for node in ast.walk(ast.parse((root / path).read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                pending += [a.name for a in node.names if a.name.startswith("bench.")]
            elif isinstance(node, ast.ImportFrom) and _from_bench(node):
                module = str(node.module)
                pending += [module, *(f"{module}.{a.name}" for a in node.names)]
    return found


def _from_bench(node: ast.ImportFrom) -> bool:
    module = node.module or ""
    return node.level == 0 and (module == "bench" or module.startswith("bench."))


def _module_file(name: str, root: Path) -> str | None:
    """The file of module ``name`` under ``root`` (a package's ``__init__.py``), or None."""
    base = Path(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if (root / candidate).is_file():
            return candidate.as_posix()
    return None


def uncovered(entry: Report, root: Path = ROOT) -> list[str]:
    """The bench files report ``entry``'s command runs that its paths do not cover (empty:
    a change to any of them makes it stale); ``SHARED`` ones aside. Needs git."""
    module = entry.command.split()[2]
    covered = set((git("ls-files", "--", *entry.covers, root=root) or "").splitlines())
    return sorted(bench_files(module, root) - covered - SHARED)


def main(argv: Sequence[str] | None = None, root: Path = ROOT) -> int:
    """Print each report's verdict (of the repository at ``root``); exit 1 when one is out of
    date. A snapshot (``Report.needs``) is out of date only when it names no usable commit."""
    del argv
    if git("rev-parse", "HEAD", root=root) is None:
        print("no git checkout: cannot tell which reports are out of date")
        return 2
    stale = 0
    for entry in REPORTS:
        commit, problems = _stamped(entry, root)  # read once: a snapshot asks both
        reasons = problems or _later(entry, commit, root)
        if reasons and entry.needs and not problems:
            print(
                f"{entry.name}: a snapshot ({len(reasons)} later commits touch its code); "
                f"renewing it needs {entry.needs}"
            )
        elif reasons:
            stale += 1
            print(f"{entry.name}: out of date ({len(reasons)}); run `{entry.command}`")
            for reason in reasons[:5]:
                print(f"  {reason}")
        else:
            print(f"{entry.name}: describes the code it covers")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
