"""``python -m infra.local`` (``make dev``): the whole backend on loopback until Ctrl-C."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from types import FrameType

from infra.local.stack import API_PORT, DYNAMODB_PORT, TABLE_NAME, LocalStack


def banner(stack: LocalStack) -> str:
    api = stack.api_url
    auth = "-H 'Authorization: Bearer dev:alice'"
    start = (
        '{"tool_call_id": "call-1", "input": {"form": "travel-claim", '
        '"values": {"destination": "Lisbon", "departure_date": "2025-03-03"}}}'
    )
    functions = ", ".join(f"{f.config.handler}" for f in stack.functions.values())
    return f"""
Formwork local stack is ready.

  API        {api}   (API Gateway HTTP API events → {functions})
  DynamoDB   {stack.dynamodb_endpoint}   table {stack.table_name} (moto, served single-threaded)
  Dev tokens Authorization: Bearer dev:<sub>  or  Bearer dev:<tenant>:<sub>  (loopback only)

Try:
  curl -s {auth} '{api}/tools?format=openai'
  curl -s {auth} -H 'Content-Type: application/json' \\
       -d '{start}' \\
       {api}/conversations/conv-1/tools/form_start
  curl -s {auth} {api}/conversations/conv-1/status

OpenAPI: {api}/openapi.json   Swagger UI: {api}/swagger (both need the token too)
Ctrl-C stops everything.
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m infra.local", description=__doc__)
    parser.add_argument(
        "--host", default="127.0.0.1", help="loopback address (default %(default)s)"
    )
    parser.add_argument("--port", type=int, default=API_PORT, help="API port, 0 = any free")
    parser.add_argument("--dynamodb-port", type=int, default=DYNAMODB_PORT, help="0 = any free")
    parser.add_argument("--table", default=TABLE_NAME, help="table name (default %(default)s)")
    parser.add_argument(
        "--environments", type=int, default=4, help="max concurrent executions per function"
    )
    parser.add_argument("--log-level", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    args = parser.parse_args(argv)

    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        del signum, frame
        stop.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)

    try:
        stack = LocalStack(
            host=args.host,
            api_port=args.port,
            dynamodb_port=args.dynamodb_port,
            table_name=args.table,
            max_environments=args.environments,
            log_level=args.log_level,
            access_log=True,
        )
        print("Starting the local stack (DynamoDB, table, functions, gateway)...", flush=True)
        stack.start()
    except (OSError, ValueError, RuntimeError) as exc:
        print(f"infra.local: {exc}", file=sys.stderr)
        return 1
    try:
        print(banner(stack), flush=True)
        while not stop.wait(1.0):
            pass
        print("\nStopping...", flush=True)
    finally:
        stack.stop()
    print("Stopped.", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
