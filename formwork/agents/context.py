"""What the builder model reads besides the conversation: its instructions, the draft as it is
now, the editor's selection, and a summary of the conversation's older messages.

``system_prompt`` assembles them; the loop calls it before every model call, so an edit made
earlier in the same turn shows in the next call's snapshot. ``compact`` (used by both agent
loops, with ``summary_section``) splits a transcript
into the messages kept verbatim (the last ``keep``, starting at something the person said, so
no tool result is parted from its call) and a summary of the rest, written without a model
call: the person's requests, the replies, and the sentence of every edit applied, refused or
cancelled.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from forms.documents import EditError, FormDocument, Selection, outline, selection_line
from forms.surface.outline import outline_lines
from forms.surface.plain import inline
from formwork.agents.transcript import AssistantTurn, Entry, JsonDict, ToolResults, UserText

DEFAULT_KEEP_MESSAGES = 12
SUMMARY_LINES = 30
"""The summary keeps its newest lines, and says how many older ones it left out."""
_CLIP = 300

BUILDER_INSTRUCTIONS = """\
You are the assistant inside a form editor. Talk with the person like a helpful product \
assistant: short, plain sentences about what you changed and what you suggest. The canvas \
shows the form, so never paste the form, its fields or any JSON into the chat.

You change the form only through the tools. Each call applies at once to the live draft and \
answers with one sentence. Build in small calls: use create_form only when the canvas is \
empty or the person explicitly asks to start over, and then for the structure only (the \
title and the steps); add and adjust the fields with add_field, update_field and the other \
small tools, so the person watches the form take shape and a failed call costs nothing else.

When the person says "this field" or "this step", they mean the selection named below: leave \
out the field or step and the tool uses the selection. Use the ids shown in the form below; \
to read a step or a field in full, or to see an edit you just made, call inspect_form. A tool \
that refuses says why and how to fix it: fix the call, or tell the person what stands in the \
way; do not work around a limit. When you are done, say in a sentence or two what changed."""
"""The builder's standing instructions, the first part of every system prompt."""


@dataclass(frozen=True, slots=True)
class Compacted:
    """A transcript split for the model: ``kept`` verbatim, ``summary`` lines for the rest."""

    summary: tuple[str, ...]
    kept: tuple[Entry, ...]


def compact(transcript: Sequence[Entry], keep: int = DEFAULT_KEEP_MESSAGES) -> Compacted:
    """Keep the last ``keep`` entries, from the first ``UserText`` among them; when none of
    them is one (a turn longer than ``keep``), from the last ``UserText``. Everything before
    is summarised, except what the model has not answered yet: when the turn just before the
    kept entries ended on tool results, with no reply (the step cap, or Stop), its request
    and its last response with their results are kept too, as they were."""
    if keep < 1:
        raise ValueError("keep must be at least 1")
    starts = [i for i, entry in enumerate(transcript) if isinstance(entry, UserText)]
    earliest = max(0, len(transcript) - keep)
    later = [i for i in starts if i >= earliest]
    start = later[0] if later else starts[-1] if starts else len(transcript)
    kept = tuple(transcript[start:])
    request = _unanswered(transcript, start)
    if request is None:
        return Compacted(summarise(transcript[:start]), kept)
    last = start - 2  # the response whose results end the unanswered turn
    summary = summarise([*transcript[:request], *transcript[request + 1 : last]])
    return Compacted(summary, (transcript[request], *transcript[last:start], *kept))


def _unanswered(transcript: Sequence[Entry], start: int) -> int | None:
    """The request of the turn that ends right before ``start`` when it ended on tool
    results (a response with calls, then their results, and no reply); else None."""
    if start < 3 or not isinstance(transcript[start - 1], ToolResults):
        return None
    response = transcript[start - 2]
    if not isinstance(response, AssistantTurn) or not response.calls:
        return None
    asked = [i for i in range(start - 2) if isinstance(transcript[i], UserText)]
    return asked[-1] if asked else None


