"""A DynamoDB between the functions and DynamoDB Local, to watch and slow the fact store.

A test can count what a function asks of the fact store, or make the store slow, only on the
wire: the function runs in another process, on its own boto3 client. ``DynamoDBProxy`` is a
threaded HTTP server on a free loopback port that forwards each request to DynamoDB Local as it
came (method, path, every header, the SigV4 ``Authorization`` and the ``Host`` it was signed
for, the body) and sends back the answer as it came (status, headers, body, so the
``x-amz-crc32`` of the body still holds). DynamoDB Local requires an ``Authorization`` header
but does not check the signature (a made-up one, for another host and date, is served), so
keeping the client's ``Host`` is what a real endpoint would need, not what this one needs.

Each request is recorded (``requests``, ``take``) with its operation (the ``X-Amz-Target``
header without its version: ``GetItem``, ``Query``) and the keys its body addresses, read
from the JSON (``addressed``): the ``Key`` or ``Item`` of an item request or of each action
of a transaction or batch, and the partition a ``Query`` names in its key condition. A request
addressing a partition under ``M#`` is a fact-store request (``forms.storage.dynamodb_facts``
keeps each principal's settings and facts there). ``hold`` is the fault: while it is on, the
answers to fact-store requests wait up to the given delay, or until the hold ends, whichever
comes first; every other request goes through at once. Stopping the proxy (or leaving its
``with``) ends any hold first, so no function is left waiting on it.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import re
import socket
import threading
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

PARTITION, SORT = "pk", "sk"
"""The forms table's key attributes (``template.yaml``)."""
FACTS = "M#"
"""The prefix of every fact-store partition (``forms.storage.dynamodb_facts``)."""
UPSTREAM_TIMEOUT = 30.0
"""How long a forwarded request may take at DynamoDB Local (bounds ``stop``)."""
_HOP_BY_HOP = frozenset({"connection", "keep-alive", "transfer-encoding"})
"""Headers of one connection, not of the answer: the proxy frames its own."""

Key = tuple[str, str | None]
"""A partition key value, and the sort key value when the request names one item."""


@dataclass(frozen=True, slots=True)
class Request:
    """One request the proxy forwarded: its operation and the keys its body addresses."""

    operation: str
    keys: tuple[Key, ...] = ()

    @property
    def facts(self) -> bool:
        """Whether it touches the fact store's key space."""
        return any(pk.startswith(FACTS) for pk, _ in self.keys)

    def partitions(self) -> set[str]:
        return {pk for pk, _ in self.keys}


def operation(target: str | None) -> str:
    """``DynamoDB_20120810.Query`` -> ``Query`` (empty without the header)."""
    return (target or "").rpartition(".")[2]


def addressed(body: bytes) -> tuple[Key, ...]:
    """The keys a DynamoDB request body addresses, in the order they appear: each ``Key`` or
    ``Item`` map (and each key of a batch's ``Keys``) holding a string partition key, and the
    partition a ``KeyConditionExpression`` sets equal to a value. A body that is not JSON
    addresses nothing."""
    try:
        request = json.loads(body or b"{}")
    except ValueError:
        return ()
    found: list[Key] = []
    _walk(request, found)
    return tuple(dict.fromkeys(found))


def _walk(value: Any, found: list[Key]) -> None:
    if isinstance(value, list):
        for item in value:
            _walk(item, found)
        return
    if not isinstance(value, dict):
        return
    for name in ("Key", "Item"):
        key = _key(value.get(name))
        if key is not None:
            found.append(key)
    for item in value.get("Keys", ()) if isinstance(value.get("Keys"), list) else ():
        key = _key(item)
        if key is not None:
            found.append(key)
    condition = value.get("KeyConditionExpression")
    if isinstance(condition, str):
        found.extend((pk, None) for pk in _queried(value, condition))
    for name, inner in value.items():
        if name not in ("Key", "Item", "Keys", "ExpressionAttributeValues"):
            _walk(inner, found)


def _key(item: Any) -> Key | None:
    if not isinstance(item, dict):
        return None
    pk, sk = _string(item.get(PARTITION)), _string(item.get(SORT))
    return (pk, sk) if pk is not None else None


def _string(value: Any) -> str | None:
    if isinstance(value, dict) and isinstance(value.get("S"), str):
        return str(value["S"])
    return None


def _queried(query: dict[str, Any], condition: str) -> Iterator[str]:
    """The partition key values a key condition names (``pk = :pk``, ``#p = :v``)."""
    names = query.get("ExpressionAttributeNames") or {}
    values = query.get("ExpressionAttributeValues") or {}
    for left, right in re.findall(r"([#\w]+)\s*=\s*(:\w+)", condition):
        if names.get(left, left) == PARTITION:
            pk = _string(values.get(right))
            if pk is not None:
                yield pk


