"""The after-response extension: a Lambda invocation ends only after the work behind its answer.

Against a local stand-in for the Lambda Extensions API (register, next event, exit error) on
loopback, as Lambda serves it to a function's process: the extension registers for INVOKE,
and for each invocation asks for the next event only once the handler has answered and the
work ``forms.app.behind`` tracks has ended, or the invocation's deadline (less the margin)
has come.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from queue import Queue
from types import SimpleNamespace
from typing import Any

import pytest

from forms.app.behind import Behind
from formwork.aws import after_response
from formwork.aws.after_response import AfterResponse

WAIT = 10.0
"""Upper bound on any wait for the extension (it is never reached when all is well)."""


class ExtensionsApi(ThreadingHTTPServer):
    """Lambda's Extensions API as one function's process sees it: ``invoke`` hands the
    extension an INVOKE event; ``log`` records, in order, what happened."""

    daemon_threads = True

    def __init__(
        self, *, register_status: int = 200, next_status: int = 200, next_garbled: bool = False
    ) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.register_status = register_status
        self.next_status = next_status
        self.next_garbled = next_garbled
        self.events: Queue[dict[str, Any]] = Queue()
        self.log: list[str] = []
        self.registered: list[tuple[str, Any]] = []
        self.changed = threading.Condition()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.server_address[1]}"

    def note(self, entry: str) -> None:
        with self.changed:
            self.log.append(entry)
            self.changed.notify_all()

    def until(self, entry: str, count: int = 1) -> None:
        """Wait until ``entry`` was logged ``count`` times."""
        with self.changed:
            assert self.changed.wait_for(lambda: self.log.count(entry) >= count, WAIT), self.log

    def invoke(self, request_id: str, deadline_in_ms: float) -> None:
        deadline = time.time() * 1000 + deadline_in_ms
        self.events.put({"eventType": "INVOKE", "requestId": request_id, "deadlineMs": deadline})


class _Handler(BaseHTTPRequestHandler):
    server: ExtensionsApi

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _answer(self, status: int, body: dict[str, Any], headers: dict[str, str]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"null")
        if self.path == "/2020-01-01/extension/register":
            self.server.registered.append((self.headers["Lambda-Extension-Name"], body))
            status = self.server.register_status
            headers = {"Lambda-Extension-Identifier": "ext-1"} if status == 200 else {}
            self._answer(status, {}, headers)
            self.server.note("register")
        elif self.path == "/2020-01-01/extension/exit/error":
            self._answer(202, {}, {})
            self.server.note(f"exit error {self.headers['Lambda-Extension-Function-Error-Type']}")
        else:
            self._answer(404, {}, {})

    def do_GET(self) -> None:
        assert self.path == "/2020-01-01/extension/event/next"
        assert self.headers["Lambda-Extension-Identifier"] == "ext-1"
        self.server.note("next")
        if self.server.next_garbled:  # not HTTP: the client's HTTPException, not an OSError
            self.wfile.write(b"garbled\r\n\r\n")
            self.close_connection = True
            return
        if self.server.next_status != 200:
            self._answer(self.server.next_status, {}, {})
            return
        event = self.server.events.get()
        self._answer(200, event, {})
        self.server.note(f"deliver {event['requestId']}")


@pytest.fixture
def work() -> Behind:
    """The work behind answers these tests track (the process's is other tests' too)."""
    return Behind()


@pytest.fixture
def api() -> Iterator[ExtensionsApi]:
    server = ExtensionsApi()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def stuck() -> Iterator[Future[None]]:
    """Work that does not end during the test (it ends after, so no other test waits on it)."""
    work: Future[None] = Future()
    yield work
    work.set_result(None)


def started(api: ExtensionsApi, **options: Any) -> AfterResponse:
    extension = AfterResponse(api.address, **options)
    extension.register()
    extension.start()
    api.until("next")  # its initialisation is over when it first asks for an event
    return extension


def test_it_asks_for_the_next_event_only_after_the_answer_and_the_work_behind_it(
    api: ExtensionsApi, work: Behind
) -> None:
    settling = threading.Event()

    def settle(timeout: float) -> int:
        api.note("settling")
        settling.set()
        return work.settle(timeout)

    # GIVEN the extension registered and waiting, and a call's work still running
    extension = started(api, settle=settle)
    assert api.registered == [(after_response.NAME, {"events": ["INVOKE"]})]
    running: Future[None] = Future()
    work.track(running)
    # WHEN Lambda invokes the function and the handler answers
    api.invoke("r1", 60_000)
    api.until("deliver r1")
    api.note("answered")
    after_response.answered(extension, SimpleNamespace(aws_request_id="r1"))
    assert settling.wait(WAIT)
    # AND the work ends
    api.note("work done")
    running.set_result(None)
    # THEN only then does it ask for the next event
    api.until("next", 2)
    assert api.log == [
        "register",
        "next",
        "deliver r1",
        "answered",
        "settling",
        "work done",
        "next",
    ]


def test_an_answer_given_before_the_event_arrives_counts(api: ExtensionsApi, work: Behind) -> None:
    # GIVEN the handler answered r1 before the extension heard of the invocation
    extension = started(api, settle=work.settle)
    extension.answered("r1")
    # WHEN the event arrives, with nothing behind the answer
    api.invoke("r1", 60_000)
    # THEN it asks for the next event at once
    api.until("next", 2)


def test_work_still_running_at_the_deadline_is_left_and_logged(
    api: ExtensionsApi, work: Behind, stuck: Future[None], caplog: pytest.LogCaptureFixture
) -> None:
    # GIVEN work that does not end, behind an answered invocation whose deadline is near
    extension = started(api, settle=work.settle, margin_ms=0)
    work.track(stuck)
    extension.answered("r1")
    with caplog.at_level(logging.WARNING, logger="formwork"):
        api.invoke("r1", 150)
        # THEN it asks for the next event at the deadline, and says what it left running
        api.until("next", 2)
    assert "still running at the deadline" in caplog.text


def test_an_invocation_whose_handler_never_answers_is_let_go_at_its_deadline(
    api: ExtensionsApi, work: Behind, caplog: pytest.LogCaptureFixture
) -> None:
    started(api, settle=work.settle, margin_ms=0)
    with caplog.at_level(logging.WARNING, logger="formwork"):
        api.invoke("r1", 150)
        api.until("next", 2)
    assert "did not answer before the deadline" in caplog.text


@pytest.mark.parametrize(
    ("answer", "error"),
    [({"next_status": 500}, "ValueError"), ({"next_garbled": True}, "BadStatusLine")],
    ids=["refused", "garbled"],
)
def test_a_next_event_failing_again_and_again_is_reported_and_ends_the_thread(
    answer: dict[str, Any], error: str
) -> None:
    server = ExtensionsApi(**answer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        extension = AfterResponse(server.address)
        extension.register()
        thread = extension.start()
        server.until(f"exit error Extension.{error}")
        thread.join(WAIT)
        assert not thread.is_alive()
        assert server.log.count("next") == after_response.ATTEMPTS
    finally:
        server.shutdown()
        server.server_close()


def test_install_registers_only_on_lambda_and_only_for_its_own_handler(
    api: ExtensionsApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN not on Lambda: nothing
    monkeypatch.delenv("AWS_LAMBDA_RUNTIME_API", raising=False)
    assert after_response.install("formwork.aws.api.lambda_handler") is None
    # GIVEN on Lambda, in the Bedrock function: the API module does not register
    monkeypatch.setenv("AWS_LAMBDA_RUNTIME_API", api.address)
    monkeypatch.setenv("_HANDLER", "formwork.aws.bedrock_agent.lambda_handler")
    assert after_response.install("formwork.aws.api.lambda_handler") is None
    assert api.registered == []
    # GIVEN the API function: it registers and serves
    monkeypatch.setenv("_HANDLER", "formwork.aws.api.lambda_handler")
    assert isinstance(after_response.install("formwork.aws.api.lambda_handler"), AfterResponse)
    api.until("next")
    assert len(api.registered) == 1


def test_a_refused_registration_leaves_the_function_without_it(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    server = ExtensionsApi(register_status=403)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("AWS_LAMBDA_RUNTIME_API", server.address)
        monkeypatch.setenv("_HANDLER", "formwork.aws.api.lambda_handler")
        with caplog.at_level(logging.WARNING, logger="formwork"):
            assert after_response.install("formwork.aws.api.lambda_handler") is None
        assert "not registered" in caplog.text
    finally:
        server.shutdown()
        server.server_close()


def test_a_runtime_api_address_that_is_not_host_and_port_is_refused() -> None:
    with pytest.raises(ValueError, match="host:port"):
        AfterResponse("localhost")


class Answers:
    def __init__(self) -> None:
        self.ids: list[str] = []

    def answered(self, request_id: str) -> None:
        self.ids.append(request_id)


@pytest.mark.parametrize("module", ["formwork.aws.api", "formwork.aws.bedrock_agent"])
def test_each_handler_tells_the_extension_it_answered(
    module: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib

    handler = importlib.import_module(module)
    answers = Answers()
    monkeypatch.setattr(handler, "AFTER_RESPONSE", answers)
    context = SimpleNamespace(
        aws_request_id="r-7",
        function_name="f",
        function_version="1",
        invoked_function_arn="arn:aws:lambda:eu-west-1:1:function:f",
        memory_limit_in_mb=512,
        log_group_name="g",
        log_stream_name="s",
    )
    # WHEN the handler answers an event it refuses
    handler.lambda_handler({"not": "an event"}, context)
    # THEN it told the extension which invocation it answered
    assert answers.ids == ["r-7"]


# ---------------------------------------------------------------- the work behind answers


def test_settle_reports_the_work_still_running(work: Behind) -> None:
    # GIVEN work that ended: nothing to wait for
    done: Future[None] = Future()
    done.set_result(None)
    work.track(done)
    assert work.settle(WAIT) == 0
    # GIVEN work that does not end within the wait: it is reported, and counted until it ends
    stuck: Future[None] = Future()
    work.track(stuck)
    assert work.settle(0.05) == 1 and work.running() == 1
    stuck.set_result(None)
    assert work.running() == 0 and work.settle(0.0) == 0


def test_what_memory_runs_on_its_worker_is_tracked_until_it_ends(work: Behind) -> None:
    from forms.app.behind import PROCESS
    from forms.app.memory import Memory
    from forms.storage.facts import InMemoryFactStore

    # GIVEN memory's worker running a piece of work that waits for the test
    gate = threading.Event()
    memory = Memory(InMemoryFactStore(), behind=work)
    running = memory.submit(lambda: gate.wait(WAIT))
    # THEN it is work behind an answer until it ends
    assert work.running() == 1
    gate.set()
    assert running.result(WAIT) is True
    assert work.settle(WAIT) == 0 and work.running() == 0
    # AND by default, memory tracks its work where the after-response extension waits
    assert Memory(InMemoryFactStore()).behind is PROCESS
    assert after_response.AfterResponse("127.0.0.1:9001")._settle == PROCESS.settle


def test_installed_it_waits_for_the_work_behind_its_apps_answers(
    api: ExtensionsApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    from formwork.bootstrap import bootstrap
    from formwork.config import Settings
    from formwork.storage import InMemoryStorage

    settling = threading.Event()

    class Noted(Behind):
        def settle(self, timeout: float) -> int:
            api.note("settling")
            settling.set()
            return super().settle(timeout)

    # GIVEN the App a handler serves with, its memory's work behind answers still running
    app = bootstrap(Settings(), storage=InMemoryStorage(), behind=Noted())
    memory = app.memory
    assert memory is not None and memory.behind is app.behind
    gate = threading.Event()
    memory.submit(lambda: gate.wait(WAIT))
    # WHEN the extension is installed for that App on Lambda, and an invocation is answered
    monkeypatch.setenv("AWS_LAMBDA_RUNTIME_API", api.address)
    monkeypatch.setenv("_HANDLER", "formwork.aws.api.lambda_handler")
    extension = after_response.install("formwork.aws.api.lambda_handler", lambda: app)
    api.invoke("r1", 60_000)
    api.until("deliver r1")
    after_response.answered(extension, SimpleNamespace(aws_request_id="r1"))
    assert settling.wait(WAIT)
    api.note("work done")
    gate.set()
    # THEN it waited for the App's work before asking for the next event
    api.until("next", 2)
    assert api.log[-3:] == ["settling", "work done", "next"]
