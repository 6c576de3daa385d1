"""What the package declares and the Lambda build ships, checked without building anything:
the engine's light install, the exact pins of the Lambda artifact, the template parameter that
names the forms, and what ``make build-ToolsFunction`` copies and installs."""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from formwork.config import DEFAULT_FORMS
from formwork.infra import lock
from formwork.infra.local.dynamodb import TEMPLATE, load_template

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
PACKAGES = {
    "forms": "forms",
    "formwork": "formwork",
    "functions": "formwork.aws",
    "workflows": "formwork.temporal",
    "infra": "formwork.infra",
    "examples": "formwork.examples",
}
"""Each source folder and the package it installs as: the shells install inside the
distribution's own package, through the symlinks ``formwork/aws`` -> ``functions`` and so on,
which setuptools and mypy follow (README, "Layout")."""


def names(requirements: list[str]) -> set[str]:
    return {Requirement(r).name for r in requirements}


def test_the_engine_installs_with_pydantic_and_the_time_zone_database_alone() -> None:
    project = PYPROJECT["project"]
    # tzdata: zoneinfo's database where the system has none (the memory vocabulary's zones)
    assert [Requirement(r).name for r in project["dependencies"]] == ["pydantic", "tzdata"]
    assert Requirement(project["dependencies"][0]).extras == {"email"}
    extras = project["optional-dependencies"]
    # + pages (jinja2), + Standard Webhooks signatures (standardwebhooks)
    assert names(extras["aws"]) == {"aws-lambda-powertools", "boto3", "jinja2", "standardwebhooks"}
    assert "tracer" in Requirement(extras["aws"][0]).extras  # formwork.aws.api's Tracer: X-Ray
    assert names(extras["temporal"]) == {"temporalio"}
    assert names(extras["client"]) == {"httpx"}  # formwork.client and the chat loop
    # the MCP server: the SDK (its 2.x API), and the client the stdio server forwards through
    assert names(extras["mcp"]) == {"formwork", "mcp"}
    assert Requirement(extras["mcp"][0]).extras == {"client"}
    assert Requirement(extras["mcp"][1]).specifier.contains("2.3.0")
    assert not Requirement(extras["mcp"][1]).specifier.contains("3.0.0")
    # the local stack and dev include the run-time extras
    assert Requirement(extras["local"][0]).extras == {"aws", "temporal"}
    assert Requirement(extras["dev"][0]).extras == {"local", "client", "mcp"}
    assert project["scripts"] == {"formwork": "formwork.cli:main"}


@pytest.mark.parametrize("folder", PACKAGES)
def test_every_package_is_shipped_typed_and_type_checked(folder: str) -> None:
    package = PACKAGES[folder]
    assert (ROOT / folder / "__init__.py").is_file()
    assert (ROOT / folder / "py.typed").is_file()
    # the package's name is where its folder is found from the top: a shell's symlink inside
    # formwork points at the folder
    assert ROOT.joinpath(*package.split(".")).resolve() == ROOT / folder
    setuptools = PYPROJECT["tool"]["setuptools"]
    assert any(
        re.fullmatch(p.replace("*", ".*"), package)
        for p in setuptools["packages"]["find"]["include"]
    )
    assert package.split(".")[0] in PYPROJECT["tool"]["mypy"]["files"]


def test_the_local_stack_reads_the_repository_template() -> None:
    # in a checkout the packaged template is the repository's, never a second copy to drift
    assert TEMPLATE.resolve() == ROOT / "template.yaml"
    assert (
        "template.yaml" in PYPROJECT["tool"]["setuptools"]["package-data"]["formwork.infra.local"]
    )


def test_the_wheel_ships_every_page_template_and_static_file() -> None:
    # GIVEN the templates and static files the page routes read from the package
    pages = ROOT / "functions" / "pages"
    shipped = [f for d in ("templates", "static") for f in (pages / d).iterdir() if f.is_file()]
    assert any(f.suffix == ".html" for f in shipped) and any(f.suffix == ".css" for f in shipped)
    # THEN every one of them is matched by the package data the wheel is built with
    globs = PYPROJECT["tool"]["setuptools"]["package-data"]["formwork.aws.pages"]
    for path in shipped:
        relative = path.relative_to(pages)
        assert any(relative.match(g) for g in globs), relative
    # AND jinja2 is a run-time requirement of the functions, pinned in the Lambda lock
    assert "jinja2" in names(PYPROJECT["project"]["optional-dependencies"]["aws"])
    assert re.search(r"(?m)^jinja2==", (ROOT / "infra" / "lambda-requirements.txt").read_text())


