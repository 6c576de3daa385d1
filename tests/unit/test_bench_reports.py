"""The published bench reports describe the code as it is (issue 26, item 5).

Every report under ``bench/results/`` names, after its title, the commit it measured and
the code it covers (``bench/reports.py``). A report older than a change to that code fails
here, with the commits since and the command that writes it again. No bench is run: only
``git log`` is read. Without git (or in a shallow clone missing the report's commit) the
check is skipped with the reason.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from bench import reports
from bench.reports import (
    REPORTS,
    Report,
    Stamp,
    bench_files,
    read_stamp,
    staleness,
    stamp_problems,
    stamped,
    uncovered,
)
from bench.runs import RESULTS

HAS_GIT = reports.git("rev-parse", "--verify", "HEAD") is not None


def test_every_tracked_report_is_declared_with_the_code_it_covers() -> None:
    """GIVEN the reports under bench/results THEN each is declared in bench/reports.py with
    a command and the paths it covers, and each declared one exists."""
    written = {p.name for p in RESULTS.glob("*.md")}
    declared = {r.name for r in REPORTS}
    assert written == declared
    assert all(r.command.startswith("python -m bench.") and r.covers for r in REPORTS)


def test_a_stamp_names_the_commit_and_uncommitted_changes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """GIVEN a checkout at a commit WHEN a report is stamped THEN the line after its title
    names the commit and the paths, and reads back; with uncommitted changes to the code it
    covers it says so; without git it names no commit."""
    answers: dict[str, str | None] = {"rev-parse": "ab" * 20, "status": ""}

    def fake_git(*args: str, root: Path = reports.ROOT) -> str | None:
        del root
        return answers[args[0]]

    monkeypatch.setattr(reports, "git", fake_git)
    text = stamped("engine.md", "# Engine cost\n\nbody\n")
    title, blank, line, rest = text.split("\n", 3)
    assert (title, blank, rest) == ("# Engine cost", "", "\nbody\n")
    assert line.startswith(f"Measured at commit {'ab' * 20}. Code it covers: `forms/`")
    assert "`python -m bench.engine_perf --publish`" in line
    assert read_stamp(text) == Stamp("ab" * 20, dirty=False)
    answers["status"] = " M forms/engine.py"
    assert read_stamp(stamped("engine.md", "# T\n")) == Stamp("ab" * 20, dirty=True)
    answers["rev-parse"] = None
    assert read_stamp(stamped("engine.md", "# T\n")) == Stamp(None, dirty=False)


def _commit(repo: Path, path: str, text: str) -> str:
    (repo / path).parent.mkdir(parents=True, exist_ok=True)
    (repo / path).write_text(text)
    run = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*run, "add", path], cwd=repo, check=True, capture_output=True)
    subprocess.run([*run, "commit", "-qm", path], cwd=repo, check=True, capture_output=True)
    return subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, check=True, capture_output=True, text=True
    ).stdout.strip()


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_a_report_goes_out_of_date_with_a_commit_to_the_code_it_covers(tmp_path: Path) -> None:
    """GIVEN a repository whose report names the commit of its code WHEN a commit touches
    code it does not cover, then code it covers THEN it stays current, then names that
    commit as why it is out of date."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    entry = Report("engine.md", "python -m bench.engine_perf --publish", ("forms/",))
    measured = _commit(tmp_path, "forms/engine.py", "one\n")
    results = "bench/results/engine.md"
    _commit(tmp_path, results, f"# Engine cost\n\nMeasured at commit {measured}. Code...\n")
    assert staleness(entry, root=tmp_path) == []
    _commit(tmp_path, "docs/notes.md", "not measured\n")
    assert staleness(entry, root=tmp_path) == []
    _commit(tmp_path, "forms/engine.py", "two\n")
    assert [line.split(" ", 1)[1] for line in staleness(entry, root=tmp_path)] == [
        "forms/engine.py"
    ]
    _commit(tmp_path, results, f"# Engine cost\n\nMeasured at commit {'0' * 40}.\n")
    assert "not in this repository's history" in staleness(entry, root=tmp_path)[0]
    _commit(tmp_path, results, "# Engine cost\n\nno stamp\n")
    assert staleness(entry, root=tmp_path) == ["its header names no commit"]


