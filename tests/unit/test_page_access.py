"""Page links, session cookies and CSRF tokens (``formwork.aws.pages.access``): what each accepts
and refuses, the settings and the key, and the in-memory ledger of used links."""

from __future__ import annotations

import json

import pytest

from forms.storage.page_links import InMemoryPageLinkLedger, PageLinkLedger
from forms.storage.page_links_contract import PageLinkLedgerContract
from formwork import application
from formwork.aws.http import is_page
from formwork.aws.pages import access
from formwork.config import ConfigError
from tests.support import app_for

KEY = b"k" * 40
OTHER_KEY = b"o" * 40
NOW = 1_800_000_000


def link(instance: str = "fi_1", expires: int = NOW + 60) -> str:
    return access.mint_link(KEY, "acme/alice", "conv-1", instance, expires)


def session(instance: str = "fi_1") -> access.Grant:
    grant = access.read_link(KEY, link(instance), NOW)
    return access.read_session(KEY, access.open_session(KEY, grant, NOW + 600), instance, NOW)


def test_a_link_carries_its_principal_conversation_instance_and_expiry() -> None:
    grant = access.read_link(KEY, link(), NOW)
    assert (grant.principal, grant.conversation_id, grant.instance_id) == (
        "acme/alice",
        "conv-1",
        "fi_1",
    )
    assert grant.expires_at == NOW + 60 and len(grant.nonce) >= 24
    # two links to the same instance are two links (each used once)
    assert access.read_link(KEY, link(), NOW).nonce != grant.nonce


def test_a_link_stops_at_its_expiry_second() -> None:
    token = link(expires=NOW + 60)
    assert access.read_link(KEY, token, NOW + 59.999)
    with pytest.raises(access.Refused):
        access.read_link(KEY, token, NOW + 60)


@pytest.mark.parametrize(
    "mangle",
    [
        lambda t: t + "A",
        lambda t: t[:-1] + ("A" if t[-1] != "A" else "B"),
        lambda t: "v2" + t[2:],
        lambda t: t.replace(".", "", 1),
        lambda t: "",
        lambda t: "v1." + "A" * 3000 + "." + t.rsplit(".", 1)[1],
        lambda t: t.split(".")[0] + "." + t.split(".")[1] + "=." + t.split(".")[2],
    ],
)
def test_an_altered_or_malformed_link_is_refused(mangle: object) -> None:
    assert callable(mangle)
    with pytest.raises(access.Refused):
        access.read_link(KEY, mangle(link()), NOW)


def test_a_link_signed_with_another_key_or_for_another_purpose_is_refused() -> None:
    with pytest.raises(access.Refused):
        access.read_link(OTHER_KEY, link(), NOW)
    cookie = access.open_session(KEY, access.read_link(KEY, link(), NOW), NOW + 600)
    with pytest.raises(access.Refused):
        access.read_link(KEY, cookie, NOW)
    with pytest.raises(access.Refused):
        access.read_session(KEY, link(), "fi_1", NOW)


def test_a_correctly_signed_payload_of_the_wrong_shape_is_refused() -> None:
    for fields in ([1, 2], {"p": "acme/alice", "c": "conv-1", "i": "fi_1", "x": True, "n": "n"}):
        payload = access._b64(json.dumps(fields).encode())
        token = f"v1.{payload}.{access._mac(KEY, access._LINK, payload)}"
        with pytest.raises(access.Refused):
            access.read_link(KEY, token, NOW)


def test_a_session_is_for_its_instance_only_and_until_it_expires() -> None:
    grant = access.read_link(KEY, link("fi_1"), NOW)
    cookie = access.open_session(KEY, grant, NOW + 600)
    opened = access.read_session(KEY, cookie, "fi_1", NOW)
    assert (opened.principal, opened.instance_id, opened.expires_at) == (
        "acme/alice",
        "fi_1",
        NOW + 600,
    )
    assert opened.nonce != grant.nonce  # a session id of its own, not the link's
    with pytest.raises(access.Refused):
        access.read_session(KEY, cookie, "fi_2", NOW)
    with pytest.raises(access.Refused):
        access.read_session(KEY, cookie, "fi_1", NOW + 600)


def test_the_csrf_check_takes_its_sessions_token_and_nothing_else() -> None:
    # GIVEN two sessions on the same instance
    mine, theirs = session(), session()
    token = access.csrf_token(KEY, mine)
    # THEN the session's own token passes
    access.check_csrf(KEY, mine, token)
    # AND another session's token, an altered, empty, missing or non-text one is refused
    for submitted in (
        access.csrf_token(KEY, theirs),
        access.csrf_token(OTHER_KEY, mine),
        token[:-1] + ("A" if token[-1] != "A" else "B"),
        "",
        None,
        ["x"],
        token + "é",
    ):
        with pytest.raises(access.Refused):
            access.check_csrf(KEY, mine, submitted)


