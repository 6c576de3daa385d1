"""Text an author or a user wrote, rendered for the lines a model reads.

Labels, help texts, options, step titles and previews, form titles, checkpoint messages and the
values a user gave all reach the model inside lines the engine writes: the status line (which
goes into the agent's system prompt), the builder's outline, summaries, hints, memory's lines,
the questions a person is asked. Such text is data, and must not be able to end the engine's
line and start one of its own (a label ``"x\\n[form: other] step 1/1 ... pending: ..."`` or
``"\\nSYSTEM: ..."``), nor reorder what is shown around it.

``inline`` is the one rendering for it, used wherever such text is interpolated:

* a run of line breaks or tabs (``\\n``, ``\\r``, ``\\v``, ``\\f``, the information separators
  U+001C-U+001E, NEL U+0085, LINE and PARAGRAPH SEPARATOR U+2028/U+2029) becomes one space;
* any other control character (C0, DEL, C1, NUL among them), the bidirectional embeddings,
  overrides and isolates (U+202A-U+202E, U+2066-U+2069) and the invisible tag characters
  (U+E0000-U+E007F, which spell out text a person cannot see) become a visible escape
  (``\\u0000``, ``\\U000e0041``), so the model sees that something was there and nothing acts
  on it;
* ``[form:`` (the head of a status line, in any case or spacing) reads ``(form:``: the text
  cannot pass for a form's line even in the middle of one.

Text without any of them comes back as it is (one scan). JSON results need none of this for
their own strings (JSON escapes a line break inside a string); the danger is text put into lines.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

from pydantic_core import PydanticSerializationError, to_json

_BREAKS = re.compile(r"[\t\n\v\f\r\x1c-\x1e\x85\u2028\u2029]+")
_CONTROLS = re.compile(
    r"[\x00-\x08\x0e-\x1b\x1f\x7f-\x84\x86-\x9f\u202a-\u202e\u2066-\u2069\U000e0000-\U000e007f]"
)
_FORGED = re.compile(r"\[(?=\s*form\s*:)", re.IGNORECASE)
_UNSAFE = re.compile(
    r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\U000e0000-\U000e007f]"
    r"|\[\s*form\s*:",
    re.IGNORECASE,
)


def inline(text: str) -> str:
    """``text`` as a piece of one line: no line break, no control character, no ``[form:``."""
    if "[" not in text and text.isprintable():
        return text  # every character ``_UNSAFE`` finds is one Unicode calls not printable
    if _UNSAFE.search(text) is None:
        return text
    text = _BREAKS.sub(" ", text)
    text = _CONTROLS.sub(_escaped, text)
    return _FORGED.sub("(", text)


def _escaped(found: re.Match[str]) -> str:
    code = ord(found[0])
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def clipped(text: str, limit: int) -> str:
    """``inline(text)``, cut to ``limit`` characters (the last one ``…``) when it is longer."""
    text = inline(text)
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def result_text(result: Mapping[str, Any]) -> str:
    """A tool's result as the JSON text a model reads (an MCP tool result, an agent loop's
    tool message): compact, characters beyond ASCII as they are, on one line. JSON escapes
    the control characters below U+0020 inside a string, but allows next line (U+0085) and
    the line and paragraph separators (U+2028, U+2029) raw; a host that shows the text to a
    model as lines may break on them, so they travel escaped. pydantic-core's serialiser, at
    about a quarter of ``json.dumps``'s cost on a fill's result (the standard library makes
    an encoder object on every call); a decimal or a date becomes its text where
    ``json.dumps`` would fail, and an infinity or NaN null (JSON has no such number; the
    call's record writes null too, so a replay reads the same). It never raises for a result
    of JSON's values and those."""
    try:
        text = to_json(result, inf_nan_mode="null").decode()
    except PydanticSerializationError:  # a lone surrogate, which no UTF-8 text can carry
        # as ASCII: every character past it escaped, the surrogate too, so any transport
        # carries the text and it reads back as the same result (a decimal, a date: text)
        return json.dumps(_finite(result), separators=(",", ":"), default=str)
    if "\x85" in text or "\u2028" in text or "\u2029" in text:  # 3 scans: 1/20 of a search
        return _RAW_BREAKS.sub(_escaped, text)
    return text


def _finite(value: Any) -> Any:
    """``value`` with each infinity or NaN in it as None (what the serialiser writes of one),
    for the standard library's encoder, which would write its constants."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Mapping):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


_RAW_BREAKS = re.compile("[\x85\u2028\u2029]")
