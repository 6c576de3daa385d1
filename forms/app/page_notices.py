"""What the person's last post on the form page did, in their words (``notice``).

A move that landed says what it did (``DONE``); a refusal the agent's tool words for the agent
is worded again for a person (``TROUBLE``), or, when it is about their answer (a rejected value,
a change made meanwhile, memory's fills unconfirmed), says what the tool said, as sentences.
All names are importable from ``forms.app.pages``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from forms.app.page_fields import sentence
from forms.app.page_views import FormPage


@dataclass(frozen=True, slots=True)
class Notice:
    """What the person's last post did, shown at the top of the page (and beside its field
    when it is about one)."""

    ok: bool
    text: str
    field: str | None = None


DONE: dict[str, str] = {
    "answer": "Saved {label}.",
    "retract": "Took back your answer to {label}.",
    "decline": "Noted that you prefer not to answer {label}.",
    "undo": "Undid the last change to {label}.",
    "redo": "Redid the change to {label}.",
    "apply": "Used what memory offered for {label}.",
    "confirm_memory": "Confirmed the answers filled from memory.",
    "clear_memory": "Cleared the answers filled from memory.",
    "submit": "Sent. Your answers are submitted.",
}
"""What each page move did, as the person reads it once it landed."""

TROUBLE: dict[str, str] = {
    "form_closed": "This form is closed: it takes no more changes.",
    "tool_call_conflict": "That was already sent. The page now shows the form as it stands.",
    "tool_call_expired": "That was sent a while ago and is not sent again. The page now shows "
    "the form as it stands.",
    "too_many_conflicts": "The form was busy with other changes and nothing was saved. "
    "Please try again.",
    "bad_request": "That could not be read. Please reload the page and try again.",
    "unknown_instance": "This form could not be found.",
    "internal_error": "Something went wrong on our side and nothing was saved. Please try again.",
    "definition_error": "Something went wrong on our side and nothing was saved.",
}
"""A refusal the person can do nothing about but try again, in their words (the tool's own
message is written for the agent)."""


def notice(page: FormPage, action: str, field_id: str | None, result: Mapping[str, Any]) -> Notice:
    """What ``result`` (of the person's ``action`` on ``field_id``) says to the person, read
    against the page as it stands after it."""
    labels = {f.id: f.label for step in page.steps for f in step.fields}
    label = labels.get(field_id or "", field_id or "")
    rejected = result.get("rejected")
    if isinstance(rejected, list) and rejected:
        first = rejected[0]
        where = str(first.get("field", field_id))
        return Notice(False, f"{labels.get(where, where)}: {first.get('error')}.", where)
    if result.get("unknown"):
        return Notice(False, "That question is not on this form. Please reload the page.")
    error = result.get("error")
    if error is not None:
        message = str(result.get("message", ""))
        if error in ("changed_meanwhile", "memory_unconfirmed", "cannot_revise"):
            text = sentence(message[:1].upper() + message[1:])
            hint = result.get("hint") if error != "cannot_revise" else None
            if isinstance(hint, str) and hint:
                text += " " + sentence(hint[:1].upper() + hint[1:])
            return Notice(False, text, field_id)
        return Notice(False, TROUBLE.get(str(error), TROUBLE["internal_error"]), field_id)
    if result.get("submitted") is False:
        why = str(result.get("not_submitted", ""))
        return Notice(False, sentence(f"Not sent yet: {why}" if why else "Not sent yet"))
    return Notice(True, DONE.get(action, "Saved.").format(label=label), field_id)
