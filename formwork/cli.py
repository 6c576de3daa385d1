"""The ``formwork`` command: check form definitions, run the local stack, run the demo.

``formwork check MODULE:ATTR`` compiles forms and prints every definition error with where it
is (exit 1), or one line per form (exit 0); it needs the engine only. ``formwork mcp --url URL
--token TOKEN --conversation ID`` is the MCP server over stdio that a desktop host launches,
forwarding to the tool API (``formwork.mcp.stdio``; the ``mcp`` extra); with ``--builder
FORM_ID`` instead of ``--conversation``, it serves the builder tools of that draft.
``formwork dev`` is ``python -m formwork.infra.local`` (``make dev``) and ``formwork demo`` is
``python -m formwork.examples.demo`` (``make demo``), with the same options; those two need the
``local`` extra (``pip install 'formwork[local]'``).

Modules are looked up from the working directory first, as ``python -m`` does, so
``formwork check my_forms:FORMS`` and ``FORMWORK_FORMS=my_forms:FORMS formwork dev`` find a
``my_forms.py`` beside you (the stack's function processes get it on their ``PYTHONPATH``).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable, Sequence

from forms import CompiledForm
from formwork.check import LoadError, Report, check

LOCAL_EXTRA = "pip install 'formwork[local]'"
MCP_EXTRA = "pip install 'formwork[mcp]'"
MCP_MODULES = {"mcp", "mcp_types", "httpx", "anyio"}
"""Top-level modules ``formwork mcp`` needs beyond the engine (the ``mcp`` extra)."""
DEFAULT_URL = "http://127.0.0.1:3000"
FORM_ID = re.compile(r"^[a-z][a-z0-9-]{0,62}$")
"""A form id, as the builder routes check it (``formwork.aws.models.FORM_ID_PATTERN``)."""
OPTIONAL = {"yaml", "boto3", "botocore", "moto", "temporalio", "aws_lambda_powertools"}
"""Top-level modules of the optional extras: missing, ``dev`` and ``demo`` say what to install."""


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="formwork",
        description="Formwork: forms for AI agents, on Lambda and Temporal.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    checking = commands.add_parser(
        "check",
        help="compile forms and print every definition error with its location",
        description="Compile the forms each MODULE:ATTR names (a FormDef, a sequence of "
        "them, or a FormRegistry) and print every definition error as path:line: message.",
    )
    checking.add_argument("references", nargs="+", metavar="MODULE:ATTR")
    _add_mcp(commands)
    for name, what in (
        (
            "dev",
            "run the local stack until Ctrl-C (python -m formwork.infra.local); FORMWORK_FORMS="
            "module:attr serves your forms, and every setting passes from your shell "
            "(--help: options and settings)",
        ),
        (
            "demo",
            "run the scripted conversation (python -m formwork.examples.demo; --help: options)",
        ),
    ):
        command = commands.add_parser(name, help=what, add_help=False)
        command.add_argument("options", nargs=argparse.REMAINDER)
    given = list(sys.argv[1:] if argv is None else argv)
    # What follows `dev` or `demo` is theirs, --help included.
    if given and given[0] in ("dev", "demo"):
        args = argparse.Namespace(command=given[0], options=given[1:])
    else:
        args = parser.parse_args(given)
    _working_directory_first(for_children=args.command != "check")
    if args.command == "check":
        return run_check(args.references)
    if args.command == "mcp":
        return run_mcp(args)
    return run_elsewhere(args.command, args.options)


def _add_mcp(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    env = os.environ.get
    serving = commands.add_parser(
        "mcp",
        help="the MCP server over stdio, forwarding to the tool API (for a desktop host)",
        description="Serve the form tools of one conversation (--conversation), or the "
        "builder tools of one draft of your tenant (--builder), as an MCP server on stdin and "
        "stdout, forwarding each call to the API with the token (docs/clients.md#mcp). "
        "Needs the mcp extra.",
    )
    serving.add_argument(
        "--url",
        default=env("FORMWORK_URL") or DEFAULT_URL,
        help=f"the tool API's base URL (FORMWORK_URL; default {DEFAULT_URL}, make dev's)",
    )
    serving.add_argument(
        "--token",
        default=env("FORMWORK_TOKEN"),
        help="the bearer token (FORMWORK_TOKEN, which keeps it out of the process list; on "
        "the local stack a dev token such as dev:alice)",
    )
    serving.add_argument(
        "--conversation",
        default=env("FORMWORK_CONVERSATION"),
        help="the conversation id the forms belong to (FORMWORK_CONVERSATION)",
    )
    serving.add_argument(
        "--builder",
        metavar="FORM_ID",
        default=env("FORMWORK_BUILDER_FORM"),
        help="serve the builder tools of this draft instead of a conversation's form tools "
        "(FORMWORK_BUILDER_FORM)",
    )


def run_mcp(args: argparse.Namespace) -> int:
    """``formwork mcp``: the stdio server, until the host closes stdin (2 when it cannot start)."""
    from forms.errors import BadRequest
    from forms.surface.tools import check_id

    builder = getattr(args, "builder", None)
    if builder and args.conversation:
        print(
            "formwork mcp: give --conversation (the form tools) or --builder (the builder "
            "tools), not both",
            file=sys.stderr,
        )
        return 2
    missing = [name for name in ("token", "conversation") if not getattr(args, name)]
    if builder:
        missing = [name for name in missing if name != "conversation"]
    if missing:
        flags = " and ".join(f"--{name}" for name in missing)
        if "conversation" in missing:
            flags += " (or --builder FORM_ID)"
        print(f"formwork mcp: give {flags} (or their environment variables)", file=sys.stderr)
        return 2
    if builder and not FORM_ID.fullmatch(builder):
        print(
            "formwork mcp: --builder takes a form id: a lowercase letter, then up to 62 "
            "lowercase letters, digits or hyphens",
            file=sys.stderr,
        )
        return 2
    if not builder:
        try:
            check_id(args.conversation, "conversation id")
        except BadRequest as refused:
            print(f"formwork mcp: {refused.message}", file=sys.stderr)
            return 2
    try:
        from formwork.mcp.stdio import run, run_builder
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] not in MCP_MODULES:
            raise
        print(
            f"formwork mcp: needs the MCP packages ({exc.name} is missing): {MCP_EXTRA}",
            file=sys.stderr,
        )
        return 2
    if builder:
        return run_builder(args.url, args.token, builder)
    return run(args.url, args.token, args.conversation)


def run_check(references: Sequence[str]) -> int:
    """Print each reference's forms or faults; 0 when all compile, 1 on faults, 2 if unloadable."""
    reports: list[Report] = []
    for reference in references:
        try:
            reports.append(check(reference))
        except LoadError as exc:
            print(f"formwork check: {exc}", file=sys.stderr)
            return 2
    for report in reports:
        for fault in report.faults:
            print(fault)
        for form in report.compiled:
            print(f"ok  {report.reference}  {summary(form)}")
    faults = sum(len(r.faults) for r in reports)
    forms = sum(len(r.compiled) for r in reports)
    if faults:
        print(f"{_count(faults, 'error')}, {_count(forms, 'form')} compiled")
        return 1
    return 0