def step_cap_note(transcript: Sequence[Entry], max_steps: int) -> str | None:
    """What the model is told when the last turn of ``transcript`` was stopped at the step
    cap: it ended on tool results after ``max_steps`` model calls, with no reply."""
    if not transcript or not isinstance(transcript[-1], ToolResults):
        return None
    asked = [i for i, entry in enumerate(transcript) if isinstance(entry, UserText)]
    since = transcript[asked[-1] :] if asked else transcript
    if sum(isinstance(entry, AssistantTurn) for entry in since) < max_steps:
        return None
    return (
        f"Your previous turn was stopped at the step cap ({max_steps} model calls) before "
        "you replied, so the person saw no reply to it. Its request, its last calls and "
        "their results are kept in the conversation as they were."
    )


def summarise(entries: Sequence[Entry]) -> tuple[str, ...]:
    """One line per request, reply and edit (reads are left out), at most ``SUMMARY_LINES``."""
    names: dict[str, str] = {}  # the calls of the response just before (ids may repeat later)
    lines: list[str] = []
    for entry in entries:
        if isinstance(entry, UserText):
            lines.append(f"The person said: {_clip(entry.text)}")
        elif isinstance(entry, AssistantTurn):
            names = {c.id: c.name for c in entry.calls}
            if entry.text.strip() and not entry.calls:
                lines.append(f"You replied: {_clip(entry.text)}")
        elif isinstance(entry, ToolResults):
            for done in entry.results:
                line = _result_line(names.get(done.call_id, "a tool"), done.result)
                if line is not None:
                    lines.append(line)
    if len(lines) > SUMMARY_LINES:
        left_out = len(lines) - SUMMARY_LINES
        lines = [f"({left_out} earlier lines left out)", *lines[-SUMMARY_LINES:]]
    return tuple(lines)


def _result_line(tool: str, result: JsonDict) -> str | None:
    if result.get("ok"):
        summary = result.get("summary")
        return f"Applied ({tool}): {_clip(str(summary))}" if summary else None
    error = str(result.get("error", "error"))
    if error == "cancelled":
        return f"Cancelled ({tool}): nothing was applied."
    return f"Refused ({tool}, {error}): {_clip(str(result.get('message', '')))}"


def _clip(text: str) -> str:
    flat = re.sub(r"\s+", " ", inline(text)).strip()
    return flat if len(flat) <= _CLIP else flat[: _CLIP - 1] + "…"


def snapshot(document: FormDocument | None) -> str:
    """The draft in a few lines (``forms.documents.outline``): each step, then its items as
    ``id: kind "Label"`` (``?`` for optional, ``when ...`` for a rule), then the checkpoints."""
    if document is None:
        return "The canvas is empty: there is no form yet."
    outlined = outline(document).get("form")
    return "\n".join(outline_lines(outlined if isinstance(outlined, dict) else {}))


def describe_selection(document: FormDocument | None, selection: Selection | None) -> str:
    """The editor's selection as a sentence (``forms.documents.selection_line``), also when
    it names something the draft no longer has."""
    named = _named(selection)
    if named is None:
        return "Nothing is selected."
    what, ref = named
    if document is None:
        return f'The selected {what} "{ref}" is not in the form: there is no form yet.'
    try:
        return selection_line(document, selection)
    except EditError:
        return f'The selected {what} "{ref}" is not in the form any more.'


def _named(selection: Selection | None) -> tuple[str, str] | None:
    if selection is not None and selection.field is not None:
        return "field", selection.field
    if selection is not None and selection.step is not None:
        return "step", selection.step
    return None


def summary_section(summary: Sequence[str]) -> str:
    """The older messages' summary as a part of a system prompt."""
    return "Earlier in this conversation (older messages, summarised):\n" + "\n".join(
        f"- {line}" for line in summary
    )


def system_prompt(
    document: FormDocument | None,
    selection: Selection | None,
    summary: Sequence[str] = (),
    instructions: str = BUILDER_INSTRUCTIONS,
    problem: str | None = None,
) -> str:
    """The instructions, the summary of older messages (if any), the draft as it is now and
    the selection. ``problem`` replaces the draft when it could not be read."""
    parts = [instructions]
    if summary:
        parts.append(summary_section(summary))
    if problem is not None:
        parts.append(f"The form could not be read just now ({problem}).")
        named = _named(selection)
        parts.append(
            f'The editor has the {named[0]} "{named[1]}" selected.'
            if named
            else "Nothing is selected."
        )
    else:
        parts.append("The form as it is now:\n" + snapshot(document))
        parts.append(describe_selection(document, selection))
    return "\n\n".join(parts)
