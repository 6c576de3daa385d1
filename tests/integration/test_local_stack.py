"""``python -m formwork.infra.local`` (``make dev``) as a developer meets it: the ports it accepts,
the DynamoDB it runs on (DynamoDB Local by default, moto when asked, a clear message when DynamoDB
Local cannot start), and what its console shows per request.

The port tests leave a real ``TIME_WAIT`` connection on a gateway's port (the server closes
first, as it does for ``Connection: close``) and check, through ``/proc/net/tcp`` (and
``tcp6``), that it is there before asserting anything. The console tests run the command in a
child process, as ``make dev`` does, and read what it prints.
"""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from formwork.examples.demo.page_visit import PageVisit
from formwork.infra.local import page_link
from formwork.infra.local.dynamodb import ROOT, LocalDynamoDB, LoopbackServer, client
from formwork.infra.local.dynamodb_local import DynamoDBLocal
from formwork.infra.local.gateway import LocalGateway
from formwork.infra.local.stack import check_port_free

TIME_WAIT = "06"
"""The state ``/proc/net/tcp`` gives a connection in TIME_WAIT."""
ACCESS_LINE = re.compile(r"^(?P<method>[A-Z]+) (?P<path>\S+) -> (?P<status>\d{3}) \(\d+ ms\)$")
STARTUP_SECONDS = 120.0


def answer(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return {"statusCode": 200, "body": json.dumps({"ok": True})}


def time_wait_on(port: int) -> bool:
    """Whether a TCP connection whose local port is ``port`` is in TIME_WAIT (IPv4, or IPv6:
    a JVM's socket on 127.0.0.1 is an IPv6 one, on ``::ffff:127.0.0.1``)."""
    tables = [Path("/proc/net/tcp"), Path("/proc/net/tcp6")]
    rows = [row for t in tables if t.exists() for row in t.read_text().splitlines()[1:]]
    for row in rows:
        columns = row.split()
        local, state = columns[1], columns[3]
        if int(local.rsplit(":", 1)[1], 16) == port and state == TIME_WAIT:
            return True
    return False


def served_and_closed_by_the_server(port: int, path: str = "/tools") -> bytes:
    """One request with ``Connection: close``, read until the server's FIN: the server closes
    first, so its side of the connection is the one left in TIME_WAIT."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as client:
        client.sendall(
            f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n".encode()
            + b"Authorization: Bearer dev:alice\r\nConnection: close\r\n\r\n"
        )
        received = b""
        while chunk := client.recv(65536):
            received += chunk
    return received


def wait_for_time_wait(port: int) -> None:
    if not Path("/proc/net/tcp").exists():
        pytest.skip("needs /proc/net/tcp to see the TIME_WAIT connection")
    deadline = time.monotonic() + 10
    while not time_wait_on(port):
        assert time.monotonic() < deadline, f"no TIME_WAIT connection on port {port}"
        time.sleep(0.01)


def leave_time_wait() -> int:
    """A port where a gateway served one request and stopped: the connection it closed first
    stays in TIME_WAIT (about a minute) while nothing listens there any more."""
    with LocalGateway(answer, port=0) as gateway:
        port = gateway.port
        assert served_and_closed_by_the_server(port).startswith(b"HTTP/1.1 200 ")
    wait_for_time_wait(port)
    return port


def get(url: str, token: str | None = "Bearer dev:alice", body: Any = None) -> int:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = token
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data, headers, method="POST" if data else "GET")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            response.read()
            return int(response.status)
    except urllib.error.HTTPError as error:
        return error.code


# ----------------------------------------------------------------------------------- ports


def test_a_port_left_in_time_wait_is_free_again_at_once() -> None:
    port = leave_time_wait()
    check_port_free("127.0.0.1", port, "the API", "--port")  # raised "port in use" before
    with LocalGateway(answer, port=port) as again:
        assert again.port == port
        assert get(f"{again.url}/tools") == 200


def restarted_on_the_port_it_just_left(server: type[LoopbackServer]) -> LoopbackServer:
    """``server`` started, stopped after a connection it closed first (left in TIME_WAIT on
    its port), and started again on that port."""
    with server() as first:
        port = first.port
        served_and_closed_by_the_server(port, "/")  # the server closes first
    wait_for_time_wait(port)
    check_port_free("127.0.0.1", port, "DynamoDB", "--dynamodb-port")
    return server(port).start()


def test_moto_starts_again_at_once_on_the_port_it_just_left() -> None:
    with restarted_on_the_port_it_just_left(LocalDynamoDB) as again:
        assert client(again.endpoint).list_tables()["TableNames"] == []


def this_machine_off_loopback() -> str:
    """An address of this machine that is not loopback (what another host would dial)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("10.254.254.254", 9))  # no packet leaves: UDP connect only routes
        except OSError:
            pytest.skip("no route off loopback on this machine")
        address: str = probe.getsockname()[0]
    if address.startswith("127."):
        pytest.skip("this machine has no address off loopback")
    return address


