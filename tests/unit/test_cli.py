"""The ``formwork`` command: ``check`` reports every definition error where it is written;
``dev`` and ``demo`` hand over to the local stack and the demo with their own options."""

from __future__ import annotations

import re
import sys
import textwrap
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from formwork import cli
from formwork.check import LoadError, check
from formwork.examples import demo
from formwork.infra.local import __main__ as local

BROKEN = """\
from forms import Checkpoint, FormDef, FormRegistry, Step, field


class Who(Step):
    title = "Who"

    name: str = field("Name")
    age: int = field("Age", when=lambda v: v.nmae is not None)


class Where(Step):
    title = ""

    city: str = field("City")


class Fine(Step):
    title = "Fine"

    city: str = field("City")


class Blank(Step):
    title = "Blank"

    x: int = field("")


TYPO = FormDef(id="typo", version=1, title="Typo", steps=[Who])
UNTITLED = FormDef(id="untitled", version=1, title="Untitled", steps=[Where])
GOOD = FormDef(id="good", version=1, title="Good", steps=[Fine])
AGAIN = FormDef(id="good", version=1, title="Good again", steps=[Fine])
LABEL = FormDef(id="label", version=1, title="Label", steps=[Blank])
GATE = FormDef(
    id="gate",
    version=1,
    title="Gate",
    steps=[Fine],
    checkpoints=[Checkpoint("Bad Id", when=lambda v: True)],
)
SHOUTING = FormDef(id="Shouting", version=1, title="Shouting", steps=[Fine])
FORMS = [TYPO, UNTITLED, GOOD, AGAIN, LABEL, GATE, SHOUTING]
REGISTRY = FormRegistry([GOOD])
NOT_FORMS = ["travel-claim"]
"""


def line_of(source: str, text: str) -> int:
    """The 1-based line of the first line of ``source`` containing ``text``."""
    return next(n for n, line in enumerate(source.splitlines(), 1) if text in line)


@pytest.fixture
def module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str], str]]:
    """Writes a module under a fresh name into an importable folder; returns the name."""
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    written: list[str] = []

    def write(source: str) -> str:
        name = f"forms_{uuid.uuid4().hex[:10]}"
        (tmp_path / f"{name}.py").write_text(source)
        written.append(name)
        return name

    yield write
    for name in written:
        sys.modules.pop(name, None)


def test_the_examples_check_clean_with_one_line_per_form(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # WHEN the example forms are checked
    assert cli.main(["check", "forms.examples:EXAMPLES"]) == 0
    # THEN each form gets one summary line, and nothing else is printed
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[2] for line in lines] == [
        "travel-claim",
        "pi-intake",
        "grant-application",
        "purchase-request",
        "health-check",
    ]
    assert lines[3].endswith(
        '"Purchase request": 2 steps, 7 fields, 2 checkpoints, 1 executor, 1 approval'
    )