@pytest.mark.skipif(not HAS_GIT, reason="no git checkout here: cannot read which code changed")
@pytest.mark.parametrize("entry", REPORTS, ids=lambda r: r.name)
def test_a_published_report_is_no_older_than_the_code_it_measures(entry: Report) -> None:
    """GIVEN a tracked report THEN no commit after the one it names touches the code it
    covers (else: run its command from a clean checkout and commit the report)."""
    stamp = read_stamp((RESULTS / entry.name).read_text(encoding="utf-8"))
    shallow = reports.git("rev-parse", "--is-shallow-repository") == "true"
    if stamp.commit and shallow and reports.git("cat-file", "-e", stamp.commit) is None:
        pytest.skip(f"a shallow clone without {stamp.commit[:12]}: cannot read what changed")
    if entry.needs:
        # a snapshot: it must name a clean commit of this history, however old
        assert stamp_problems(entry) == [], f"bench/results/{entry.name}: {stamp_problems(entry)}"
        return
    reasons = staleness(entry)
    assert not reasons, (
        f"bench/results/{entry.name} no longer describes the code it covers "
        f"({', '.join(entry.covers)}): {'; '.join(reasons[:10])}. "
        f"Commit the code, then run `{entry.command}` from a clean checkout and commit it."
    )


def test_a_snapshot_report_says_so_and_is_reported_not_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """GIVEN a report whose command needs what CI cannot install WHEN it is stamped THEN its
    header says it is a snapshot of that commit; WHEN the code it covers changes later THEN
    ``python -m bench.reports`` counts the changes without failing, while a report without
    a usable stamp still fails."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    entry = Report("snap.md", "python -m bench.snap --publish", ("code.py",), needs="a peer")
    real_git = reports.git
    monkeypatch.setattr(reports, "git", lambda *args, root=tmp_path: real_git(*args, root=root))
    monkeypatch.setattr(reports, "REPORTS", (entry,))
    monkeypatch.setattr(reports, "_BY_NAME", {"snap.md": entry})
    _commit(tmp_path, "code.py", "one\n")
    results = tmp_path / "bench" / "results"
    _commit(tmp_path, "bench/results/snap.md", stamped("snap.md", "# Snap\n\nfigures\n"))
    assert "A snapshot of that commit: it needs a peer" in (results / "snap.md").read_text()
    assert reports.main([], root=tmp_path) == 0
    _commit(tmp_path, "code.py", "two\n")
    assert [r.split(" ", 1)[1] for r in staleness(entry, root=tmp_path)] == ["code.py"]
    capsys.readouterr()
    assert reports.main([], root=tmp_path) == 0
    assert capsys.readouterr().out == (
        "snap.md: a snapshot (1 later commits touch its code); renewing it needs a peer\n"
    )
    _commit(tmp_path, "bench/results/snap.md", "# Snap\n\nno stamp\n")
    assert stamp_problems(entry, root=tmp_path) == ["its header names no commit"]
    assert reports.main([], root=tmp_path) == 1


def test_the_bench_files_of_a_command_are_found_through_every_import(tmp_path: Path) -> None:
    """GIVEN a bench package run with ``python -m`` whose __main__ imports a module at the top
    and another inside a function THEN all of them are its files, and nothing outside bench."""
    files = {
        "bench/__init__.py": "",
        "bench/x/__init__.py": "",
        "bench/x/__main__.py": "from bench.x import run\nimport json\n",
        "bench/x/run.py": "def f():\n    from bench import floor\n",
        "bench/floor.py": "import bench.deep.leaf\n",
        "bench/deep/__init__.py": "",
        "bench/deep/leaf.py": "",
        "bench/unused.py": "",
    }
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    assert bench_files("bench.x", root=tmp_path) == set(files) - {"bench/unused.py"}


@pytest.mark.skipif(not HAS_GIT, reason="no git checkout here: cannot list the covered files")
@pytest.mark.parametrize("entry", REPORTS, ids=lambda r: r.name)
def test_a_report_covers_every_bench_module_its_command_runs(entry: Report) -> None:
    """GIVEN a tracked report THEN every bench module its command imports (the bench's own
    code, whose change moves a figure) is in the paths it covers, so a change to it makes
    the report stale."""
    assert uncovered(entry) == []
