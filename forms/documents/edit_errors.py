"""The one error a builder's edit raises: a code, a sentence, and what to send instead.

An ``EditError`` never escapes a builder tool call as an exception: the shell turns it into
data for the model (``as_result``), which can then correct the call, shrink the form or ask
the person, instead of inventing a workaround. Nothing is applied when an edit fails.

The codes:

* ``no_draft``: there is no draft yet; ``create_form`` starts one.
* ``not_found``: a step or field id that is not in the draft (with ``did_you_mean``).
* ``no_selection``: the call left out which step or field, and nothing is selected.
* ``invalid``: the arguments, or the draft they would make, do not fit the schema (the
  problems in words).
* ``invalid_rule``: a ``when`` that does not check against the draft's ids and order, or a
  checkpoint's action naming a field or step that is not there (with ``did_you_mean``) or
  setting a field to a value its type cannot hold.
* ``in_use``: a delete that would leave a rule or checkpoint pointing at nothing.
* ``breaks_rules``: any other edit that would break a rule that held (a move putting a field
  after a rule that reads it, a kind change a comparison no longer fits, a constraint or
  option change a checkpoint's ``set`` value no longer fits).
* ``only_step``: deleting the form's only step.
* ``plan_limit``: a step or field past the plan's ``Limits``.
* ``not_empty``: ``create_form`` over a draft with content, without ``replace: true``.
* ``too_large``: a ``create_form`` carrying more than a small structure.
* ``unknown_tool``: a tool name that is not a builder tool.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import JsonValue

from forms.errors import ToolError


class EditError(ToolError):
    """A builder edit that was refused; nothing was applied."""

    def __init__(
        self, code: str, message: str, hint: str | None = None, did_you_mean: Sequence[str] = ()
    ) -> None:
        super().__init__(message, hint, did_you_mean)
        self.code = code

    def as_result(self) -> dict[str, JsonValue]:
        """What the model reads: ``{"ok": false, "error": code, "message": ..., "hint": ...}``."""
        result: dict[str, JsonValue] = {"ok": False, "error": self.code, "message": self.message}
        if self.hint:
            result["hint"] = self.hint
        if self.did_you_mean:
            result["did_you_mean"] = list(self.did_you_mean)
        return result


def sentence(text: str) -> str:
    """``text`` as a sentence: a capital first letter and a full stop (unless it has one)."""
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "?", "!")) else text + "."
