"""Looking before starting, and at what runs: whether a port is free for the local stack,
whether a Formwork API answers at an address, and what a Temporal server says of a workflow."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import urllib.error
import urllib.request

from formwork.infra.local.dev_tokens import dev_token

API_PORT = 3000
DEFAULT_URL = f"http://127.0.0.1:{API_PORT}"


def check_port_free(host: str, port: int, what: str, flag: str) -> None:
    """Raise ``OSError`` naming ``flag`` when something listens on ``host:port`` (0: any port).

    The probe binds with ``SO_REUSEADDR``, as the servers do, so connections of a stack that
    just stopped (``TIME_WAIT``, up to a minute) do not count: only a live listener does.
    """
    if port == 0:
        return
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host if host != "localhost" else "127.0.0.1", port))
        except OSError as exc:
            raise OSError(
                exc.errno,
                f"port {port} is in use, so {what} cannot start there (is another local stack "
                f"running?); pass {flag} with another port, or 0 for a free one",
            ) from exc


def running_stack(url: str = DEFAULT_URL, timeout: float = 2.0) -> bool:
    """Whether a Formwork API answers at ``url`` (``GET /tools`` with a dev token)."""
    request = urllib.request.Request(
        f"{url.rstrip('/')}/tools", headers={"Authorization": dev_token("probe")}
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            json.loads(response.read())
            return bool(response.status == 200)
    except (OSError, ValueError):
        return False


def describe_workflow(
    address: str, workflow_id: str, *, wait: float = 0.0, namespace: str = "default"
) -> dict[str, str] | None:
    """``{"id", "type", "status", "run_id"}`` of the latest run of ``workflow_id`` on the
    Temporal server at ``address``, after waiting up to ``wait`` seconds for it to close;
    None when the server cannot be reached or has no such workflow."""

    async def describe() -> dict[str, str]:
        from temporalio.client import Client

        client = await Client.connect(address, namespace=namespace)
        handle = client.get_workflow_handle(workflow_id)
        if wait > 0:
            # still running, or ended failed: describe says which
            with contextlib.suppress(Exception):
                await asyncio.wait_for(handle.result(), wait)
        found = await handle.describe()
        status = found.status.name if found.status is not None else "UNKNOWN"
        return {
            "id": found.id,
            "type": found.workflow_type,
            "status": status,
            "run_id": found.run_id,
        }

    host, _, port = address.rpartition(":")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=1.0).close()
        return asyncio.run(asyncio.wait_for(describe(), wait + 10))
    except Exception:
        return None