def summary(form: CompiledForm) -> str:
    """``purchase-request v1 "Purchase request": 2 steps, 7 fields, 2 checkpoints, 1
    executor, 1 approval`` (approvals only when there are some)."""
    approvals = sum(hook.approval is not None for hook in form.hooks)
    parts = [
        _count(len(form.steps), "step"),
        _count(len(form.fields), "field"),
        _count(len(form.checkpoints), "checkpoint"),
        _count(sum(hook.executor is not None for hook in form.hooks), "executor"),
        *([_count(approvals, "approval")] if approvals else []),
    ]
    return f'{form.id} v{form.version} "{form.title}": {", ".join(parts)}'


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'s' * (n != 1)}"


def run_elsewhere(command: str, options: list[str]) -> int:
    """``dev`` and ``demo``: the local stack's packages are imported only when asked for, so
    ``formwork check`` works on an install of the engine alone."""
    try:
        entry = _entry(command)
    except ModuleNotFoundError as exc:
        missing = (exc.name or "").split(".")[0]
        if missing not in OPTIONAL:
            raise
        print(
            f"formwork {command}: needs the local stack's packages ({missing} is missing): "
            f"{LOCAL_EXTRA}",
            file=sys.stderr,
        )
        return 2
    return entry(options, f"formwork {command}")


def _entry(command: str) -> Callable[[list[str], str], int]:
    # Imported on demand (see run_elsewhere): both pull in the optional extras.
    if command == "dev":
        from formwork.infra.local.__main__ import main as dev

        return lambda options, prog: dev(options, prog=prog)
    from formwork.examples.demo import main as demo

    return lambda options, prog: demo(options, prog=prog)


def _working_directory_first(*, for_children: bool) -> None:
    """Put the working directory on the import path, as ``python -m`` would (a console script
    does not), and with ``for_children`` on that of the processes the local stack starts."""
    here = os.getcwd()
    if here not in sys.path and "" not in sys.path:
        sys.path.insert(0, here)
    if not for_children:
        return
    inherited = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if here not in inherited:
        os.environ["PYTHONPATH"] = os.pathsep.join([here, *inherited])


if __name__ == "__main__":
    raise SystemExit(main())
