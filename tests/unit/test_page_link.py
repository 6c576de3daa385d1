"""``python -m formwork.infra.local.page_link`` (``make page-link``) and the part of ``make
dev``'s banner that prints page links (``formwork.infra.local.__main__.page_lines``); reading a
page's HTML as the demo's browser does (``formwork.examples.demo.page_visit.read_page``).

The command against a stack that answers is in ``tests/integration/test_page_link.py``; here,
what it says when nothing answers, and the banner's words for given links.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from formwork.examples.demo.page_visit import FieldShown, FormShown, read_page
from formwork.infra.local import __main__ as dev
from formwork.infra.local.page_link import DEMO_SEEDS, PageLink, Seeded, lifetime, main, who

ROOT = Path(__file__).resolve().parents[2]


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def test_without_a_running_stack_the_command_says_so_in_one_line_and_exits_1() -> None:
    # GIVEN no API on the port named
    url = f"http://127.0.0.1:{closed_port()}"
    # WHEN a link is asked for, as make page-link runs the command
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "formwork.infra.local.page_link",
            "--instance",
            "fi_1",
            "--url",
            url,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    # THEN it exits 1 with one line saying what to do, and no traceback
    assert done.returncode == 1
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"page-link: no Formwork API answers at {url} (")
    assert line.endswith("start the local stack with make dev (or formwork dev), or name its --url")
    assert "Traceback" not in done.stderr


def test_the_command_needs_an_instance(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main([])
    assert exited.value.code == 2
    assert "--instance" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("token", "principal"),
    [
        ("dev:acme:alice", "acme/alice"),
        ("Bearer dev:acme:alice;roles=finance", "acme/alice"),
        ("dev:alice", "local/alice"),
    ],
)
def test_who_names_the_principal_a_dev_token_stands_for(token: str, principal: str) -> None:
    assert who(token) == principal


def test_a_links_lifetime_is_said_in_whole_minutes() -> None:
    now = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
    link = PageLink("http://x/pages/enter/v1.a.b", now + timedelta(minutes=15, seconds=-1))
    assert lifetime(link, now) == "15 minutes"
    assert lifetime(PageLink("u", now + timedelta(seconds=50)), now) == "1 minute"
    assert lifetime(PageLink("u", now - timedelta(minutes=1)), now) == "0 minutes"


API = "http://127.0.0.1:3000"


def test_the_banner_prints_one_labelled_link_per_demo_instance_and_how_to_get_a_fresh_one() -> None:
    # GIVEN the demo claim started and a link minted to its page
    expires = datetime.now(UTC) + timedelta(minutes=15)
    url = f"{API}/pages/enter/v1.payload.mac"
    seeded = [Seeded(DEMO_SEEDS[0], "fi_1", PageLink(url, expires))]
    # WHEN the banner's page part is written
    text = dev.page_lines(API, seeded)
    # THEN it labels the link (form, instance, who), prints it whole, and says it opens once,
    # for how long, and the command that mints another (make's, in a checkout)
    assert "travel-claim  fi_1  acme/alice (Bearer dev:acme:alice), conversation demo" in text
    assert f"\n    {url}\n" in text
    assert "opens once" in text and "expires in 15 minutes" in text
    assert text.rstrip().endswith("make page-link INSTANCE=fi_1")


def test_on_another_port_the_fresh_link_command_names_the_api() -> None:
    other = "http://127.0.0.1:4000"
    expires = datetime.now(UTC) + timedelta(minutes=15)
    seeded = [Seeded(DEMO_SEEDS[0], "fi_1", PageLink(f"{other}/pages/enter/t", expires))]
    assert dev.page_lines(other, seeded).rstrip().endswith(f"INSTANCE=fi_1 URL={other}")


def test_without_a_demo_instance_the_banner_says_why_and_how_to_mint_a_link() -> None:
    text = dev.page_lines(API, "no demo instance: the stack does not serve travel-claim")
    assert "no demo instance: the stack does not serve travel-claim." in text
    assert (
        "python -m formwork.infra.local.page_link --instance <instance> --conversation conv-1 "
        "--token dev:alice" in text
    )
    assert "no demo instance" in dev.page_lines(API, [])


def test_the_banner_prints_the_demo_approvers_queue_link_or_why_there_is_none() -> None:
    expires = datetime.now(UTC) + timedelta(minutes=15)
    url = f"{API}/pages/enter/v1.queue.mac"
    text = dev.queue_lines(PageLink(url, expires))
    assert "acme/bob's link" in text and "Bearer dev:acme:bob;roles=finance" in text
    assert f"\n    {url}\n" in text and "expires in 15 minutes" in text
    assert text.rstrip().endswith("python -m formwork.infra.local.page_link --queue")
    why = dev.queue_lines("the stack does not serve purchase-request (FORMWORK_FORMS)")
    assert why.startswith("The approver's queue (docs/pages.md): the stack does not serve")


def test_the_command_takes_an_instance_or_the_queue_not_both(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--queue", "--instance", "fi_1"])
    assert exited.value.code == 2
    assert "--queue" in capsys.readouterr().err


@pytest.mark.parametrize(
    "asked", [["--memory"], ["--canvas", "demo-feedback"], ["--queue"]], ids=lambda a: a[0]
)
def test_without_a_running_stack_each_page_says_so_in_one_line_and_exits_1(
    asked: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    assert main([*asked, "--url", url]) == 1
    printed = capsys.readouterr()
    assert printed.out == ""
    (line,) = printed.err.splitlines()
    assert line.startswith(f"page-link: no Formwork API answers at {url} (")


def test_the_command_takes_one_page_at_a_time(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--memory", "--canvas", "demo-feedback"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "the fact editor (--memory) or a draft's canvas (--canvas FORM_ID)" in err


def test_the_banner_prints_alices_fact_editor_and_the_demo_drafts_canvas_or_why_not() -> None:
    expires = datetime.now(UTC) + timedelta(minutes=15)
    url = f"{API}/pages/enter/v1.memory.mac"
    text = dev.memory_lines(PageLink(url, expires))
    assert text.startswith("The fact editor (docs/pages.md): acme/alice stated a date of birth")
    assert "(POST /memory/page-links with Bearer dev:acme:alice)" in text
    assert f"\n    {url}\n" in text and "expires in 15 minutes" in text
    assert text.rstrip().endswith("A fresh one: make page-link MEMORY=1")
    text = dev.canvas_lines(PageLink(url, expires), "http://127.0.0.1:4000")
    assert "the draft demo-feedback a builder agent made; acme/alice's link" in text
    assert "Bearer dev:acme:alice;roles=form_publisher" in text
    assert text.rstrip().endswith("make page-link CANVAS=demo-feedback URL=http://127.0.0.1:4000")
    why = dev.canvas_lines("POST /builder/forms/demo-feedback/tools/create_form answered 500")
    assert why == (
        "The builder's canvas (docs/pages.md): POST /builder/forms/demo-feedback/tools/"
        "create_form answered 500. A link: make page-link CANVAS=demo-feedback\n"
    )
    assert dev.memory_lines("not seeded (--no-seed)").startswith(
        "The fact editor (docs/pages.md): not seeded (--no-seed). A link:"
    )


PAGE = """<!doctype html><html><head><title>Claim</title><link rel="stylesheet" href="/x.css">
</head><body><main><h1>Travel &amp; claim</h1>
<dl class="facts"><dt>Status</dt><dd class="state" id="form-status">
  In progress