def test_the_lambda_lock_pins_every_run_time_requirement_exactly() -> None:
    pins = lock.read(lock.LOCK.read_text())
    assert lock.unsatisfied(pins, lock.runtime_requirements()) == []
    # the extras' own requirements are in the resolution too
    assert {"aws-xray-sdk", "email-validator", "pydantic-core"} <= set(pins)
    assert not {"moto", "pytest", "pyyaml"} & set(pins)


@pytest.mark.parametrize("text", ["pydantic>=2.7", "boto3", "temporalio==1.*", "pydantic==2.1,<3"])
def test_a_lock_line_that_is_not_one_exact_version_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="not pinned to one exact version"):
        lock.read(f"# header\n{text}\n")


def test_a_stale_lock_is_reported() -> None:
    pins = {"pydantic": "2.6.0"}
    assert lock.unsatisfied(pins, ["pydantic>=2.7,<3", "boto3>=1.34"]) == [
        "pydantic>=2.7,<3: pinned to 2.6.0",
        "boto3>=1.34: not pinned",
    ]


def test_the_forms_served_are_a_template_parameter() -> None:
    template = load_template()
    parameter = template["Parameters"]["Forms"]
    env = template["Globals"]["Function"]["Environment"]["Variables"]
    # every function (the tool API, the relay, the sweeper) serves the same forms
    assert env["FORMWORK_FORMS"] == {"Ref": "Forms"}
    assert parameter["Default"] == DEFAULT_FORMS
    pattern = re.compile(parameter["AllowedPattern"])
    assert pattern.fullmatch("acme_forms:FORMS") and pattern.fullmatch("acme.forms.hr:ALL")
    assert not pattern.fullmatch("acme_forms") and not pattern.fullmatch("acme-forms:FORMS")


def build_commands(target: str, *variables: str) -> str:
    """What ``make <target>`` would run for ``sam build`` (a dry run, into ``/artifact``), as one
    line with whitespace collapsed. Run without make's directory lines, which a make above
    this one (``make test``) would otherwise add."""
    done = subprocess.run(
        [
            "make",
            "--no-print-directory",
            "--dry-run",
            target,
            "ARTIFACTS_DIR=/artifact",
            *variables,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return " ".join(done.stdout.split())


def test_the_lambda_build_ships_the_locked_packages_and_the_users_forms() -> None:
    # WHEN sam build would call the makefile build with the user's forms (a dry run)
    commands = build_commands(
        "build-ToolsFunction",
        "FORMS_SOURCE=acme_forms extra/hr.py",
        "FORMS_REQUIREMENTS=acme-requirements.txt",
    )
    # THEN it installs the lock and the forms' own requirements for the Lambda platform
    install = commands[: commands.index("cp -r")]
    assert '--target "/artifact"' in install
    assert "--platform manylinux2014_aarch64" in install and "--only-binary=:all:" in install
    assert "-r infra/lambda-requirements.txt" in install
    assert '-r "acme-requirements.txt"' in install
    # AND copies the application's packages and the user's forms beside them, the shells the
    # functions run as copies inside formwork (formwork/aws, formwork/temporal are symlinks in
    # the source), without the local stack and the demo
    assert 'cp -r forms formwork acme_forms extra/hr.py "/artifact/"' in commands
    assert 'cd "/artifact/formwork" && rm aws temporal infra examples' in commands
    assert 'cp -r functions "/artifact/formwork/aws"' in commands
    assert 'cp -r workflows "/artifact/formwork/temporal"' in commands


def test_the_lambda_build_ships_bytecode_the_runtime_reads() -> None:
    # WHEN sam build would call the makefile build (a dry run)
    commands = build_commands("build-ToolsFunction")
    # THEN Python 3.11 (the runtime's) installs without compiling, the copied __pycache__ is
    # dropped, and the whole artifact is compiled last, hash-based and unchecked (SAM's zip
    # dates every file 1980-01-01, which a timestamp .pyc would never match), naming each
    # source by where Lambda unpacks it, not by the build folder (the same bytes from any
    # folder: the worker's artifact is checked reproducible, tests/integration)
    assert "sys.version_info[:2] != (3, 11)" in commands
    assert "python3.11 -m pip install --quiet --no-compile" in commands
    compile_all = (
        "python3.11 -m compileall -q -j 0 --invalidation-mode unchecked-hash"
        ' -s "/artifact" -p /var/task "/artifact"'
    )
    assert commands.index("cp -r") < commands.index("-name __pycache__")
    assert commands.index("-name __pycache__") < commands.index(compile_all)
    assert commands.endswith(compile_all)


def test_without_forms_of_their_own_the_build_ships_the_application_only() -> None:
    commands = build_commands("build-RelayFunction")
    assert 'cp -r forms formwork "/artifact/"' in commands
    assert 'cp -r functions "/artifact/formwork/aws"' in commands
    assert "-r infra/lambda-requirements.txt" in commands and '-r "' not in commands
