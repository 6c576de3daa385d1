"""The command line of ``python -m formwork.infra.local`` (``make dev``, ``formwork dev``):
its options, and ``--help``'s word on which settings the stack takes from the shell and which it
sets."""

from __future__ import annotations

import argparse
from pathlib import Path

from formwork.infra.local.stack import (
    API_PORT,
    DYNAMODB_PORT,
    DYNAMODB_VARIABLE,
    DYNAMODBS,
    TABLE_NAME,
    WIRED,
)
from formwork.infra.local.temporal import TEMPORAL_PORT, TEMPORAL_UI_PORT


def parser(prog: str, description: str | None) -> argparse.ArgumentParser:
    """The options of ``prog``, described by ``description`` (the module's docstring)."""
    parser = argparse.ArgumentParser(prog=prog, description=description, epilog=settings_help(prog))
    parser.add_argument(
        "--host", default="127.0.0.1", help="loopback address (default %(default)s)"
    )
    parser.add_argument("--port", type=int, default=API_PORT, help="API port, 0 = any free")
    parser.add_argument(
        "--dynamodb",
        choices=list(DYNAMODBS),
        help="AWS's DynamoDB Local (make dynamodb-local installs it) or moto's server "
        f"(default: {DYNAMODB_VARIABLE} when set, else dynamodb-local in a checkout and moto "
        "from an installed package)",
    )
    parser.add_argument("--dynamodb-port", type=int, default=DYNAMODB_PORT, help="0 = any free")
    parser.add_argument("--table", default=TABLE_NAME, help="table name (default %(default)s)")
    parser.add_argument(
        "--environments", type=int, default=4, help="max concurrent executions per function"
    )
    parser.add_argument(
        "--log-level",
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="the functions' log level (Powertools; the template's default otherwise)",
    )
    parser.add_argument(
        "--json-logs",
        action="store_true",
        help="show the functions' JSON log records and EMF metrics as Lambda writes them "
        "(default: one access line per request, plus warnings and errors)",
    )
    parser.add_argument(
        "--no-temporal",
        action="store_true",
        help="run hooks in-process: no Temporal server, worker or relay",
    )
    parser.add_argument("--temporal-port", type=int, default=TEMPORAL_PORT, help="0 = any free")
    parser.add_argument(
        "--temporal-ui-port", type=int, default=TEMPORAL_UI_PORT, help="Temporal's web UI"
    )
    parser.add_argument(
        "--temporal-db", type=Path, help="keep Temporal's state in this SQLite file"
    )
    parser.add_argument(
        "--no-seed",
        action="store_true",
        help="start no demo travel claim (by default one is started in the conversation demo "
        "for dev:acme:alice, through the tool API, and the banner prints a link to its page), "
        "purchase request, facts or draft (each with its page's link)",
    )
    return parser


def settings_help(prog: str) -> str:
    """``--help``'s word on settings: the shell's pass through, but for the ones the stack
    wires (``WIRED``)."""
    wired = ", ".join(WIRED)
    return (
        "Settings: every variable the functions read (docs/http-api.md#configuration) is "
        "taken from your shell when set there, over the template's defaults. "
        f"FORMWORK_FORMS=my_forms:FORMS {prog} serves the forms of a my_forms.py beside you "
        "(default: the examples); FORMWORK_MEMORY_DEADLINE_MS, FORMWORK_FACT_KEYS, "
        "FORMWORK_BUILDER_MAX_STEPS, FORMWORK_CATALOG_TTL_SECONDS and the rest likewise. "
        f"The stack sets these itself, whatever your shell says: {wired} (the Temporal ones "
        "only while it runs Temporal: with --no-temporal they are yours; the log level only "
        "with --log-level)."
    )
