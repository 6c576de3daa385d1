"""Fixtures for the install tests: the project's wheel, and fresh virtualenvs it is installed in.

The wheel is built from a copy of the sources that ship (never from the working tree, where a
stale ``build/`` folder could slip deleted modules into it). Each virtualenv is new and empty:
no pip, no project on the path, nothing of the development environment, and the install
resolves against the package index under the Lambda lock's pins (so pip's cache serves it).
Every test here is marked ``install``; ``pytest -m "not install"`` leaves them out.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LOCK = ROOT / "infra" / "lambda-requirements.txt"
SHIPPED = ("pyproject.toml", "README.md", "template.yaml")
PACKAGES = ("examples", "forms", "formwork", "functions", "infra", "workflows")
INSTALL_TIMEOUT = 300.0


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/install/" in str(item.fspath):
            item.add_marker(pytest.mark.install)


def clean_environment(**extra: str) -> dict[str, str]:
    """This process's environment without anything that would put the checkout or the
    development virtualenv on a child's path."""
    dropped = {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP"}
    return {k: v for k, v in os.environ.items() if k not in dropped} | extra


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    source = tmp_path_factory.mktemp("source")
    for name in SHIPPED:
        shutil.copy2(ROOT / name, source / name)
    for package in PACKAGES:
        shutil.copytree(
            ROOT / package,
            source / package,
            symlinks=True,  # infra/local/template.yaml links to ../../template.yaml
            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
        )
    wheels = tmp_path_factory.mktemp("wheels")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", wheels, source],
        check=True,
        timeout=INSTALL_TIMEOUT,
        env=clean_environment(),
    )
    (built,) = wheels.glob("formwork-*.whl")
    return built


class Venv:
    """A fresh virtualenv with the wheel installed; runs its commands outside the checkout."""

    def __init__(self, path: Path, cwd: Path) -> None:
        self.path = path
        self.cwd = cwd

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"

    def run(
        self, *command: str | Path, timeout: float = 120.0, **env: str
    ) -> subprocess.CompletedProcess[str]:
        """``command`` with ``python`` or ``formwork`` meaning this virtualenv's."""
        first, *rest = command
        program = self.path / "bin" / str(first) if first in ("python", "formwork") else first
        return subprocess.run(
            [program, *rest],
            cwd=self.cwd,
            env=clean_environment(**env),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )


@pytest.fixture(scope="session")
def venv(tmp_path_factory: pytest.TempPathFactory, wheel: Path) -> Iterator[Callable[[str], Venv]]:
    """``venv("aws,temporal")``: a new virtualenv with the wheel and those extras ("" none).
    Removed at the end of the session (the local stack's is half a gigabyte)."""
    made: list[Path] = []

    def make(extras: str) -> Venv:
        path = tmp_path_factory.mktemp("venv")
        made.append(path)
        subprocess.run(
            [sys.executable, "-m", "venv", "--without-pip", path],
            check=True,
            timeout=INSTALL_TIMEOUT,
            env=clean_environment(),
        )
        requirement = f"{wheel}[{extras}]" if extras else str(wheel)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "--python",
                path / "bin" / "python",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--constraint",
                LOCK,
                requirement,
            ],
            check=True,
            timeout=INSTALL_TIMEOUT,
            env=clean_environment(),
        )
        return Venv(path, tmp_path_factory.mktemp("elsewhere"))

    yield make
    for path in made:
        shutil.rmtree(path, ignore_errors=True)
