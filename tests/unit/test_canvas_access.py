"""The builder's canvas links and sessions (``formwork.aws.pages.canvas_access``): what they
carry, and that no other page's token is taken for one, nor one for another's."""

from __future__ import annotations

import pytest

from formwork.aws.pages import access, canvas_access
from formwork.aws.pages.access import Grant, Refused, _sign

KEY = b"k" * 40
NOW = 1_800_000_000
LINK_LABEL = b"formwork canvas page link v1\n"


def link(principal: str = "acme/ana", tenant: str = "acme", publisher: bool = False) -> str:
    return canvas_access.mint_link(KEY, principal, tenant, "contact-us", publisher, NOW + 60)


def test_a_link_names_principal_tenant_draft_and_role_and_its_session_keeps_them() -> None:
    grant = canvas_access.read_link(KEY, link(publisher=True), NOW)
    assert (grant.principal, grant.tenant, grant.form_id, grant.publisher) == (
        "acme/ana",
        "acme",
        "contact-us",
        True,
    )
    cookie = canvas_access.open_session(KEY, grant, NOW + 600)
    session = canvas_access.read_session(KEY, cookie, "contact-us", NOW)
    assert (session.principal, session.tenant, session.publisher) == ("acme/ana", "acme", True)
    assert session.nonce != grant.nonce
    assert not canvas_access.read_link(KEY, link(), NOW).publisher


def test_a_session_is_for_its_draft_and_not_a_link_nor_the_reverse() -> None:
    grant = canvas_access.read_link(KEY, link(), NOW)
    cookie = canvas_access.open_session(KEY, grant, NOW + 600)
    with pytest.raises(Refused):
        canvas_access.read_session(KEY, cookie, "other-form", NOW)
    with pytest.raises(Refused):
        canvas_access.read_link(KEY, cookie, NOW)
    with pytest.raises(Refused):
        canvas_access.read_session(KEY, link(), "contact-us", NOW)
    with pytest.raises(Refused):
        canvas_access.read_session(KEY, cookie, "contact-us", NOW + 600)  # expired


def test_no_other_pages_token_is_a_canvas_token() -> None:
    form_link = access.mint_link(KEY, "acme/ana", "acme#publisher", "contact-us", NOW + 60)
    memory_link = access.mint_scoped_link(KEY, access.MEMORY, "acme/ana", NOW + 60)
    for token in (form_link, memory_link):
        with pytest.raises(Refused):
            canvas_access.read_link(KEY, token, NOW)
    with pytest.raises(Refused):
        access.read_link(KEY, link(), NOW)


def test_a_grant_whose_tenant_is_not_its_principals_is_refused() -> None:
    with pytest.raises(Refused):
        canvas_access.read_link(KEY, link(principal="globex/gus", tenant="acme"), NOW)
    forged = _sign(KEY, LINK_LABEL, Grant("acme/ana", "acme#owner", "contact-us", NOW + 60, "n"))
    with pytest.raises(Refused):
        canvas_access.read_link(KEY, forged, NOW)


def test_each_draft_has_its_own_cookie() -> None:
    assert canvas_access.cookie_name("a") != canvas_access.cookie_name("b")
    assert canvas_access.cookie_name("a").startswith("fwc_")
