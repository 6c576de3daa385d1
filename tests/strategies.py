"""Hypothesis strategies the property tests share."""

from __future__ import annotations

import re

from hypothesis import strategies as st

LONE_SURROGATES = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF, categories=["Cs"])
"""One code point U+D800-U+DFFF: what a JSON parser gives for a ``\\ud800`` escape without its
pair, and no character UTF-8 can carry."""

_PAIRED = re.compile("([\ud800-\udbff])(?=[\udc00-\udfff])")


def any_text(max_size: int) -> st.SearchStrategy[str]:
    """Text a JSON parser may give: any code points, lone surrogates often among them. A high
    surrogate is never right before a low one (JSON reads such a pair of escapes as the one
    character beyond U+FFFF), so an ``x`` is put between them. ``st.text`` never gives a
    surrogate, whatever its alphabet (not even ``st.characters(exclude_categories=())``): the
    text is joined from characters here."""
    joined = st.lists(st.characters() | LONE_SURROGATES, max_size=max_size).map("".join)
    return joined.map(lambda text: _PAIRED.sub(r"\1x", text))