def test_every_broken_form_is_reported_at_the_line_that_breaks_it(
    module: Callable[[str], str], capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a module of seven forms, six of them broken in different ways
    name = module(BROKEN)
    path = f"{name}.py"
    # WHEN it is checked
    assert cli.main(["check", f"{name}:FORMS"]) == 1
    out = capsys.readouterr().out
    # THEN each fault is printed as path:line: message, at the part the message names
    faults = dict(
        (message.split(":")[0].removeprefix("form "), f"{where}:{line}")
        for where, line, message in re.findall(r"^(\S+\.py):(\d+): (.*)$", out, re.MULTILINE)
    )
    assert faults == {
        "'typo'": f"{path}:{line_of(BROKEN, 'v.nmae')}",  # the reference in the predicate
        "'untitled'": f"{path}:{line_of(BROKEN, 'class Where')}",  # the step without a title
        "'good' version 1 is registered twice": f"{path}:{line_of(BROKEN, 'AGAIN =')}",
        "'label'": f"{path}:{line_of(BROKEN, 'x: int')}",  # the field with an empty label
        "'gate'": f"{path}:{line_of(BROKEN, 'Checkpoint(')}",
        "id 'Shouting' must be lowercase letters, digits and hyphens, starting with a letter, "
        "at most 63 characters": f"{path}:{line_of(BROKEN, 'SHOUTING =')}",
    }
    assert "did you mean 'name'?" in out
    # AND the one sound form is summarised, then the count
    assert f'ok  {name}:FORMS  good v1 "Good": 1 step, 1 field' in out
    assert out.splitlines()[-1] == "6 errors, 1 form compiled"


MANY = """\
from forms import Checkpoint, FormDef, Step, field


class Who(Step):
    title = "Who"

    name: str = field("Name")
    age: int = field("Age", when=lambda v: v.nmae is not None)
    city: str = field("")


class Where(Step):
    title = ""

    town: str = field("Town", when=lambda v: v.agee is not None)


MESSY = FormDef(
    id="messy",
    version=1,
    title="Messy",
    steps=[Who, Where],
    checkpoints=[Checkpoint("Bad Id", when=lambda v: True)],
)
"""


def test_every_problem_of_one_form_is_reported_not_only_the_first(
    module: Callable[[str], str], capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN one form breaking four rules in four places
    name = module(MANY)
    # WHEN it is checked
    assert cli.main(["check", f"{name}:MESSY"]) == 1
    out = capsys.readouterr().out
    # THEN each problem is printed at its own line: the structure first (an untitled step, an
    # empty label, a bad checkpoint id), since the references are read once it is whole
    lines = {int(line) for line in re.findall(r"^\S+\.py:(\d+): ", out, re.MULTILINE)}
    assert lines == {
        line_of(MANY, "class Where"),
        line_of(MANY, 'city: str = field("")'),
        line_of(MANY, "Checkpoint("),
    }
    assert out.splitlines()[-1] == "3 errors, 0 forms compiled"


def test_a_form_whose_structure_is_whole_gets_every_bad_reference_reported(
    module: Callable[[str], str], capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the same form with its structure repaired: only the two typos are left
    source = MANY.replace('title = ""', 'title = "Where"').replace('field("")', 'field("City")')
    source = source.replace('"Bad Id"', '"ok"')
    name = module(source)
    assert cli.main(["check", f"{name}:MESSY"]) == 1
    out = capsys.readouterr().out
    # THEN both references are reported, each at its predicate, with the name it meant
    lines = {int(line) for line in re.findall(r"^\S+\.py:(\d+): ", out, re.MULTILINE)}
    assert lines == {line_of(source, "v.nmae"), line_of(source, "v.agee")}
    assert "did you mean 'name'?" in out and "did you mean 'age'?" in out


def test_a_module_that_raises_while_importing_is_reported_where_it_raised(
    module: Callable[[str], str], capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a module that builds a registry of a broken form at import
    broken = module(BROKEN)
    name = module(
        f"from forms import FormRegistry\nfrom {broken} import UNTITLED\n\n"
        "R = FormRegistry([UNTITLED])\n"
    )
    # WHEN it is checked / THEN the fault is the module's line that raised
    assert cli.main(["check", f"{name}:R"]) == 1
    first = capsys.readouterr().out.splitlines()[0]
    assert first == (
        f"{name}.py:4: InvalidFormDefinition: form 'untitled': step 'where' has no title"
    )


def test_a_syntax_error_is_reported_at_its_line(
    module: Callable[[str], str], capsys: pytest.CaptureFixture[str]
) -> None:
    name = module("from forms import FormDef\n\nX = FormDef(\n")
    assert cli.main(["check", f"{name}:X"]) == 1
    assert capsys.readouterr().out.startswith(f"{name}.py:3: SyntaxError: ")


def test_a_registry_and_a_single_form_are_accepted(module: Callable[[str], str]) -> None:
    name = module(BROKEN)
    assert [form.id for form in check(f"{name}:REGISTRY").compiled] == ["good"]
    assert [form.id for form in check(f"{name}:GOOD").compiled] == ["good"]


@pytest.mark.parametrize(
    ("reference", "says"),
    [
        ("{name}", "expected MODULE:ATTRIBUTE"),
        ("{name}:MISSING", "has no 'MISSING'"),
        (
            "{name}:NOT_FORMS",
            "expected a FormDef, a non-empty sequence of FormDef or a FormRegistry",
        ),
        ("no_such_module_anywhere:FORMS", "no module named 'no_such_module_anywhere'"),
    ],
)
def test_a_reference_that_names_no_forms_is_a_usage_error(
    module: Callable[[str], str],
    capsys: pytest.CaptureFixture[str],
    reference: str,
    says: str,
) -> None:
    given = reference.format(name=module(BROKEN))
    with pytest.raises(LoadError, match=re.escape(says)):
        check(given)
    assert cli.main(["check", given]) == 2
    assert says in capsys.readouterr().err


def test_a_module_beside_the_caller_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a forms module in the working directory, which is not on the import path (as for
    # a console script)
    name = f"mine_{uuid.uuid4().hex[:10]}"
    (tmp_path / f"{name}.py").write_text(
        textwrap.dedent(
            """
            from forms import FormDef, Step, field

            class Only(Step):
                title = "Only"
                answer: str = field("Answer")

            FORMS = [FormDef(id="mine", version=1, title="Mine", steps=[Only])]
            """
        )
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    try:
        # WHEN it is checked by name / THEN it is found and compiles
        assert cli.main(["check", f"{name}:FORMS"]) == 0
    finally:
        sys.modules.pop(name, None)
    assert 'mine v1 "Mine": 1 step, 1 field' in capsys.readouterr().out


def test_demo_runs_the_demo_with_its_options(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["demo", "--in-process"]) == 0
    assert "every expected outcome seen" in capsys.readouterr().out


@pytest.mark.parametrize(("command", "option"), [("dev", "--json-logs"), ("demo", "--in-process")])
def test_dev_and_demo_take_their_own_options_and_name_themselves(
    capsys: pytest.CaptureFixture[str], command: str, option: str
) -> None:
    with pytest.raises(SystemExit) as done:
        cli.main([command, "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: formwork {command} ") and option in out


def test_dev_without_the_local_stacks_packages_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def missing(command: str) -> object:
        raise ModuleNotFoundError("No module named 'yaml'", name="yaml")

    monkeypatch.setattr(cli, "_entry", missing)
    assert cli.main(["dev"]) == 2
    assert "pip install 'formwork[local]'" in capsys.readouterr().err


def test_the_demo_keeps_its_in_process_default_for_callers_without_arguments(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert demo.main() == 0
    assert "in-process" in capsys.readouterr().out.splitlines()[0]


# ------------------------------------------------------------------------ formwork dev's banner

LEAVE = """\
from forms import FormDef, Step, field


class Leave(Step):
    title = "Leave"

    days: int = field("Working days")


FORMS = [FormDef(id="leave-request", version=1, title="Leave request", steps=[Leave])]
"""


def running_stack(forms: str) -> Any:
    """What ``banner`` reads of a running stack, serving ``forms`` (``FORMWORK_FORMS``)."""
    tools = SimpleNamespace(
        config=SimpleNamespace(handler="formwork.aws.api.lambda_handler"),
        environment={"FORMWORK_FORMS": forms},
    )
    return SimpleNamespace(
        api_url="http://127.0.0.1:3000",
        json_logs=False,
        functions={"ToolsFunction": tools},
        temporal=None,
        worker=None,
        dynamodb_endpoint="http://127.0.0.1:8000",
        table_name="formwork-local",
        dynamodb_description="moto",
        dev_webhook=("crm", "dev-secret"),
        environment={},
    )


def test_the_banners_example_starts_a_form_the_stack_serves(
    module: Callable[[str], str],
) -> None:
    # GIVEN formwork dev serving forms of the developer's own (no travel-claim among them)
    name = module(LEAVE)
    # WHEN the banner is printed
    text = local.banner(running_stack(f"{name}:FORMS"))
    # THEN its example starts one of them
    assert '"form": "leave-request"' in text
    assert "travel-claim" not in text


def test_the_banner_shows_how_to_mint_a_page_link_with_the_same_dev_token() -> None:
    # GIVEN no demo claim started (its links: tests/unit/test_page_link.py)
    text = local.banner(running_stack("forms.examples:EXAMPLES"))
    # THEN the banner names the command that mints a link to the form its example starts
    mint = text.split("The form page", 1)[1]
    assert (
        "python -m formwork.infra.local.page_link --instance <instance> --conversation conv-1 "
        "--token dev:alice" in mint
    )
    assert "-H 'Authorization: Bearer dev:alice'" in text


def test_the_banner_names_the_demo_command_of_a_checkout_or_a_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stack = running_stack("forms.examples:EXAMPLES")
    # GIVEN a checkout (a Makefile beside infra/): make demo
    assert "make demo" in local.banner(stack)
    # GIVEN an installed package (no Makefile where infra/ is): formwork demo, never make
    monkeypatch.setattr(local, "ROOT", tmp_path)
    text = local.banner(stack)
    assert 'FORMWORK_WEBHOOK_SECRETS=\'{"crm": "dev-secret"}\' formwork demo' in text
    assert "make " not in text