</dd></dl>
<ul class="fields">
<li class="field status-answered" data-field="destination">
  <div class="field-head"><span class="label">Destination</span>
  <span class="badge">Answered</span></div>
  <p class="value">&lt;b&gt;Lisbon&lt;/b&gt;</p><p class="meta">Written by the agent</p>
  <details class="history"><summary>History</summary><ol><li>Porto</li></ol></details>
</li>
<li class="field status-pending" data-field="total">
  <div class="field-head"><span class="label">Total <span class="optional">(optional)</span></span>
  <span class="badge">Pending</span></div><input type="hidden" name="x" value="1">
</li>
</ul></main></body></html>"""


def test_the_page_reader_takes_title_status_and_fields_by_their_data_field() -> None:
    page = read_page(PAGE)
    assert page.title == "Travel & claim"
    assert page.status == "In progress"
    assert page.fields == [
        FieldShown("destination", "Destination", "Answered", "<b>Lisbon</b>"),
        FieldShown("total", "Total", "Pending", None),
    ]
    assert page.field("total") == page.fields[1] and page.field("nope") is None


FORMS = """<main><h1>Claim</h1><ul>
<li class="field" data-field="purpose"><span class="label">Purpose</span>
<span class="badge">Answered</span><p class="value">kickoff</p>
<form class="field-form answer" method="post" action="">
<input type="hidden" name="csrf_token" value="t0k">
<input type="hidden" name="action" value="answer">
<label for="i">Correct: Purpose</label><input id="i" name="value" type="text" value="kickoff">
<button type="submit" name="action" value="answer">Save Purpose</button>
<button type="submit" name="action" value="undo">Undo</button><button type="button">x</button>
</form>
<form class="field-form move" method="post" action="/elsewhere">
<input type="hidden" name="action" value="undo"><button type="submit">Undo</button></form>
</li>
<li class="field" data-field="mode"><span class="label">Mode</span>
<form class="field-form answer" method="post" action="">
<label><input type="radio" name="value" value="air" checked> air</label>
<label><input type="radio" name="value" value="rail"> rail</label></form>
<form class="field-form answer notes" method="post" action="">
<textarea name="value" rows="3">two
lines &amp; more</textarea></form>
</li></ul></main>"""


def test_the_page_reader_takes_each_fields_forms_as_a_browser_would_send_them() -> None:
    page = read_page(FORMS)
    purpose = page.form("purpose", "answer")
    assert purpose == FormShown(
        ("field-form", "answer"),
        "",
        (("csrf_token", "t0k"), ("action", "answer"), ("value", "kickoff")),
        (("action", "answer"), ("action", "undo")),
    )
    move = page.form("purpose", "move")
    assert move is not None and move.action == "/elsewhere" and move.sends == (("action", "undo"),)
    mode = page.forms["mode"]
    assert [f.sends for f in mode] == [(("value", "air"),), (("value", "two\nlines & more"),)]
    assert page.form("mode", "move") is None and page.form("nope", "answer") is None
    assert [f.id for f in page.fields] == ["purpose", "mode"]


FACTS = """<main><h1>Your memory</h1><p class="fe-done" data-shown="done">Corrected.</p>
<ul><li class="fe-fact" data-fact="person.weight_kg"><h3 class="label">Weight</h3>
<p class="value" data-shown="fact:person.weight_kg">71.5 kg</p>
<form class="fe-form fe-correct page-form" method="post" action="/pages/memory/facts/w/correct">
<input type="hidden" name="csrf_token" value="t0k"><input type="hidden" name="nonce" value="n1">
<input name="value" type="text" required><button type="submit">Save correction</button></form>
<form class="fe-form fe-delete" method="post" action="/pages/memory/facts/w/delete">
<input type="hidden" name="nonce" value="n2"><button type="submit">Delete</button></form>
</li></ul></main>"""


def test_the_page_reader_takes_marked_text_and_the_page_forms_outside_any_field() -> None:
    page = read_page(FACTS)
    assert page.shown == {"done": "Corrected.", "fact:person.weight_kg": "71.5 kg"}
    (correct,) = page.forms[""]  # only the form marked page-form; its button has no name
    assert correct == FormShown(
        ("fe-form", "fe-correct", "page-form"),
        "/pages/memory/facts/w/correct",
        (("csrf_token", "t0k"), ("nonce", "n1"), ("value", "")),
        (),
    )
