"""What a host sees of a server besides its tools: its title, its instructions, and the one
resource and prompt that say where things stand.

Formwork serves two kinds of MCP server on one ``build_server`` (``formwork.mcp.server``):

* **a conversation's form tools** (``conversation_surface``): the resource
  ``formwork://conversations/{id}/status`` and the prompt ``form_status`` hold the status
  lines of the caller's open forms, and ``form_ask`` is offered to a host that can elicit;
* **a draft's builder tools** (``builder_surface``): the resource
  ``formwork://builder/forms/{form_id}/draft`` and the prompt ``draft_status`` hold the draft
  as the builder's own agent keeps it in context (``formwork.mcp.builder``); there is no
  ``form_ask``, since a builder asks the person nothing on a form's behalf.

A backend supplies its ``Surface`` (``formwork.mcp.backends.McpBackend``), so the server needs to
know nothing of which kind it is. Nothing here imports the SDK.
"""

from __future__ import annotations

from dataclasses import dataclass

STATUS_PROMPT = "form_status"
NO_FORMS = "No form is open in this conversation."
DRAFT_PROMPT = "draft_status"


@dataclass(frozen=True, slots=True)
class Surface:
    """A server's face: the ``initialize`` answer's title and instructions, the status
    resource (``uri``, its name, title and description), the prompt that carries the same text
    (its name, title and description, and the sentence its message opens with), the text when
    there is nothing to report (``empty``), and whether ``form_ask`` is offered (``asks``)."""

    title: str
    instructions: str
    uri: str
    resource_name: str
    resource_title: str
    resource_description: str
    prompt: str
    prompt_title: str
    prompt_description: str
    prompt_result: str
    prompt_heading: str
    empty: str
    asks: bool


# ---------------------------------------------------------------------------- a conversation


def status_uri(conversation_id: str) -> str:
    return f"formwork://conversations/{conversation_id}/status"


def instructions(conversation_id: str) -> str:
    return (
        f"Formwork's form tools for the conversation {conversation_id!r}. Read the resource "
        f"{status_uri(conversation_id)} (or the prompt {STATUS_PROMPT}) for the open forms' "
        "status lines: what each form still needs. Save everything the person said in one "
        "form_fill; a refusal comes back as data with a hint."
    )


def conversation_surface(conversation_id: str) -> Surface:
    """The form tools' server of one conversation."""
    return Surface(
        title="Formwork",
        instructions=instructions(conversation_id),
        uri=status_uri(conversation_id),
        resource_name="status",
        resource_title="Open forms in this conversation",
        resource_description="The status line of each open form: its step, what is still "
        "pending, what comes later. Changes with every answer.",
        prompt=STATUS_PROMPT,
        prompt_title="Open forms",
        prompt_description="The status lines of this conversation's open forms.",
        prompt_result="The open forms in this conversation, as they stand now",
        prompt_heading="Open forms in this conversation:",
        empty=NO_FORMS,
        asks=True,
    )


# ---------------------------------------------------------------------------- a draft


def draft_uri(form_id: str) -> str:
    return f"formwork://builder/forms/{form_id}/draft"


def no_draft(form_id: str) -> str:
    """The draft resource's text while the caller's tenant has no draft of ``form_id`` (also
    what another tenant's draft reads as)."""
    return f"There is no draft of the form {form_id!r} yet: create_form starts it."


def builder_instructions(form_id: str) -> str:
    return (
        f"Formwork's form builder tools for the draft {form_id!r} of your tenant. Read the "
        f"resource {draft_uri(form_id)} (or the prompt {DRAFT_PROMPT}) for the draft as it is "
        "now: its steps and items by id. Build in small calls: create_form for the title and "
        "the steps, then add_field for each field; every call applies at once and answers "
        "with one sentence, a refusal comes back as data with a hint, and undo_edit takes "
        "the last edit back. Publishing is a person's action, not a tool."
    )


def builder_surface(form_id: str) -> Surface:
    """The builder tools' server of one draft."""
    return Surface(
        title="Formwork form builder",
        instructions=builder_instructions(form_id),
        uri=draft_uri(form_id),
        resource_name="draft",
        resource_title=f"The draft of {form_id}",
        resource_description="The draft as it is now, as the builder keeps it in context: "
        'each step, then its items as id: kind "Label" (? when optional, with their rules), '
        "then the checkpoints. Changes with every edit.",
        prompt=DRAFT_PROMPT,
        prompt_title="The draft",
        prompt_description="The outline of the draft being built.",
        prompt_result="The draft, as it stands now",
        prompt_heading=f"The draft of the form {form_id!r}:",
        empty=no_draft(form_id),
        asks=False,
    )
