"""A stand-in for the Lambda Extensions API, for the cold start bench's Lambda-like rows.

On Lambda, the API and Bedrock handlers register their after-response extension while the
function initialises (``formwork.aws.after_response.install``): the import of the handler
module makes an HTTP request to the runtime (``AWS_LAMBDA_RUNTIME_API``), starts the
extension's thread, and that thread asks for the next event. A Lambda-like cold start must pay
for that too, so the bench points ``AWS_LAMBDA_RUNTIME_API`` at this server: it accepts the
registration as Lambda does and holds each next-event request open until the interpreter that
asked exits (a fresh one per timing), as Lambda holds it until the next invocation.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from threading import Thread

_API = "/2020-01-01/extension"


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        self.send_response(200)
        if self.path == f"{_API}/register":
            self.send_header("Lambda-Extension-Identifier", "cold-start-bench")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def do_GET(self) -> None:
        # the next event: no invocation comes; wait until the asking interpreter has exited
        # (its end of the connection closes), then drop the request unanswered
        while self.rfile.read(1):
            pass
        self.close_connection = True

    def log_message(self, format: str, *args: object) -> None:
        del format, args


@contextmanager
def extensions_api() -> Iterator[str]:
    """A running stand-in on loopback; yields its ``host:port`` for
    ``AWS_LAMBDA_RUNTIME_API``."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    thread = Thread(target=server.serve_forever, name="extensions-api", daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
