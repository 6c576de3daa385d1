"""What a model reads when Formwork itself could not be asked: the API down after a client's
retries, a token it refuses, a route a deployment lacks.

Every agent-side transport (the reference chat loop and the builder agent's loop in
``formwork.agents``, the MCP server over HTTP in ``formwork.mcp``) answers such a call with the
same data, so a model is told the same thing however it is hosted: ``backend_unavailable``,
what may not have happened, and not to repeat the call in this turn (a retry is the
transport's job, under the same tool-call id, and it has already tried).
"""

from __future__ import annotations

from typing import Any

BACKEND_UNAVAILABLE = "backend_unavailable"


def forms_unavailable(detail: str) -> dict[str, Any]:
    """The result of a form tool call the forms service could not be asked."""
    return {
        "ok": False,
        "error": BACKEND_UNAVAILABLE,
        "message": f"The forms service did not answer ({detail}); the answer may not have "
        "been saved.",
        "hint": "Tell the person their answer could not be saved just now; do not repeat the "
        "call in this turn.",
    }


def builder_unavailable(detail: str) -> dict[str, Any]:
    """The result of a builder tool call the form builder could not be asked."""
    return {
        "ok": False,
        "error": BACKEND_UNAVAILABLE,
        "message": f"The form builder did not answer ({detail}); the change may not have been "
        "applied.",
        "hint": "Tell the person the form could not be changed just now; do not repeat the "
        "call in this turn.",
    }