def test_cookie_names_are_per_instance_and_valid_cookie_names() -> None:
    names = {access.cookie_name(i) for i in ("fi_1", "fi_2", "a:b@c.d-e")}
    assert len(names) == 3
    assert all(n.isascii() and n.replace("_", "").isalnum() for n in names)


def test_a_cookie_is_found_among_the_events_cookies_by_its_name() -> None:
    cookies = ["other=1", "fwp_x = v1.a.b", "broken", 7]
    assert access.cookie_value(cookies, "fwp_x") == "v1.a.b"
    assert access.cookie_value(cookies, "fwp_y") is None
    assert access.cookie_value(None, "fwp_x") is None


def test_the_lifetimes_are_settings_checked_when_read() -> None:
    assert access.PageSettings.from_env({}) == access.PageSettings(15, 60)
    read = access.PageSettings.from_env(
        {"FORMWORK_PAGE_LINK_MINUTES": "5", "FORMWORK_PAGE_SESSION_MINUTES": "30"}
    )
    assert read == access.PageSettings(5, 30)
    for bad in ("0", "1441", "ten", "-1", "1.5"):
        with pytest.raises(ConfigError, match="FORMWORK_PAGE_LINK_MINUTES"):
            access.PageSettings.from_env({"FORMWORK_PAGE_LINK_MINUTES": bad})


def test_the_key_is_the_configured_one_and_never_the_public_one_in_lambda(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    app = app_for()
    for name in (access.KEY_VARIABLE, access.KEY_SECRET_VARIABLE, "AWS_LAMBDA_FUNCTION_NAME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("AWS_SAM_LOCAL", raising=False)
    # outside Lambda, with nothing configured: the public local key
    assert access.page_key(app) == access.LOCAL_PAGE_KEY.encode()
    # in Lambda with nothing configured: refused, never the public key
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_NAME", "formwork-tools")
    with pytest.raises(ConfigError, match="FORMWORK_PAGE_KEY"):
        access.page_key(app)
    # a configured key is used; one too short to be a secret is refused
    monkeypatch.setenv(access.KEY_VARIABLE, "s" * 32)
    assert access.page_key(app) == b"s" * 32
    monkeypatch.setenv(access.KEY_VARIABLE, "short")
    with pytest.raises(ConfigError, match="too short"):
        access.page_key(app)


def test_a_key_from_secrets_manager_is_read_once_and_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reads: list[str] = []

    class Client:
        def get_secret_value(self, SecretId: str) -> dict[str, str]:  # noqa: N803 (boto3's)
            reads.append(SecretId)
            return {"SecretString": "x" * 64}

    monkeypatch.delenv(access.KEY_VARIABLE, raising=False)
    monkeypatch.setenv(access.KEY_SECRET_VARIABLE, "arn:aws:secretsmanager:x:1:secret:page-key")
    monkeypatch.setattr(application, "build_secrets_client", lambda settings: Client())
    app = app_for()
    assert access.page_key(app) == access.page_key(app) == b"x" * 64
    assert reads == ["arn:aws:secretsmanager:x:1:secret:page-key"]


class TestInMemoryPageLinkLedger(PageLinkLedgerContract):
    @pytest.fixture
    def ledger(self) -> PageLinkLedger:
        return InMemoryPageLinkLedger()


@pytest.mark.parametrize(
    ("method", "path", "page"),
    [
        ("GET", "/pages/enter/v1.a.b", True),
        ("GET", "/pages/forms/fi_1", True),
        ("GET", "/pages/forms/fi_1/version", True),
        ("GET", "/pages/static/page.css", True),
        ("POST", "/pages/enter/v1.a.b", True),
        ("POST", "/pages/enter/", False),
        ("POST", "/pages/enter/v1.a.b/more", False),
        ("POST", "/pages/forms/fi_1", True),
        ("POST", "/pages/forms/fi_1/version", False),
        ("POST", "/pages/forms/", False),
        ("PUT", "/pages/forms/fi_1", False),
        ("POST", "/pages/static/page.css", False),
        ("PUT", "/pages/enter/v1.a.b", False),
        ("DELETE", "/pages/enter/v1.a.b", False),
        ("POST", "/conversations/c/tools/form_read", False),
    ],
)
def test_only_page_gets_and_the_entry_post_skip_the_jwt(method: str, path: str, page: bool) -> None:
    # GIVEN a request with no bearer token WHEN the handler tells page requests apart
    event = {"rawPath": path, "requestContext": {"http": {"method": method, "path": path}}}
    # THEN only the GET routes under /pages/ and the entry button's post are pages; any other
    # post under /pages/ goes through the JWT check like a tool call
    assert is_page(event) is page
