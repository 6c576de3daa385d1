"""The process's one Temporal connection, on an event loop of its own (the Lambda functions').

A Temporal client belongs to the event loop it connected on, and a Lambda handler runs on no
loop: ``TemporalConnection`` keeps one loop, run by a daemon thread for the life of the
process, and the connection made on it; calls from the handler's thread hop onto it
(``run``). No ``asyncio.run`` per call.

One connection, two levels: ``client()`` is the SDK's ``Client`` (starting and signalling
workflows: ``formwork.temporal.dispatch``), ``service()`` its gRPC services alone
(``temporalio.service.ServiceClient``: reading a task queue's backlog,
``formwork.temporal.backlog``). Whichever is asked for first connects, the other is made from
it: a ``Client`` wraps a ``ServiceClient`` and hands it out. The backlog function asks for the
services only, so it never imports ``temporalio.client`` (three quarters of an ``import
boto3`` off its cold start: docs/performance.md).

This module imports neither ``temporalio.client`` nor the dispatcher's modules.
"""

from __future__ import annotations

import asyncio
import atexit
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

from formwork.temporal.client import connect, connect_service
from formwork.temporal.settings import TemporalSettings

if TYPE_CHECKING:
    from temporalio.client import Client
    from temporalio.service import ServiceClient

T = TypeVar("T")

IDENTITY = "formwork-lambda"
"""The identity the functions' connection gives Temporal (in the workflows' histories)."""


class TemporalConnection:
    """One event loop, run by a daemon thread, and one Temporal connection made on it.

    ``run(coro)`` runs a coroutine on that loop from any thread and waits for it; coroutines
    get the connection with ``await connection.client()`` or ``await connection.service()``
    (connected on first use, again after a failed attempt).

    ``connect`` makes a ``Client``. ``connect_service``, when given, makes the services alone
    (in ``namespace``'s deployment: the client made from them later uses that namespace);
    without it, ``service()`` connects a client and hands out its services.
    """

    def __init__(
        self,
        connect: Callable[[], Awaitable[Client]],
        *,
        connect_service: Callable[[], Awaitable[ServiceClient]] | None = None,
        namespace: str = "default",
    ) -> None:
        self._connect = connect
        self._connect_service = connect_service
        self.namespace = namespace
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._client: Client | None = None
        self._service: ServiceClient | None = None
        self._connecting: asyncio.Future[None] | None = None

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or self._loop.is_closed():
                loop = asyncio.new_event_loop()
                thread = threading.Thread(
                    target=loop.run_forever, name="temporal-loop", daemon=True
                )
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run ``coro`` on the connection's loop; cancel it and raise ``TimeoutError`` after
        ``timeout`` seconds."""
        future = asyncio.run_coroutine_threadsafe(coro, self._running_loop())
        try:
            return future.result(timeout)
        except TimeoutError:
            future.cancel()
            raise

    async def client(self) -> Client:
        """The SDK's client: connected, or made from the services already connected."""
        if self._client is None and self._service is None:
            await self._join(self._open_client)
        if self._client is None:
            from temporalio.client import Client

            self._client = Client(self._connected_service(), namespace=self.namespace)
        return self._client

    async def service(self) -> ServiceClient:
        """The gRPC services: the client's, or connected alone (``connect_service``)."""
        if self._client is None and self._service is None:
            opening = self._open_client if self._connect_service is None else self._open_service
            await self._join(opening)
        if self._client is not None:
            return self._client.service_client
        return self._connected_service()

    async def _join(self, opening: Callable[[], Awaitable[None]]) -> None:
        """Wait for the connection being made, starting ``opening`` if none is: one connect
        at a time, whichever level asked; a failed one is forgotten, so the next call tries
        again."""
        if self._connecting is None:
            self._connecting = asyncio.ensure_future(opening())
        connecting = self._connecting
        try:
            await asyncio.shield(connecting)
        except BaseException:
            if self._connecting is connecting and connecting.done():
                self._connecting = None
            raise

    async def _open_client(self) -> None:
        self._client = await self._connect()

    async def _open_service(self) -> None:
        assert self._connect_service is not None
        self._service = await self._connect_service()

    def _connected_service(self) -> ServiceClient:
        if self._service is None:
            raise RuntimeError("the Temporal connection was closed while it connected")
        return self._service

    def close(self) -> None:
        """Drop the connection and stop the loop's thread (at exit too: the SDK's native
        threads must not call back into an interpreter that is shutting down)."""
        with self._lock:
            loop, self._loop = self._loop, None
            thread, self._thread = self._thread, None
            self._client, self._service, self._connecting = None, None, None
        if loop is None or loop.is_closed():
            return
        loop.call_soon_threadsafe(loop.stop)
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5)


_connections: dict[TemporalSettings, TemporalConnection] = {}
_connections_lock = threading.Lock()


@atexit.register
def _close_connections() -> None:
    with _connections_lock:
        connections = list(_connections.values())
    for connection in connections:
        connection.close()


def connection_for(settings: TemporalSettings) -> TemporalConnection:
    """This process's connection for ``settings`` (one per distinct configuration): the
    client through ``formwork.temporal.client.connect``, the services alone through its
    ``connect_service``, with the same address, namespace, TLS and credentials."""
    with _connections_lock:
        found = _connections.get(settings)
        if found is None:

            async def client_now() -> Client:
                return await connect(settings, identity=IDENTITY)

            async def service_now() -> ServiceClient:
                return await connect_service(settings, identity=IDENTITY)

            found = _connections[settings] = TemporalConnection(
                client_now, connect_service=service_now, namespace=settings.namespace
            )
        return found
