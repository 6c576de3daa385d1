"""A small keep-alive HTTP client for the local tool API (``http.client``, one connection).

One ``ApiClient`` per thread: ``http.client`` connections are not thread-safe. Every request
has a timeout, so a wedged server ends the bench instead of hanging it.
"""

from __future__ import annotations

import http.client
import json
import time
import urllib.parse
from dataclasses import dataclass
from typing import Any

from formwork.infra.local.gateway import dev_token


@dataclass(frozen=True, slots=True)
class Reply:
    status: int
    body: dict[str, Any]
    seconds: float
    """Request written to response read, on the client's clock."""

    @property
    def ok(self) -> bool:
        return self.status == 200 and self.body.get("ok") is True


class ApiClient:
    """Tool calls over one HTTP/1.1 keep-alive connection, as one principal."""

    def __init__(self, base_url: str, sub: str, tenant: str = "bench", timeout: float = 30.0):
        parts = urllib.parse.urlsplit(base_url)
        if parts.hostname not in ("127.0.0.1", "localhost", "::1"):
            raise ValueError(f"the bench talks to loopback only, not {base_url!r}")
        self.host = parts.hostname
        self.port = parts.port or 80
        self.timeout = timeout
        self.headers = {
            "Authorization": dev_token(sub, tenant),
            "Content-Type": "application/json",
            "Accept": "application/json",
        }
        self.principal = f"{tenant}/{sub}"
        self._conn: http.client.HTTPConnection | None = None

    def _connection(self) -> http.client.HTTPConnection:
        if self._conn is None:
            self._conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        return self._conn

    def request(self, method: str, path: str, payload: dict[str, Any] | None = None) -> Reply:
        body = None if payload is None else json.dumps(payload, separators=(",", ":")).encode()
        for attempt in (1, 2):
            conn = self._connection()
            try:
                start = time.perf_counter()
                conn.request(method, path, body=body, headers=self.headers)
                response = conn.getresponse()
                raw = response.read()
                seconds = time.perf_counter() - start
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                # A keep-alive connection the server closed: reconnect once, then give up.
                self.close()
                if attempt == 2:
                    raise
                continue
            parsed = json.loads(raw) if raw else {}
            return Reply(response.status, parsed if isinstance(parsed, dict) else {}, seconds)
        raise AssertionError("unreachable")

    def call(self, conversation: str, tool: str, call_id: str, tool_input: dict[str, Any]) -> Reply:
        path = f"/conversations/{conversation}/tools/{tool}"
        return self.request("POST", path, {"tool_call_id": call_id, "input": tool_input})

    def status(self, conversation: str) -> Reply:
        return self.request("GET", f"/conversations/{conversation}/status")

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