class Hold:
    """A hold on the fact store's answers: each waits ``delay`` seconds at most, or until the
    hold ends. ``held`` lists the requests it caught; ``answered`` counts those whose answer
    has gone back, so a test can say the store was still holding when a call returned."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.held: list[Request] = []
        self.answered = 0
        self._released = threading.Event()
        self._lock = threading.Condition()

    def wait(self, request: Request) -> None:
        with self._lock:
            self.held.append(request)
            self._lock.notify_all()
        self._released.wait(self.delay)
        with self._lock:
            self.answered += 1

    def caught(self, count: int = 1, timeout: float = 10.0) -> bool:
        """Whether ``count`` requests were held, waiting up to ``timeout`` for them to come."""
        with self._lock:
            return self._lock.wait_for(lambda: len(self.held) >= count, timeout)

    def release(self) -> None:
        self._released.set()


class DynamoDBProxy:
    """Forwards DynamoDB requests to ``upstream`` unchanged, records them, and holds the fact
    store's answers while told to (see the module)."""

    def __init__(self, upstream: str) -> None:
        parsed = urllib.parse.urlsplit(upstream)
        if parsed.scheme != "http" or parsed.hostname is None or parsed.port is None:
            raise ValueError(f"the upstream is an http://host:port endpoint, not {upstream!r}")
        self.upstream = (parsed.hostname, parsed.port)
        self._requests: list[Request] = []
        self._lock = threading.Lock()
        self._hold: Hold | None = None
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def endpoint(self) -> str:
        if self._server is None:
            raise RuntimeError("the proxy is not running")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> Self:
        self._server = _Server(self)
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},  # how long ``stop`` may wait for it
            name="dynamodb-proxy",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """End any hold, stop accepting, close the connections still open (idle keep-alive
        ones from the functions' clients), and wait for every request thread to end."""
        with self._lock:
            hold, self._hold = self._hold, None
        if hold is not None:
            hold.release()
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        server.close_connections()
        server.server_close()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ what it saw

    def requests(self) -> list[Request]:
        """Every request forwarded since the start or the last ``take``, in arrival order."""
        with self._lock:
            return list(self._requests)

    def take(self) -> list[Request]:
        """``requests``, forgetting them: what comes next starts a new list."""
        with self._lock:
            taken, self._requests = self._requests, []
            return taken

    # ------------------------------------------------------------------ the fault

    @contextmanager
    def hold(self, delay: float) -> Iterator[Hold]:
        """Hold each fact-store answer up to ``delay`` seconds while the block runs; leaving
        it releases whatever is still held."""
        hold = Hold(delay)
        with self._lock:
            if self._hold is not None:
                raise RuntimeError("the fact store is already held")
            self._hold = hold
        try:
            yield hold
        finally:
            with self._lock:
                if self._hold is hold:
                    self._hold = None
            hold.release()

    # ------------------------------------------------------------------ inside

    def _seen(self, request: Request) -> Hold | None:
        """Record ``request``; the hold its answer must wait on, if any."""
        with self._lock:
            self._requests.append(request)
            return self._hold if request.facts else None


class _Server(ThreadingHTTPServer):
    """A thread per connection, each joined when the server closes; the open connections are
    known, so ``close_connections`` can end the idle ones."""

    daemon_threads = False
    block_on_close = True

    def __init__(self, proxy: DynamoDBProxy) -> None:
        self.proxy = proxy
        self._open: set[socket.socket] = set()
        self._open_lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _Forward)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._open_lock:
            self._open.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._open_lock:
            self._open.discard(request)
        super().shutdown_request(request)

    def close_connections(self) -> None:
        with self._open_lock:
            open_now = list(self._open)
        for connection in open_now:
            with contextlib.suppress(OSError):  # already closed by the client
                connection.shutdown(socket.SHUT_RDWR)


class _Forward(BaseHTTPRequestHandler):
    """One client connection: each request forwarded, recorded, maybe held, answered."""

    server: _Server
    protocol_version = "HTTP/1.1"  # keep-alive, as boto3's connection pool expects
    disable_nagle_algorithm = True
    """The head and the body of an answer go out in two writes; with Nagle's algorithm the
    second waits for the client's delayed ACK, some 40 ms an answer."""

    def do_POST(self) -> None:
        self._forward()

    def do_GET(self) -> None:
        self._forward()

    def _forward(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        request = Request(operation(self.headers.get("X-Amz-Target")), addressed(body))
        hold = self.server.proxy._seen(request)
        try:
            status, reason, headers, answer = self._upstream(body)
        except OSError as exc:
            self.send_error(502, f"DynamoDB Local did not answer: {exc}")
            return
        if hold is not None:
            hold.wait(request)
        self.send_response_only(status, reason)
        for name, value in headers:
            if name.lower() not in _HOP_BY_HOP and name.lower() != "content-length":
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        try:
            self.wfile.write(answer)
        except OSError:
            self.close_connection = True  # the client gave up waiting (its read timeout)

    def _upstream(self, body: bytes) -> tuple[int, str, list[tuple[str, str]], bytes]:
        """The request as it came, on a connection of its own; DynamoDB Local's answer."""
        host, port = self.server.proxy.upstream
        connection = http.client.HTTPConnection(host, port, timeout=UPSTREAM_TIMEOUT)
        try:
            connection.putrequest(
                self.command, self.path, skip_host=True, skip_accept_encoding=True
            )
            for name, value in self.headers.items():
                if name.lower() not in _HOP_BY_HOP:
                    connection.putheader(name, value)
            connection.endheaders(body)
            response = connection.getresponse()
            return response.status, response.reason, response.getheaders(), response.read()
        finally:
            connection.close()

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the test's output is the functions', not one line per DynamoDB request."""
