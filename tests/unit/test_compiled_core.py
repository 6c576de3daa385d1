"""The engine's compiled build (infra/compiled.py): which build a run is on, and what a
build is of. ``make test`` runs the unit and functional tests on both builds; these tests say
which one ran, so the compiled pass cannot quietly test the sources (or the plain pass a stray
extension)."""

from __future__ import annotations

import os
from pathlib import Path

from formwork.infra.compiled import ENV, MODULES, compiled_modules, sources_digest


def test_the_run_is_on_the_build_it_asked_for() -> None:
    if os.environ.get(ENV):
        assert compiled_modules() == MODULES
    else:  # an extension left beside a source would be imported instead of it, unseen
        assert compiled_modules() == ()


def test_the_digest_is_of_the_sources_names_and_contents(tmp_path: Path) -> None:
    (tmp_path / "forms").mkdir()
    (tmp_path / "forms" / "a.py").write_text("x = 1\n")
    first = sources_digest(tmp_path)
    (tmp_path / "forms" / "a.py").write_text("x = 2\n")
    second = sources_digest(tmp_path)
    (tmp_path / "forms" / "a.py").rename(tmp_path / "forms" / "b.py")
    assert len({first, second, sources_digest(tmp_path)}) == 3


def test_the_digest_leaves_out_what_a_build_does_not_copy(tmp_path: Path) -> None:
    (tmp_path / "forms" / "__pycache__").mkdir(parents=True)
    (tmp_path / "forms" / "py.typed").write_text("")
    before = sources_digest(tmp_path)
    (tmp_path / "forms" / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"x")
    (tmp_path / "forms" / "a.cpython-311-x86_64-linux-gnu.so").write_bytes(b"x")
    assert sources_digest(tmp_path) == before
    (tmp_path / "forms" / "py.typed").write_text("partial\n")  # a data file is the build's
    assert sources_digest(tmp_path) != before