def test_dynamodb_local_starts_again_at_once_on_its_port_and_answers_on_loopback_only() -> None:
    # GIVEN DynamoDB Local restarted on the port it just left (as make dev on :8000 again)
    with restarted_on_the_port_it_just_left(DynamoDBLocal) as again:
        # THEN it answers on 127.0.0.1
        assert client(again.endpoint).list_tables()["TableNames"] == []
        # AND nothing listens on its port at the machine's other addresses (its own launcher
        # would listen on every interface)
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection((this_machine_off_loopback(), again.port), 10).close()


def test_a_port_something_listens_on_is_still_refused() -> None:
    with socket.socket() as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        with pytest.raises(OSError, match=rf"port {port} is in use.*pass --port"):
            check_port_free("127.0.0.1", port, "the API", "--port")


def test_port_zero_is_never_refused() -> None:
    check_port_free("127.0.0.1", 0, "the API", "--port")


# ----------------------------------------------------------------------------------- console


class Dev:
    """``python -m formwork.infra.local ... --no-temporal`` in a child process, as ``make dev`` runs
    it.

    stdout is read line by line as it comes (the banner says when the stack is ready); stderr,
    where the access lines go, is collected as it comes and looked at after the exit.
    """

    def __init__(self, *args: str, **environment: str) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("FORMWORK_")}
        env.update(environment)
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "formwork.infra.local",
                "--dynamodb-port",
                "0",
                "--no-temporal",
                *args,
            ],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.stdout: list[str] = []
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._errors: list[str] = []
        self._readers = [
            threading.Thread(target=self._read, daemon=True),
            threading.Thread(target=self._read_errors, daemon=True),
        ]
        for reader in self._readers:
            reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(line.rstrip("\n"))
        self._lines.put(None)

    def _read_errors(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self._errors.append(line.rstrip("\n"))

    def ready(self) -> str:
        """Wait for the banner; the API's URL as it gives it."""
        deadline = time.monotonic() + STARTUP_SECONDS
        url = None
        while True:
            line = self._lines.get(timeout=max(0.1, deadline - time.monotonic()))
            if line is None:
                raise AssertionError(f"formwork.infra.local exited: {self.stdout} {self.stderr()}")
            self.stdout.append(line)
            found = re.match(r"^\s+API\s+(http://127\.0\.0\.1:\d+)\s", line)
            if found:
                url = found[1]
            if line == "Ctrl-C stops everything.":
                assert url is not None, self.stdout
                return url

    def stop(self) -> int:
        """Ctrl-C, and everything it printed up to its exit."""
        self.process.send_signal(signal.SIGINT)
        code = self.process.wait(timeout=60)
        for reader in self._readers:
            reader.join(10)
        while (line := self._lines.get_nowait()) is not None:
            self.stdout.append(line)
        return code

    def stderr(self) -> list[str]:
        return list(self._errors)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


@pytest.fixture
def dev() -> Iterator[list[Dev]]:
    started: list[Dev] = []
    yield started
    for process in started:
        process.close()


def json_objects(lines: list[str]) -> list[dict[str, Any]]:
    found = []
    for line in lines:
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            found.append(value)
    return found


def start_claim(api: str, conversation: str) -> int:
    body = {"tool_call_id": "call_1", "input": {"form": "travel-claim"}}
    return get(f"{api}/conversations/{conversation}/tools/form_start", body=body)


def test_make_dev_shows_one_access_line_per_request_and_no_json(dev: list[Dev]) -> None:
    port = leave_time_wait()  # the port of a stack that just stopped: accepted, not "in use"
    dev.append(Dev("--port", str(port)))
    api = dev[0].ready()
    assert api == f"http://127.0.0.1:{port}"
    started = start_claim(api, "conv-1")
    status = get(f"{api}/conversations/conv-1/status")
    assert get(f"{api}/conversations/conv-1/status", token=None) == 401
    assert dev[0].stop() == 0

    access = [m.groupdict() for line in dev[0].stderr() if (m := ACCESS_LINE.match(line))]
    builder = "/builder/forms/demo-feedback"
    assert access == [
        # the demo claim make dev starts, and the link it mints to its page, for the banner
        {"method": "POST", "path": "/conversations/demo/tools/form_start", "status": "200"},
        {"method": "POST", "path": "/conversations/demo/page-links", "status": "200"},
        # the purchase request waiting for finance, and the approver's queue link
        {
            "method": "POST",
            "path": "/conversations/demo-approval/tools/form_start",
            "status": "200",
        },
        {"method": "POST", "path": "/approvals/page-links", "status": "200"},
        # alice's two facts, and her fact editor's link
        {"method": "PUT", "path": "/memory/facts/person.date_of_birth", "status": "200"},
        {"method": "PUT", "path": "/memory/facts/person.weight_kg", "status": "200"},
        {"method": "POST", "path": "/memory/page-links", "status": "200"},
        # the demo draft, built by a builder agent's calls, and its canvas's link
        {"method": "POST", "path": f"{builder}/tools/create_form", "status": "200"},
        {"method": "POST", "path": f"{builder}/tools/add_field", "status": "200"},
        {"method": "POST", "path": f"{builder}/tools/add_field", "status": "200"},
        {"method": "POST", "path": f"{builder}/page-links", "status": "200"},
        {
            "method": "POST",
            "path": "/conversations/conv-1/tools/form_start",
            "status": f"{started}",
        },
        {"method": "GET", "path": "/conversations/conv-1/status", "status": f"{status}"},
        {"method": "GET", "path": "/conversations/conv-1/status", "status": "401"},
    ]
    assert json_objects(dev[0].stdout + dev[0].stderr()) == []
    assert any("--json-logs" in line for line in dev[0].stdout)  # the banner says how
    assert dev[0].stdout[-1] == "Stopped."
    # AND it ran on DynamoDB Local, the default, as the banner says
    assert dynamodb_line(dev[0].stdout).endswith("(AWS's DynamoDB Local 3.3, in memory)")


def test_make_dev_prints_a_link_to_its_demo_claims_page_and_how_to_mint_another(
    dev: list[Dev], capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN make dev's stack, its banner printed
    dev.append(Dev("--port", "0"))
    api = dev[0].ready()
    # THEN the banner labels one link, to the travel claim it started for acme/alice
    (at,) = [i for i, line in enumerate(dev[0].stdout) if line.startswith("  travel-claim  fi_")]
    label, url = dev[0].stdout[at], dev[0].stdout[at + 1].strip()
    instance = label.split()[1]
    assert label.endswith("acme/alice (Bearer dev:acme:alice), conversation demo")
    assert url.startswith(f"{api}/pages/enter/")  # the queue's, fact editor's, canvas's follow
    assert any("opens once" in line and "15 minutes" in line for line in dev[0].stdout)
    (fresh,) = [line.strip() for line in dev[0].stdout if line.strip().startswith("make page-link")]
    assert fresh == f"make page-link INSTANCE={instance} URL={api}"
    # AND the link opens the claim's page in a browser (over plain HTTP), once
    browser = PageVisit()
    page, _ = browser.open(url)
    assert page.title == "Travel expense claim" and page.status == "In progress"
    destination = page.field("destination")
    assert destination is not None and (destination.value, destination.badge) == (
        "Lisbon",
        "Answered",
    )
    assert PageVisit().again(url)[0] == 404  # another browser: the link is spent
    # AND the command the banner names mints a fresh one, which opens it again
    assert page_link.main(["--instance", instance, "--url", api]) == 0
    printed = capsys.readouterr()
    again, _ = PageVisit().open(printed.out.strip())
    assert again.title == "Travel expense claim"
    assert f"{instance} of acme/alice, conversation demo" in printed.err
    # AND another tenant's alice gets one line saying she has no such instance
    assert page_link.main(["--instance", instance, "--url", api, "--token", "dev:globex:alice"])
    refused = capsys.readouterr().err
    assert refused == (
        f"page-link: globex/alice has no instance {instance} in conversation demo (an "
        "instance's link is minted in its own conversation, with its owner's token)\n"
    )
    assert dev[0].stop() == 0


def test_make_dev_links_alices_fact_editor_and_the_demo_drafts_canvas(
    dev: list[Dev], capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN make dev's stack, its banner printed
    dev.append(Dev("--port", "0"))
    api = dev[0].ready()
    out = dev[0].stdout
    links = [line.strip() for line in out if line.startswith(f"    {api}/pages/enter/")]
    # THEN it labels a link to alice's fact editor, after the facts she stated
    memory = next(i for i, line in enumerate(out) if line.startswith("The fact editor"))
    assert "acme/alice stated a date of birth and a weight" in out[memory]
    assert "POST /memory/page-links with Bearer dev:acme:alice" in out[memory + 1]
    assert out[memory + 3] == f"  A fresh one: make page-link MEMORY=1 URL={api}"
    # AND the link opens her fact editor, showing them
    page, _ = PageVisit().open(out[memory + 2].strip(), "Open your memory")
    assert page.title == "Your memory"
    assert page.shown["fact:person.weight_kg"] == "70 kg"
    assert page.shown["fact:person.date_of_birth"] == "1990-04-02"
    # AND a link to the canvas of the draft a builder agent's calls made
    canvas = next(i for i, line in enumerate(out) if line.startswith("The builder's canvas"))
    assert "the draft demo-feedback a builder agent made; acme/alice's link" in out[canvas]
    assert "Bearer dev:acme:alice;roles=form_publisher" in out[canvas + 1]
    assert out[canvas + 3] == f"  A fresh one: make page-link CANVAS=demo-feedback URL={api}"
    page, _ = PageVisit().open(out[canvas + 2].strip(), "Open the form you are building")
    assert page.title == "Event feedback (draft)"
    assert [name for name in page.shown if name.startswith("item:")] == [
        "item:rating",
        "item:comments",
    ]
    assert len(links) == 4  # the claim's form page, the queue, the fact editor, the canvas
    # AND the commands the banner names mint fresh ones
    assert page_link.main(["--memory", "--url", api]) == 0
    printed = capsys.readouterr()
    assert PageVisit().open(printed.out.strip(), "Open your memory")[0].title == "Your memory"
    assert "the fact editor of acme/alice" in printed.err
    assert page_link.main(["--canvas", "demo-feedback", "--url", api]) == 0
    printed = capsys.readouterr()
    fresh, _ = PageVisit().open(printed.out.strip(), "Open the form you are building")
    assert fresh.title == "Event feedback (draft)"
    # AND a form id that is none, or a draft another tenant's builder cannot see, is one line
    assert page_link.main(["--canvas", "Not_An_Id", "--url", api]) == 1
    assert capsys.readouterr().err == (
        "page-link: 'Not_An_Id' is not a form id (a lowercase letter, then up to 62 lowercase "
        "letters, digits or hyphens)\n"
    )
    other = ["--canvas", "demo-feedback", "--url", api, "--token", "dev:globex:alice"]
    assert page_link.main(other) == 1
    assert capsys.readouterr().err == (
        "page-link: the tenant of globex/alice has no draft of form 'demo-feedback' (a draft "
        "is made by a builder agent's create_form, in the builder's own tenant)\n"
    )
    assert dev[0].stop() == 0


def test_make_dev_no_seed_starts_nothing(dev: list[Dev]) -> None:
    dev.append(Dev("--port", "0", "--no-seed"))
    dev[0].ready()
    assert any("not seeded (--no-seed)" in line for line in dev[0].stdout)
    assert dev[0].stop() == 0
    assert [line for line in dev[0].stderr() if ACCESS_LINE.match(line)] == []


def dynamodb_line(banner: list[str]) -> str:
    (line,) = [line for line in banner if re.match(r"^\s+DynamoDB\s+http://127\.0\.0\.1:", line)]
    return line


def test_without_java_the_stack_says_how_to_get_dynamodb_local_or_choose_moto(
    tmp_path: Path,
) -> None:
    # GIVEN a PATH with no Java on it
    # WHEN make dev starts on the default DynamoDB
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "formwork.infra.local",
            "--port",
            "0",
            "--dynamodb-port",
            "0",
            "--no-temporal",
        ],
        check=False,
        cwd=ROOT,
        env={
            **{k: v for k, v in os.environ.items() if not k.startswith("FORMWORK_")},
            "PATH": str(tmp_path),
        },
        capture_output=True,
        text=True,
        timeout=STARTUP_SECONDS,
    )
    # THEN it stops at once, saying what is missing, how to get it, and how to use moto
    assert done.returncode == 1
    assert "DynamoDB Local needs a Java 17 JDK (java is not on the PATH" in done.stderr
    assert "--dynamodb moto" in done.stderr and "FORMWORK_LOCAL_DYNAMODB=moto" in done.stderr
    assert "Formwork local stack is ready" not in done.stdout


def test_json_logs_show_the_functions_records_as_lambda_writes_them(dev: list[Dev]) -> None:
    # GIVEN make dev ARGS='--json-logs --dynamodb moto' (moto stays selectable; no demo claim
    # seeded, so the only tool call logged is this test's)
    dev.append(Dev("--port", "0", "--json-logs", "--dynamodb", "moto", "--no-seed"))
    api = dev[0].ready()
    assert start_claim(api, "conv-1") == 200
    assert dev[0].stop() == 0
    assert dynamodb_line(dev[0].stdout).endswith("(moto, served single-threaded)")

    records = json_objects(dev[0].stdout)
    logged = [r for r in records if r.get("message") == "tool call"]
    assert [(r["level"], r["tool"], r["function_name"]) for r in logged] == [
        ("INFO", "form_start", "formwork-local-ToolsFunction")
    ]
    assert any("_aws" in r for r in records)  # the EMF metrics too
    access = [line for line in dev[0].stderr() if ACCESS_LINE.match(line)]
    assert access == [access[0]] and access[0].startswith("POST /conversations/conv-1/tools/")


def get_json(url: str, token: str = "Bearer dev:alice") -> Any:
    request = urllib.request.Request(url, headers={"Authorization": token})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def test_a_setting_from_the_shell_reaches_the_functions_and_no_log_key_warning(
    dev: list[Dev],
) -> None:
    # GIVEN make dev started from a shell that turns memory off (the template says on)
    dev.append(Dev("--port", "0", "--dynamodb", "moto", FORMWORK_MEMORY="off"))
    api = dev[0].ready()
    # WHEN a caller reads the memory settings and starts a form
    settings = get_json(f"{api}/memory/settings")
    assert start_claim(api, "conv-1") == 200
    assert dev[0].stop() == 0
    # THEN the functions run with the shell's setting
    assert settings["deployment_enabled"] is False
    # AND nothing warns about LOG_HASH_KEY: the local stack uses the documented public key
    printed = dev[0].stdout + dev[0].stderr()
    assert not [line for line in printed if "LOG_HASH_KEY" in line], printed
